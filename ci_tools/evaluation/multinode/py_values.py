"""The general expressions of a modelled Python program, evaluated to values that keep their YAML line.

The programs :mod:`.py_snippet` models read a recipe YAML and print shell
assignments.  Besides the shapes of the AMD models programs, they use
ordinary Python: ``yaml.safe_load(open(PATH))``, ``d.get(key[, default])``,
``a or b``, ``s.strip()``, ``int(x)``, ``"a" if x else "b"``, ``x is None``,
``not x``, ``d[key]``, ``for k, v in d.items()`` and ``if`` on any of these
(llm-d's ``server.sh``).  :class:`ValueModel` evaluates them to a
:class:`Located`: the Python value, and where it was written (its YAML line;
a constant of the program points at the line that runs the program).

Nothing is run.  What Python would raise on (``.strip()`` of a list, ``int``
of a word) raises :class:`ProgramFails`: the program stops there and what it
printed before stands.  A construct outside this list raises
:class:`SnippetError` (not modelled: the caller makes what it prints unknown).
"""

from __future__ import annotations

import ast
import re
from typing import Any, Callable

from ...findings import Location, with_article
from ...shell.model import Value
from .located import Located


class SnippetError(Exception):
    """The program is not of a modelled shape."""


class ProgramFails(Exception):
    """Python would raise here: the program stops, with what it printed so far."""


def called(call: ast.Call) -> str:
    f = call.func
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Attribute):
        return f.attr
    return ""


def python_type(value: Any) -> str:
    return type(value).__name__ if value is not None else "None"


class ValueModel:
    """Evaluates expressions over the program's names (see the module docstring)."""

    names: dict[str, Located | Value | tuple[Value, Value]]
    where: Location
    read_yaml: Callable[[str], Located]
    # What the program read that a reader should know of (a missing top-level section, ...).
    notes: list[str]
    # Documents read from files: a `.get` of one of their top-level keys that misses is noted.
    roots: dict[int, str]

    def value(self, node: ast.AST) -> Located:
        if isinstance(node, ast.Constant):
            return Located(node.value, self.where)
        if isinstance(node, ast.Dict) and not node.keys:
            return Located({}, self.where)
        if isinstance(node, ast.Name):
            return self._name(node.id)
        if isinstance(node, ast.BoolOp):
            return self._bool_op(node)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            operand = self.value(node.operand)
            return Located(not truthy(operand), operand.location)
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Is, ast.IsNot)) \
                and isinstance(node.comparators[0], ast.Constant) and node.comparators[0].value is None:
            left = self.value(node.left)
            return Located((left.value is None) == isinstance(node.ops[0], ast.Is), left.location)
        if isinstance(node, ast.IfExp):
            test = self.value(node.test)
            chosen = self.value(node.body if truthy(test) else node.orelse)
            # a constant chosen by a value of the file was decided where that value is written
            return Located(chosen.value, test.location if chosen.location is self.where else chosen.location)
        if isinstance(node, ast.Subscript):
            return self._item(node, self.value(node.value), self.value(node.slice).value)
        if isinstance(node, ast.Call):
            return self._call(node)
        raise SnippetError(f"`{ast.unparse(node)}` is not a modelled expression")

    def _item(self, node: ast.Subscript, owner: Located, key: Any) -> Located:
        """``d[key]`` of a mapping, ``items[i]`` of a list."""
        if isinstance(owner.value, list) and isinstance(key, int) and not isinstance(key, bool):
            if -len(owner.value) <= key < len(owner.value):
                found: Located = owner.value[key]
                return found
            raise ProgramFails(f"`{ast.unparse(node)}`: no item {key} (IndexError)")
        if not isinstance(owner.value, dict):
            raise ProgramFails(f"`{ast.unparse(node)}`: {with_article(python_type(owner.value))} has no key {key!r}")
        entry = owner.get(str(key))
        if entry is None:
            raise ProgramFails(f"`{ast.unparse(node)}`: no key {key!r} (KeyError)")
        return entry

    def _name(self, name: str) -> Located:
        found = self.names.get(name)
        if isinstance(found, Located):
            return found
        if isinstance(found, Value) and found.text is not None:
            return Located(found.text, found.location)
        raise SnippetError(f"`{name}` is not known")

    def _bool_op(self, node: ast.BoolOp) -> Located:
        last = Located(None, self.where)
        for operand in node.values:
            last = self.value(operand)
            if truthy(last) == isinstance(node.op, ast.Or):
                return last
        return last

    def _call(self, node: ast.Call) -> Located:
        name = called(node)
        method = node.func.value if isinstance(node.func, ast.Attribute) else None
        if name == "get" and method is not None and 1 <= len(node.args) <= 2:
            owner, key = self.value(method), self.value(node.args[0]).value
            if not isinstance(owner.value, dict):
                raise ProgramFails(f"`{ast.unparse(node)}`: {with_article(python_type(owner.value))} has no .get")
            entry = owner.get(str(key))
            if entry is not None:
                return entry
            file = self.roots.get(id(owner))
            if file is not None:
                self.notes.append(f"{file} has no `{key}`: the program takes its default "
                                  f"({ast.unparse(node.args[1]) if len(node.args) > 1 else 'None'})")
            return self.value(node.args[1]) if len(node.args) > 1 else Located(None, self.where)
        if name == "strip" and method is not None and not node.args:
            owner = self.value(method)
            if not isinstance(owner.value, str):
                raise ProgramFails(f"`{ast.unparse(node)}`: {with_article(python_type(owner.value))} has no .strip "
                                   f"(its value at {owner.location.as_text()})")
            return owner if owner.value == owner.value.strip() else Located(owner.value.strip(), owner.location)
        if name == "int" and method is None and len(node.args) == 1:
            arg = self.value(node.args[0])
            raw = arg.plain()
            try:
                return Located(int(raw), arg.location)
            except (TypeError, ValueError):
                raise ProgramFails(f"`{ast.unparse(node)}`: int() of {raw!r} "
                                   f"(written at {arg.location.as_text()})") from None
        if name == "safe_load" and len(node.args) == 1:
            path = self._opened_path(node.args[0])
            document = self.read_yaml(path)
            self.roots[id(document)] = document.location.path
            return document
        raise SnippetError(f"`{ast.unparse(node)}` is not a modelled call")

    def _opened_path(self, node: ast.expr) -> str:
        """The file of ``yaml.safe_load(open(PATH))``: PATH a constant (the shell substituted it)."""
        if isinstance(node, ast.Call) and called(node) == "open" and node.args:
            path = self.value(node.args[0]).value
            if isinstance(path, str):
                return path
        raise SnippetError(f"`{ast.unparse(node)}` is not a file opened by name")


def truthy(found: Located) -> bool:
    return bool(found.plain())


_SAFE_WORD = re.compile(r"[A-Za-z0-9_./:,@%+=-]*")


def shell_word(printed: str) -> str | None:
    """What the shell reads back from one printed word (``eval`` of ``NAME=<word>``); None when that is not
    the word's plain text or a quoted string the shell takes literally."""
    if _SAFE_WORD.fullmatch(printed):
        return printed
    if len(printed) >= 2 and printed[0] == printed[-1] == "'" and "'" not in printed[1:-1] \
            and "\\" not in printed[1:-1]:
        return printed[1:-1]  # Python's repr of a string without quotes or escapes: single-quoted
    if len(printed) >= 2 and printed[0] == printed[-1] == '"' and not re.search(r'[$`"\\!]', printed[1:-1]):
        return printed[1:-1]
    return None
