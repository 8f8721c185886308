"""What a change did to a shell file, statement by statement, and which names its statements call.

Coverage asks whether a change alters a job's run, not whether a file the job
reads changed (:mod:`ci_tools.changelog.run_effect`).  A shell file's change
is read here from the two syntax trees:

- the *functions* whose definition changed (added, removed or edited);
- the other *statements* changed, added or removed, aligned by their text
  without comments and with runs of whitespace as one space (a comment or a
  re-indentation changes nothing), each with the top-level statement it
  belongs to;
- an ``if`` statement present on both sides is read clause by clause: a
  clause whose condition reads the same on both sides is looked into (its
  condition, true, guards what changed in it), a clause only one side has is
  a change under its own condition, and every clause's guard also holds the
  earlier clauses' conditions false.  A new ``elif`` branch for one model is
  then a change only for the jobs whose variables do not make its condition
  false (:func:`ci_tools.jobs.launcher_copies.holds`).

A side that does not parse cleanly leaves the whole file changed.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import lru_cache

from ..bounded import BoundedDict
from ..jobs.launcher_copies import Guard
from ..shell.effects import code_text
from ..shell.parse import Node, if_clauses, parse_script

BASE, HEAD = "base", "head"


@dataclass(frozen=True)
class Change:
    """A changed statement: its side, lines, the top-level statement it is in, and the conditions around it."""

    side: str
    line: int
    end_line: int
    top: int  # index among its side's top-level statements (functions left out)
    guards: tuple[Guard, ...] = ()


@dataclass(frozen=True)
class Side:
    """One revision of the file: its top-level statements (functions left out) and its function bodies."""

    statements: tuple[Node, ...]
    functions: dict[str, Node]
    parsed: bool

    def top_of(self, line: int) -> int | None:
        """The index of the top-level statement holding ``line`` (None: none does, e.g. a function's body)."""
        for i, node in enumerate(self.statements):
            if node.line <= line <= last_line(node):
                return i
        return None


@dataclass(frozen=True)
class ShellDiff:
    base: Side
    head: Side
    changes: tuple[Change, ...]
    functions: frozenset[str]  # names whose definition changed

    @property
    def parsed(self) -> bool:
        return self.base.parsed and self.head.parsed

    def side(self, name: str) -> Side:
        return self.head if name == HEAD else self.base


def last_line(node: Node) -> int:
    """The line a node's last character is on."""
    return node.script.position(max(node.end - 1, node.start))[0]


def normalized(node: Node) -> bytes:
    """A statement's text without its comments, continued lines joined, runs of whitespace as one space."""
    return b" ".join(code_text(node).encode("utf-8", "surrogateescape").replace(b"\\\n", b" ").split())


def read_side(path: str, data: bytes | None) -> Side:
    if data is None:
        return Side((), {}, True)
    script = parse_script(path, data)
    statements: list[Node] = []
    functions: dict[str, Node] = {}
    for node in script.root.children:
        if not node.named or node.type == "comment":
            continue
        if node.type == "function_definition":
            name = node.child_of_type("word")
            functions[name.text if name is not None else ""] = node
        else:
            statements.append(node)
    return Side(tuple(statements), functions, not script.problems)


class _Differ:
    def __init__(self, base: Side, head: Side) -> None:
        self.base, self.head = base, head
        self.changes: list[Change] = []

    def statements(self, base: list[Node], head: list[Node], guards: tuple[tuple[Guard, ...], tuple[Guard, ...]],
                   tops: tuple[int | None, int | None]) -> None:
        matcher = difflib.SequenceMatcher(None, [normalized(n) for n in base], [normalized(n) for n in head],
                                          autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                continue
            # The `if` statements of a replaced run, as many on each side, are paired in order and read clause
            # by clause; every other statement of the run is a change.
            b_ifs = [i for i in range(i1, i2) if base[i].type == "if_statement"]
            h_ifs = [j for j in range(j1, j2) if head[j].type == "if_statement"]
            paired = dict(zip(b_ifs, h_ifs)) if tag == "replace" and b_ifs and len(b_ifs) == len(h_ifs) else {}
            for i, j in paired.items():
                self.ifs(base[i], head[j], guards, (tops[0] if tops[0] is not None else i,
                                                    tops[1] if tops[1] is not None else j))
            for i in range(i1, i2):
                if i not in paired:
                    self.add(BASE, base[i], guards[0], tops[0] if tops[0] is not None else i)
            for j in range(j1, j2):
                if j not in paired.values():
                    self.add(HEAD, head[j], guards[1], tops[1] if tops[1] is not None else j)

    def add(self, side: str, node: Node, guards: tuple[Guard, ...], top: int, end: Node | None = None) -> None:
        self.changes.append(Change(side, node.line, last_line(end or node), top, guards))

    def ifs(self, base: Node, head: Node, guards: tuple[tuple[Guard, ...], tuple[Guard, ...]],
            tops: tuple[int, int]) -> None:
        (b_clauses, b_else), (h_clauses, h_else) = if_clauses(base), if_clauses(head)
        b_conds = [b"; ".join(normalized(c) for c in cond) for cond, _, _ in b_clauses]
        h_conds = [b"; ".join(normalized(c) for c in cond) for cond, _, _ in h_clauses]

        def clause_guards(clauses: list[tuple[list[Node], list[Node], str]], k: int,
                          around: tuple[Guard, ...]) -> tuple[Guard, ...]:
            earlier = tuple((tuple(c), False) for c, _, _ in clauses[:k])
            return (*around, *earlier, (tuple(clauses[k][0]), True))

        def body_text(body: list[Node]) -> list[bytes]:
            return [normalized(n) for n in body]

        # A clause whose condition changed but whose body did not is paired by its body: it changes the run
        # only of the jobs for which the two conditions differ (one enters the branch, another leaves it).
        rewritten: dict[int, int] = {}
        for k, (cond, body, _) in enumerate(h_clauses):
            if h_conds[k] in b_conds:
                continue
            m = next((m for m, (c, b, _) in enumerate(b_clauses) if b_conds[m] not in h_conds
                      and m not in rewritten.values() and c and body_text(b) == body_text(body)), None)
            if m is not None and cond:
                rewritten[k] = m
        for k, (cond, body, _) in enumerate(h_clauses):
            if h_conds[k] in b_conds:
                m = b_conds.index(h_conds[k])
                self.statements(b_clauses[m][1], body, (clause_guards(b_clauses, m, guards[0]),
                                                        clause_guards(h_clauses, k, guards[1])), tops)
            elif k in rewritten:
                m = rewritten[k]
                old_cond, new_cond = tuple(b_clauses[m][0]), tuple(cond)
                self.add(HEAD, cond[0], (*clause_guards(h_clauses, k, guards[1]), (old_cond, False)), tops[1],
                         (body or cond)[-1])
                self.add(BASE, old_cond[0], (*clause_guards(b_clauses, m, guards[0]), (new_cond, False)), tops[0],
                         (b_clauses[m][1] or list(old_cond))[-1])
            elif cond:
                self.add(HEAD, cond[0], clause_guards(h_clauses, k, guards[1]), tops[1], (body or cond)[-1])
        for m, (cond, body, _) in enumerate(b_clauses):
            if b_conds[m] not in h_conds and m not in rewritten.values() and cond:
                self.add(BASE, cond[0], clause_guards(b_clauses, m, guards[0]), tops[0], (body or cond)[-1])
        none = (tuple((tuple(c), False) for c, _, _ in b_clauses), tuple((tuple(c), False) for c, _, _ in h_clauses))
        self.statements(b_else or [], h_else or [], ((*guards[0], *none[0]), (*guards[1], *none[1])), tops)


def shell_diff(path: str, base: bytes | None, head: bytes | None) -> ShellDiff:
    """The change of one shell file (``None``: the file does not exist on that side)."""
    return _cached(path, base, head)


@lru_cache(maxsize=256)
def _cached(path: str, base: bytes | None, head: bytes | None) -> ShellDiff:
    b, h = read_side(path, base), read_side(path, head)
    differ = _Differ(b, h)
    differ.statements(list(b.statements), list(h.statements), ((), ()), (None, None))
    functions = frozenset(n for n in set(b.functions) | set(h.functions)
                          if n not in b.functions or n not in h.functions
                          or normalized(b.functions[n]) != normalized(h.functions[n]))
    return ShellDiff(b, h, tuple(differ.changes), functions)


# A word that could name a shell variable or function (the names a text or a file spells).
SHELL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A leading "the script's own directory" expression of a path a script names: $(dirname "$0"), ${SCRIPT_DIR},
# $BASH_SOURCE dirs, ...
DIR_PREFIX = re.compile(r"""^(?:\$\(\s*dirname\s+[^)]*\)|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?)/""")
# Node kinds whose text may spell a function's name for something that runs it later (`trap cleanup EXIT`,
# `retry 3 run_client`, `bash -c 'export -f f; f'`), or a heredoc that holds one.
_SPELLING_KINDS = frozenset({"word", "raw_string", "string_content", "ansi_c_string", "heredoc_body"})
_NAME_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]*")
# What each statement spells, by node (function bodies of a shared library are read for many recipes).
_SPELLED: BoundedDict[int, tuple[Node, frozenset[str]]] = BoundedDict(4096)


def spelled_names(node: Node) -> frozenset[str]:
    """The names a statement spells other than as a command's name or a function's own name in its definition
    (every word that could name a function): what may run a function without a command naming it.  Derived
    once per node."""
    found = _SPELLED.get(id(node))
    if found is not None and found[0] is node:
        return found[1]
    names: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type in ("command_name", "function_definition"):
            # Its name word is a call or the definition; the rest of a definition is its body.
            stack.extend(c for c in n.children if c.type != "word")
            continue
        if n.type in _SPELLING_KINDS:
            names.update(_NAME_TOKEN.findall(n.text))
        stack.extend(n.children)
    spelled = frozenset(names)
    _SPELLED.put(id(node), (node, spelled))  # the node is kept, so that its id is not reused
    return spelled


def calls_of(node: Node) -> frozenset[str]:
    """The command names a statement or function definition spells out; derived once per node (a shared
    library's functions are read for every recipe that sources it)."""
    found = _CALLS.get(id(node))
    if found is not None and found[0] is node:
        return found[1]
    names = called_names([node])[0]
    _CALLS.put(id(node), (node, names))  # the node is kept, so that its id is not reused
    return names


_CALLS: BoundedDict[int, tuple[Node, frozenset[str]]] = BoundedDict(8192)


def called_names(nodes: list[Node] | tuple[Node, ...]) -> tuple[frozenset[str], bool]:
    """The command names the statements call (functions among them), and whether one is not spelled out."""
    names: set[str] = set()
    dynamic = False
    stack = list(nodes)
    while stack:
        n = stack.pop()
        if n.type == "command_name":
            word = n.children[0] if n.children else None
            if word is not None and word.type == "word" and "$" not in word.text:
                names.add(word.text)
            else:
                dynamic = True
        stack.extend(n.children)
    return frozenset(names), dynamic


__all__ = ["BASE", "DIR_PREFIX", "HEAD", "SHELL_NAME", "Change", "ShellDiff", "Side", "called_names", "calls_of",
           "normalized", "spelled_names", "read_side", "shell_diff"]
