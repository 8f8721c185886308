"""Whether a change to a shell file a job runs changes what the job runs.

Coverage used to count a job as affected when any file it reads changed: a
change that only guards ``hf download`` behind a local-path check in 89
recipes (InferenceX ed5867f9e998) made every config they serve "affected",
though no job's server line or environment changed.  This module decides it
per job, from what changed (:mod:`ci_tools.changelog.shell_diff`):

- **a recipe script** (single-node: the job's server is started by one of its
  top-level statements).  A changed statement after the one that starts the
  server (the benchmark client, its options, the result handling), or a
  changed function called after it, changes the run: it is what produced the
  numbers, and evaluation does not model it.  Such a function counts only
  where the jobs may reach it: a command of their evaluation (at the base or
  the head, on any branch it could not decide) named it or a function it
  calls, or code they run spells its name other than as a command's (``trap
  cleanup EXIT``, which makes a function the recipe never calls run at its
  end); the eval steps a throughput job skips change nothing, nor does a
  function whose two definitions read the same once the variables the jobs
  leave unset are taken as unset (an override that keeps the old behaviour
  by default, ``${AIPERF_SERVER_URL:-http://localhost:$PORT}``,
  :mod:`ci_tools.changelog.unset_reads`).  A changed
  statement up to the server's, a changed function only called there, and
  a changed top-level statement of a file the recipe sources before the
  server (``benchmark_lib.sh``)
  change the run only if the job's evaluation says so: the recipe is
  evaluated at the base and at the head, for every concurrency of the row,
  and the server command lines and their environment are compared as
  ``recipe show --diff`` compares them (:func:`ci_tools.evaluation.diff.diff_results`),
  with the functions the job names after the server and the values, when it
  starts, of the variables what runs after it reads.
  A changed function the job never calls changes nothing.  Where the server
  is not started by a top-level statement of the recipe (a multinode chain, a
  server started inside a function), or a side does not parse, or a command
  name is not spelled out, any change counts.
- **a launcher** (``runners/launch_<fleet>.sh``): a changed statement can
  count only for the jobs its ``if``/``elif`` conditions are not false for,
  decided on the variables the workflow gives the launcher from the job
  (:func:`ci_tools.jobs.launcher_copies.launcher_inputs`; a changed function
  can count for every job).  For those jobs the launcher is evaluated at the
  base and at the head (:mod:`ci_tools.evaluation.launcher_run`): the change
  counts when the recipe the job resolves to, or the steps the launcher
  takes (the programs it starts, their words, the environment exported to
  them, the files it wrote) differ, scheduling options and housekeeping
  aside.  A side that does not parse, or an evaluation that cannot tell (a
  file sourced from outside the repository other than a virtual
  environment's ``bin/activate``, a program known only at run time, no step
  reached) counts, and the cause says why.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from ..config import ProjectConfig
from ..evaluation.diff import diff_results, shown
from ..evaluation.launcher_run import LauncherEnv, LauncherRun, evaluate_launcher, launcher_env, mentioned, run_difference
from ..jobs.env.contract import bucket_of
from ..jobs.job import Job
from ..jobs.launcher_copies import holds, launcher_inputs
from ..jobs.resolution import job_settings
from ..revision.snapshot import Snapshot
from ..shell.model import RecipeEval
from ..shell.parse import Node
from .shell_diff import (BASE, DIR_PREFIX, HEAD, SHELL_NAME, Change, ShellDiff, called_names, calls_of, shell_diff,
                         spelled_names)
from .text_reach import text_reach
from .unset_reads import read_names, same_when_unset, unset_names

Evaluate = Callable[[Job, Snapshot], "RecipeEval | None"]
# (side, recipe, its top-level statements) -> each file the statements source (transitively) -> the first one's index
Sourced = Callable[[str, str, Sequence[Node]], dict[str, int]]
# (job, side) -> what the job's recipe resolves to there (its path, kind and the launcher's copy), for comparison
Resolve = Callable[[Job, str], "str | None"]


@dataclass(frozen=True)
class LauncherEffect:
    """A launcher change that changes a job's run: where (a changed statement, or the step that differs) and why."""

    change: Change
    why: str


@dataclass(frozen=True)
class AfterServer:
    """What of a changed file the jobs run after their server starts: ``a statement``, or the changed functions
    they reach there by name; ``line``: where at the head (0: the change is a removal); ``when``: how the jobs
    run it, as a message says it (a multinode chain's calls are not all after the servers)."""

    what: str
    line: int
    when: str = "which the jobs run after the server"


# How a message says that a multinode job's chain may call a changed function (see RunEffect._chain_reached).
IN_CHAIN = "which their multinode chain may call"


@dataclass
class _Recipe:
    """A recipe's reading for one side: where its server starts, and what it calls before and after."""

    server: tuple[int, int] | None  # the first and last top-level statement that start a server
    before: frozenset[str] = frozenset()
    after: frozenset[str] = frozenset()
    dynamic_after: bool = False
    sourced_at: dict[str, int] = field(default_factory=dict)  # file -> top-level statement that sources it
    closure: tuple[str, ...] = ()  # the recipe's files
    # The recipe's top-level statements after the last that starts a server (all of them when none is known).
    after_statements: tuple[Node, ...] = ()


class RunEffect:
    """The decisions for one change (its two snapshots), shared by every config the change touches."""

    def __init__(self, base: Snapshot, head: Snapshot, evaluate_head: Evaluate, evaluate_base: Evaluate,
                 sourced: Sourced, config: ProjectConfig, resolve: Resolve) -> None:
        self.base, self.head = base, head
        self.config = config
        self.resolve = resolve
        self._launcher_runs: dict[tuple[str, str, LauncherEnv], LauncherRun] = {}
        self.evaluate_head, self.evaluate_base = evaluate_head, evaluate_base
        self.sourced = sourced
        self._evals: dict[tuple[str, str], RecipeEval | None] = {}
        self._codes: dict[tuple[str, tuple[str, ...]], tuple[list[Node], dict[str, list[Node]]]] = {}
        self._spelled: dict[tuple[str, tuple[str, ...], frozenset[str]], frozenset[str]] = {}
        self._called_by: dict[tuple[str, tuple[str, ...]], dict[str, frozenset[str]]] = {}
        self._sides: dict[tuple[str, ...], tuple[dict[str, frozenset[str]], list[Node], dict[str, list[Node]]]] = {}
        self._reaches: dict[tuple[tuple[str, ...], frozenset[str]], frozenset[str]] = {}
        self._reads: dict[tuple[str, tuple[Node, ...], frozenset[str]], frozenset[str]] = {}
        self._environments: dict[tuple[str, str], dict[str, str | None]] = {}
        self._words: dict[tuple[str, str], frozenset[str]] = {}
        self._text_reaches: dict[tuple[str, tuple[str, ...], frozenset[str]], frozenset[str] | None] = {}
        self._files: frozenset[str] | None = None
        self._names_started: dict[tuple[str, tuple[str, ...], str], frozenset[str]] = {}

    def diff(self, path: str) -> ShellDiff:
        return shell_diff(path, self.base.read(path), self.head.read(path))

    # -- launchers ------------------------------------------------------------------------------------------

    def launcher_change(self, launcher: str, jobs: Sequence[Job]) -> LauncherEffect | None:
        """How the launcher's change changes what one of ``jobs`` runs (None: for none of them).

        A change no job's ``if``/``elif`` conditions admit changes nothing; otherwise the launcher is
        evaluated for each job at both revisions (:mod:`ci_tools.evaluation.launcher_run`) and the recipe
        each resolves to is compared.  Where the evaluation cannot tell, the change counts and says why.
        """
        change = self.diff(launcher)
        if not change.parsed:
            first = change.changes[0] if change.changes else Change(HEAD, 1, 1, 0)
            return LauncherEffect(first, "changed, and a side does not parse: what it runs cannot be told")
        candidates = list(change.changes)
        if not change.functions:
            values = [launcher_inputs(job, job_settings(job)) for job in jobs]
            candidates = [c for c in candidates if any(all(holds(g, v) is not False for g in c.guards) for v in values)]
            if not candidates:
                return None
        first = min(candidates, key=lambda c: (c.side != HEAD, c.line)) if candidates else Change(HEAD, 1, 1, 0)
        for job in jobs:
            why = self._launcher_run_differs(launcher, job)
            if why is not None:
                return LauncherEffect(first, why)  # where it changed; the reason names the step that differs
        return None

    def _launcher_run_differs(self, launcher: str, job: Job) -> str | None:
        """What differs when the launcher runs something else for ``job`` at the head, or why its evaluation
        cannot tell; None when it runs the same."""
        before, after = self.resolve(job, BASE), self.resolve(job, HEAD)
        if before != after:
            nothing = "nothing the repository holds"
            return f"changes what the job runs: now {after or nothing} instead of {before or nothing}"
        base, head = self._launcher_run(launcher, job, BASE), self._launcher_run(launcher, job, HEAD)
        why = head.unknown or base.unknown
        if why:
            return f"changed, and its evaluation cannot tell whether the job's run changed: {why}"
        found = run_difference(base, head)
        return None if found is None else f"changes what the job runs: {found}"

    def _launcher_run(self, launcher: str, job: Job, side: str) -> LauncherRun:
        snapshot = self.head if side == HEAD else self.base
        data = snapshot.read(launcher)
        if data is None:
            return LauncherRun(launcher, (), f"{launcher} does not exist at the {side}")
        env = mentioned(launcher_env(job, self.config, snapshot), data)
        key = (side, launcher, env)
        found = self._launcher_runs.get(key)
        if found is None:
            found = self._launcher_runs[key] = evaluate_launcher(env, launcher, data, self.config, snapshot)
        return found

    # -- recipe scripts -------------------------------------------------------------------------------------

    def evaluated(self, side: str, job: Job) -> RecipeEval | None:
        key = (side, job.id)
        if key not in self._evals:
            self._evals[key] = (self.evaluate_head if side == HEAD else self.evaluate_base)(
                job, self.head if side == HEAD else self.base)
        return self._evals[key]

    def _recipe(self, side: str, recipe: str, job: Job, closure: Iterable[str]) -> _Recipe:
        result = self.evaluated(side, job)
        reading = self.diff(recipe).side(side)
        lines = [loc.line for loc in (result.server_command if result is not None else []) if loc.path == recipe]
        tops = [reading.top_of(line) for line in lines]
        if not tops or None in tops or (result is not None and len(lines) != len(result.server_command)):
            return _Recipe(None, after_statements=reading.statements)
        first, last = min(t for t in tops if t is not None), max(t for t in tops if t is not None)
        before, _ = called_names(reading.statements[:last + 1])
        after, dynamic = called_names(reading.statements[last + 1:])
        bodies = self._bodies(side, closure)
        return _Recipe((first, last), _through(before, bodies), _through(after, bodies), dynamic,
                       self.sourced(side, recipe, reading.statements), tuple(closure), reading.statements[last + 1:])

    def _late(self, side: str, reading: _Recipe) -> frozenset[str]:
        """The functions the recipe may run after its server: those it calls there, and those its code spells
        other than as a command's name (`trap cleanup EXIT`: run when something else says, as late as the
        script's end)."""
        called = reading.before | reading.after
        key = (side, reading.closure, called)
        if key not in self._spelled:
            code, definitions = self._code(side, reading.closure)
            self._spelled[key] = _reach(called, self._bodies(side, reading.closure), code, definitions) - called
        return reading.after | self._spelled[key]

    def _code(self, side: str, closure: tuple[str, ...]) -> tuple[list[Node], dict[str, list[Node]]]:
        """The top-level statements of the recipe's files (what sourcing them runs), and each function's
        definitions."""
        key = (side, closure)
        if key not in self._codes:
            code: list[Node] = []
            definitions: dict[str, list[Node]] = {}
            for path in closure:
                reading = self.diff(path).side(side)
                code.extend(reading.statements)
                for name, node in reading.functions.items():
                    definitions.setdefault(name, []).append(node)
            self._codes[key] = code, definitions
        return self._codes[key]

    def _bodies(self, side: str, closure: Iterable[str]) -> dict[str, frozenset[str]]:
        """Each function of the recipe's files (the side's definitions) -> the names its body calls; read once
        per side and set of files (every row of every config sourcing the shared library asks)."""
        key = (side, tuple(closure))
        found = self._called_by.get(key)
        if found is None:
            found = self._called_by[key] = {name: frozenset().union(*(calls_of(node) for node in nodes))
                                            for name, nodes in self._code(side, key[1])[1].items()}
        return found

    def script_causes(self, recipe: str, jobs: Sequence[Job], touched: Sequence[str],
                      closure: Iterable[str]) -> dict[str, AfterServer | None]:
        """The files among ``touched`` (changed files of the recipe's closure) whose change changes what
        ``jobs`` (the concurrencies of one row) run, in ``touched``'s order, each with what of it runs after
        the server when that decided it."""
        closure = tuple(closure)
        readings: dict[str, _Recipe] = {}

        def reading(side: str) -> _Recipe:  # the base is read (and evaluated) only for a change on its side
            if side not in readings:
                readings[side] = self._recipe(side, recipe, jobs[0], closure)
            return readings[side]

        def reached(path: str, names: frozenset[str]) -> frozenset[str]:  # changed functions run after the server
            differing = self._run_differently(path, names, jobs, closure)
            return self._reached(jobs, closure, differing, touched) if differing else frozenset()

        def chained(names: frozenset[str]) -> frozenset[str]:  # changed functions a multinode chain may call
            return self._chain_reached(jobs, closure, names)

        def may_call(names: frozenset[str]) -> bool:  # whether the recipe's text may run one of them
            spelled = self._text_reach(recipe, closure, jobs)
            return spelled is None or bool(names & spelled)

        multinode = any(job.multinode for job in jobs)
        definite: dict[str, AfterServer | None] = {}
        pending: list[str] = []
        for path in touched:
            found, detail = self._classify(path, recipe, reading, reached, chained if multinode else None, may_call)
            if found and self._functions_run_alike(path, jobs, closure):
                continue
            if found == "run":
                definite[path] = detail
            elif found == "evaluate":
                pending.append(path)
        if pending and self._evaluation_differs(jobs, pending, closure, reading):
            definite.update(dict.fromkeys(pending))
        return {p: definite[p] for p in touched if p in definite}

    def _classify(self, path: str, recipe: str, reading: Callable[[str], _Recipe],
                  reached: Callable[[str, frozenset[str]], frozenset[str]],
                  chained: Callable[[frozenset[str]], frozenset[str]] | None = None,
                  may_call: Callable[[frozenset[str]], bool] | None = None) -> tuple[str, AfterServer | None]:
        """"run" (the change changes the run), "evaluate" (only evaluation can tell) or "" (it changes nothing),
        with what of it runs after the server when that decided it (a message says it: the author learns which
        statement or function of a shared library made the jobs' run change).

        Function calls are read at the head: a call the change adds or removes is a changed statement itself.
        A changed function the recipe calls after its server changes the run only when it runs otherwise for the
        jobs and they may reach it (``reached(path, names)``: those of ``names`` that do).  For multinode jobs
        (``chained``), whose servers the recipe does not start, a change of function bodies alone changes the run
        only where their chain may call one of them (:meth:`_chain_reached`).  For single-node jobs a change of
        function bodies alone that no text of the recipe's files may run (``may_call``, :mod:`.text_reach`) changes
        nothing, and no job is evaluated for it.
        """
        change = self.diff(path)
        if not change.parsed:
            return ("run" if change.changes or change.functions else ""), None
        if chained is None and may_call is not None and change.functions and not change.changes \
                and not may_call(change.functions):
            return "", None
        if chained is not None and change.functions and not change.changes:
            counted = sorted(chained(change.functions))
            if not counted:
                return "", None
            defined = change.head.functions.get(counted[0])
            return "run", AfterServer(_listed(counted), defined.line if defined is not None else 0, IN_CHAIN)
        verdict = ""
        for c in change.changes:
            server = reading(c.side).server
            if server is None:
                return "run", None
            if path == recipe:
                if c.top > server[0]:
                    return "run", AfterServer("a statement", c.line if c.side == HEAD else 0)
            else:
                at = reading(c.side).sourced_at.get(path)
                if at is None or at >= server[0]:
                    return "run", None
            verdict = "evaluate"
        if change.functions:
            head = reading(HEAD)
            if head.server is None or head.dynamic_after:
                return "run", None
            late = change.functions & self._late(HEAD, head)
            if late:
                counted = sorted(reached(path, late))
                if counted:
                    defined = change.head.functions.get(counted[0])
                    return "run", AfterServer(_listed(counted), defined.line if defined is not None else 0)
            if change.functions & head.before:
                verdict = "evaluate"
        return verdict, None

    def _functions_run_alike(self, path: str, jobs: Sequence[Job], closure: tuple[str, ...]) -> bool:
        """Whether the change of ``path`` is only functions, each of which runs as before for ``jobs`` (single-node
        ones: a multinode job's chain reads variables from files and environments outside its recipe's
        closure), wherever the recipe calls them: its server may start in one of them."""
        change = self.diff(path)
        return (change.parsed and not change.changes and bool(change.functions)
                and not any(job.multinode for job in jobs)
                and not self._run_differently(path, change.functions, jobs, closure))

    def _run_differently(self, path: str, names: frozenset[str], jobs: Sequence[Job],
                         closure: tuple[str, ...]) -> frozenset[str]:
        """Those of the changed functions ``names`` of ``path`` that may run otherwise for ``jobs``: all but those
        whose two definitions read the same with the variables the jobs leave unset taken as unset (an override
        that keeps the old behaviour by default: ``${AIPERF_SERVER_URL:-http://localhost:$PORT}``, see
        :mod:`.unset_reads`).  The jobs' environments are their evaluations' variables at the head (every variable
        the job starts with among them) and what they start with at the base; a job whose evaluation stopped on
        something it could not read keeps every function.  The base's environments are computed only for a
        function the head's leave reading the same."""
        diff = self.diff(path)
        pairs = {n: (diff.base.functions[n], diff.head.functions[n]) for n in names
                 if n in diff.base.functions and n in diff.head.functions}
        if not pairs:
            return names
        environments: list[Iterable[str]] = []
        for job in jobs:
            result = self.evaluated(HEAD, job)
            if result is None or result.errors:
                return names
            environments.append(result.variables)
        files = [(p, data) for snapshot in (self.base, self.head) for p in closure
                 if (data := snapshot.read(p)) is not None]
        kept: set[str] = set()
        for name, (base, head) in pairs.items():
            unset = unset_names((base, head), files, environments)
            if same_when_unset(base, head, unset):
                at_base = [self._started_with(BASE, job) for job in jobs]
                both = unset & unset_names((base, head), files, at_base)
                if both == unset or same_when_unset(base, head, both):
                    kept.add(name)
        return names - kept

    def _started_with(self, side: str, job: Job) -> dict[str, str | None]:
        """The environment the job's recipe starts with at ``side`` (as the fleet's launcher gives it); computed
        once per side and job (every changed function of every file of its row asks)."""
        key = (side, job.id)
        found = self._environments.get(key)
        if found is None:
            from ..jobs.contract import recipe_env

            found = self._environments[key] = recipe_env(job, self.config, self.head if side == HEAD else self.base,
                                                         as_run=True)
        return found

    def _reached(self, jobs: Sequence[Job], closure: tuple[str, ...], names: frozenset[str],
                 touched: Sequence[str]) -> frozenset[str]:
        """Those of ``names`` the runs of ``jobs`` may call, at the head or the base: functions a command of their
        evaluations named, every function the bodies of these call, and those that code of the files run
        (their top-level statements, the bodies reached) spells other than as a command's name (`trap cleanup
        EXIT`, `retry 3 run_client`), transitively.  All of ``names`` when an evaluation cannot tell: it is
        missing, stopped on something it could not read, or ran a program known only at run time (a function's
        name built from a variable).

        Evaluation follows both sides of every branch it cannot decide: a function left out is one no branch
        the jobs can take calls (the eval steps of a throughput job, ``RUN_EVAL`` false).  The head is asked
        first (its evaluations are the recipe stage's); the base, evaluated for this alone, only when the head
        reaches none of them and the two could part before such a call (:meth:`_same_until_changed`)."""
        bodies, code, definitions = self._both_sides(closure)
        found: set[str] = set()
        head_reach: list[frozenset[str]] = []
        for side in (HEAD, BASE):
            if side == BASE and self._same_until_changed(jobs, touched, head_reach):
                break
            for job in jobs:
                result = self.evaluated(side, job)
                if result is None or result.errors or result.opaque_commands:
                    return names
                key = (closure, frozenset(result.called))
                if key not in self._reaches:
                    self._reaches[key] = _reach(key[1], bodies, code, definitions)
                found |= names & self._reaches[key]
                if found == names:
                    return names
                if side == HEAD:
                    head_reach.append(self._reaches[key])
            if found:
                return frozenset(found)
        return frozenset(found)

    def _chain_reached(self, jobs: Sequence[Job], closure: tuple[str, ...], names: frozenset[str]) -> frozenset[str]:
        """Those of ``names`` (changed functions of the recipe's files) the chains of the multinode ``jobs`` may
        call: functions a command of their evaluation named, those the text of any other file the chain reads or
        names spells (a string run inside a container, `bash -c "source benchmark_lib.sh &&
        wait_for_amd_gpu_clean"`; the client script `eval "$BENCH_CMD"` runs, `bench.sh` for a throughput job,
        `trace_replay.sh` for an agentic one), at the base or the head, and transitively what their bodies call
        or spell.  All of ``names`` when an evaluation cannot tell: it is missing, stopped on something it could
        not read, or ran a program known only at run time."""
        bodies, code, definitions = self._both_sides(closure)
        defined = frozenset(definitions)
        found: set[str] = set()
        for job in jobs:
            result = self.evaluated(HEAD, job)
            if result is None or result.errors or not result.called_complete:
                return names
            files = sorted((result.read_files | result.named_files) - set(closure))
            spelled = frozenset().union(*(self._spelled_in(path) & defined for path in files))
            key = (closure, frozenset(result.called) | spelled)
            if key not in self._reaches:
                self._reaches[key] = _reach(key[1], bodies, code, definitions)
            found |= names & self._reaches[key]
            if found == names:
                break
        return frozenset(found)

    def _text_reach(self, recipe: str, closure: tuple[str, ...], jobs: Sequence[Job]) -> frozenset[str] | None:
        """The names the text of the recipe's files may call, at the base and the head (None: it cannot say; see
        :mod:`.text_reach`); read once per recipe and set of names its jobs start with."""
        environment = frozenset().union(*(self._started_names(side, job) for job in jobs for side in (BASE, HEAD)))
        key = (recipe, closure, environment)
        if key not in self._text_reaches:
            bodies, code, definitions = self._both_sides(closure)
            self._text_reaches[key] = text_reach(
                code, definitions, called_names(code)[0], environment, lambda path: self._script_words(recipe, path),
                lambda seeds: _reach(seeds, bodies, code, definitions))
        return self._text_reaches[key]

    def _started_names(self, side: str, job: Job) -> frozenset[str]:
        """The names of the environment the job's recipe starts with: its workflow template's and its fleet's
        launchers', the same for every job of a bucket and runner label (only their values differ)."""
        key = (side, bucket_of(job), str(job.fields.get("runner")))
        found = self._names_started.get(key)
        if found is None:
            found = self._names_started[key] = frozenset(self._started_with(side, job))
        return found

    def _script_words(self, recipe: str, written: str) -> frozenset[str] | None:
        """The words the script a recipe's ``bash PATH`` runs spells, at the base and the head: empty when the
        repository holds no such file (a program of the image, or a file the recipe wrote), None when the path
        holds an expansion other than the recipe's own directory (``$(dirname "$0")/``)."""
        dynamic = "$" in written or "`" in written
        target = DIR_PREFIX.sub(lambda _: posixpath.dirname(recipe) + "/", written) if dynamic else written
        if "$" in target or "`" in target:
            return None
        candidates = {posixpath.normpath(posixpath.join(posixpath.dirname(recipe), target)), posixpath.normpath(target)}
        if posixpath.isabs(target):  # the repository mounted somewhere in the container (/workspace/...)
            candidates |= {p for p in self._shell_files() if target.endswith("/" + p)}
        paths = sorted(p for p in candidates if self.head.read(p) is not None or self.base.read(p) is not None)
        if not paths and dynamic:
            return None
        return frozenset().union(*(self._spelled_in(p) for p in paths))

    def _shell_files(self) -> frozenset[str]:
        if self._files is None:
            self._files = frozenset(self.head.files()) | frozenset(self.base.files())
        return self._files

    def _spelled_in(self, path: str) -> frozenset[str]:
        """The words that could name a function in the text of ``path`` at the base and the head (comments and
        strings too: a name in a string another program runs is a call)."""
        found: frozenset[str] = frozenset()
        for side, snapshot in ((BASE, self.base), (HEAD, self.head)):
            key = (side, path)
            if key not in self._words:
                data = snapshot.read(path)
                text = data.decode("utf-8", "replace") if data else ""
                self._words[key] = frozenset(SHELL_NAME.findall(text))
            found |= self._words[key]
        return found

    def _same_until_changed(self, jobs: Sequence[Job], touched: Sequence[str],
                            head_reach: Sequence[frozenset[str]]) -> bool:
        """Whether each job's evaluation at the base runs what it runs at the head up to its first call of a
        changed function, when the head calls none: the change is only function bodies (no statement of the
        changed files differs, no function added or removed), the head's runs reach none of those functions,
        and each job starts with the same environment at both revisions.  Evaluation is the same program on
        the same input until the two runs call a function whose body differs, so the base then reaches none
        either, and need not be evaluated."""
        changed: set[str] = set()
        for path in touched:
            diff = self.diff(path)
            both = diff.base.functions.keys() & diff.head.functions.keys()
            # A function only one side defines runs there and is a command not found on the other.
            if not diff.parsed or diff.changes or not diff.functions <= both:
                return False
            changed |= diff.functions
        if any(changed & reach for reach in head_reach):
            return False
        return all(self._started_with(BASE, job) == self._started_with(HEAD, job) for job in jobs)

    def _both_sides(self, closure: tuple[str, ...]) -> tuple[dict[str, frozenset[str]], list[Node],
                                                             dict[str, list[Node]]]:
        """What the function bodies of the recipe's files call, their top-level statements and each function's
        definitions, at the base and the head together."""
        if closure not in self._sides:
            bodies: dict[str, frozenset[str]] = {}
            code: list[Node] = []
            definitions: dict[str, list[Node]] = {}
            for side in (BASE, HEAD):
                for name, called in self._bodies(side, closure).items():
                    bodies[name] = bodies.get(name, frozenset()) | called
                side_code, side_definitions = self._code(side, closure)
                code.extend(side_code)
                for name, nodes in side_definitions.items():
                    definitions.setdefault(name, []).extend(nodes)
            self._sides[closure] = bodies, code, definitions
        return self._sides[closure]

    def _evaluation_differs(self, jobs: Sequence[Job], paths: Sequence[str], closure: tuple[str, ...],
                            reading: Callable[[str], _Recipe]) -> bool:
        """Whether the server lines or their environment differ for one of ``jobs``, or the functions its
        commands name after the server starts (a change before the server that turns a step after it on or off:
        `WITH_EVAL=0`), or the values, when the server starts, of the variables what runs after it reads (a
        change before the server that changes the client's options: `NUM_PROMPTS=$((CONC * 20))`), or
        evaluation cannot tell: a side reaches no server or stops on something it cannot read, or a changed
        statement runs a program only known at run time (it could be the server).  The functions are compared
        with what their bodies call (each side's), as a call one evaluation reused from an earlier job names no
        function inside it."""
        for job in jobs:
            head, base = self.evaluated(HEAD, job), self.evaluated(BASE, job)
            if head is None or base is None or not head.servers or not base.servers or head.errors or base.errors:
                return True
            for side, result in ((HEAD, head), (BASE, base)):
                changed = [(p, c) for p in paths for c in self.diff(p).changes if c.side == side]
                if any(loc.path == p and c.line <= loc.line <= c.end_line
                       for loc in result.opaque_commands for p, c in changed):
                    return True
            if diff_results(base, head):
                return True
            late = {side: _through(result.called_late, self._bodies(side, closure))
                    for side, result in ((HEAD, head), (BASE, base))}
            if late[HEAD] != late[BASE]:
                return True
            read = self._late_reads(HEAD, reading(HEAD), late[HEAD]) | self._late_reads(BASE, reading(BASE), late[BASE])
            if any(shown(base.variables.get(name)) != shown(head.variables.get(name)) for name in read):
                return True
        return False

    def _late_reads(self, side: str, recipe: _Recipe, functions: frozenset[str]) -> frozenset[str]:
        """The variables read by what runs after the server: the recipe's statements after the one that starts
        it, and the bodies of ``functions`` (those the job names there, with what they call)."""
        key = (side, recipe.after_statements, functions)
        found = self._reads.get(key)
        if found is None:
            definitions = self._code(side, recipe.closure)[1]
            nodes = [*recipe.after_statements, *(node for name in functions for node in definitions.get(name, ()))]
            found = self._reads[key] = frozenset().union(*(read_names(node) for node in nodes))
        return found


def _listed(names: list[str], most: int = 3) -> str:
    """``a``, ``a and b``, ``a, b and c``, ``a, b, c and 2 more``."""
    if len(names) > most:
        return f"{', '.join(names[:most])} and {len(names) - most} more"
    return " and ".join([", ".join(names[:-1]), names[-1]]) if len(names) > 1 else names[0]


def _reach(seeds: frozenset[str], bodies: dict[str, frozenset[str]], code: Sequence[Node],
           definitions: dict[str, list[Node]]) -> frozenset[str]:
    """``seeds``, the functions ``code`` spells other than as a command's name, and, transitively, every
    function the bodies of these call or spell."""
    defined = frozenset(definitions)
    reached = _through(seeds | frozenset(n for node in code for n in spelled_names(node) & defined), bodies)
    read: set[str] = set()
    while True:
        unread = [name for name in reached if name in definitions and name not in read]
        if not unread:
            return reached
        read.update(unread)
        spelled = {n for name in unread for node in definitions[name] for n in spelled_names(node) & defined}
        reached = _through(reached | spelled, bodies)


def _through(names: frozenset[str], bodies: dict[str, frozenset[str]]) -> frozenset[str]:
    """``names`` and every name the functions among them call, transitively."""
    seen = set(names)
    todo = [n for n in names if n in bodies]
    while todo:
        for called in bodies.get(todo.pop(), frozenset()):
            if called not in seen:
                seen.add(called)
                todo.append(called)
    return frozenset(seen)


__all__ = ["IN_CHAIN", "AfterServer", "RunEffect"]
