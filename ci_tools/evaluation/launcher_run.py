"""What a fleet's launcher runs for one job: its launch steps, evaluated, never executed.

Coverage asks whether a change of ``runners/launch_<fleet>.sh`` changes what a
job runs (:mod:`ci_tools.changelog.run_effect`).  The launcher is evaluated
for the job at the base and at the head by the recipe interpreter, started
with what the workflow gives it (:meth:`ci_tools.jobs.env.contract.JobEnvContract.workflow_env`;
the runner's own variables unknown, every other variable unset, so an
override variable the sweep never sets takes its default).  Each external
command it reaches is a *step*: its program and words, the variables it
exports at that point and the files it wrote.  Two evaluations that give the
same steps run the same thing.  What does not count:

- housekeeping programs (``echo``, ``rm``, ``cp``, ``mkdir``, ``squeue``,
  ``flock``, ``unsquashfs``, ...): they move files and logs around, they
  start nothing.  The recipe directories a launcher copies are compared as
  the recipe each job resolves to (:mod:`ci_tools.jobs.resolution`);
- Slurm's scheduling options (``--time``, ``--job-name``, ``--partition``,
  ``--account``, ``--output``, ``--jobid``, ``--no-shell``);
- the path of a squash file: ``enroot import -o FILE docker://IMAGE`` is the
  image, and ``--container-image=FILE`` afterwards is that image wherever
  FILE is kept.

A value known only at run time is compared by how it is written and the
values of the variables it names (``$(echo "$IMAGE" | sed ...)`` differs
when ``IMAGE`` does).  The comparison is location-free: a statement that
only moved changes nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

from ..config import ProjectConfig
from ..findings import Location
from ..jobs.env.contract import contract_for
from ..jobs.job import Job
from ..revision.snapshot import Snapshot
from ..shell.conditions import Tri
from ..shell.interp import BUILTIN_NAMES, Interpreter
from ..shell.expand import ShellExit
from ..shell.model import Value
from ..shell.parse import Node, parse_script
from ..shell.state import ArrayVal, Binding

# Programs that print, read, make directories, remove caches or query the scheduler: no launch step.  (A
# launcher's `cp`, `mv`, `ln`, `sed -i` and `find -exec` can rewrite what a recipe reads: they are steps.)
HOUSEKEEPING = frozenset({
    "echo", "printf", "cat", "ls", "mkdir", "rm", "rmdir", "touch", "chmod", "chown", "sleep",
    "date", "tee", "head", "tail", "grep", "egrep", "sed", "awk", "cut", "tr", "sort", "uniq", "wc", "find",
    "xargs", "basename", "dirname", "realpath", "readlink", "squeue", "scontrol", "sacct", "scancel", "sinfo",
    "sstat", "flock", "unsquashfs", "sync", "kill", "pkill", "hostname", "whoami", "id", "df", "du", "stat",
    "mktemp", "tput", "column", "nvidia-smi", "rocm-smi", "amd-smi", "diff", "cmp", "test", "[", "true", "false",
    "trap", "shopt", "ulimit", "umask",
})
# Housekeeping unless given one of these: then they edit or run something.
_EDITS = {"sed": ("-i", "--in-place"), "find": ("-exec", "-execdir", "-ok", "-okdir", "-delete")}
# Scheduler options that say when, where and under which name, not what runs (True: its value may be the next
# word, `--time 180`, when it is not written `--time=180`).
_SCHEDULERS = frozenset({"salloc", "srun", "sbatch"})
_SCHEDULING = {"--time": True, "-t": True, "--job-name": True, "-J": True, "--partition": True, "-p": True,
               "--account": True, "-A": True, "--output": True, "-o": True, "--error": True, "-e": True,
               "--comment": True, "--mail-type": True, "--mail-user": True, "--jobid": True, "--no-shell": False,
               "--open-mode": True, "--quiet": False, "-Q": False}
# Steps that start no program of the job: their environment does not matter.
_RUNS_NOTHING = {("enroot", "import"), ("docker", "pull"), ("git", "clone"), ("git", "checkout")}
_NAME = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")
_IMAGE_OPTION = "--container-image="

Piece = object  # a known text, or ("?", how it is written, the values of the variables it names)


@dataclass(frozen=True)
class Step:
    """One external command the launcher reaches: ``words`` and ``env`` compare location-free."""

    line: int
    program: str
    words: tuple[Piece, ...]
    env: tuple[tuple[str, Piece], ...]

    def same(self, other: Step) -> bool:
        return (self.program, self.words, self.env) == (other.program, other.words, other.env)


@dataclass(frozen=True)
class LauncherRun:
    """A launcher evaluated for one job; ``unknown`` says why the evaluation cannot tell ("" when it can)."""

    path: str
    steps: tuple[Step, ...]
    unknown: str = ""


def _pieces(value: Value, names: Mapping[str, Binding] | None) -> tuple[Piece, ...]:
    if value.text is not None:
        return (value.text,)
    if value.alternatives:
        return (("alternatives", tuple(_pieces(v, names) for v in value.alternatives)),)
    if value.parts:
        out: list[Piece] = []
        for part in value.parts:
            for piece in _pieces(part, names):
                if isinstance(piece, str) and out and isinstance(out[-1], str):
                    out[-1] = out[-1] + piece
                else:
                    out.append(piece)
        return tuple(out)
    named: tuple[tuple[str, Piece], ...] = ()
    if names is not None:
        named = tuple((n, _shallow(names.get(n))) for n in dict.fromkeys(_NAME.findall(value.expression)))
    unknown = ("?", value.expression, named)
    return (value.known_prefix, unknown) if value.known_prefix else (unknown,)


def _shallow(binding: Binding | None) -> Piece:
    """A variable's value as one piece, without following the variables it names in turn."""
    if binding is None:
        return None
    if isinstance(binding, ArrayVal):
        return tuple(_shallow(v) for v in binding.items)
    return binding.text if binding.text is not None else ("?", binding.known_prefix, binding.expression)


class _LauncherInterpreter(Interpreter):
    """The recipe interpreter over a launcher: external commands are recorded as steps, not followed."""

    def __init__(self, path: str, config: ProjectConfig, snapshot: Snapshot) -> None:
        super().__init__(path, config, snapshot)
        self.steps: list[Step] = []
        self.images: dict[tuple[Piece, ...], tuple[Piece, ...]] = {}  # squash file -> the image imported into it
        self.unknown_programs: list[int] = []

    def stmt(self, n: Node) -> Tri:
        if n.type != "command":
            return super().stmt(n)
        name_node = n.child_of_type("command_name")
        if name_node is None:
            return super().stmt(n)
        literal = name_node.text if "$" not in name_node.text and "`" not in name_node.text else None
        if literal is not None and literal not in _EDITS and self._no_step(literal):
            return super().stmt(n)  # spelled out: known before its words are evaluated
        words = [c for c in name_node.children if c.named]
        words += [c for c in n.children if c.named and c.type not in ("command_name", "variable_assignment", "comment",
                                                                      "file_redirect", "heredoc_redirect",
                                                                      "herestring_redirect")]
        argv = [v for _, v in self.argv(words)]
        replaces = bool(argv) and argv[0].text == "exec"
        if replaces:
            argv = argv[1:]  # `exec PROGRAM ...` runs PROGRAM instead of the launcher; `exec 9>FILE` opens a file
        if not argv:
            return super().stmt(n)
        program = argv[0].text
        if program is None:
            self.unknown_programs.append(n.line)
            program = "?"
        program = program.rsplit("/", 1)[-1]
        if program in _EDITS:
            edits = _EDITS[program]
            if not any(a.text is None or a.text.startswith(edits) for a in argv[1:]):
                return super().stmt(n)  # a filter or a search: it prints
        elif self._no_step(program):
            return super().stmt(n)
        self._record(n, program, argv)
        if replaces:
            raise ShellExit("", n)  # nothing after it runs
        if program == "cd" or self.sink is not None:
            return super().stmt(n)  # the directory changes; a command substitution's output stays unknown
        return None  # its exit status is known only when it runs (a script it starts is not followed)

    def _no_step(self, program: str) -> bool:
        """A function of the launcher, a housekeeping program or a builtin other than ``cd``: evaluated, not
        recorded."""
        return program in self.state.functions or program in HOUSEKEEPING or (program in BUILTIN_NAMES
                                                                             and program != "cd")

    def _record(self, n: Node, program: str, argv: list[Value]) -> None:
        vars = self.state.vars
        words = [_pieces(v, vars) for v in argv[1:]]
        subcommand = words[0][0] if words and len(words[0]) == 1 else None
        starts_nothing = ((program, subcommand) in _RUNS_NOTHING
                          or (program == "salloc" and ("--no-shell",) in words))
        if program == "enroot" and words[:1] == [("import",)] and len(words) >= 4 and words[1] == ("-o",):
            # The squash file is where the image is kept: the image is what the later steps run.
            self.images[words[2]] = words[3]
            words = [words[0], words[3]]
        if program in _SCHEDULERS:
            words = _without_scheduling(words)
        kept: list[Piece] = []
        for word in words:
            first = word[0] if word else ""
            if isinstance(first, str) and first.startswith(_IMAGE_OPTION):
                rest = ((first[len(_IMAGE_OPTION):],) if first != _IMAGE_OPTION else ()) + tuple(word[1:])
                image = self.images.get(rest)
                if image is not None:
                    word = ("image", *image)
            kept.append(word)
        env: tuple[tuple[str, Piece], ...] = tuple(
            (name, _pieces(_scalar(vars[name]), vars)) for name in sorted(self.state.exported) if name in vars)
        if starts_nothing:
            env = ()  # it starts nothing that sees the environment
        for assignment in (c for c in n.children if c.type == "variable_assignment"):
            env += ((assignment.text, "prefix"),)
        files = tuple((path, _pieces(value, vars)) for path, value in sorted(self.state.files.items()))
        self.steps.append(Step(n.line, program, tuple(kept), env + (("\0files", files),)))


def _scalar(binding: Binding) -> Value:
    return binding.joined() if isinstance(binding, ArrayVal) else binding


def _without_scheduling(words: list[tuple[Piece, ...]]) -> list[tuple[Piece, ...]]:
    out: list[tuple[Piece, ...]] = []
    skip = False
    for word in words:
        if skip:
            skip = False
            continue
        first = word[0] if word else ""
        option = first.split("=", 1)[0] if isinstance(first, str) else ""
        if option in _SCHEDULING:
            skip = _SCHEDULING[option] and isinstance(first, str) and "=" not in first and len(word) == 1
            continue
        out.append(word)
    return out


LauncherEnv = tuple[tuple[str, "str | None"], ...]


def launcher_env(job: Job, config: ProjectConfig, snapshot: Snapshot) -> dict[str, str | None]:
    """What the workflow starts the job's launcher with (None: known only on the runner)."""
    contract = contract_for(config, snapshot)
    env: dict[str, str | None] = {name: None for name, _ in contract.runtime}
    env.update((name, var.value) for name, var in contract.workflow_env(job).items())
    return env


def mentioned(env: Mapping[str, str | None], data: bytes) -> LauncherEnv:
    """The part of ``env`` the launcher's text names: jobs that agree on it evaluate alike."""
    text = data.decode("utf-8", "replace")
    return tuple(sorted((name, value) for name, value in env.items() if name in text))


def evaluate_launcher(env: LauncherEnv, path: str, data: bytes, config: ProjectConfig,
                      snapshot: Snapshot) -> LauncherRun:
    """The launcher at ``path`` (its text ``data``) evaluated as the workflow starts it with ``env``."""
    interp = _LauncherInterpreter(path, config, snapshot)
    state = interp.state
    origin = Location(path, 0, note="the workflow's environment")
    for name, value in env:
        state.vars[name] = Value(value, origin)
        state.exported.add(name)
    interp.run(parse_script(path, data))
    steps = tuple(interp.steps)
    why = ""
    if interp.errors:
        why = f"the launcher could not be evaluated ({interp.errors[0]})"
    elif interp.unknown_programs:
        why = f"a command at {path}:{interp.unknown_programs[0]} runs a program known only at run time"
    elif not steps:
        why = f"{path} reaches no command that starts the job"
    return LauncherRun(path, steps, why)


def run_difference(base: LauncherRun, head: LauncherRun) -> str | None:
    """How the head's run differs from the base's, in words; None when they are the same."""
    for i, step in enumerate(head.steps):
        old = base.steps[i] if i < len(base.steps) else None
        where = f"{step.program} at {head.path}:{step.line}"
        if old is None:
            return f"it now runs {where}"
        if old.same(step):
            continue
        if (old.program, old.words) != (step.program, step.words):
            return f"{where} is started differently"
        was, now = dict(old.env), dict(step.env)
        names = sorted(n for n in was.keys() | now.keys() if was.get(n) != now.get(n))
        shown = ", ".join(n for n in names if not n.startswith("\0")) or "the files the launcher wrote"
        return f"{where} starts with another environment ({shown})"
    if len(base.steps) > len(head.steps):
        old = base.steps[len(head.steps)]
        return f"it no longer runs {old.program} ({base.path}:{old.line} at the base)"
    return None


__all__ = ["HOUSEKEEPING", "LauncherEnv", "LauncherRun", "Step", "evaluate_launcher", "launcher_env", "mentioned",
           "run_difference"]
