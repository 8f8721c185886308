"""Where a clause names a subject: identifiers, vocabulary terms, words derived from identifiers.

Identifiers first (``--flag``, ``--flag=v``, ``NAME=v``, ``NAME``,
``max-num-seqs``, ``--compilation-config.cudagraph_mode``), then vocabulary
terms (TBO, EPLB, "acceptance length"), then runs of at least two
consecutive words of one subject's identifier ("state checkpoint interval").
A phrase that fits several subjects equally well is kept with all of them;
the extractor reports it as unverified, never as a claim.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .subjects import Catalog, Subject, VocabularyEntry, stem
from .tokens import Reading


@dataclass
class Mention:
    start: int  # token index range [start, end)
    end: int
    subjects: list[Subject]
    phrase: str
    via: str  # "identifier" | "vocabulary" | "words"
    vocab: VocabularyEntry | None = None
    attached: str | None = None  # value written into the token (--flag=v, NAME=v)


@dataclass
class Found:
    """What :func:`find_mentions` saw besides mentions: every word (for undocumented changes) and names without a subject."""

    words: set[str]
    unknown_names: list[tuple[str, int]]  # (name, token index): a spelled identifier no recipe in scope has
    several: list[tuple[str, int, int, tuple[str, ...]]]  # (term, start, end, candidates): vocabulary without one subject


# Words that cannot name a subject on their own: a derived match needs one other word.
GENERIC_WORDS = {"no", "enable", "disable", "use", "set", "max", "min", "num", "size", "mode", "type", "config",
                 "path", "value", "default", "per", "total", "count", "is", "of"}
_IDENTIFIER = re.compile(r"^[A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)+$")


def _index_keys(word: str) -> list[str]:
    """The subject words a text word can stand for (see :func:`slot_has`)."""
    keys = [word]
    for suffix in ("s", "es", "ed", "ing"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            keys.append(word[: -len(suffix)])
    return keys


def slot_has(slot: frozenset[str], word: str) -> bool:
    return word in slot or any(s.startswith(word) and len(word) >= 4 and word.isascii() and len(s) - len(word) <= 3
                               and s[len(word):] in {"s", "es", "ed", "ing"} for s in slot)


def find_mentions(r: Reading, cat: Catalog) -> tuple[list[Mention], Found]:
    mentions: list[Mention] = []
    found = Found(set(), [], [])
    toks = r.toks
    taken = [False] * len(toks)
    # Identifiers first: --flag, --flag=v, NAME=v, NAME, max-num-seqs.
    for i, t in enumerate(toks):
        if r.used[i]:
            continue
        name, attached = t.text, None
        if t.kind in ("flag", "assign") and "=" in t.text:
            name, _, attached = t.text.partition("=")
        if t.kind == "flag" or t.kind == "assign" or (t.kind == "word" and _IDENTIFIER.match(t.text)):
            subjects = cat.by_identifier(name)
            found.words.add(name)
            if subjects:
                mentions.append(Mention(i, i + 1, subjects, name, "identifier", attached=attached))
                taken[i] = True
            elif t.kind in ("flag", "assign") or name.isupper():
                found.unknown_names.append((name, i))
                taken[i] = True
    # Word slots (sub-words of hyphenated tokens; "KV/index" offers alternatives).
    slots: list[tuple[int, frozenset[str]]] = []
    for i, t in enumerate(toks):
        if taken[i] or r.used[i] or t.kind not in ("word", "cjk"):
            continue
        if t.kind == "cjk":
            slots.append((i, frozenset({t.text})))
            continue
        if "/" in t.text and all(p.isalpha() for p in t.text.split("/")):
            slots.append((i, frozenset(stem(p) for p in t.text.split("/"))))
            continue
        for part in re.split(r"[-_+]", t.text):
            if part:
                slots.append((i, frozenset({stem(part)})))
    for w in (next(iter(s)) for _, s in slots if len(s) == 1):
        found.words.add(w)
    vocab_taken = _vocabulary(r, cat, slots, taken, mentions, found)
    _derived(r, cat, slots, vocab_taken, taken, mentions)
    mentions.sort(key=lambda m: m.start)
    return mentions, found


def _vocabulary(r: Reading, cat: Catalog, slots: list[tuple[int, frozenset[str]]], taken: list[bool],
                mentions: list[Mention], found: Found) -> set[int]:
    vocab_taken: set[int] = set()
    for entry in sorted(cat.settings.vocabulary, key=lambda e: -len(e.term_words)):
        tw = entry.term_words
        if not tw:
            continue
        for si in range(len(slots) - len(tw) + 1):
            if any(si + k in vocab_taken for k in range(len(tw))):
                continue
            if all(slot_has(slots[si + k][1], tw[k]) for k in range(len(tw))):
                a, b = slots[si][0], slots[si + len(tw) - 1][0] + 1
                subjects = cat.resolve_vocabulary(entry)
                for k in range(len(tw)):
                    vocab_taken.add(si + k)
                if len(subjects) == 1:
                    mentions.append(Mention(a, b, subjects, entry.term, "vocabulary", vocab=entry))
                else:
                    found.several.append((entry.term, a, b, tuple(s.name for s in subjects)))
                for k in range(a, b):
                    taken[k] = True
    return vocab_taken


def _derived(r: Reading, cat: Catalog, slots: list[tuple[int, frozenset[str]]], vocab_taken: set[int],
             taken: list[bool], mentions: list[Mention]) -> None:
    """Runs of >= 2 consecutive words of one subject's identifier."""
    toks = r.toks
    free = [(si, s) for si, s in enumerate(slots) if si not in vocab_taken and not taken[s[0]]]
    index = cat.word_index()
    order = {name: n for n, name in enumerate(cat.subjects)}
    pos = 0
    while pos < len(free):
        best_len = 0
        best: dict[str, tuple[Subject, tuple[str, ...]]] = {}
        starts: set[tuple[str, int]] = set()
        for word in free[pos][1][1]:
            for key in _index_keys(word):
                for subject, j in index.get(key, ()):
                    starts.add((subject.name, j))
        for name, j in sorted(starts, key=lambda s: (order[s[0]], s[1])):
            subject = cat.subjects[name]
            words = cat.words_of(subject)
            k = 0
            while (pos + k < len(free) and j + k < len(words)
                   and slot_has(free[pos + k][1][1], words[j + k])
                   and (k == 0 or free[pos + k][0] == free[pos + k - 1][0] + 1)):
                k += 1
            if k >= 2 and k >= best_len and not set(words[j:j + k]) <= GENERIC_WORDS:
                used_words = words[j:j + k]
                if k > best_len:
                    best = {}
                    best_len = k
                best[subject.name] = (subject, used_words)
        if best_len >= 2:
            a, b = free[pos][1][0], free[pos + best_len - 1][1][0] + 1
            phrase = r.source.text[toks[a].start:toks[b - 1].end]
            groups: dict[tuple[str, ...], list[Subject]] = {}
            for subject, used_words in best.values():
                groups.setdefault(used_words, []).append(subject)
            for used_words, subjects in groups.items():
                full = [s for s in subjects if len(cat.words_of(s)) == best_len]
                if len(subjects) > 1 and len(full) == 1:
                    subjects = full
                mentions.append(Mention(a, b, subjects, phrase, "words"))
            pos += best_len
        else:
            pos += 1
