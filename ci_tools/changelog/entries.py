"""The entries a change appends, parsed with positions in the head file.

Only the appended part is parsed: the text from the first appended entry to
the end of the file is a YAML list of its own (every entry starts at column
0), so its items are exactly the head file's last items.  It is parsed behind
as many empty lines as the history has, so every position is already one of
the head file (``NewEntry.offset`` stays 0 and is kept for readers that add it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..findings import Finding, Location, make_finding
from ..model.rules import YAML_DUPLICATE_KEY, YAML_SYNTAX
from ..revision.yamlpos import (
    PosMap,
    PosSeq,
    Span,
    YamlLoadError,
    describe_type,
    load_yaml,
)
from .layout import Layout
from .rules import ENTRY_COUNT, NOT_A_LIST


@dataclass(frozen=True)
class NewEntry:
    """One appended entry; ``data`` is a PosMap when the entry is a mapping."""

    path: str
    line: int
    data: Any
    offset: int
    # The whole item (from its `-`), in the head file.
    span: Span = (0, 0, 0, 0)

    def loc(self, span: Span, note: str = "") -> Location:
        return Location(self.path, span[0] + self.offset, span[1], span[2] + self.offset, span[3], note)

    def key_loc(self, key: str) -> Location:
        if isinstance(self.data, PosMap) and key in self.data:
            return self.loc(self.data.key_span(key))
        return Location(self.path, self.line, 1)

    def value_loc(self, key: str) -> Location:
        if isinstance(self.data, PosMap) and key in self.data:
            return self.loc(self.data.value_span(key))
        return Location(self.path, self.line, 1)

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default) if isinstance(self.data, dict) else default

    @property
    def config_keys(self) -> list[tuple[str, Location]]:
        """The entry's config-key strings with their positions (malformed items are the schema's to report)."""
        keys = self.get("config-keys")
        if not isinstance(keys, list):
            return []
        out: list[tuple[str, Location]] = []
        for i, key in enumerate(keys):
            if isinstance(key, str):
                span = keys.item_span(i) if isinstance(keys, PosSeq) else self.data.value_span("config-keys")
                out.append((key, self.loc(span)))
        return out

    @property
    def append_only(self) -> bool:
        return self.get("append-only") is True

    @property
    def scenario_types(self) -> tuple[str, ...]:
        value = self.get("scenario-type")
        return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


@dataclass
class ParsedEntries:
    entries: list[NewEntry] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


def parse_entries(path: str, head: Layout, first: int, *, whole_file: bool = False) -> ParsedEntries:
    """Parse the head text from line ``first`` to the end of the file.

    Invalid UTF-8 yields no entries and no finding (the byte rules report it).
    """
    out = ParsedEntries()
    raw = head.text(first)
    try:
        # Empty lines in place of the history: libyaml then reports head-file
        # positions itself, down to the nested keys, at the cost of skipping
        # a few thousand newlines in C.
        text = "\n" * (first - 1) + raw.decode("utf-8")
    except UnicodeDecodeError:
        return out
    try:
        loaded = load_yaml(text, path)
    except YamlLoadError as exc:
        # An error at the end of the input is at the (empty) line after the
        # final newline, as an editor shows it; never further.
        line, column = exc.line, exc.column
        last = head.data.count(b"\n") + 1
        if line > last:
            line, column = last, len(head.data) - head.data.rfind(b"\n")
        out.findings.append(make_finding(YAML_SYNTAX, exc.message, Location(path, line, column), data={"path": path}))
        return out
    for dup in loaded.duplicates:
        first_line, second = dup.first[0], dup.second
        out.findings.append(make_finding(
            YAML_DUPLICATE_KEY,
            f"duplicate key `{dup.key}`: first defined at line {first_line}, this later definition would silently override it",
            Location(path, second[0], second[1], second[2], second[3]),
            related=[Location(path, first_line, dup.first[1], note="first definition")],
            data={"key": dup.key},
        ))
    value = loaded.value
    if not isinstance(value, PosSeq):
        out.findings.append(make_finding(
            NOT_A_LIST,
            f"{'the changelog' if whole_file else 'the appended text'} is {describe_type(value)}, not a YAML list of entries; "
            "expected each entry to start with `- config-keys:` at column 0",
            Location(path, first, 1), data={"path": path},
        ))
        return out
    for i, item in enumerate(value):
        out.entries.append(NewEntry(path, value.item_span(i)[0], item, 0, value.item_span(i)))
    out.findings.extend(_count_findings(path, head, first, out.entries))
    return out


def _count_findings(path: str, head: Layout, first: int, entries: list[NewEntry]) -> list[Finding]:
    starts = head.entry_start_lines(first)
    if len(starts) == len(entries):
        return []
    counts = f"{len(starts)} `- config-keys:` line(s) but {len(entries)} parsed entr{'y' if len(entries) == 1 else 'ies'}"
    data = {"config_keys_lines": len(starts), "entries": len(entries)}
    out: list[Finding] = []
    entry_lines = {e.line for e in entries}
    start_set = set(starts)
    for e in entries:
        if e.line not in start_set:
            shown = head.line(e.line).decode("utf-8", "replace").strip()
            out.append(make_finding(
                ENTRY_COUNT, f"entry starts with `{shown}`; expected `- config-keys:` as its first line ({counts})",
                Location(path, e.line, 1), data=data,
            ))
    for line in starts:
        if line not in entry_lines:
            out.append(make_finding(
                ENTRY_COUNT, f"line starts with `- config-keys:` but does not start an entry ({counts})",
                Location(path, line, 1), data=data,
            ))
    if not out:
        out.append(make_finding(ENTRY_COUNT, f"{counts}; expected one `- config-keys:` line per entry",
                                Location(path, first, 1), data=data))
    return out
