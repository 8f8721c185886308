"""What a change did to the changelog's history, and where its appended part starts.

The fast, common case is a head that starts with the base's bytes: then only
the bytes after the base can be new, and nothing is compared line by line.
Otherwise the two revisions are aligned entry by entry (``difflib`` over the
entry blocks, a few hundred items), which tells apart the legal history edits
(a ``  pr-link:`` line replaced; blank or whitespace-only lines outside
entries added, removed or emptied, unless the gate's whitespace policy keeps
them as history) from changed, removed and inserted entries, each with its
head and base line.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from .layout import Block, Layout, is_blank

PR_LINK_PREFIX = b"  pr-link:"


class EditKind(str, enum.Enum):
    CHANGED = "changed"
    REMOVED = "removed"
    INSERTED = "inserted"
    PR_LINK = "pr-link"
    CONTINUED = "continued"  # appended lines that extend the last historical entry


@dataclass(frozen=True)
class HistoryEdit:
    kind: EditKind
    head_line: int
    base_line: int
    # For PR_LINK: the new line's bytes; for CHANGED: the head line's bytes.
    text: bytes = b""


@dataclass
class HistoryDiff:
    head: Layout
    base: Layout | None
    # Line rules (bytes, trailing whitespace) apply from this head line on.
    new_lines_from: int
    # Appended entries, in head order.
    new_blocks: list[Block] = field(default_factory=list)
    edits: list[HistoryEdit] = field(default_factory=list)
    # True when there is no base file: the whole head is new and is parsed from line 1.
    whole_file: bool = False

    @property
    def pr_link_corrections(self) -> list[HistoryEdit]:
        return [e for e in self.edits if e.kind is EditKind.PR_LINK]


def diff_history(base: Layout | None, head: Layout, *, gaps_editable: bool = True) -> HistoryDiff:
    """Compare two revisions of the changelog (``base`` None: the file is new).

    ``gaps_editable``: blank lines outside entries (between them, before the first, after the last)
    are not history (see :mod:`ci_tools.changelog.policy`).
    """
    if base is None:
        return HistoryDiff(head, None, 1, list(head.blocks), whole_file=True)
    if head.data.startswith(base.data):
        return _appended_only(base, head)
    return _aligned(base, head, gaps_editable)


def _appended_only(base: Layout, head: Layout) -> HistoryDiff:
    complete = base.data.count(b"\n")
    edits: list[HistoryEdit] = []
    first = complete + 1
    if base.data and not base.ends_with_newline:
        # The base's last line had no newline; the head may only add that newline.
        if head.data[len(base.data): len(base.data) + 1] != b"\n":
            edits.append(HistoryEdit(EditKind.CHANGED, complete + 1, complete + 1, head.line(complete + 1)))
        first = complete + 2
    new_blocks = head.blocks_from(first)
    stop = new_blocks[0].start if new_blocks else len(head.lines) + 1
    for number in range(first, stop):
        line = head.line(number)
        if not is_blank(line) and not line.startswith(b"#"):
            last_base = base.blocks[-1].start if base.blocks else 1
            edits.append(HistoryEdit(EditKind.CONTINUED, number, last_base, line))
            break
    return HistoryDiff(head, base, first, new_blocks, edits)


def _first_difference(a: list[bytes], b: list[bytes]) -> int:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def _pr_link_only(base_lines: list[bytes], head_lines: list[bytes]) -> list[int] | None:
    """Indexes of changed lines when only ``  pr-link:`` lines differ, else None."""
    if len(base_lines) != len(head_lines):
        return None
    changed = [i for i, (x, y) in enumerate(zip(base_lines, head_lines)) if x != y]
    for i in changed:
        old, new = base_lines[i], head_lines[i]
        if not (old.startswith(PR_LINK_PREFIX) and new.startswith(PR_LINK_PREFIX)):
            return None
        if pr_link_value(old) == pr_link_value(new):
            return None  # same link, other bytes (whitespace, quotes): an edit, not a correction
    return changed


def pr_link_value(line: bytes) -> str:
    """The value of a ``  pr-link:`` line, unquoted the way YAML reads a plain or quoted scalar."""
    value = line[len(PR_LINK_PREFIX):].decode("utf-8", "replace").strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1]
    return value


class _Aligner:
    def __init__(self, base: Layout, head: Layout, gaps_editable: bool) -> None:
        self.base, self.head = base, head
        self.gaps_editable = gaps_editable
        self.edits: list[HistoryEdit] = []

    def lines(self, layout: Layout, first: int, last: int) -> list[bytes]:
        return layout.lines[first - 1: last]

    def compare_lines(self, base_first: int, base_lines: list[bytes], head_first: int,
                      head_lines: list[bytes], *, allow_growth: bool = False, outside_entries: bool = False) -> None:
        """Report the first differing line of two runs that should be equal (``outside_entries``: lines before
        the first entry, whose blank lines a change may edit when gaps are editable)."""
        if allow_growth and head_lines[: len(base_lines)] == base_lines:
            return
        if base_lines == head_lines:
            return
        if outside_entries and self.gaps_editable and _without_blanks(base_lines) == _without_blanks(head_lines):
            return
        i = _first_difference(base_lines, head_lines)
        # A run the head dropped entirely is reported at the nearest head line.
        head_line = max(1, min(head_first + i, len(self.head.lines)))
        text = head_lines[i] if i < len(head_lines) else b""
        self.edits.append(HistoryEdit(EditKind.CHANGED, head_line, base_first + min(i, max(len(base_lines) - 1, 0)), text))

    def pair(self, bb: Block, hb: Block, *, last_base: bool, appended_after: bool) -> None:
        base_lines = self.lines(self.base, bb.start, bb.end)
        head_lines = self.lines(self.head, hb.start, hb.end)
        if base_lines != head_lines:
            changed = _pr_link_only(base_lines, head_lines)
            if changed is not None:
                for i in changed:
                    self.edits.append(HistoryEdit(EditKind.PR_LINK, hb.start + i, bb.start + i, head_lines[i]))
            else:
                self.compare_lines(bb.start, base_lines, hb.start, head_lines)
        if self.gaps_editable:
            return  # a gap holds only blank lines, and they are not history
        base_gap = self.lines(self.base, bb.end + 1, bb.end + bb.gap)
        head_gap = self.lines(self.head, hb.end + 1, hb.end + hb.gap)
        self.compare_lines(bb.end + 1, base_gap, hb.end + 1, head_gap, allow_growth=last_base and appended_after)

    def removed(self, bb: Block, at_head_line: int) -> None:
        self.edits.append(HistoryEdit(EditKind.REMOVED, at_head_line, bb.start))


def _without_blanks(lines: list[bytes]) -> list[bytes]:
    return [line for line in lines if not is_blank(line)]


def _aligned(base: Layout, head: Layout, gaps_editable: bool) -> HistoryDiff:
    import difflib  # only history edits pay for it

    al = _Aligner(base, head, gaps_editable)
    # The preamble (comments before the first entry) is history too.
    al.compare_lines(1, al.lines(base, 1, base.preamble_end), 1, al.lines(head, 1, head.preamble_end),
                     outside_entries=True)
    bblocks, hblocks = base.blocks, head.blocks
    matcher = difflib.SequenceMatcher(
        None, [base.block_bytes(b) for b in bblocks], [head.block_bytes(b) for b in hblocks], autojunk=False,
    )
    pairs: list[tuple[int, int]] = []
    unpaired_head: list[int] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("equal", "replace"):
            n = min(i2 - i1, j2 - j1)
            pairs.extend((i1 + k, j1 + k) for k in range(n))
            unpaired_head.extend(range(j1 + n, j2))
            at = hblocks[j1 + n].start if j1 + n < len(hblocks) else len(head.lines) + 1
            for i in range(i1 + n, i2):
                al.removed(bblocks[i], min(at, max(len(head.lines), 1)))
        elif tag == "delete":
            at = hblocks[j1].start if j1 < len(hblocks) else max(len(head.lines), 1)
            for i in range(i1, i2):
                al.removed(bblocks[i], at)
        else:  # insert
            unpaired_head.extend(range(j1, j2))
    last_paired = max((j for _, j in pairs), default=-1)
    appended = [j for j in unpaired_head if j > last_paired]
    for bi, hj in pairs:
        al.pair(bblocks[bi], hblocks[hj], last_base=bi == len(bblocks) - 1, appended_after=bool(appended))
    for j in unpaired_head:
        if j <= last_paired:
            al.edits.append(HistoryEdit(EditKind.INSERTED, hblocks[j].start, 0, head.line(hblocks[j].start)))
    if last_paired >= 0:
        anchor = hblocks[last_paired]
        paired_base = next(bblocks[bi] for bi, hj in pairs if hj == last_paired)
        # Gap lines the base already had are history; the rest are new.
        new_from = anchor.end + min(paired_base.gap, anchor.gap) + 1
    else:
        new_from = head.preamble_end + 1
    edits = sorted(al.edits, key=lambda e: (e.head_line, e.kind.value))
    return HistoryDiff(head, base, new_from, [hblocks[j] for j in appended], edits)
