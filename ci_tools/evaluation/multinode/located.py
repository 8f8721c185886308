"""YAML values that remember where they were written, through merges and slices.

srt-slurm builds a job's config by deep-merging sections of one file and by
slicing list leaves (``zip_override_*``); a value that reaches a server flag
must still point at the line that wrote it.  :func:`located` turns the
position-keeping containers of :mod:`ci_tools.revision.yamlpos` into a tree of
:class:`Located` nodes whose ``value`` holds plain Python data at the leaves,
``dict[str, Located]`` for mappings and ``list[Located]`` for sequences.
"""

from __future__ import annotations

from typing import Any

from ...findings import Location
from ...frozen import record
from ...revision.yamlpos import NO_SPAN, PosMap, PosSeq, Span
from ...shell.structured import written_text


@record
class Located:
    """One YAML value and where it is written (``key`` is where its mapping key is, if any).

    ``written`` is a number, boolean or null as the file spells it (``0.90``, ``True``, ``~``),
    when it sits on one line: structured flag keys read scalars as written (see
    :mod:`ci_tools.shell.structured`).
    """

    value: Any
    location: Location
    key: Location | None = None
    written: str | None = None

    @property
    def is_map(self) -> bool:
        return isinstance(self.value, dict)

    @property
    def is_list(self) -> bool:
        return isinstance(self.value, list)

    def get(self, name: str) -> Located | None:
        """The entry ``name`` of a mapping; None when absent or when this is not a mapping."""
        if isinstance(self.value, dict):
            found = self.value.get(name)
            return found if isinstance(found, Located) else None
        return None

    def plain(self) -> Any:
        """The value without positions (what ``yaml.safe_load`` gives)."""
        if isinstance(self.value, dict):
            return {k: v.plain() for k, v in self.value.items()}
        if isinstance(self.value, list):
            return [v.plain() for v in self.value]
        return self.value

    def keyed(self, key: Location | None) -> Located:
        return Located(self.value, self.location, key, self.written)


def _loc(path: str, span: Span) -> Location:
    line, column, end_line, end_column = span
    return Location(path, line, column, end_line, end_column)


def located(value: Any, path: str, span: Span = NO_SPAN, key: Location | None = None,
            lines: list[str] | None = None) -> Located:
    """The tree of a loaded YAML value (from :func:`ci_tools.revision.yamlpos.load_yaml`).

    ``lines``: the document's lines, to keep how scalars other than strings are written.
    """
    own = span if span != NO_SPAN else getattr(value, "span", NO_SPAN)
    here = _loc(path, own)
    if isinstance(value, PosMap):
        return Located({str(k): located(v, path, value.value_span(k), _loc(path, value.key_span(k)), lines)
                        for k, v in value.items()}, here, key)
    if isinstance(value, dict):
        return Located({str(k): located(v, path, NO_SPAN, None, lines) for k, v in value.items()}, here, key)
    if isinstance(value, PosSeq):
        return Located([located(v, path, value.item_span(i), None, lines) for i, v in enumerate(value)], here, key)
    if isinstance(value, list):
        return Located([located(v, path, NO_SPAN, None, lines) for v in value], here, key)
    written = written_text(own, lines) if lines is not None and not isinstance(value, str) else None
    return Located(value, here, key, written)
