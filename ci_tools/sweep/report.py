"""Status records (and each job's result file) as Markdown for the job summary and the PR comment.

A job's metrics come from the one file its RESULT_FILENAME names (a job
writes several JSON files; only that one is its result).  Every text cell
comes from the benchmark repository (config keys, labels, log lines), so it
is escaped: a config key cannot open an HTML tag, break the table, or
mention a user; inside ``<summary>`` by HTML entities, since GitHub renders
no Markdown there.  Numbers are written for people: thousands separators,
no exponent.
"""

from __future__ import annotations

import html
import json
import math
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
from ..report.markdown import md_escape
from ..results.metrics import BY_NAME
from ..results.record import RECORD_FILE, PointResult, RecordError
from ..results.record import load as load_record
from .outputs import find_named

# GitHub refuses comments over 65,536 characters; stay clearly below.
MAX_REPORT_CHARS = 60_000
LOG_TAIL_LINES = 15
DEFAULT_REPORT_METRICS = ("throughput_per_gpu", "interactivity", "ttft_median")
_ICONS = {SUCCESS: "✅", FAILED: "❌", TIMED_OUT: "⏱️", STOPPED: "⏹️", NOT_RUN: "⚠️"}
_LEAKED_ICON = "🧹"  # succeeded, but left processes running that had to be ended
_ORDER = (FAILED, TIMED_OUT, STOPPED, NOT_RUN, SUCCESS)


@dataclass(frozen=True)
class JobReport:
    record: StatusRecord
    directory: Path
    result: Any  # the parsed $RESULT_FILENAME.json, None when there is none (or it does not parse)
    points: tuple[PointResult, ...] = ()  # record.json's per-concurrency results, when it has any


def html_escape(text: str) -> str:
    """Text for inside an HTML element (``<summary>``): GitHub renders no Markdown there, so a backslash
    escape would show; entities do not."""
    return html.escape(" ".join(str(text).split()), quote=True).replace("@", "&#64;")


def _load_result(job_dir: Path, record: StatusRecord) -> Any:
    """The file named by RESULT_FILENAME, where the job left it; not any other JSON of the job's."""
    results = job_dir / RESULTS_DIR
    path = results / record.result_file if record.result_file else None
    if path is None and record.result_filename:
        path = find_named(results, f"{record.result_filename}.json")
    if path is None or not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # a recipe that died mid-write leaves half a file; the status says so


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
            reports.append(JobReport(record, path.parent, _load_result(path.parent, record), _points(path.parent)))
    reports.sort(key=lambda r: (_ORDER.index(r.record.status) if r.record.status in _ORDER else 0,
                                r.record.config_key, r.record.scenario_type, r.record.conc or 0, r.record.label))
    return reports, problems


def _points(job_dir: Path) -> tuple[PointResult, ...]:
    path = job_dir / RECORD_FILE
    if not path.is_file():
        return ()
    try:
        return load_record(path).results
    except RecordError:
        return ()  # the status record still says how the job ended


def _metric(rep: JobReport, name: str) -> str:
    """A canonical metric of record.json (each concurrency's, for a multinode job), else a dotted path of
    the result file."""
    if name in BY_NAME and rep.points:
        values = [p.metrics.get(name) for p in rep.points]
        return " / ".join("" if v is None else format_number(v) for v in values).strip(" /")
    value: Any = rep.result
    for part in name.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return _fmt(value)


def _header(name: str) -> str:
    metric = BY_NAME.get(name)
    return md_escape(f"{name} ({metric.unit})" if metric is not None else name)


def format_number(value: float | int) -> str:
    """For people: thousands separators, about four significant digits, never an exponent."""
    if isinstance(value, int):
        return f"{value:,}"
    if not math.isfinite(value):
        return str(value)
    if value == 0:
        return "0"
    decimals = max(0, 3 - math.floor(math.log10(abs(value))))
    text = f"{value:,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def _fmt(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return "" if value is None else str(value).lower()
    if isinstance(value, (int, float)):
        return format_number(value)
    return md_escape(str(value))


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def _ending(r: StatusRecord) -> str:
    """How the job's processes were ended after a timeout or a stop."""
    if r.killed:
        return "SIGKILL needed after SIGTERM"
    return "ended by SIGTERM"


def _leftovers(r: StatusRecord) -> str:
    if not r.leftover_processes:
        return ""
    text = f"left {r.leftover_processes} process{'es' if r.leftover_processes != 1 else ''} running"
    if r.detached_processes:
        text += f" ({r.detached_processes} detached)"
    return text + (", SIGKILL needed" if r.killed else ", ended by SIGTERM")


def _invalid(points: Sequence[PointResult]) -> str:
    reasons = [f"c{p.concurrency} {reason}" if len(points) > 1 else reason
               for p in points for reason in p.validity.reasons]
    return "invalid: " + "; ".join(reasons) if reasons else ""


def outcome_text(r: StatusRecord, points: Sequence[PointResult] = ()) -> str:
    if r.status == NOT_RUN:
        parts = ["not run"]
    elif r.timed_out:
        parts = [f"timed out after {_duration(r.timeout_seconds or r.duration_seconds)}", _ending(r)]
    elif r.stopped:
        parts = ["stopped", _ending(r)]
    elif r.signal:
        parts = [f"signal {r.signal}"]
    else:
        parts = [f"exit {r.exit_code}"]
        if r.status == FAILED and r.exit_code == 0:
            parts.append("no result file")
    parts.append(_leftovers(r))
    parts.append(_invalid(points))
    if r.survivors:
        parts.append(f"{r.survivors} survived SIGKILL")
    return ", ".join(p for p in parts if p)


def _needs_details(r: StatusRecord) -> bool:
    return r.status != SUCCESS or bool(r.leftover_processes or r.survivors)


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
    header = ["", "Job", "Runner", "Launcher", "Outcome", "Duration", "Results", *(_header(m) for m in metrics)]
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "|".join(["---"] * len(header)) + "|")
    rows: list[tuple[str, str]] = []
    for rep in reports:
        r = rep.record
        icon = _LEAKED_ICON if r.status == SUCCESS and (r.leftover_processes or r.survivors) else _ICONS.get(r.status, "?")
        runner = f"{r.runner} ({r.node})" if r.node and r.node != r.runner else r.runner
        cells = [icon, md_escape(r.label), md_escape(runner), md_escape(r.launcher),
                 md_escape(outcome_text(r, rep.points)), _duration(r.duration_seconds), str(len(r.results)),
                 *(_metric(rep, m) for m in metrics)]
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
        if not _needs_details(r):
            continue
        entry = [f"<details><summary>{html_escape(r.label)}: {html_escape(outcome_text(r, rep.points))}</summary>", ""]
        if r.message:
            entry += [md_escape(r.message), ""]
        if r.leftovers:
            entry += [_fenced("\n".join(r.leftovers)), ""]
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
