"""Real bash checks the recipe evaluator: run jobs for real (jobrun.py) and hold ``recipe show``'s statements to them.

For each job, ci-tools evaluates its recipe as ``recipe show`` does
(``evaluate_job`` with ci-tools' own environment contract, the runner's values
unknown), the launch step runs for real in a sandbox, and compare.py checks
every flag and variable ci-tools states against the servers bash started.
Jobs run in parallel threads (each one a tree of processes in its own
sandbox; a thread only waits).

A job is *run* when its launch step reached at least one server; a job that
did not (a recipe that needs what the stand-ins do not carry: RDMA devices,
files of the real image) is listed with the last line it printed, and its
statements are not counted.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from ci_tools.config import ProjectConfig
from ci_tools.evaluation.evaluate import evaluate_job
from ci_tools.jobs.job import Job
from ci_tools.results.record import load as load_record
from ci_tools.revision.snapshot import Snapshot
from ci_tools.shell.collector import collection_paused
from ci_tools.shell.model import RecipeEval
from ci_tools.shell.stack import with_room

from standins.compare import Comparison, compare, statements
from standins.jobrun import STEP, JobRun, node_for, run_job


@dataclass
class JobOutcome:
    job: Job
    node: str | None
    comparison: Comparison | None = None  # None: not compared (see ``skipped``)
    skipped: str = ""  # why the job was not compared
    exit_code: int | None = None
    seconds: float = 0.0
    result_file: bool = False  # $RESULT_FILENAME.json where the launch step looks for it
    processed: bool = False  # agg_$RESULT_FILENAME.json, what utils/process_result.py writes
    clients_reached_own_server: bool = True
    points: int = 0  # results of the job's record (`sweep run` only): one a concurrency its files hold
    valid_points: int = 0  # of them, those whose validity has no reason against them


@dataclass
class OracleReport:
    outcomes: list[JobOutcome] = field(default_factory=list)
    evaluated_ran: int = 0  # jobs evaluated from the recipe bash ran (see run_oracle's evaluate_ran)

    @property
    def compared(self) -> list[JobOutcome]:
        return [o for o in self.outcomes if o.comparison is not None]

    def totals(self) -> dict[str, int]:
        c = [o.comparison for o in self.compared if o.comparison is not None]
        return {"jobs": len(self.outcomes), "compared": len(c),
                "flags_stated": sum(x.flags_stated for x in c), "flags_equal": sum(x.flags_equal for x in c),
                "env_stated": sum(x.env_stated for x in c), "env_equal": sum(x.env_equal for x in c),
                "servers_stated": sum(x.servers_stated for x in c), "servers_run": sum(x.servers_run for x in c),
                "replicas": sum(x.replicas for x in c),
                "lines_identical": sum(x.lines_identical for x in c),
                "lines_identical_known": sum(x.lines_identical_known for x in c),
                "routers_stated": sum(x.routers_stated for x in c), "routers_run": sum(x.routers_run for x in c),
                "router_lines_identical": sum(x.router_lines_identical for x in c),
                "env_jobs_equal": sum(1 for x in c if x.env_stated == x.env_equal),
                "jobs_equal": sum(1 for x in c if x.equal), "unstated": sum(len(x.unstated) for x in c),
                "env_unstated": sum(len(x.env_unstated) for x in c),
                "result_files": sum(o.result_file for o in self.outcomes),
                "processed": sum(o.processed for o in self.outcomes),
                "succeeded": sum(o.exit_code == 0 for o in self.outcomes),
                "points": sum(o.points for o in self.outcomes),
                "valid_points": sum(o.valid_points for o in self.outcomes)}

    def skipped(self) -> Counter[str]:
        return Counter(o.skipped for o in self.outcomes if o.skipped)


def sample(jobs: Iterable[Job], config: ProjectConfig, snapshot: Snapshot, size: int,
           exclude: Callable[[Job], bool] = lambda job: False) -> list[Job]:
    """A fixed sample of single-node jobs across recipe families: the recipes taken in turn (sorted by path),
    each giving its jobs spread over its list (first, last, middle, ...), until ``size`` jobs."""
    from ci_tools.jobs.contract import resolve_recipe

    families: dict[str, list[Job]] = {}
    for job in jobs:
        if job.multinode or exclude(job):
            continue
        recipe = resolve_recipe(job, config, snapshot).script
        if recipe is not None:
            families.setdefault(recipe, []).append(job)
    orders = {path: _spread(len(members)) for path, members in families.items()}
    out: list[Job] = []
    turn = 0
    while len(out) < size and any(turn < len(order) for order in orders.values()):
        for path in sorted(families):
            if turn < len(orders[path]) and len(out) < size:
                out.append(families[path][orders[path][turn]])
        turn += 1
    return out


def features(job: Job, result: RecipeEval | None, config: ProjectConfig, snapshot: Snapshot) -> frozenset[tuple[str, ...]]:
    """What running ``job`` checks beyond any other job: the fleet whose launcher starts it, its framework and
    scenario with that fleet, its model and precision, each flag and variable ``recipe show`` states for it (by
    name, as compare.py checks them), and its recipe's bash as the evaluator walks it: every kind of syntax node
    under every kind of parent (tree-sitter-bash, operators and keywords included: ``${X:-y}``, ``$((..))``,
    ``case``, ``[[ =~ ]]`` ...) and every command name the recipe spells."""
    from ci_tools.jobs.contract import resolve_recipe
    from ci_tools.jobs.resolution import fleet_of
    from ci_tools.shell.parse import parse_script

    node = node_for(job, config, snapshot)
    fleet = fleet_of(node) if node is not None else ""
    out: set[tuple[str, ...]] = {("fleet", fleet), ("model", str(job.fields.get("model-prefix"))),
                                 ("precision", str(job.fields.get("precision"))),
                                 ("framework", str(job.fields.get("framework")), job.scenario, fleet)}
    if result is not None:
        out.update(statements(result))
    path = resolve_recipe(job, config, snapshot).script
    source = snapshot.read(path) if path is not None else None
    if path is not None and source is not None:
        stack = [parse_script(path, source).root]
        while stack:
            syntax = stack.pop()
            out.update(("syntax", syntax.type, child.type) for child in syntax.children)
            if syntax.type == "command_name":
                out.add(("command", syntax.text))
            stack.extend(syntax.children)
    return frozenset(out)


def covering(each: list[frozenset[tuple[str, ...]]]) -> list[int]:
    """Indices of a few of ``each`` that together have every member any of them has: the one adding the most
    members not yet had first (ties: the earlier), until none is left; in index order."""
    wanted = frozenset().union(*each)
    had: set[tuple[str, ...]] = set()
    chosen: list[int] = []
    while had != wanted:
        best = max(range(len(each)), key=lambda i: (len(each[i] - had), -i))
        chosen.append(best)
        had |= each[best]
    return sorted(chosen)


def _spread(n: int) -> list[int]:
    """0 .. n-1 in an order that covers the range early: 0, n-1, the middle, the quarters, ..."""
    order: list[int] = []
    seen: set[int] = set()
    parts = 1
    while len(order) < n:
        for k in range(parts + 1):
            i = round(k * (n - 1) / parts) if n > 1 else 0
            if i not in seen:
                seen.add(i)
                order.append(i)
        parts *= 2
    return order


_RECIPE_WORD = re.compile(r"(?:^|/)(benchmarks/[\w./-]+\.sh)$")


def _last_line(run: JobRun) -> str:
    try:
        lines = [line for line in run.output.read_text(errors="replace").splitlines()
                 if line.strip() and not line.startswith("+")]
    except OSError:
        return ""
    return lines[-1].strip()[:160] if lines else ""


def evaluate_all(jobs: list[Job], config: ProjectConfig, snapshot: Snapshot) -> list[RecipeEval | None]:
    """What ``recipe show`` says for each job, evaluated as it evaluates them (one thread, collector paused)."""
    out: list[RecipeEval | None] = []

    def all_jobs() -> None:
        out.extend(evaluate_job(job, config, snapshot) for job in jobs)

    with collection_paused():
        with_room(all_jobs)
    return out


def _ran_recipe(run: JobRun) -> str | None:
    """The recipe the launcher started (the last ``benchmarks/...sh`` a container or job step ran), in the
    repository."""
    found = None
    for call in run.calls:
        if call.name in ("srun", "docker", "sbatch", "salloc"):
            for word in call.args:
                m = _RECIPE_WORD.search(word)
                if m is not None:
                    found = m.group(1)
    return found


def _outcome(job: Job, node: str, run: JobRun, result: RecipeEval, patterns: tuple[str, ...],
             through: str, router_patterns: tuple[str, ...] = ()) -> JobOutcome:
    servers = run.servers(patterns)
    routers = [(form, words) for _, form, words in run.servers(router_patterns)] if router_patterns else []
    outcome = JobOutcome(job, node, exit_code=run.exit_code, seconds=run.seconds,
                         result_file=run.result_file() is not None,
                         processed=bool(list(run.written.glob("agg_*.json"))
                                        or list(run.written.glob("sweep-results/*/results/agg_*.json"))))
    for path in run.written.glob("sweep-results/*/record.json"):
        points = load_record(path).results
        outcome.points += len(points)
        outcome.valid_points += sum(1 for point in points if point.validity.valid)
    for client in run.clients():
        seen = client.extra(".client.json")
        if seen is None or seen.get("errors") or not seen.get("servers"):
            outcome.clients_reached_own_server = False
    if not servers:
        outcome.skipped = f"bash started no server (exit {run.exit_code}): {_last_line(run)}"
        return outcome
    # Variables nobody lists are looked for where the launch step's environment is known: `sweep run` adds its
    # own (GITHUB_ENV, its process marker ...) to the runner's.
    started = run.env if through == STEP else None
    outcome.comparison = compare(result, [(form, words, call.env) for call, form, words in servers], started,
                                 routers)
    return outcome


def run_oracle(jobs: Iterable[Job], config: ProjectConfig, snapshot: Snapshot, repo_root: Path, *,
               workers: int = 4, timeout: float = 60.0, process: bool = True, through: str = STEP,
               evaluate_ran: bool = False, keep: Path | None = None,
               progress: Callable[[JobOutcome], None] | None = None) -> OracleReport:
    """Check every job.

    Bash runs in ``workers`` threads; ci-tools evaluates in this one (before, as ``recipe show`` does).
    ``evaluate_ran``: a job whose recipe ci-tools does not resolve (another revision's layout than the
    resolution rules know) is evaluated from the recipe bash ran, with the job's environment: a check
    of the evaluator, not of the resolution (counted in ``OracleReport.evaluated_ran``); a job whose
    runner label names no node runs on a node of the first fleet of its GPU (``node_for(guess=True)``).
    ``keep``: a directory where the scratch of each job that disagrees is kept.
    """
    report = OracleReport()
    jobs = list(jobs)
    results = evaluate_all(jobs, config, snapshot)
    nodes = [node_for(job, config, snapshot, guess=evaluate_ran) for job in jobs]

    def why_not(result: RecipeEval | None, node: str | None) -> str:
        if result is None or result.kind != "script":
            if evaluate_ran and node is not None:
                return ""
            return f"not a bash recipe ({result.kind if result else 'none'})"
        if not result.servers:
            return "ci-tools reaches no server"
        if node is None:
            return "its runner label has no node and names no launcher"
        return ""

    def one(index: int) -> tuple[JobRun | None, Path | None, str]:
        reason = why_not(results[index], nodes[index])
        if reason:
            return None, None, reason
        scratch = Path(tempfile.mkdtemp(prefix="oracle-job-"))
        try:
            return run_job(jobs[index], config, snapshot, repo_root, scratch, node=nodes[index], timeout=timeout,
                           process=process, through=through), scratch, ""
        except ValueError as exc:
            return None, scratch, str(exc)

    with ThreadPoolExecutor(max_workers=workers) as pool:
        for index, (run, scratch, reason) in enumerate(pool.map(one, range(len(jobs)))):
            job, node, result = jobs[index], nodes[index], results[index]
            if run is None or node is None:
                outcome = JobOutcome(job, node, skipped=reason)
            else:
                if result is None or result.kind != "script":
                    ran = _ran_recipe(run)
                    result = _evaluate_path(job, ran, config, snapshot) if ran else None
                    if result is None or not result.servers:
                        outcome = JobOutcome(job, node, skipped=f"ci-tools resolves no recipe; bash ran {ran}")
                        report.outcomes.append(outcome)
                        _done(outcome, scratch, keep, progress)
                        continue
                    report.evaluated_ran += 1
                outcome = _outcome(job, node, run, result, config.server_patterns, through, config.router_patterns)
            report.outcomes.append(outcome)
            _done(outcome, scratch, keep, progress)
    return report


def _done(outcome: JobOutcome, scratch: Path | None, keep: Path | None,
          progress: Callable[[JobOutcome], None] | None) -> None:
    if scratch is not None:
        if keep is not None and outcome.comparison is not None and not outcome.comparison.equal:
            shutil.copytree(scratch, keep / outcome.job.id, symlinks=True, dirs_exist_ok=True)
        shutil.rmtree(scratch, ignore_errors=True)
    if progress is not None:
        progress(outcome)


def _evaluate_path(job: Job, path: str, config: ProjectConfig, snapshot: Snapshot) -> RecipeEval | None:
    from ci_tools.evaluation.evaluate import env_location, evaluate_recipe
    from ci_tools.jobs.contract import recipe_env

    found: list[RecipeEval] = []

    def evaluate() -> None:
        found.append(evaluate_recipe(path, recipe_env(job, config, snapshot, as_run=True), config, snapshot,
                                     env_location(job)))

    with collection_paused():
        with_room(evaluate)
    return found[0]
