"""The entries a change adds, found by content wherever they stand in the file.

The append-only gate reasons about positions (what follows the base's last
byte); what a change *says* is a different question.  A squash merge often
lands an entry mid-file, and a re-ingest commit appends a copy of an entry the
file already has.  An entry is added when its words, without its ``pr-link:`` line, are not
the words of any entry at the base (letters and digits only, so that a
re-formatted entry is the entry it was): an entry inserted anywhere is found,
a verbatim re-append is not new (nor one under another link, as re-ingests
write them), and a pr-link correction adds nothing.
An entry whose description was edited is added in its new wording.

Only the added blocks are parsed, each on its own; its ``offset`` (the lines
before it) turns its positions into the head file's.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from ..bounded import BoundedDict
from ..revision.yamlpos import PosSeq, YamlLoadError, load_yaml
from .entries import NewEntry
from .history import PR_LINK_PREFIX
from .layout import Block, Layout


# What does not change what an entry says: its links, and everything but letters and digits (YAML quoting and
# indentation, a `|` block turned into a list, lines re-wrapped, "--flag: V" written "--flag V").
_NOT_WORDS = re.compile(rb"https?://\S+|[^A-Za-z0-9]+")
# _words by the block's bytes: most blocks of a revision are blocks of the revision before, unchanged.
_WORDS_OF: BoundedDict[bytes, bytes] = BoundedDict(4096)


def _words(layout: Layout, block: Block) -> bytes:
    """What the entry says, not where it links or how it is laid out: its letters and digits, without its
    pr-link line(s) or a "PR: <link>" line of an older description.  A commit that re-formats the whole file
    (InferenceX abdb40a28246 turned every `description: |` block into a list of strings) adds nothing."""
    lines = layout.lines[block.start - 1: block.end]
    raw = b"\n".join(lines)
    found = _WORDS_OF.get(raw)
    if found is None:
        # a changelog holds about a thousand entries; a replay's memory stays bounded
        found = _WORDS_OF.put(raw, _NOT_WORDS.sub(b"", b" ".join(
            line for line in lines if not line.startswith(PR_LINK_PREFIX) and not line.lstrip().startswith(b"PR:"))))
    return found


@dataclass(frozen=True)
class _Known:
    """The entries of one revision by their words (words -> how many blocks say them), and its last block."""

    data: bytes  # the revision's bytes, compared by identity
    last_start: int  # the line its last block starts on (1 when it has none)
    last_words: bytes | None
    words: Counter[bytes]


# The entries of the last head seen: a replay walks a chain of revisions, each the next one's base (the same bytes
# object), so the base's entries come from the step before instead of from every block of a 400 KB file.
_LAST_HEAD: list[_Known] = []


def _known(layout: Layout) -> _Known:
    if _LAST_HEAD and _LAST_HEAD[0].data is layout.data:
        return _LAST_HEAD[0]
    blocks = layout.blocks
    return _Known(layout.data, blocks[-1].start if blocks else 1, _words(layout, blocks[-1]) if blocks else None,
                  Counter(_words(layout, b) for b in blocks))


def added_blocks(base: Layout | None, head: Layout) -> list[Block]:
    """Head blocks whose words no base block has, in head order."""
    if base is None:
        return list(head.blocks)
    known = _known(base)
    if head.data.startswith(base.data):
        # The common case: only the base's last entry (which the head may extend) and what follows can be new,
        # and what follows may still repeat an old entry.
        candidates = head.blocks_from(known.last_start)
        words = [_words(head, b) for b in candidates]
        # The head's blocks are the base's but its last, then the candidates: its entries follow from the base's.
        head_words = known.words.copy()
        if known.last_words is not None:
            head_words[known.last_words] -= 1
        head_words.update(words)
        head_words = +head_words
        last = (candidates[-1].start, words[-1]) if candidates else (known.last_start, known.last_words)
    else:
        candidates = head.blocks
        words = [_words(head, b) for b in candidates]
        head_words = Counter(words)
        last = (candidates[-1].start, words[-1]) if candidates else (1, None)
    _LAST_HEAD[:] = [_Known(head.data, *last, head_words)]
    return [b for b, w in zip(candidates, words) if not known.words[w]]


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
