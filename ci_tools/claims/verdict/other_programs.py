"""A flag the server is never given that the recipe gives another program it runs.

A recipe starts more than its server: an LMCache server (``LMCACHE_CMD=(lmcache server ... --shm-name "")``), a
benchmark client (``REPLAY_CMD+=" --allow-empty-content"``), an installer.  "Run one LMCache MP server per node
with --shm-name ''" is true of the recipe, whose server command line has no such flag.  The evaluation follows the
server's command line only, so where no job's server is given a flag the text names and the recipe's own text
writes it for some other command, the claim is about that command: it is left unverified, with where the recipe
writes it, rather than reported as a setting no job sets.

What feeds the server is read from the file's words: the variables its command line expands (``"${PARALLEL_ARGS[@]}"``)
and those their assignments expand in turn.  A flag written into one of them is the server's, in a branch these
jobs do not take (``PARALLEL_ARGS=(... --enable-deepseek-v4-fp4-indexer)`` of the DP-attention branch), and its
claim is checked as before: a flag a PR removed from the branch its jobs take stays a setting no job sets.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from ...findings import Location
from ...revision.snapshot import Snapshot
from ...shell.model import RecipeEval
from .compare import Judgement

# A line that assigns a variable (``NAME=(``, ``NAME+=(--x ...)``, ``NAME="... --x"``, ``export NAME=...``).
_ASSIGNS = re.compile(r"^\s*(?:export\s+|local\s+|declare\s+-\w+\s+)?(?P<name>[A-Za-z_]\w*)\+?=")
_EXPANDED = re.compile(r"\$\{?#?!?(?P<name>[A-Za-z_]\w*)")


def passed_to_another_program(judgement: Judgement, snapshot: Snapshot,
                              evals: Mapping[str, RecipeEval | None]) -> Location | None:
    """Where a recipe of the claim's jobs writes the flag no server of the entry is given, for a command other than
    its server (outside a comment); None when some server of the entry's jobs is given it, or the recipe writes it
    nowhere but into its server's arguments."""
    claim = judgement.claim
    name = claim.subject.name if claim.subject is not None else ""
    if claim.kind != "recipe" or not name.startswith("--") or "." in name or not judgement.sets_nothing:
        return None
    if any(ev is not None and ev.flag_values(name) for ev in evals.values()):
        return None  # a server flag, written in a branch of the recipe these jobs do not take
    written = re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])")
    recipes = {ev.recipe: ev for job, _ in judgement.false if (ev := evals.get(job.id)) is not None and ev.recipe}
    for ev in recipes.values():  # one evaluation a recipe file: its server's command lines are where the file has them
        data = snapshot.read(ev.recipe)
        if data is None:
            continue
        lines = data.decode("utf-8", "replace").splitlines()
        feeding = server_variables(lines, [w.line for w in ev.server_command if w.path == ev.recipe])
        for number, line in enumerate(lines, 1):
            m = written.search(line)
            if m is None or line.lstrip().startswith("#"):
                continue
            variable = variable_written_at(lines, number - 1)
            if variable and variable not in feeding:  # (a command line of its own may be the server's)
                return Location(ev.recipe, number, m.start() + 1)
    return None


def _span(lines: Sequence[str], start: int) -> list[int]:
    """The lines of the command (or array literal) that begins at index ``start``: continued with a backslash, or
    up to the ``)`` that closes an array opened there."""
    out = [start]
    opened = _ASSIGNS.match(lines[start]) is not None and lines[start].rstrip().endswith("(")
    k = start
    while k + 1 < len(lines) and (lines[k].rstrip().endswith("\\") or (opened and not lines[k + 1].strip().startswith(")"))):
        k += 1
        out.append(k)
    return out


def variable_written_at(lines: Sequence[str], index: int) -> str:
    """The variable whose assignment writes line ``index`` ("" where the line is part of a command, not of an
    assignment): on that line, or a multi-line assignment begun above it (an array literal, a continued string)."""
    for k in range(index, max(-1, index - 80), -1):
        if k < index and lines[k].strip().startswith(")"):
            return ""  # an array closed above this line: the line is not in it
        m = _ASSIGNS.match(lines[k])
        if m is not None and index in _span(lines, k):
            return m.group("name")
    return ""


def server_variables(lines: Sequence[str], starts: Sequence[int]) -> set[str]:
    """The variables the server's command lines (beginning at the 1-based ``starts``) expand, and those their
    assignments expand in turn."""
    expanded = {n.group("name") for s in starts for k in _span(lines, s - 1) for n in _EXPANDED.finditer(lines[k])}
    assignments: dict[str, list[str]] = {}
    for k, line in enumerate(lines):
        m = _ASSIGNS.match(line)
        if m is not None:
            assignments.setdefault(m.group("name"), []).extend(lines[j] for j in _span(lines, k))
    feeding: set[str] = set()
    todo = list(expanded)
    while todo:
        var = todo.pop()
        if var in feeding:
            continue
        feeding.add(var)
        todo.extend(n.group("name") for text in assignments.get(var, []) for n in _EXPANDED.finditer(text))
    return feeding
