"""Bash syntax trees for recipes: parsed once per file content, kept as plain Python.

tree-sitter-bash does the parsing; the tree is then copied into :class:`Node`
objects (type, byte span, children) because the evaluator walks the same tree
once per job, and attribute access on plain slotted objects is several times
cheaper than on tree-sitter nodes.  Text and line numbers are computed only
for the nodes that need them.  Trees are cached by a hash of the file's bytes,
so a recipe unchanged between base and head, or shared by many jobs, is parsed
once per process.
"""

from __future__ import annotations

import re

import bisect
import gc
import hashlib
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..bounded import BoundedDict
from ..findings import Location
from .bash_syntax import bash_accepts
from .split_words import is_cut, mend


class Node:
    """One syntax node; anonymous tokens (``=``, ``&&``, ``fi``) are nodes too."""

    __slots__ = ("type", "start", "end", "children", "named", "script", "_text", "memo", "_loc")

    def __init__(self, type: str, start: int, end: int, named: bool, script: Script) -> None:
        self.type = type
        self.start = start
        self.end = end
        self.named = named
        self.children: tuple[Node, ...] = ()
        self.script = script
        self._text: str | None = None
        # Structure derived once by the evaluator (clauses of an ``if``, ...).
        self.memo: object = None
        self._loc: Location | None = None

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = self.script.source[self.start:self.end].decode("utf-8", "replace")
        return self._text

    @property
    def named_children(self) -> list[Node]:
        return [c for c in self.children if c.named]

    def child_of_type(self, type: str) -> Node | None:
        for c in self.children:
            if c.type == type:
                return c
        return None

    @property
    def line(self) -> int:
        return self.script.position(self.start)[0]

    def location(self, note: str = "") -> Location:
        if self._loc is not None and not note:
            return self._loc
        line, col = self.script.position(self.start)
        end_line, end_col = self.script.position(self.end)
        loc = Location(self.script.path, line, col, end_line, end_col, note)
        if not note:
            self._loc = loc
        return loc

    def __repr__(self) -> str:
        return f"Node({self.type!r}, {self.text[:30]!r})"


@dataclass(frozen=True)
class SyntaxProblem:
    line: int
    column: int
    text: str


class Script:
    """A parsed file: its bytes, its tree, where lines start, and any syntax errors."""

    def __init__(self, path: str, source: bytes) -> None:
        self.path = path
        self.source = source
        self._line_starts = [0]
        at = source.find(b"\n")
        while at >= 0:
            self._line_starts.append(at + 1)
            at = source.find(b"\n", at + 1)
        self.root: Node = Node("program", 0, len(source), True, self)
        self.problems: list[SyntaxProblem] = []
        # With problems: whether bash itself reads the file (True: the problems are the grammar's, not the
        # script's; None: no bash to ask), see :mod:`.bash_syntax`.
        self.bash_accepts: bool | None = None
        # Where a one-line assignment starts whose value the grammar cannot read, in a file bash accepts: the
        # file has no problem for it, and the interpreter reads the value as :mod:`.unread_value` can.
        self.unread_assignments: frozenset[int] = frozenset()

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of a byte offset."""
        index = bisect.bisect_right(self._line_starts, offset) - 1
        return index + 1, offset - self._line_starts[index] + 1

    def offset(self, line: int, column: int) -> int:
        """The byte offset of a 1-based (line, column)."""
        if not 0 < line <= len(self._line_starts):
            return len(self.source)
        return self._line_starts[line - 1] + max(column, 1) - 1

    def with_path(self, path: str) -> Script:
        """The same tree reported under another path (identical content at two paths)."""
        if path == self.path:
            return self
        copy = Script.__new__(Script)
        copy.path, copy.source, copy._line_starts, copy.problems = path, self.source, self._line_starts, self.problems
        copy.bash_accepts, copy.unread_assignments = self.bash_accepts, self.unread_assignments
        copy.root = _rebind(self.root, copy)
        return copy


def _rebind(node: Node, script: Script) -> Node:
    out = Node(node.type, node.start, node.end, node.named, script)
    out.children = tuple(_rebind(c, script) for c in node.children)
    return out


@lru_cache(maxsize=1)
def _parser() -> Any:
    import tree_sitter
    import tree_sitter_bash

    language = tree_sitter.Language(tree_sitter_bash.language())
    # Node types by kind id: reading ``kind_id`` makes no string, ``type`` makes a new one per call.
    _KINDS.extend(_TYPES.setdefault(name, name) if (name := language.node_kind_for_id(i)) is not None else None
                  for i in range(language.node_kind_count))
    return tree_sitter.Parser(language)


# A sweep keeps every tree it parsed (a couple of hundred thousand nodes): each node's type and
# offsets are shared objects, not fresh ones per node (tree-sitter hands out a new string per call,
# and offsets past 256 are objects of their own), a third of the trees' memory.
_TYPES: dict[str, str] = {}
_KINDS: list[str | None] = []


def _convert(ts_node: Any, script: Script, problems: list[Any] | None, offsets: dict[int, int],
             in_error: bool = False, joined: list[int] | None = None) -> Node:
    """Copy a tree-sitter subtree; ``problems`` collects the outermost ERROR and missing nodes
    (None: the tree has none).  What lies inside an ERROR is a consequence of it, not another error.
    ``offsets`` shares equal byte offsets (a parent starts where its first child does); ``joined``
    collects the newlines a command was read past (see :func:`_read_past`)."""
    kind_id = ts_node.kind_id
    kind = _KINDS[kind_id] if kind_id < len(_KINDS) else None
    if kind is None:  # ERROR, and any id the grammar's table does not name
        kind = ts_node.type
        kind = _TYPES.setdefault(kind, kind)
    start, end = ts_node.start_byte, ts_node.end_byte
    node = Node(kind, offsets.setdefault(start, start), offsets.setdefault(end, end), ts_node.is_named, script)
    if problems is not None and not in_error and (kind == "ERROR" or ts_node.is_missing):
        problems.append(ts_node)
    if kind != "comment" and ts_node.child_count:
        inside = in_error or kind == "ERROR"
        node.children = tuple([_convert(k, script, problems, offsets, inside, joined) for k in ts_node.children])
        if kind in _HOLDING_WORDS:
            if joined is not None and kind == "command":
                _read_past(node.children, script.source, joined)
            if any(is_cut(c) for c in node.children):
                node.children = mend(node.children, _interned)
    return node


def _read_past(children: tuple[Node, ...], source: bytes, joined: list[int]) -> None:
    """Newlines between a command's words: bash ends the command at each (unless a backslash continues the
    line), but tree-sitter-bash at times reads on, silently, taking the lines after for arguments
    (``... | wc -l`` then ``cat FILE 2>/dev/null || echo ...``: `cat` became an argument of `wc`)."""
    before: Node | None = None
    for child in children:
        if child.type == "comment":
            continue
        if before is not None:
            at = source.find(b"\n", before.end, child.start)
            while at >= 0 and source[at - 1] == 0x5C:  # a backslash before it: the line goes on
                at = source.find(b"\n", at + 1, child.start)
            if at >= 0:
                joined.append(at)
        before = child


# Where tree-sitter-bash cuts a word in two (:mod:`.split_words`): among a command's words and assignments.
_HOLDING_WORDS = frozenset({"command", "declaration_command"})


def _interned(kind: str) -> str:
    return _TYPES.setdefault(kind, kind)


# Statements tree-sitter could still parse whole inside an ERROR region: the
# error is after them.  An ERROR that starts at line 3 (`source ...`) may
# really be an `if` without `then` at line 34.
_WHOLE_STATEMENTS = frozenset({
    "command", "variable_assignment", "variable_assignments", "declaration_command", "unset_command",
    "if_statement", "for_statement", "c_style_for_statement", "while_statement", "case_statement",
    "function_definition", "compound_statement", "subshell", "pipeline", "list", "redirected_statement",
    "negated_command", "test_command", "comment",
})


# Tokens after which a body starts: an error after one of them is inside that body.
_BODY_OPENERS = frozenset({"{", "then", "do", "else"})


def _first_broken(error: Any) -> Any:
    """Where the parse really went wrong inside an ERROR node, deepest first.

    Whole statements are skipped.  The first other token starts something
    that never finished (an `if` whose `then` is missing, a `case` without
    `esac`): that is the place, unless a body was opened after it (a
    function's `{`, a `then`); then the first thing in the body that is not a
    whole statement, a missing token or a nested ERROR (searched the same way)
    is.
    """
    suspect: Any = None
    in_body = False
    for child in error.children:
        if _is_broken(child):
            # What follows an unfinished construct is its consequence.
            return suspect if suspect is not None and not in_body else _locate(child)
        if child.is_named and child.type in _WHOLE_STATEMENTS:
            continue
        if child.type in _BODY_OPENERS:
            in_body = True
        elif in_body:
            return child
        elif suspect is None:
            suspect = child
    return suspect if suspect is not None else error


def _is_broken(node: Any) -> bool:
    return bool(node.is_missing or node.type == "ERROR" or node.has_error)


def _locate(node: Any) -> Any:
    """The place of the first error in a broken node (see :func:`_is_broken`)."""
    if node.is_missing:
        return node
    if node.type == "ERROR":
        return _first_broken(node) if node.child_count else node
    return next((_locate(child) for child in node.children if _is_broken(child)), node)


def _problem(node: Any, source: bytes) -> SyntaxProblem:
    at = node if node.is_missing else _first_broken(node)
    line, col = at.start_point.row + 1, at.start_point.column + 1
    if at.is_missing:
        return SyntaxProblem(line, col, f"missing `{at.type}`")
    # From the unexpected token to the end of its line: `if [[ $CONC -ge 16 ]]`, not the whole region.
    end = source.find(b"\n", at.start_byte)
    text = source[at.start_byte: end if end >= 0 else len(source)].decode("utf-8", "replace").strip()
    return SyntaxProblem(line, col, f"unexpected `{text[:60]}`" if text else "unexpected input")


_CACHE: dict[tuple[str, str], Script] = {}
_BY_CONTENT: dict[str, Script] = {}
_BY_OBJECT: dict[tuple[str, int], Script] = {}


def content_hash(source: bytes) -> str:
    return hashlib.blake2b(source, digest_size=16).hexdigest()


# The read-write redirection `N<>FILE` (`exec 3<>"/dev/tcp/$host/$port"`), which tree-sitter-bash does not
# parse: parsed as `N< FILE` (the same length, so every position stays; node texts come from the source).
_GRAMMAR_GAPS = re.compile(rb"(?<=[0-9\s])(?<!<)<>")


def parse_script(path: str, source: bytes) -> Script:
    """The syntax tree of ``source``, reported under ``path``; cached by content."""
    # Snapshots hand out the same bytes object for a file: skip hashing it again.
    same_object = _BY_OBJECT.get((path, id(source)))
    if same_object is not None and same_object.source is source:
        return same_object
    script = _parse_by_content(path, source)
    _BY_OBJECT[(path, id(source))] = script
    return script


def _parse_by_content(path: str, source: bytes) -> Script:
    digest = content_hash(source)
    key = (digest, path)
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    same = _BY_CONTENT.get(digest)
    if same is not None:
        script = same.with_path(path)
    else:
        script = Script(path, source)
        text = _GRAMMAR_GAPS.sub(b"< ", source)
        tree = _parser().parse(text)
        problems: list[Any] = []
        joined: list[int] | None = None if tree.root_node.has_error else []
        root = _convert(tree.root_node, script, problems if tree.root_node.has_error else None, {}, joined=joined)
        if joined:
            root = _reparsed(script, text, joined) or root
        script.root = root
        if problems:
            script.bash_accepts = bash_accepts(source)
            if script.bash_accepts:
                unread = [_unread_assignment(p) for p in problems]
                script.unread_assignments = frozenset(a for a in unread if a is not None)
                problems = [p for p, a in zip(problems, unread) if a is None and not _last_backslash(p, source)]
        script.problems.extend(_problem(p, source) for p in problems)
        _BY_CONTENT[digest] = script
        # The tree lives as long as the process and holds no garbage: moving everything alive now out of
        # the collector's sight keeps its collections from walking every node again and again.
        gc.freeze()
    _CACHE[key] = script
    return script


def _unread_assignment(problem: Any) -> int | None:
    """Where the one-line assignment starts whose value holds ``problem`` (None: it lies elsewhere): bash reads
    ``X="${X:-$((A / (8 / TP)))}"``, tree-sitter-bash reads the statement and not the value."""
    node = problem.parent
    while node is not None:
        if node.type == "variable_assignment":
            return int(node.start_byte) if node.start_point.row == node.end_point.row else None
        node = node.parent
    return None


def _last_backslash(problem: Any, source: bytes) -> bool:
    """The problem is the backslash that ends the file, with or without a newline after it
    (``rm -rf ./utils/bench_serving\\``): bash reads the command before it, which the grammar read too."""
    end = source.rstrip()
    return end.endswith(b"\\") and problem.start_byte >= len(end) - 1


# How many times a tree read past newlines is parsed again with them made `;` (each round mends what the
# grammar read past; one round has sufficed for every file of InferenceX's history).
_REPARSE_ROUNDS = 4


def _reparsed(script: Script, text: bytes, joined: list[int]) -> Node | None:
    """The tree of ``text`` with each newline a command was read past (:func:`_read_past`) made the `;` bash
    reads it as: the same length, so every position stays (node texts come from the source).  None when the
    grammar cannot read the mended text either: the first tree is kept."""
    mended = bytearray(text)
    for _ in range(_REPARSE_ROUNDS):
        for at in joined:
            mended[at] = 0x3B  # ;
        tree = _parser().parse(bytes(mended))
        if tree.root_node.has_error:
            return None
        joined = []
        root = _convert(tree.root_node, script, None, {}, joined=joined)
        if not joined:
            return root
    return None


def cache_size() -> int:
    return len(_BY_CONTENT)


# An `if` or `elif` clause: its condition statements, its body and the condition as written.
IfClause = tuple[list[Node], list[Node], str]


def condition_names(n: Node) -> frozenset[str]:
    """The variables the conditions of the ``if`` statement ``n`` read, every clause's (``$X``, ``${X:-d}``, an
    arithmetic test's bare names); derived once per node."""
    found = _CONDITION_NAMES.get(id(n))
    if found is not None and found[0] is n:
        return found[1]
    names: set[str] = set()
    stack = [c for cond, _, _ in if_clauses(n)[0] for c in cond]
    while stack:
        node = stack.pop()
        if node.type == "variable_name":
            names.add(node.text)
        stack.extend(node.children)
    _CONDITION_NAMES.put(id(n), (n, frozenset(names)))  # the node is kept, so that its id is not reused
    return frozenset(names)


_CONDITION_NAMES: BoundedDict[int, tuple[Node, frozenset[str]]] = BoundedDict(4096)


def if_clauses(n: Node) -> tuple[list[IfClause], list[Node] | None]:
    """The clauses of an ``if`` statement (condition, body, condition text) and its ``else`` body, if any."""
    clauses: list[IfClause] = []
    else_body: list[Node] | None = None

    def split(children: tuple[Node, ...], opener: str) -> tuple[list[Node], list[Node]]:
        cond: list[Node] = []
        body: list[Node] = []
        mode = ""
        for c in children:
            if c.type == opener:
                mode = "cond"
            elif c.type == "then":
                mode = "body"
            elif c.type in ("elif_clause", "else_clause", "fi"):
                break
            elif mode == "cond":
                cond.append(c)
            elif mode == "body":
                body.append(c)
        return cond, body

    def clause(children: tuple[Node, ...], opener: str) -> IfClause:
        cond, body = split(children, opener)
        return cond, body, " ".join(x.text for x in cond if x.named and x.type != "comment")

    clauses.append(clause(n.children, "if"))
    for c in n.children:
        if c.type == "elif_clause":
            clauses.append(clause(c.children, "elif"))
        elif c.type == "else_clause":
            else_body = [x for x in c.children if x.type != "else"]
    return clauses, else_body
