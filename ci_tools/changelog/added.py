"""The entries a change adds, found by content wherever they stand in the file.

The append-only gate reasons about positions (what follows the base's last
byte); what a change *says* is a different question.  A squash merge often
lands an entry mid-file, and a re-ingest commit appends a copy of an entry the
file already has.  An entry is added when its text, without its ``pr-link:``
line, is not the text of any entry at the base: an entry inserted anywhere is
found, a verbatim re-append is not new, and a pr-link correction adds nothing.
An entry whose description was edited is added in its new wording.

Only the added blocks are parsed, each on its own; its ``offset`` (the lines
before it) turns its positions into the head file's.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ..revision.yamlpos import PosSeq, YamlLoadError, load_yaml
from .entries import NewEntry
from .history import PR_LINK_PREFIX
from .layout import Block, Layout


def _content(layout: Layout, block: Block) -> bytes:
    """The block's lines without its pr-link line(s): what the entry says, not where it links."""
    lines = layout.lines[block.start - 1: block.end]
    return b"\n".join(line for line in lines if not line.startswith(PR_LINK_PREFIX))


@dataclass(frozen=True)
class _Known:
    """The entry contents of one revision (content -> how many blocks have it) and its last block."""

    data: bytes  # the revision's bytes, compared by identity
    last_start: int  # the line its last block starts on (1 when it has none)
    last_content: bytes | None
    contents: Counter[bytes]


# The contents of the last head seen: a replay walks a chain of revisions, each the next one's base (the same
# bytes object), so the base's contents come from the step before instead of from every block of a 400 KB file.
_LAST_HEAD: list[_Known] = []


def _known(layout: Layout) -> _Known:
    if _LAST_HEAD and _LAST_HEAD[0].data is layout.data:
        return _LAST_HEAD[0]
    blocks = layout.blocks
    return _Known(layout.data, blocks[-1].start if blocks else 1, _content(layout, blocks[-1]) if blocks else None,
                  Counter(_content(layout, b) for b in blocks))


def added_blocks(base: Layout | None, head: Layout) -> list[Block]:
    """Head blocks whose content no base block has, in head order."""
    if base is None:
        return list(head.blocks)
    known = _known(base)
    if head.data.startswith(base.data):
        # The common case: only the base's last entry (which the head may extend) and what follows can be new,
        # and what follows may still repeat an old entry.
        candidates = head.blocks_from(known.last_start)
        contents = [_content(head, b) for b in candidates]
        # The head's blocks are the base's but its last, then the candidates: its contents follow from the base's.
        head_contents = known.contents.copy()
        if known.last_content is not None:
            head_contents[known.last_content] -= 1
        head_contents.update(contents)
        head_contents = +head_contents
        last = (candidates[-1].start, contents[-1]) if candidates else (known.last_start, known.last_content)
    else:
        candidates = head.blocks
        contents = [_content(head, b) for b in candidates]
        head_contents = Counter(contents)
        last = (candidates[-1].start, contents[-1]) if candidates else (1, None)
    _LAST_HEAD[:] = [_Known(head.data, *last, head_contents)]
    return [b for b, c in zip(candidates, contents) if not known.contents[c]]


def parse_block(path: str, head: Layout, block: Block) -> NewEntry | None:
    """One block as an entry with head-file positions; None when it is not valid YAML (the gate reports that)."""
    try:
        loaded = load_yaml(head.text(block.start, block.end).decode("utf-8"), path)
    except (UnicodeDecodeError, YamlLoadError):
        return None
    value = loaded.value
    if not isinstance(value, PosSeq) or len(value) != 1:
        return None
    offset = block.start - 1
    span = value.item_span(0)
    return NewEntry(path, span[0] + offset, value[0], offset, (span[0] + offset, span[1], span[2] + offset, span[3]))


def added_entries(path: str, base: Layout | None, head: Layout, limit: int | None = None) -> list[NewEntry]:
    """The parsed entries a change adds (see the module docstring), in head order; at most ``limit``."""
    out: list[NewEntry] = []
    for block in added_blocks(base, head)[:limit]:
        entry = parse_block(path, head, block)
        if entry is not None:
            out.append(entry)
    return out
