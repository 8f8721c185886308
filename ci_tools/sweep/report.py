"""Status records (and the recipes' result JSON) as Markdown for the job summary and the PR comment.

Every text cell comes from the benchmark repository (config keys, labels,
log lines), so it is escaped: a config key cannot open an HTML tag, break
the table, or mention a user.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from .status import (
    FAILED,
    LOG_FILE,
    NOT_RUN,
    RESULTS_DIR,
    STATUS_FILE,
    STOPPED,
    SUCCESS,
    TIMED_OUT,
    StatusRecord,
    read_status,
)

# GitHub refuses comments over 65,536 characters; stay clearly below.
MAX_REPORT_CHARS = 60_000
LOG_TAIL_LINES = 15
_ICONS = {SUCCESS: "✅", FAILED: "❌", TIMED_OUT: "⏱️", STOPPED: "⏹️", NOT_RUN: "⚠️"}
_ORDER = (FAILED, TIMED_OUT, STOPPED, NOT_RUN, SUCCESS)
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|~<>])")


@dataclass(frozen=True)
class JobReport:
    record: StatusRecord
    directory: Path
    results: dict[str, Any]  # result file name -> parsed JSON


def md_escape(text: str) -> str:
    flat = " ".join(str(text).split())
    return _MD_SPECIAL.sub(r"\\\1", flat).replace("@", "&#64;")


def _load_results(job_dir: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    results = job_dir / RESULTS_DIR
    if results.is_dir():
        for path in sorted(results.rglob("*.json")):
            try:
                out[path.relative_to(results).as_posix()] = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue  # a recipe that died mid-write leaves half a file; the status says so
    return out


def collect(directories: Iterable[Path]) -> tuple[list[JobReport], list[str]]:
    """Every status record under the directories; the second list names files that are not records."""
    reports: list[JobReport] = []
    problems: list[str] = []
    seen: set[Path] = set()
    for directory in directories:
        for path in sorted(Path(directory).rglob(STATUS_FILE)):
            real = path.resolve()
            if real in seen:
                continue
            seen.add(real)
            try:
                record = read_status(path)
            except (OSError, ValueError, TypeError) as exc:
                problems.append(f"{path}: {exc}")
                continue
            reports.append(JobReport(record, path.parent, _load_results(path.parent)))
    reports.sort(key=lambda r: (_ORDER.index(r.record.status) if r.record.status in _ORDER else 0,
                                r.record.config_key, r.record.scenario_type, r.record.conc or 0, r.record.label))
    return reports, problems


def _metric(results: dict[str, Any], name: str) -> Any:
    for data in results.values():
        value: Any = data
        for part in name.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if value is not None:
            return value
    return None


def _fmt(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return "" if value is None else str(value).lower()
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1e6 else f"{value:.0f}"
    return md_escape(str(value))


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def _outcome(r: StatusRecord) -> str:
    if r.status == SUCCESS:
        return "exit 0"
    if r.status == NOT_RUN:
        return "not run"
    if r.timed_out:
        return "timed out" + (f" ({r.signal})" if r.signal else "")
    if r.stopped:
        return "stopped" + (f" ({r.signal})" if r.signal else "")
    return f"signal {r.signal}" if r.signal else f"exit {r.exit_code}"


def _tail(job_dir: Path, lines: int) -> str:
    try:
        text = (job_dir / LOG_FILE).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def _fenced(text: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def render_markdown(reports: Sequence[JobReport], *, metrics: Sequence[str] = (), title: str = "Benchmark sweep",
                    log_tail: int = LOG_TAIL_LINES, max_chars: int = MAX_REPORT_CHARS) -> str:
    counts: dict[str, int] = {}
    for rep in reports:
        counts[rep.record.status] = counts.get(rep.record.status, 0) + 1
    parts = ", ".join(f"{counts[s]} {s}" for s in _ORDER if counts.get(s))
    lines = [f"### {md_escape(title)}", "", f"**{len(reports)} job{'s' if len(reports) != 1 else ''}**" + (f": {parts}" if parts else ""), ""]
    if not reports:
        lines.append("No status records were found.")
        return "\n".join(lines) + "\n"
    header = ["", "Job", "Runner", "Launcher", "Outcome", "Duration", "Results", *(md_escape(m) for m in metrics)]
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "|".join(["---"] * len(header)) + "|")
    rows: list[tuple[str, str]] = []
    for rep in reports:
        r = rep.record
        cells = [_ICONS.get(r.status, "?"), md_escape(r.label), md_escape(r.runner), md_escape(r.launcher),
                 md_escape(_outcome(r)), _duration(r.duration_seconds), str(len(r.results)),
                 *(_fmt(_metric(rep.results, m)) for m in metrics)]
        rows.append((r.status, "| " + " | ".join(cells) + " |"))
    budget = max_chars - sum(len(x) + 1 for x in lines) - 400
    if sum(len(row) + 1 for _, row in rows) > budget:
        # Too long for a comment: failures first, successes only as a count.
        shown = [row for status, row in rows if status != SUCCESS]
        while shown and sum(len(row) + 1 for row in shown) > budget:
            shown.pop()
        omitted = len(rows) - len(shown)
        lines += shown
        lines += ["", f"_{omitted} row(s) left out to stay under the size limit (successful jobs first); "
                      "the status records in the artifacts have every job._"]
    else:
        lines += [row for _, row in rows]
    body = "\n".join(lines) + "\n"
    details: list[str] = []
    for rep in reports:
        r = rep.record
        if r.status == SUCCESS:
            continue
        entry = [f"<details><summary>{md_escape(r.label)}: {md_escape(_outcome(r))}</summary>", ""]
        if r.message:
            entry += [md_escape(r.message), ""]
        tail = _tail(rep.directory, log_tail) if log_tail > 0 else ""
        if tail:
            entry += [_fenced(tail), ""]
        entry.append("</details>")
        details.append("\n".join(entry))
    out = body
    for i, block in enumerate(details):
        if len(out) + len(block) + 200 > max_chars:
            out += f"\n_{len(details) - i} more failure detail(s) left out to keep this report under the comment size limit._\n"
            break
        out += "\n" + block + "\n"
    return out
