"""The value a clause gives a mentioned subject: written after it, before it, or as an on/off verb.

``--max-num-seqs 32``, ``set the balancer to least_tokens``, ``32K state
checkpoints``, ``disable EPLB and TBO``, ``TBO off``, ``from 4 to 8`` (the
new value).  Enum-like words are values only where the syntax says so (right
after a spelled ``--flag``, or after ``to``/``=``); a placeholder
(``--ep-size EP_SIZE``) and a verb (``scaled``) are no values.
"""

from __future__ import annotations

import re
from typing import Container

from .context import FROM, TO, symbolic
from .mentions import Mention
from .subjects import Catalog, Subject
from .tokens import Reading
from .values import (
    Absent,
    Bool,
    ClaimValue,
    Multiples,
    Number,
    Word,
    parse_bool,
    parse_dtype,
    parse_number,
    parse_relative,
    parse_word,
)

FILLERS = {"to", "of", "at", "is", "are", "=", ":", "as", "be", "equal", "equals", "set", "becomes", "now", "stays",
           "remains", "the", "a", "value", "设置为", "设为", "为"}
_OFF_VERBS = {"disable", "disables", "disabled", "disabling", "without", "no"}
_ON_VERBS = {"enable", "enables", "enabled", "enabling", "with", "add", "adds", "pass", "passes", "use", "uses"}
_CJK_OFF = ("关闭", "禁用", "关掉")
_CJK_ON = ("开启", "启用", "打开")
_LIST_GLUE = {"and", ",", "/", "the", "both", "&", "和", "及", "以及", "also", "+"}
STOPWORDS = {
    "the", "a", "an", "and", "or", "with", "for", "on", "in", "at", "to", "of", "by", "from", "so", "that", "this",
    "its", "it", "both", "all", "each", "every", "as", "per", "plus", "only", "also", "default", "same", "new",
    "when", "which", "while", "than", "then", "into", "via", "rank", "ranks", "path", "arm", "band",
    "flag", "flags", "option", "setting", "argument", "parameter", "kept", "needs", "mapping", "wired", "tested",
    "budget", "stays", "remains", "unchanged", "is", "was", "scaled", "sized", "capped", "tuned", "derived",
    "computed", "matched", "aligned", "set", "raised", "lowered", "bumped", "enabled", "disabled",
}
_UNIT_WORDS = {"token", "tokens", "seconds", "second", "s", "ms"}
_KEEP_VERBS = {"keep", "keeps", "kept", "keeping", "leave", "leaves", "left", "leaving", "use", "uses", "using",
               "retain", "retains", "with"}
# The last word of a setting that takes a name as its value ("the dsv4 attention backend").
_ENUM_NOUNS = {"backend", "parser", "parsing", "kernel", "algorithm", "method", "strategy", "policy", "scheduler"}
_NOT_NAMES = {"new", "old", "same", "default", "current", "native", "custom", "fast", "slow", "sparse", "dense",
              "fused", "shared", "separate", "single", "own", "other", "upstream", "stock", "legacy", "generic"}

ValueAt = tuple[ClaimValue, int, int]  # the value and its token range [start, end)


def value_after(r: Reading, m: Mention, names: Container[str] = frozenset()) -> ValueAt | None:
    toks = r.toks
    i = m.end
    skipped = 0
    if i < len(toks) and toks[i].text == "(" and r.live(i) and i + 1 < len(toks):
        # "--max-num-seqs (1*CONC)": the value in a parenthesis right after the name.
        rel = parse_relative([x.text for x in toks[i + 1:i + 5]])
        num = parse_number(toks[i + 1].text)
        if rel is not None or (num is not None and i + 2 < len(toks) and toks[i + 2].text == ")"):
            i += 1
    while i < len(toks) and toks[i].low in FILLERS and skipped < 3:
        i += 1
        skipped += 1
    if i < len(toks) and toks[i].low in FROM:
        # "from TP: 64 / DEP: 128 to 256": the old value may be given per arm.
        j = next((k for k in range(i + 1, min(len(toks), i + 13)) if toks[k].low in TO or toks[k].kind == "arrow"), None)
        if j is None:
            return None
        i = j + 1
    if i + 1 < len(toks) and toks[i + 1].kind == "arrow":
        i += 2  # "4 → 8": the new value
    if i >= len(toks) or not r.live(i):
        return None
    # Enum-like words only where the syntax says "value": right after a spelled
    # --flag ("--moe-backend auto") or after "to"/"=" ("set the balancer to least_tokens").
    direct = m.via == "identifier" and toks[m.start].kind == "flag" and skipped == 0
    after_to = skipped == 1 and toks[m.end].low in {"to", "=", "设置为", "设为", "为"}
    return value_at(r, i, allow_word=direct or after_to, allow_bool=True, names=names)


def value_at(r: Reading, i: int, *, allow_word: bool, allow_bool: bool,
             names: Container[str] = frozenset()) -> ValueAt | None:
    toks = r.toks
    t = toks[i]
    words = [x.text for x in toks[i:i + 4]]
    rel = parse_relative(words)
    if rel is not None:
        n = len(rel.text.split())
        if all(r.live(k) for k in range(i, i + n)):
            return rel, i, i + n
    if t.kind not in ("word", "cjk"):
        return None
    if symbolic(t.text, names):
        return None  # "--ep-size EP_SIZE": a placeholder, not a value
    num = parse_number(t.text)
    if num is not None:
        unit = num.unit
        end = i + 1
        if not unit and end < len(toks) and toks[end].low in _UNIT_WORDS:
            unit = toks[end].low
            end += 1
        return Number(num.text, num.candidates, unit), i, end
    dtype = parse_dtype(t.text)
    if dtype is not None:
        return dtype, i, i + 1
    if allow_bool:
        b = parse_bool(t.text)
        on_as_preposition = t.low == "on" and i + 1 < len(toks) and toks[i + 1].kind in ("word", "cjk")
        if b is not None and not on_as_preposition:
            return b, i, i + 1
    glued = r.source.text[t.end:t.end + 1]
    if allow_word and t.kind == "word" and glued not in (":", "=", "{", "["):  # "mode:3+fuse": part of a larger value
        w = parse_word(t.text)
        if w is not None and t.low not in STOPWORDS:
            return w, i, i + 1
    return None


def value_before(r: Reading, m: Mention) -> ValueAt | None:
    i = m.start - 1
    if i < 0 or not r.live(i):
        return None
    t = r.toks[i]
    if t.kind != "word":
        return None
    num = parse_number(t.text)
    if num is not None:
        return num, i, i + 1
    dtype = parse_dtype(t.text)
    if dtype is not None:
        return dtype, i, i + 1
    if t.low == "default" and i > 0 and r.toks[i - 1].low in ("the", "its") and i > 1 and \
            r.toks[i - 2].low in _KEEP_VERBS:
        return Absent(f"{r.toks[i - 2].text} the default"), i - 2, i + 1  # "keeps the default eval concurrency"
    if t.low == "default" and (i == 0 or r.toks[i - 1].text in (",", "(", "and", "with")) and \
            not (m.end < len(r.toks) and r.toks[m.end].low in ("of", "is", "to", "was", "for")):
        return Absent(t.text), i, i + 1  # an item of a list of settings: "..., default KV-cache dtype, ..."
    # "the dsv4 attention backend", "FlashInfer attention backend": a name before a setting that takes one.
    last = r.toks[m.end - 1].low
    if m.via in ("words", "vocabulary") and last in _ENUM_NOUNS and re.fullmatch(r"[A-Za-z][A-Za-z0-9_.]*", t.text) \
            and t.low not in STOPWORDS and t.low not in _NOT_NAMES:
        w = parse_word(t.text)
        if w is not None:
            return w, i, i + 1
    return None


_MULTIPLES = {"multiples", "token-multiples"}
_EVEN = {"even-step", "even-sized"}


def list_step(r: Reading, m: Mention) -> ValueAt | None:
    """The step a list setting's sizes keep: ``capture enumerates multiples of (1+2)=3``, ``an explicit
    even-step cudagraph_capture_sizes list``.  Read a few words around the name; a step given only as a
    formula (``multiples of (1+N)``) is no value."""
    toks = r.toks
    for k in range(max(0, m.start - 2), min(len(toks), m.end + 6)):
        if not r.live(k):
            continue
        low = toks[k].low
        if low in _EVEN and k < m.start:
            return Multiples(toks[k].text, 2), k, k + 1
        if low not in _MULTIPLES or k + 1 >= len(toks) or toks[k + 1].low != "of":
            continue
        j = k + 2
        if j < len(toks) and toks[j].text == "(":
            close = next((c for c in range(j + 1, min(len(toks), j + 6)) if toks[c].text == ")"), None)
            if close is None or close + 2 >= len(toks) or toks[close + 1].text != "=":
                return None
            j = close + 2
        if j < len(toks) and r.live(j) and toks[j].text.isdigit() and int(toks[j].text) > 1:
            return Multiples(r.source.text[toks[k].start:toks[j].end], int(toks[j].text)), k, j + 1
        return None
    return None


def default_after(r: Reading, m: Mention) -> ValueAt | None:
    """``X stays at its default``, ``X left at the default``, ``X at default``."""
    toks = r.toks
    k = m.end
    words: list[str] = []
    while k < len(toks) and len(words) < 4 and r.live(k):
        words.append(toks[k].low)
        if toks[k].low == "default":
            if words[0] in ("at", "stays", "remains", "left", "kept", "keeps", "is") or words[:2] == ["unset", "("]:
                return Absent(" ".join(words)), m.end, k + 1
            return None
        k += 1
    return None


def bool_verb(r: Reading, m: Mention, mentions: list[Mention]) -> tuple[Bool, int] | None:
    """A verb before a (list of) subject(s): ``disable EPLB and TBO``, ``关闭 TBO 和 EPLB``."""
    starts = {x.start: x for x in mentions}
    toks = r.toks
    i = m.start - 1
    while i >= 0:
        t = toks[i]
        if r.masked[i]:
            return None
        low = t.low
        if low in _OFF_VERBS or (low == "off" and i > 0 and toks[i - 1].low in {"turn", "turns", "switch"}):
            return Bool(t.text, False), i
        if low in {"turn", "switch"} and i + 1 < len(toks) and toks[i + 1].low == "on":
            return Bool(t.text, True), i
        if t.kind == "cjk":
            if any(t.text.endswith(v) or t.text.startswith(v) for v in _CJK_OFF):
                return Bool(t.text, False), i
            if any(t.text.endswith(v) or t.text.startswith(v) for v in _CJK_ON):
                return Bool(t.text, True), i
            if t.text in _LIST_GLUE:
                i -= 1
                continue
            return None
        if low in _ON_VERBS:
            return Bool(t.text, True), i
        if low in _LIST_GLUE or r.used[i]:
            i -= 1  # "FP8 KV caches and prefix caching": past another claim's value
            continue
        ended = next((x for x in mentions if x.end == i + 1), None)
        if ended is not None:
            i = ended.start - 1
            continue
        if i in starts:
            i -= 1
            continue
        return None
    return None


def bool_after(r: Reading, m: Mention, mentions: list[Mention]) -> tuple[Bool, int] | None:
    """``TBO off``, ``TBO and EPLB off``."""
    toks = r.toks
    i = m.end
    while i < len(toks):
        t = toks[i]
        if r.masked[i]:
            return None
        if t.low in {"off", "on", "disabled", "enabled"}:
            if t.low == "on" and i + 1 < len(toks) and toks[i + 1].kind in ("word", "cjk"):
                return None  # "on the DEP band": a preposition
            return Bool(t.text, t.low in {"on", "enabled"}), i
        if t.low in {"and", "/", "&", "和"}:
            nxt = next((x for x in mentions if x.start == i + 1), None)
            if nxt is None:
                return None
            i = nxt.end
            continue
        return None
    return None


def attached_value(text: str, m: Mention, names: Container[str] = frozenset()) -> ValueAt | None:
    """The value written into the mention's token: ``--flag=v``, ``NAME=v``."""
    if symbolic(text, names):
        return None
    for parse in (parse_number, parse_dtype, parse_bool, parse_word):
        v = parse(text)
        if v is not None:
            return v, m.start, m.end
    return None


def vocab_word(r: Reading, m: Mention) -> ValueAt | None:
    """A vocabulary term's own on/off words: ``golden MTP acceptance``, ``real MTP acceptance``."""
    entry = m.vocab
    assert entry is not None
    toks = r.toks
    i = m.start - 1
    if i >= 0 and not r.masked[i]:
        t = toks[i]
        low = t.low
        for w in entry.true_words:
            if low == w.lower() or (t.kind == "cjk" and t.text.endswith(w)):
                return Bool(t.text, True), i, i + 1
        for w in entry.false_words:
            if low == w.lower() or (t.kind == "cjk" and t.text.endswith(w)):
                return Bool(t.text, False), i, i + 1
    for k in range(m.start, m.end):
        low = toks[k].low
        if low in (w.lower() for w in entry.true_words):
            return Bool(toks[k].text, True), m.start, m.end
    return None


def boolish(cat: Catalog, subject: Subject, m: Mention) -> bool:
    return (m.via == "vocabulary" or cat.is_boolean(subject)
            or bool(re.search(r"(?:^|[-_])(?:enable|disable|use|no)(?:[-_]|$)", subject.name, re.I)))


def bool_only(cat: Catalog, subject: Subject, m: Mention) -> bool:
    """An on/off setting: a flag every recipe passes without a value, or one only the vocabulary names."""
    return cat.is_boolean(subject) or (subject.name not in cat.subjects and m.via == "vocabulary"
                                        and not _names_a_kind(m))


def _names_a_kind(m: Mention) -> bool:
    """A vocabulary term for a setting that takes a name (``tool-call parser``), not an on/off one (``TBO``)."""
    return m.vocab is not None and m.vocab.term.split()[-1].lower() in _ENUM_NOUNS


def takes_dtype(subject: Subject) -> bool:
    name = subject.name.lower()
    return any(w in name for w in ("dtype", "cache", "kv", "quant", "precision", "type"))


def inverted(subject: Subject) -> bool:
    """Flags whose presence turns something off (``--disable-radix-cache``, ``--no-enable-x``)."""
    return subject.kind == "flag" and bool(re.match(r"^--(?:disable|no)-", subject.name)) and not bool(
        re.match(r"^--no-disable-", subject.name))  # "--no-disable-x" turns x on


def read_value(r: Reading, cat: Catalog, m: Mention, mentions: list[Mention]) -> ValueAt | None:
    """The value the clause gives the (single) subject of ``m``, or None."""
    subject = m.subjects[0]
    found: ValueAt | None = None
    if (m.via == "identifier" and m.start > 0 and r.toks[m.start - 1].low in ("no", "without") and r.live(m.start - 1)
            and not boolish(cat, subject, m)):
        # "No --hf-overrides indexer-skipping knobs": the setting is not given (whatever follows names it).
        return Absent(r.toks[m.start - 1].text), m.start - 1, m.start
    if m.attached is not None:
        found = attached_value(m.attached, m, cat.subjects)
    if found is None and m.vocab is not None:
        after = value_after(r, m, cat.subjects)
        found = after if after is not None and not isinstance(after[0], Bool) else vocab_word(r, m)
    if found is None:
        found = value_after(r, m, cat.subjects)
        if found is not None and isinstance(found[0], Bool) and not boolish(cat, subject, m):
            found = None
    if found is None:
        found = value_before(r, m) or default_after(r, m) or list_step(r, m)
    if found is None and boolish(cat, subject, m):
        verb = bool_verb(r, m, mentions) or bool_after(r, m, mentions)
        if verb is not None:
            found = (verb[0], verb[1], verb[1] + 1)
    if found is not None and not isinstance(found[0], (Bool, Absent)) and bool_only(cat, subject, m):
        found = None  # "TBO is a prefill-only optimisation": not a value of an on/off setting
    if found is not None and isinstance(found[0], Word) and found[0].dtype and not takes_dtype(subject):
        found = None  # "the gfx950 MXFP4 MoE backend": a dtype names no backend
    if found is not None and isinstance(found[0], Bool) and m.via != "identifier" and inverted(subject):
        # "radix cache disabled" is --disable-radix-cache passed.
        b = found[0]
        found = (Bool(b.text, not b.on), found[1], found[2])
    return found
