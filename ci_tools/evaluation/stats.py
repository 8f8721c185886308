"""What recipe evaluation sees and what it cannot see, per job and in total.

For every job: whether its recipe reaches a server command line; when it
does not, why (no recipe, an exit before the server, a required variable
missing, a program known only at run time, no launch form matched); when it
does, which flags have unknown values and why (a value set only when the job
runs, the output of a command that is not evaluated, branches that cannot be
decided).  ``ci-tools recipe lint --stats`` prints the totals, so that a
maintainer sees what the checks downstream cannot see.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Iterable

from ..jobs.job import Job
from ..shell.model import MISSING, RecipeEval, Value
from ..shell.server import UNKNOWN_FLAG

# Why a job reaches no server command line (categories, in the order they are tested).
NO_RECIPE = "no-recipe"
EXTERNAL_RECIPE = "external-recipe"
SYNTAX = "syntax-error"
EXITS = "exits-early"
MISSING_ENV = "missing-env"
UNRESOLVED_SOURCE = "unresolved-source"
OPAQUE_COMMAND = "run-time-command"
NO_LAUNCH = "no-launch"

# Why a flag value is unknown.
RUN_TIME = "run-time"
COMMAND_OUTPUT = "command-output"
UNDECIDED = "undecided-branch"
UNKNOWN_WORD = "unknown-word"
OTHER = "other"

_NAMES = re.compile(r"\$\{?#?([A-Za-z_][A-Za-z0-9_]*)")
_BARE_NAMES = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\b")


@dataclass(frozen=True)
class Reason:
    category: str
    text: str


@dataclass(frozen=True)
class JobCoverage:
    job: Job
    recipe: str | None
    reached: bool
    not_reached: Reason | None
    # (flag name, reason) for every flag (or structured key) whose value is unknown.
    unknown: tuple[tuple[str, Reason], ...] = ()


def not_reached(result: RecipeEval | None) -> Reason | None:
    """Why no server command line was reached (None when one was)."""
    if result is None or (result.kind == MISSING and not result.servers):
        return Reason(NO_RECIPE, "no recipe resolves for the job")
    if result.servers:
        return None
    if result.kind == "external":
        # One reason for every such job (each names its file in `recipe show`), so the totals group them.
        return Reason(EXTERNAL_RECIPE, "an srt-slurm recipe the launcher takes from its srt-slurm checkout "
                                       "(not in this repository): not evaluated")
    syntax = [e for e in result.errors if "bash syntax error" in e]
    if syntax:
        return Reason(SYNTAX, syntax[0])
    exits = [e for e in result.early_exits if not e.conditional and e.code != "0"]
    if result.missing_env:
        m = result.missing_env[0]
        return Reason(MISSING_ENV, f"requires {m.name} (unset or empty) at {m.location.as_text()}")
    if exits:
        e = exits[0]
        return Reason(EXITS, f"exits with status {e.code or '?'} at {e.location.as_text()}: {_short(e.condition)}")
    done = [e for e in result.early_exits if not e.conditional]
    if done:
        return Reason(EXITS, f"ends (exit 0) at {done[0].location.as_text()} before any server starts")
    unresolved = [e for e in result.errors if "cannot resolve" in e or "does not exist" in e]
    if unresolved:
        return Reason(UNRESOLVED_SOURCE, unresolved[0])
    chain = [e for e in result.errors if e.startswith(f"{result.recipe}: no server command line reached from ")]
    if chain:
        return Reason(NO_LAUNCH, chain[0])  # a multinode script followed from its launcher, and where it stopped
    if result.opaque_commands:
        where = result.opaque_commands[0].as_text()
        return Reason(OPAQUE_COMMAND, f"runs a program known only at run time (first at {where}); it may be the server")
    return Reason(NO_LAUNCH, "no command matches the server launch patterns (`server-patterns`)")


def unknown_values(result: RecipeEval) -> list[tuple[str, Reason]]:
    """Every unknown flag value (and structured key) of the server command lines, with why."""
    out: list[tuple[str, Reason]] = []
    for server in result.servers:
        for f in server:
            if f.name == UNKNOWN_FLAG and f.value is not None:
                out.append((f.name, Reason(UNKNOWN_WORD, f"a word that may be a flag is unknown: {_short(f.value.expression)}")))
            elif f.value is not None and f.value.text is None and not f.keys:
                out.append((f.name, why_unknown(f.value, result.variables, result.unknown_inputs)))
            for k in f.keys:
                if k.value.text is None:
                    out.append((f"{f.name}.{k.path}", why_unknown(k.value, result.variables, result.unknown_inputs)))
    return out


def why_unknown(value: Value, variables: dict[str, Value], inputs: frozenset[str] = frozenset(),
                depth: int = 0) -> Reason:
    """The root of an unknown value, read from how it was written and what it refers to.

    ``inputs``: variables the recipe was started with whose values are known only at run time.
    """
    names = _referenced(value.expression)
    from_runner = [n for n in names if n in inputs]
    if from_runner:
        return Reason(RUN_TIME, "known only when the job runs: " + ", ".join(f"${n}" for n in from_runner))
    if value.alternatives:
        shown = " | ".join(a.text if a.text is not None else "?" for a in value.alternatives)
        return Reason(UNDECIDED, f"differs between branches that cannot be decided ({_short(shown)})")
    expression = value.expression
    if value.location.note:
        return Reason(RUN_TIME, f"known only when the job runs: {expression or '?'}")
    unknown = [n for n in names if n in variables and variables[n].text is None and variables[n] is not value]
    if unknown and depth < 6:
        reasons = [why_unknown(variables[n], variables, inputs, depth + 1) for n in unknown]
        run_time = [r for r in reasons if r.category == RUN_TIME]
        if len(run_time) == len(reasons):
            return Reason(RUN_TIME, "known only when the job runs: " + ", ".join(
                sorted({r.text.split(": ", 1)[1] for r in run_time})))
        return next(r for r in reasons if r.category != RUN_TIME)
    if "$(" in expression or "`" in expression:
        return Reason(COMMAND_OUTPUT, f"output of a command that is not evaluated: {_short(expression)}")
    return Reason(OTHER, f"depends on a value that cannot be computed: {_short(expression)}")


def _referenced(expression: str) -> list[str]:
    names = _NAMES.findall(expression)
    for inner in re.findall(r"\$\(\((.*?)\)\)", expression):
        names += _BARE_NAMES.findall(inner)
    seen: list[str] = []
    for n in names:
        if n not in seen:
            seen.append(n)
    return seen


def _short(text: str) -> str:
    one = " ".join(text.split())
    return one if len(one) <= 90 else one[:87] + "..."


def job_coverage(job: Job, result: RecipeEval | None) -> JobCoverage:
    reason = not_reached(result)
    unknown = tuple(unknown_values(result)) if result is not None and reason is None else ()
    return JobCoverage(job, result.recipe if result is not None else None, reason is None, reason, unknown)


@dataclass
class CoverageStats:
    """Totals over jobs; reasons keep the config keys they concern."""

    jobs: int = 0
    single_node: int = 0
    evaluated: int = 0
    reached: int = 0
    reached_single_node: int = 0
    all_known: int = 0
    # Jobs whose unknown values are all ones only the running job knows (its port, a launcher's path).
    all_known_but_run_time: int = 0
    not_reached: dict[Reason, list[str]] = field(default_factory=lambda: defaultdict(list))
    unknown: dict[Reason, list[str]] = field(default_factory=lambda: defaultdict(list))
    unknown_flags: Counter[str] = field(default_factory=Counter)

    def add(self, c: JobCoverage) -> None:
        self.jobs += 1
        single = not c.job.multinode
        self.single_node += single
        self.evaluated += c.recipe is not None
        if c.not_reached is not None:
            self.not_reached[c.not_reached].append(c.job.config_key)
            return
        self.reached += 1
        self.reached_single_node += single
        self.all_known += not c.unknown
        self.all_known_but_run_time += all(r.category == RUN_TIME for _, r in c.unknown)
        for reason in dict.fromkeys(r for _, r in c.unknown):
            self.unknown[reason].append(c.job.config_key)
        self.unknown_flags.update(set(name for name, _ in c.unknown))

    def ranked_unknown_flags(self) -> list[tuple[str, int]]:
        """Flags by how many jobs leave them unknown, most first; ties by name, so every run prints the same."""
        return sorted(self.unknown_flags.items(), key=lambda kv: (-kv[1], kv[0]))


def collect(coverages: Iterable[JobCoverage]) -> CoverageStats:
    stats = CoverageStats()
    for c in coverages:
        stats.add(c)
    return stats
