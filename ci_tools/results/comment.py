"""The results comment on the pull request: flagged points first, never over GitHub's size limit.

One comment per dispatch, found again by its hidden marker and updated in
place as jobs finish.  Sections, in order: the header (commit, baseline
source and age, counts per label, run and artifact links), the flagged
points (point, metric, base, PR, change, noise band, verdict), the frontier
summary per configuration, then the full per-point tables collapsed.

GitHub refuses a comment over 65,536 characters.  When the whole does not
fit, detail goes first, in this order: the per-configuration tables (from
the configurations without a flagged point), the invalid points' reasons,
the unchanged frontier rows, every frontier row; flagged points are then
written shorter (one compact row each) and, last, grouped per
configuration and metric with every concurrency named.  The job summary
and the JSON artifact carry everything.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

from ..report.markdown import md_escape
from .baseline import Baseline, age_text
from .metrics import BY_NAME
from .pareto import FrontierComparison
from .verdict import FLAGGED, INVALID, LABELS, REGRESSION, SUSPICIOUS, MetricVerdict, PointVerdict, counts

GITHUB_LIMIT = 65_536
MAX_CHARS = 65_000  # a margin for what GitHub adds when it stores the body


def size(text: str) -> int:
    """UTF-8 bytes: never fewer than characters, so a body within it is within GitHub's limit however it counts."""
    return len(text.encode("utf-8"))
MARKER = "<!-- ci-tools-results:{key} -->"
_ICON = {"regression": "🔻", "improvement": "🟢", "suspicious": "⚠️", "no change": "·", "invalid": "❌",
         "insufficient data": "…"}


@dataclass(frozen=True)
class CommentContext:
    key: str  # the dispatch key: one comment per dispatch
    sha: str
    baseline: Baseline
    run_url: str = ""
    artifact_url: str = ""
    plots: Mapping[tuple[str, str, int, int], str] = field(default_factory=dict)  # group -> image URL
    jobs_done: int | None = None
    jobs_total: int | None = None
    final: bool = False  # the sweep has ended: jobs not reported by now never will
    title: str = "Benchmark results"


def marker(key: str) -> str:
    return MARKER.format(key=md_escape(key).replace("-->", ""))


def _num(value: float) -> str:
    a = abs(value)
    return f"{value:,.0f}" if a >= 1000 else f"{value:.1f}" if a >= 10 else f"{value:.3g}"


def _pct(value: float | None) -> str:
    return "" if value is None else f"{value * 100:+.1f} %".replace("-", "−")


def _metric_name(metric: str) -> str:
    m = BY_NAME.get(metric)
    return f"{metric.replace('_', ' ')} ({m.unit})" if m else metric


def _point(v: PointVerdict) -> str:
    return md_escape(v.key.text())


def _verdict_cell(m: MetricVerdict) -> str:
    label = m.label
    if label == SUSPICIOUS:
        return f"{_ICON[label]} suspicious ({'worse' if m.worse else 'better'}; one sample, rerun to confirm)"
    return f"{_ICON[label]} {label}"


def _noise(m: MetricVerdict) -> str:
    source = "" if m.noise_source == "point" else f", {m.noise_source}"
    return f"±{m.threshold * 100:.1f} % (noise {m.noise * 100:.1f} %{source})"


def _flag_sort(item: tuple[PointVerdict, MetricVerdict]) -> tuple[int, int, float]:
    v, m = item
    return (LABELS.index(m.label), 0 if m.worse else 1, -abs(m.change))


def flagged_rows(verdicts: Sequence[PointVerdict]) -> list[tuple[PointVerdict, MetricVerdict]]:
    return sorted(((v, m) for v in verdicts for m in v.flagged), key=_flag_sort)


def _flagged_full(rows: Sequence[tuple[PointVerdict, MetricVerdict]]) -> list[str]:
    out = ["| Point | Metric | Base | PR | Change | Noise band | Verdict |", "|---|---|--:|--:|--:|---|---|"]
    for v, m in rows:
        p = f" (p={m.p_value:.3g})" if m.p_value is not None else ""
        out.append(f"| {_point(v)} | {_metric_name(m.metric)} | {_num(m.base)} | {_num(m.pr)} | {_pct(m.change)}{p} "
                   f"| {_noise(m)} | {_verdict_cell(m)} |")
    return out


def _flagged_compact(rows: Sequence[tuple[PointVerdict, MetricVerdict]]) -> list[str]:
    out = ["| Point | Metric | Change | Verdict |", "|---|---|--:|---|"]
    out += [f"| {_point(v)} | {m.metric} | {_pct(m.change)} | {_ICON[m.label]} {m.label} |" for v, m in rows]
    return out


def _flagged_grouped(rows: Sequence[tuple[PointVerdict, MetricVerdict]]) -> list[str]:
    groups: dict[tuple[str, str, str, str, str], list[tuple[PointVerdict, MetricVerdict]]] = {}
    for v, m in rows:
        k = v.key
        groups.setdefault((k.config_key, k.seq, m.metric, m.label, "worse" if m.worse else "better"), []).append((v, m))
    out = []
    for (config, seq, metric, label, way), items in groups.items():
        changes = [m.change for _, m in items]
        points = ", ".join(sorted({f"{v.key.parallelism} c{v.key.concurrency}" for v, _ in items}))
        out.append(f"- {_ICON[label]} {label} ({way}), {metric}, {md_escape(config)} {seq}: "
                   f"{_pct(min(changes))}..{_pct(max(changes))} at {md_escape(points)}")
    return out


def _frontier_rows(frontiers: Sequence[FrontierComparison], plots: Mapping[tuple[str, str, int, int], str],
                   only_changed: bool) -> list[str]:
    out = ["| Configuration | Seq | Frontier points base → PR | Along the frontier (worst / best) | Area | Verdict |"
           " Plot |", "|---|---|---|---|--:|---|---|"]
    for f in frontiers:
        if only_changed and f.label == "unchanged":
            continue
        config, scenario, isl, osl = f.group
        seq = "agentic" if scenario == "agentic-coding" else f"{isl}/{osl}"
        plot = f"[plot]({plots[f.group]})" if f.group in plots else ""
        along = "" if f.worst_change is None else f"{_pct(f.worst_change)} / {_pct(f.best_change)}"
        out.append(f"| {md_escape(config)} | {seq} | {len(f.base)} → {len(f.pr)} | {along} | {_pct(f.area_change)} "
                   f"| {f.label} | {plot} |")
    return out


def _config_table(config: str, items: Sequence[PointVerdict]) -> str:
    lines = [f"<details><summary>{md_escape(config)}: {len(items)} point(s)</summary>", "",
             "| Point | Verdict | Throughput/GPU base → PR | Interactivity base → PR |", "|---|---|---|---|"]
    for v in items:
        cells = []
        for name in ("throughput_per_gpu", "interactivity"):
            m = next((x for x in v.metrics if x.metric == name), None)
            cells.append(f"{_num(m.base)} → {_num(m.pr)} ({_pct(m.change)})" if m else "")
        label = v.label if v.label != INVALID else f"invalid: {'; '.join(v.reasons)[:120]}"
        lines.append(f"| {_point(v)} | {_ICON[v.label]} {md_escape(label)} | {cells[0]} | {cells[1]} |")
    lines += ["", "</details>"]
    return "\n".join(lines)


def _header(ctx: CommentContext, verdicts: Sequence[PointVerdict]) -> list[str]:
    b = ctx.baseline
    tally = counts(verdicts)
    parts = ", ".join(f"{tally[label]:,} {label}" for label in LABELS if tally[label])
    links = " · ".join(x for x in (f"[run]({ctx.run_url})" if ctx.run_url else "",
                                    f"[JSON artifact]({ctx.artifact_url})" if ctx.artifact_url else "") if x)
    base_line = f"**Baseline:** {md_escape(b.source)}"
    if b.sha:
        base_line += f", commit `{b.sha[:12]}`"
    base_line += f", {age_text(b.age())}" if b.date else ", no baseline measurement"
    progress = ""
    if ctx.jobs_total is not None:
        done = ctx.jobs_done or 0
        missing = ctx.jobs_total - done
        progress = f" Jobs reported: {done:,} of {ctx.jobs_total:,}" + (
            "." if missing <= 0 else f"; the sweep has ended, {missing:,} left no record." if ctx.final
            else " (updated as jobs finish).")
    return [marker(ctx.key), f"### {md_escape(ctx.title)} for `{ctx.sha[:12]}`", "", base_line + (
        f" · {links}" if links else ""), "", f"**{len(verdicts):,} points:** {parts or 'none'}.{progress}", ""]


def render(verdicts: Sequence[PointVerdict], frontiers: Sequence[FrontierComparison], ctx: CommentContext,
           *, max_chars: int = MAX_CHARS) -> str:
    """The comment body, at most ``max_chars`` UTF-8 bytes, flagged points never dropped while they fit at all."""
    header = _header(ctx, verdicts)
    flagged = flagged_rows(verdicts)
    regressions = sum(1 for _, m in flagged if m.label == REGRESSION or (m.label == SUSPICIOUS and m.worse))
    by_config: dict[str, list[PointVerdict]] = {}
    for v in verdicts:
        by_config.setdefault(v.key.config_key, []).append(v)
    # Configurations with a flagged or invalid point first: their tables are the last detail to go.
    configs = sorted(by_config, key=lambda c: (not any(v.label in FLAGGED or v.label == INVALID
                                                       for v in by_config[c]), c))
    tables = [_config_table(c, by_config[c]) for c in configs]
    invalid = [v for v in verdicts if v.label == INVALID]

    def assemble(flag_style: Callable[[Sequence[tuple[PointVerdict, MetricVerdict]]], list[str]], frontier_mode: str,
                 n_tables: int, invalid_detail: bool) -> str:
        out = list(header)
        if flagged:
            out += [f"#### Flagged points ({len(flagged)}; {regressions} worse)", ""] + flag_style(flagged) + [""]
        else:
            out += ["No point changed beyond its noise band.", ""]
        if frontier_mode != "none" and frontiers:
            rows = _frontier_rows(frontiers, ctx.plots, frontier_mode == "changed")
            out += ["#### Throughput vs interactivity frontier per configuration", ""]
            out += rows if len(rows) > 2 else ["Every frontier is unchanged."]
            if frontier_mode == "changed":
                out += ["", "_Unchanged frontiers left out to fit the comment._"]
            out.append("")
        elif frontiers:
            out += [f"_The frontier summary of {len(frontiers)} configuration(s) is in the job summary._", ""]
        if invalid and invalid_detail:
            out += [f"<details><summary>Invalid points ({len(invalid)})</summary>", ""]
            out += [f"- {_point(v)}: {md_escape('; '.join(v.reasons))}" for v in invalid] + ["", "</details>", ""]
        out += tables[:n_tables]
        if n_tables < len(tables):
            out += ["", f"_{len(tables) - n_tables} configuration table(s) left out to stay under GitHub's comment "
                        "limit; the job summary and the JSON artifact carry every point._"]
        return "\n".join(out) + "\n"

    plans: list[tuple[Callable[[Sequence[tuple[PointVerdict, MetricVerdict]]], list[str]], str, bool]] = [
        (_flagged_full, "all", True), (_flagged_full, "all", False), (_flagged_full, "changed", False),
        (_flagged_full, "none", False), (_flagged_compact, "none", False), (_flagged_grouped, "none", False)]
    for style, frontier_mode, invalid_detail in plans:
        lo, hi = -1, len(tables)  # the most tables that fit with this plan (-1: not even without tables)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if size(assemble(style, frontier_mode, mid, invalid_detail)) <= max_chars:
                lo = mid
            else:
                hi = mid - 1
        if lo >= 0:
            return assemble(style, frontier_mode, lo, invalid_detail)
    body = assemble(_flagged_grouped, "none", 0, False)
    note = "\n\n_Cut at GitHub's comment limit; the job summary and the JSON artifact carry every flagged point._\n"
    cut = body.encode("utf-8")[: max_chars - size(note)].decode("utf-8", "ignore")
    return cut + note
