"""What ci-tools states about a job's server against what bash really ran: every stated flag and variable, equal or not.

ci-tools' side is the evaluation ``recipe show`` prints for the job
(``evaluate_job``): per server, its flags in order, each with a value that is
known, unknown (``<unknown>``: a run-time value such as ``$PORT``; not a
statement), conditional (one side of a branch the evaluator could not
decide) or absent (a switch); and the environment exported when the server
starts.  Bash's side is the argv and environment the stand-in server received.

A flag ci-tools states (known value, or a switch) is *equal* when bash gave the
server that flag with that value, in the same position among the flags of that
name (``--flag a --flag b`` is two statements).  A conditional flag is a
statement only about its value: equal when bash gave one of its possible
values, or did not give the flag.  A variable ci-tools states (a known,
unconditional value the recipe or its launcher set, not the job's own
environment) is equal when the server's environment holds that value.  Flags
bash gave that ci-tools does not state at all are listed too (``unstated``):
they are not in the percentage, which is about what ci-tools says.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from ci_tools.evaluation.env_values import ENV_NOTE
from ci_tools.shell.model import RecipeEval, ServerFlag, Value
from ci_tools.shell.server import UNKNOWN_FLAG

_NEGATIVE_NUMBER = re.compile(r"^-[0-9.]")
# Launch forms whose first word is the model, as the server programs take it (vllm serve MODEL ...).
MODEL_FIRST = ("vllm serve", "sglang serve", "trtllm-serve")


def is_flag(word: str) -> bool:
    return word.startswith("-") and word != "-" and not _NEGATIVE_NUMBER.match(word)


def bash_flags(words: tuple[str, ...], model_first: bool) -> list[tuple[str, str | None]]:
    """The flags of a server argv (the words after the launch form) as the program's parser sees them:
    ``--name=value``, ``--name value`` (a next word that is not a flag; several such words are one list value,
    ``--cuda-graph-bs 1 2 4`` as "1 2 4", as ci-tools states a list), ``--name`` alone."""
    out: list[tuple[str, str | None]] = []
    i = 1 if model_first and words and not is_flag(words[0]) else 0
    while i < len(words):
        word = words[i]
        if not is_flag(word):
            i += 1
            continue
        if word.startswith("--") and "=" in word:
            name, _, value = word.partition("=")
            out.append((name, value))
            i += 1
        elif i + 1 < len(words) and not is_flag(words[i + 1]):
            end = i + 2
            while end < len(words) and not is_flag(words[end]):
                end += 1
            out.append((word, " ".join(words[i + 1:end])))
            i = end
        else:
            out.append((word, None))
            i += 1
    return out


@dataclass
class Disagreement:
    server: int
    name: str
    stated: str  # what ci-tools says ("--flag value", "--flag", "NAME=value")
    actual: str  # what bash did
    part: str = "server"  # or "router"

    def __str__(self) -> str:
        return f"{self.part} {self.server}: ci-tools states {self.stated}, bash ran {self.actual}"


@dataclass
class Comparison:
    """One job: how many statements of ci-tools were checked against bash, and which were not equal."""

    flags_stated: int = 0
    flags_equal: int = 0
    env_stated: int = 0
    env_equal: int = 0
    disagreements: list[Disagreement] = field(default_factory=list)
    unstated: list[str] = field(default_factory=list)  # flags bash gave that ci-tools does not name
    # Flags whose value ci-tools leaves to run time (``--port <unknown>``): no statement, listed for the figures.
    unknown: list[str] = field(default_factory=list)
    # Variables of a server's environment that the launch step did not start with and recipe show does not list.
    env_unstated: list[str] = field(default_factory=list)
    servers_stated: int = 0
    servers_run: int = 0
    # Routers (`recipe show`'s `router` lines) and the router commands bash ran, compared as servers are.
    routers_stated: int = 0
    routers_run: int = 0
    router_lines_identical: int = 0
    # Server lines whose flags bash gave as ci-tools states them: the same flags in the same order, none more,
    # every value ci-tools knows equal (a flag on an undecided side of a branch may be absent); and of those,
    # the lines where ci-tools knows every value (no run-time value such as $PORT).
    lines_identical: int = 0
    lines_identical_known: int = 0
    # Servers bash started beyond one per stated server of a multinode job (a role's other nodes or workers).
    replicas: int = 0

    @property
    def equal(self) -> bool:
        return not self.disagreements


def _shown(name: str, value: str | None) -> str:
    return name if value is None else f"{name} {value!r}"


def _possible(flag: ServerFlag) -> list[str | None] | None:
    """The values ci-tools allows for a flag; None when it states nothing (unknown value or name)."""
    if flag.name == UNKNOWN_FLAG:
        return None
    if flag.value is None:
        return [None]
    if flag.value.text is not None:
        return [flag.value.text]
    texts = [a.text for a in flag.value.alternatives]
    if texts and all(t is not None for t in texts):
        return list(texts)
    return None


def compare_server(index: int, flags: list[ServerFlag], words: tuple[str, ...], model_first: bool,
                   out: Comparison, part: str = "server") -> None:
    actual = bash_flags(words, model_first)
    by_name: dict[str, list[str | None]] = defaultdict(list)
    for name, value in actual:
        by_name[name].append(value)
    seen: dict[str, int] = defaultdict(int)
    stated_names = {f.name for f in flags}
    for flag in flags:
        possible = _possible(flag)
        position = seen[flag.name]
        seen[flag.name] += 1
        if possible is None:
            out.unknown.append(flag.name)
            continue
        conditional = flag.conditional or (flag.value is not None and flag.value.conditional)
        given = by_name.get(flag.name, [])
        out.flags_stated += 1
        if position < len(given):
            if given[position] in possible:
                out.flags_equal += 1
                continue
            actual_text = _shown(flag.name, given[position])
        elif conditional:
            out.flags_equal += 1  # not given: the other side of the undecided branch
            continue
        else:
            actual_text = f"no {flag.name}" if not given else f"{flag.name} only {len(given)} time(s)"
        stated = " or ".join(_shown(flag.name, p) for p in possible) + (" (conditional)" if conditional else "")
        out.disagreements.append(Disagreement(index, flag.name, stated, actual_text, part))
    for name, values in by_name.items():
        if name not in stated_names and UNKNOWN_FLAG not in stated_names:
            out.unstated.extend(_shown(name, v) for v in values)
    identical, known = _same_line(flags, actual)
    if part == "router":
        out.router_lines_identical += identical
        return
    out.lines_identical += identical
    out.lines_identical_known += identical and known


def _same_line(flags: list[ServerFlag], actual: list[tuple[str, str | None]]) -> tuple[bool, bool]:
    """(bash gave the flags ci-tools states, in order and no more, with every known value; every value known)."""
    at, known = 0, True
    for flag in flags:
        if flag.name == UNKNOWN_FLAG:
            return False, False
        possible = _possible(flag)
        conditional = flag.conditional or (flag.value is not None and flag.value.conditional)
        if at < len(actual) and actual[at][0] == flag.name:
            if possible is None:
                known = False
            elif actual[at][1] not in possible:
                return False, False
            known = known and not conditional
            at += 1
        elif not conditional:
            return False, False
        else:
            known = False
    return at == len(actual), known


# What no recipe sets: bash's own variables, the HOME and HOSTNAME docker gives a container, and what Slurm
# gives a job step when it runs (SLURM_*).
_RUN_TIME_ENV = frozenset({"HOSTNAME", "HOME", "PWD", "OLDPWD", "SHLVL", "_"})


def _env_statement(value: Value) -> bool:
    """Whether recipe show states this variable's value (known, unconditional, not the job's own environment)."""
    return value.text is not None and not value.conditional and value.location.note != ENV_NOTE


def statements(result: RecipeEval) -> set[tuple[str, str]]:
    """What ``compare`` checks of an evaluation, by name: ("flag", name), ("router flag", name) and ("variable",
    name)."""
    out = {("flag", flag.name) for flags in result.servers for flag in flags if _possible(flag) is not None}
    out |= {("router flag", flag.name) for router in result.routers for flag in router.flags
            if _possible(flag) is not None}
    for index in range(len(result.servers)):
        out.update(("variable", name) for name, value in result.env_of(index).items() if _env_statement(value))
    return out


def compare_env(index: int, result: RecipeEval, env: dict[str, str], out: Comparison,
                started: dict[str, str] | None = None) -> None:
    stated = result.env_of(index)
    if started is not None:
        out.env_unstated.extend(f"server {index}: {name}={value!r}" for name, value in env.items()
                                if name not in stated and started.get(name) != value
                                and name not in _RUN_TIME_ENV and not name.startswith("SLURM"))
    for name, value in stated.items():
        if not _env_statement(value):
            continue
        out.env_stated += 1
        if env.get(name) == value.text:
            out.env_equal += 1
        else:
            actual = f"{name}={env[name]!r}" if name in env else f"no {name}"
            out.disagreements.append(Disagreement(index, name, f"{name}={value.text!r}", actual))


def compare(result: RecipeEval, servers: list[tuple[str, tuple[str, ...], dict[str, str]]],
            started: dict[str, str] | None = None,
            routers: list[tuple[str, tuple[str, ...]]] | None = None) -> Comparison:
    """ci-tools' evaluation of a job against the servers bash started: (launch form, words after it,
    environment) in the order they started.  ``started``: the environment the launch step started with; a
    server's variable that is neither in it nor listed by recipe show is kept in ``env_unstated``."""
    out = Comparison(servers_stated=len(result.servers), servers_run=len(servers))
    if result.roles:
        _compare_roles(result, servers, out, started)
    else:
        for index, flags in enumerate(result.servers):
            if index >= len(servers):
                out.disagreements.append(Disagreement(index, "<server>", f"server {index} ({len(flags)} flags)",
                                                      "no such server started"))
                continue
            form, words, env = servers[index]
            compare_server(index, flags, words, form in MODEL_FIRST, out)
            compare_env(index, result, env, out, started)
    if routers is not None:
        _compare_routers(result, routers, out)
    return out


def _compare_roles(result: RecipeEval, servers: list[tuple[str, tuple[str, ...], dict[str, str]]],
                   out: Comparison, started: dict[str, str] | None) -> None:
    """A multinode job: ci-tools states one server per role (prefill, decode ...), bash starts one per node or
    worker, on nodes that start at once (no order).  Each server bash ran belongs to the stated server it
    agrees with most (the role flags, `--disaggregation-mode prefill`, are statements like any other, so a
    server of one role is not taken for another's).  A stated server is held to the one of its servers that
    agrees most (the first node of the role: its NODE_RANK, its --node-rank); the others of the role are
    counted (``replicas``), not compared.  Every stated server must be met by one at least."""
    best: dict[int, Comparison] = {}
    for form, words, env in servers:
        trials = []
        for index, flags in enumerate(result.servers):
            trial = Comparison()
            compare_server(index, flags, words, form in MODEL_FIRST, trial)
            compare_env(index, result, env, trial, started)
            trials.append((len(trial.disagreements), index, trial))
        misses, index, trial = min(trials, key=lambda t: t[:2])
        if index in best:
            out.replicas += 1
            if misses >= len(best[index].disagreements):
                continue
        best[index] = trial
    for index, flags in enumerate(result.servers):
        if index in best:
            _add(out, best[index])
        else:
            out.disagreements.append(Disagreement(index, "<server>", f"{result.role_of(index)} server {index} "
                                                  f"({len(flags)} flags)", "no such server started"))


def _add(out: Comparison, one: Comparison) -> None:
    """Add one server's comparison to the job's."""
    out.flags_stated += one.flags_stated
    out.flags_equal += one.flags_equal
    out.env_stated += one.env_stated
    out.env_equal += one.env_equal
    out.disagreements.extend(one.disagreements)
    out.unstated.extend(one.unstated)
    out.unknown.extend(one.unknown)
    out.env_unstated.extend(one.env_unstated)
    out.lines_identical += one.lines_identical
    out.lines_identical_known += one.lines_identical_known


def _compare_routers(result: RecipeEval, routers: list[tuple[str, tuple[str, ...]]], out: Comparison) -> None:
    """The routers ``recipe show`` lists against the router commands bash ran (launch form, words after it), in
    the order they started: as many, each flag stated as bash gave it."""
    out.routers_stated, out.routers_run = len(result.routers), len(routers)
    for index in range(max(len(result.routers), len(routers))):
        if index >= len(routers):
            out.disagreements.append(Disagreement(index, "<router>", f"router {index}", "no such router started",
                                                  "router"))
        elif index >= len(result.routers):
            out.disagreements.append(Disagreement(index, "<router>", "no such router",
                                                  f"{routers[index][0]} {' '.join(routers[index][1])}", "router"))
        else:
            compare_server(index, list(result.routers[index].flags), routers[index][1], False, out, "router")
