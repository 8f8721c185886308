"""The shell assignments a modelled program prints, read the way the shell that evaluates its output reads them.

A program's output is run by ``eval`` (or ``source``): a line ``NAME=WORD``
or ``export NAME=WORD`` assigns what the shell reads from ``WORD``.
:class:`PrintedAssignments` turns ``print(f'NAME={x!r}')``,
``print(f'TP_SIZE={int(tp)}')`` and ``print(f'export {k}={v!r}')`` into
:class:`Assignment` values: the printed word is ``str`` or ``repr`` of the
Python value (:mod:`.py_values`), and the shell reads back a plain word or a
quoted string without escapes (:func:`~.py_values.shell_word`); anything
else is unknown, with a note saying why.  A string of several words from the
file keeps where each word is (:mod:`.yaml_words`), so that flags split off
it later point at their own line.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Callable

from ...findings import Location
from ...shell.model import Value
from .located import Located
from .py_values import ProgramFails, SnippetError, ValueModel, called, shell_word
from .yaml_words import word_spans


@dataclass(frozen=True)
class Assignment:
    name: str
    value: Value
    exported: bool = False  # printed as `export NAME=...`


# The expression of a value the program itself supplies (a `.get` default).
DEFAULT = "default in the program"


def _is_text(node: ast.expr, text: str) -> bool:
    return isinstance(node, ast.Constant) and node.value == text


def _rendered(part: ast.FormattedValue, found: Located) -> str:
    """What an f-string part prints: ``str`` of the value, ``repr`` with ``!r``."""
    if part.format_spec is not None:
        raise SnippetError(f"`{ast.unparse(part)}` has a format specification")
    value = found.plain()
    return repr(value) if part.conversion == ord("r") else ascii(value) if part.conversion == ord("a") else str(value)


def prints_assignments(stmt: ast.stmt) -> bool:
    """Whether a statement prints something that looks like a shell assignment (``NAME=`` or ``export``)."""
    for node in ast.walk(stmt):
        if isinstance(node, ast.Call) and called(node) == "print" and node.args \
                and isinstance(node.args[0], ast.JoinedStr):
            head = node.args[0].values[0] if node.args[0].values else None
            if isinstance(head, ast.Constant) and re.match(r"(export |[A-Za-z_][A-Za-z0-9_]*=)", str(head.value)):
                return True
    return False


class PrintedAssignments(ValueModel):
    """Assignments printed one word each (see the module docstring)."""

    out: list[Assignment]
    # A file the program read, by repository path (for where each word of a string is).
    source_of: Callable[[str], bytes | None]

    def print_word(self, parts: list[ast.expr]) -> None:
        """``print(f'NAME={x!r}')``, ``print(f'NAME={int(x)}')``, ``print(f'export {k}={v!r}')``: an assignment
        whose value is one printed word, which the shell reads back (Python's repr of a string is quoted)."""
        exported = False
        pieces = list(parts)
        head = pieces[0] if pieces else None
        if isinstance(head, ast.Constant) and isinstance(head.value, str) and head.value.startswith("export "):
            exported = True
            rest = head.value[len("export "):]
            pieces[0] = ast.Constant(rest)
            if not rest:
                pieces = pieces[1:]
        if len(pieces) == 3 and isinstance(pieces[0], ast.FormattedValue) and _is_text(pieces[1], "=") \
                and isinstance(pieces[2], ast.FormattedValue):
            name = _rendered(pieces[0], self.value(pieces[0].value))  # `export {k}=...`: the name from the file
        elif len(pieces) == 2 and isinstance(pieces[0], ast.Constant) and isinstance(pieces[1], ast.FormattedValue):
            m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)=", str(pieces[0].value))
            if m is None:
                return  # `echo ...` lines and the like assign nothing
            name = m.group(1)
        else:
            return
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise ProgramFails(f"it prints an assignment to {name!r}, which is not a shell variable name")
        shown = pieces[-1]
        assert isinstance(shown, ast.FormattedValue)
        try:
            found = self.value(shown.value)
        except SnippetError as exc:
            self.out.append(Assignment(name, Value(None, self.where, expression=str(exc)), exported))
            return
        printed = _rendered(shown, found)
        text = shell_word(printed)
        if text is None:
            # `eval` of quotes inside quotes, spaces or expansions: not modelled (it may not even parse)
            self.notes.append(f"it prints {name}={printed}, which the shell does not read back as one plain "
                              f"value (from {found.location.as_text()}); {name} is unknown")
            value = Value(None, found.location, expression=f"the shell's reading of the printed word {printed}")
        else:
            value = Value(text, found.location, expression=DEFAULT if found.location is self.where else "",
                          spans=self._word_spans(found, text))
        self.out.append(Assignment(name, value, exported))

    def _word_spans(self, found: Located, text: str) -> tuple[tuple[int, Location | Value], ...]:
        """Where each word of a string of the file was written (a recipe's ``extra-args``), when it has several."""
        if not isinstance(found.value, str) or " " not in text.strip() or found.location is self.where:
            return ()
        source = self.source_of(found.location.path)
        return word_spans(found.location, source, text) if source is not None else ()
