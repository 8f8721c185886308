"""Rules on what a recipe does for the jobs its configs generate.

Each job's bash recipe is evaluated for the job's environment
(:func:`ci_tools.evaluation.evaluate.evaluate_job`); a guard that ends the
recipe, or a required variable the job lacks, is reported once per recipe
line and config, naming the jobs it hits.  ``recipe lint`` checks every job;
``check`` the jobs a change gives a different run (new points, a different
recipe, a changed recipe or recipe input).
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Callable, Sequence

from ..findings import register

if TYPE_CHECKING:
    from ..findings import Finding, Location
    from ..jobs.job import Job
    from ..model.repository import RepoData
    from ..shell.model import RecipeEval

FAMILY = "recipe"

RECIPE_EARLY_EXIT = register(
    "recipe-early-exit",
    summary="a recipe exits early for a job its config generates",
    what=(
        "Evaluates each job's recipe for the job's environment and reports a guard whose branch is taken "
        "and ends the recipe with a non-zero `exit` before the benchmark runs, at the guard's line, "
        "naming the jobs of the config it stops.  An `exit` whose status is only known at run time, reached "
        "after the server started (a recipe's last `exit \"$rc\"` with the benchmark's status), hands on "
        "what ran and is not reported."
    ),
    why="The job is scheduled on a GPU node and fails every time; the matrix point it stands for is never measured.",
    example=(
        "# config row: { tp: 8, ep: 8, dp-attn: false, conc-list: [48] }\n"
        "if [ \"$EP_SIZE\" -ne 1 ]; then\n    echo \"the TP band runs EP1\" >&2\n    exit 1\nfi"
    ),
    fix="Change the search-space row so the guard holds, or relax the guard if the recipe supports the row.",
    family=FAMILY,
)
RECIPE_MISSING_ENV = register(
    "recipe-missing-env",
    summary="a recipe requires an environment variable its job does not provide",
    what=(
        "Reports each variable a recipe requires through `check_env_vars NAME...` (benchmark_lib.sh) or "
        "`${NAME:?message}` that is unset or empty in the environment of a job that runs the recipe."
    ),
    why="The recipe stops before starting the server, so the job fails without producing a result.",
    example="# fixed-seq-len job: KV_OFFLOAD_BACKEND is empty\ncheck_env_vars MODEL TP CONC KV_OFFLOAD_BACKEND",
    fix="Require the variable only where the job kind provides it, or give it a default (`${NAME:-value}`).",
    family=FAMILY,
)
RECIPE_SYNTAX = register(
    "recipe-syntax",
    summary="a recipe or a file it sources is not valid bash (an srt-slurm recipe: not readable YAML)",
    what=("Parses each recipe a job resolves to, and every file it sources, with tree-sitter-bash and reports syntax "
          "errors at their position, where bash itself refuses the file too (`bash -n`, which executes nothing: "
          "some valid bash, such as `\"${X:-$((A / (8 / TP)))}\"`, is beyond the grammar, and is no error); an "
          "srt-slurm recipe that is not YAML the evaluator can read (a syntax error, aliases that expand without "
          "bound) is reported at its position too."),
    why="bash refuses the script at run time; nothing it would set can be checked either.",
    example="if [ \"$TP\" -eq 8 ]; then\n    MAX=16\n# missing `fi`",
    fix="Correct the syntax at the reported line (`bash -n FILE` shows the same error).",
    family=FAMILY,
)


def _jobs_text(jobs: list[Job]) -> str:
    labels = [j.label().removeprefix(f"{j.config_key} ") for j in jobs]
    shown = ", ".join(labels[:4]) + (f" and {len(labels) - 4} more" if len(labels) > 4 else "")
    return f"{len(jobs)} job{'s' if len(jobs) != 1 else ''} of {jobs[0].config_key} ({shown})"


def recipe_findings(repo: RepoData, jobs: Sequence[Job] | None = None,
                    evaluate: Callable[[Job], RecipeEval | None] | None = None,
                    observe: Callable[[Job, RecipeEval | None], None] | None = None) -> list[Finding]:
    """Early exits, missing env and syntax errors of the recipes of ``jobs`` (all of the repository's when None),
    one finding per line and config.  ``evaluate`` replaces :func:`ci_tools.evaluation.evaluate.evaluate_job`
    (``check`` passes its evaluation cache, which the claims stage reuses); ``observe`` sees each job's
    evaluation (``recipe lint --stats`` collects coverage in the same pass)."""
    from ..findings import make_finding
    from ..jobs.matrix import expand
    from ..shell.collector import collection_paused
    from ..shell.stack import with_room
    from .evaluate import evaluate_job

    if evaluate is None:
        def evaluate(job: Job) -> RecipeEval | None:
            return evaluate_job(job, repo.config, repo.snapshot)

    exits: dict[tuple[Location, str, str, str], list[Job]] = defaultdict(list)
    missing: dict[tuple[Location, str, str], list[Job]] = defaultdict(list)
    syntax: dict[str, Location] = {}

    def evaluate_all() -> None:
        for job in expand(repo) if jobs is None else jobs:
            result = evaluate(job)
            if observe is not None:
                observe(job, result)
            if result is None:
                continue
            for e in result.early_exits:
                if not e.conditional and e.code != "0" and not (e.code == "" and result.servers):
                    # An unconditional exit ends the evaluation, so servers found were started before it: with
                    # an unknown status it hands on what ran (`exit "$rc"` after the benchmark), it stops nothing.
                    exits[(e.location, e.condition, e.code, job.config_key)].append(job)
            for m in result.missing_env:
                missing[(m.location, m.name, job.config_key)].append(job)
            for err in result.errors:
                loc = _syntax_location(err)
                if loc is not None:
                    syntax.setdefault(err, loc)

    with collection_paused():
        with_room(evaluate_all)
    findings: list[Finding] = []
    for (loc, condition, code, _key), jobs in exits.items():
        findings.append(make_finding(
            RECIPE_EARLY_EXIT,
            f"recipe exits with status {code or '?'} at `{_short(condition)}` for {_jobs_text(jobs)}",
            loc, related=[j.row for j in _distinct_rows(jobs)],
            data={"config_key": jobs[0].config_key, "jobs": [j.id for j in jobs], "code": code},
        ))
    for (loc, name, _key), jobs in missing.items():
        findings.append(make_finding(
            RECIPE_MISSING_ENV,
            f"recipe requires {name}, which is unset or empty for {_jobs_text(jobs)}",
            loc, related=[j.row for j in _distinct_rows(jobs)],
            data={"config_key": jobs[0].config_key, "jobs": [j.id for j in jobs], "name": name},
        ))
    for err, loc in syntax.items():
        findings.append(make_finding(RECIPE_SYNTAX, err.split(": ", 1)[1], loc))
    return findings


def _distinct_rows(jobs: list[Job]) -> list[Job]:
    seen: set[tuple[str, int]] = set()
    out = []
    for j in jobs:
        key = (j.row.path, j.row.line)
        if key not in seen:
            seen.add(key)
            out.append(j)
    return out


def _short(text: str) -> str:
    first = " ".join(text.split())
    return first if len(first) <= 80 else first[:77] + "..."


def _syntax_location(err: str) -> Location | None:
    """``path:line:col: bash syntax error ...`` (or ``invalid YAML``, of an srt-slurm recipe) as a Location
    (other evaluation errors are not findings)."""
    from ..findings import Location

    head, sep, message = err.partition(": ")
    parts = head.rsplit(":", 2)
    readable = message.startswith(("bash syntax error", "invalid YAML", "file is not valid UTF-8"))
    if not sep or len(parts) != 3 or not readable or not parts[1].isdigit():
        return None
    return Location(parts[0], int(parts[1]), int(parts[2]) if parts[2].isdigit() else 0)
