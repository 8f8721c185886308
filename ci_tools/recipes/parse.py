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

import bisect
import gc
import hashlib
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..findings import Location


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

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of a byte offset."""
        index = bisect.bisect_right(self._line_starts, offset) - 1
        return index + 1, offset - self._line_starts[index] + 1

    def with_path(self, path: str) -> Script:
        """The same tree reported under another path (identical content at two paths)."""
        if path == self.path:
            return self
        copy = Script.__new__(Script)
        copy.path, copy.source, copy._line_starts, copy.problems = path, self.source, self._line_starts, self.problems
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

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def _convert(ts_node: Any, script: Script, problems: list[Any] | None) -> Node:
    """Copy a tree-sitter subtree; ``problems`` collects ERROR/missing nodes (None: the tree has none)."""
    kind = ts_node.type
    node = Node(kind, ts_node.start_byte, ts_node.end_byte, ts_node.is_named, script)
    if problems is not None and (kind == "ERROR" or ts_node.is_missing):
        problems.append(ts_node)
    if kind != "comment" and ts_node.child_count:
        node.children = tuple([_convert(k, script, problems) for k in ts_node.children])
    return node


_CACHE: dict[tuple[str, str], Script] = {}
_BY_CONTENT: dict[str, Script] = {}
_BY_OBJECT: dict[tuple[str, int], Script] = {}


def content_hash(source: bytes) -> str:
    return hashlib.blake2b(source, digest_size=16).hexdigest()


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
        tree = _parser().parse(source)
        problems: list[Any] = []
        root = _convert(tree.root_node, script, problems if tree.root_node.has_error else None)
        script.root = root
        for p in problems:
            line, col = p.start_point.row + 1, p.start_point.column + 1
            if p.is_missing:
                what = f"missing `{p.type}`"
            else:
                text = p.text.decode("utf-8", "replace").strip() if p.text else ""
                what = f"unexpected `{text.splitlines()[0][:60]}`" if text else "unexpected input"
            script.problems.append(SyntaxProblem(line, col, what))
        _BY_CONTENT[digest] = script
        # The tree lives as long as the process and holds no garbage: moving everything alive now out of
        # the collector's sight keeps its collections from walking every node again and again.
        gc.freeze()
    _CACHE[key] = script
    return script


def cache_size() -> int:
    return len(_BY_CONTENT)
