"""Everything a comparison found, as JSON (the artifact) and as an unabridged Markdown job summary."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, Sequence

from .comment import CommentContext, render
from .pareto import FrontierComparison
from .verdict import PointVerdict, counts

SUMMARY_LIMIT = 1_000_000  # GitHub's job summary takes 1 MiB per step


def to_json(verdicts: Sequence[PointVerdict], frontiers: Sequence[FrontierComparison],
            ctx: CommentContext) -> dict[str, Any]:
    b = ctx.baseline
    return {
        "schema": "ci-tools/results-comparison/1",
        "sha": ctx.sha,
        "baseline": {"source": b.source, "sha": b.sha, "date": b.date, "url": b.url, "problems": list(b.problems)},
        "counts": counts(verdicts),
        "points": [{"key": v.key.to_json(), "point": v.key.text(), "label": v.label, "reasons": list(v.reasons),
                    "metrics": [asdict(m) for m in v.metrics], "base_n": len(v.base), "pr_n": len(v.pr)}
                   for v in verdicts],
        "frontiers": [{"config_key": f.group[0], "scenario": f.group[1], "isl": f.group[2], "osl": f.group[3],
                       "label": f.label, "worst_change": f.worst_change, "best_change": f.best_change,
                       "area_change": f.area_change, "overlap": f.overlap,
                       "base": [asdict(p) for p in f.base], "pr": [asdict(p) for p in f.pr]} for f in frontiers],
    }


def summary(verdicts: Sequence[PointVerdict], frontiers: Sequence[FrontierComparison], ctx: CommentContext) -> str:
    """The same document as the comment, with the job summary's larger limit (so nothing is left out there)."""
    return render(verdicts, frontiers, ctx, max_chars=SUMMARY_LIMIT)
