"""The changelog as lines and entry blocks, without parsing YAML.

The append-only rules are about bytes and lines, so they work on this view:
a *block* is one top-level list item (a line starting with ``-`` at column 0
up to its last non-blank line); the blank lines after it are its *gap*.
Splitting 400 KB this way takes a few milliseconds, far less than a YAML
parse, which the gate only spends on the entries a change appends.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

ENTRY_START = b"- config-keys:"


def is_blank(line: bytes) -> bool:
    """Empty or whitespace-only (a whitespace-only line separates like an empty one)."""
    return not line.strip(b" \t\r")


def is_item_start(line: bytes) -> bool:
    return line[:1] == b"-" and (len(line) == 1 or line[1:2] in (b" ", b"\t", b"\r"))


# git's own test for a binary file: a NUL byte among the first 8000 bytes.
_BINARY_PROBE = 8000
_WIDE_BOMS = (
    (b"\xff\xfe\x00\x00", "a UTF-32 byte-order mark"), (b"\x00\x00\xfe\xff", "a UTF-32 byte-order mark"),
    (b"\xff\xfe", "a UTF-16 byte-order mark"), (b"\xfe\xff", "a UTF-16 byte-order mark"),
)


def binary_evidence(data: bytes) -> tuple[int, str] | None:
    """(byte offset, what was found) when ``data`` is not text at all, else None.

    Such a file (saved as UTF-16, compressed, replaced by an image) has no
    lines to compare with history; every rule that reads lines would report
    noise, so the gate reports this one fact instead.
    """
    for bom, name in _WIDE_BOMS:
        if data.startswith(bom):
            return 0, name
    nul = data.find(b"\x00", 0, _BINARY_PROBE)
    return (nul, "a NUL byte") if nul >= 0 else None


def line_and_column(data: bytes, offset: int) -> tuple[int, int]:
    """1-based line and column of a byte offset."""
    line_start = data.rfind(b"\n", 0, offset) + 1
    return data.count(b"\n", 0, offset) + 1, offset - line_start + 1


@dataclass(frozen=True)
class Block:
    """One top-level entry: lines ``start``..``end`` (1-based, inclusive), then ``gap`` blank lines."""

    start: int
    end: int
    gap: int


@dataclass(frozen=True)
class Layout:
    """Lines of one changelog revision (without their ``\\n``)."""

    data: bytes

    @cached_property
    def lines(self) -> list[bytes]:
        lines = self.data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()  # the text after the final newline is not a line
        return lines

    @cached_property
    def lines_without_trailing_blanks(self) -> list[bytes]:
        """The lines up to the last one that is not blank."""
        lines = self.lines
        end = len(lines)
        while end and is_blank(lines[end - 1]):
            end -= 1
        return lines[:end]

    @property
    def ends_with_newline(self) -> bool:
        return self.data.endswith(b"\n")

    def line(self, number: int) -> bytes:
        return self.lines[number - 1]

    def text(self, first: int, last: int | None = None) -> bytes:
        """Bytes of lines ``first``..``last`` (inclusive, default: to the end), with their newlines."""
        chosen = self.lines[first - 1: last]
        out = b"\n".join(chosen)
        if chosen and (last is not None and last < len(self.lines) or self.ends_with_newline):
            out += b"\n"
        return out

    @cached_property
    def blocks(self) -> list[Block]:
        return self.blocks_from(1)

    def blocks_from(self, first: int) -> list[Block]:
        """The blocks starting at line ``first`` or later (scans only those lines)."""
        if "blocks" in self.__dict__:
            return [b for b in self.__dict__["blocks"] if b.start >= first]
        lines = self.lines
        starts = [i + 1 for i in range(first - 1, len(lines)) if lines[i][:1] == b"-" and is_item_start(lines[i])]
        out: list[Block] = []
        for n, start in enumerate(starts):
            limit = starts[n + 1] - 1 if n + 1 < len(starts) else len(lines)
            end = limit
            while end > start and is_blank(lines[end - 1]):
                end -= 1
            out.append(Block(start, end, limit - end))
        return out

    @property
    def preamble_end(self) -> int:
        """Last line before the first entry (0 when the file starts with one)."""
        return self.blocks[0].start - 1 if self.blocks else len(self.lines)

    def block_bytes(self, block: Block) -> bytes:
        return b"\n".join(self.lines[block.start - 1: block.end])

    def gap_bytes(self, block: Block) -> bytes:
        return b"\n".join(self.lines[block.end: block.end + block.gap])

    def blank_lines_above(self, number: int) -> int:
        count = 0
        while number - 1 - count >= 1 and is_blank(self.lines[number - 2 - count]):
            count += 1
        return count

    def entry_start_lines(self, first: int = 1) -> list[int]:
        """Lines (from ``first``) that start with ``- config-keys:``."""
        return [i + 1 for i in range(first - 1, len(self.lines)) if self.lines[i].startswith(ENTRY_START)]
