"""Claims in prose: (subject, asserted value, scope, span).

Each clause is tokenised once.  Historical and rejected values are masked
before anything is read: the ``from`` side of ``from A to B``, the left of
``A → B``, the ``X`` of ``replace X with Y`` and of ``instead of X``, and
whole clauses that report what was tried or what failed ("previously",
"killed the engine", "tried but removed", "drop ...").  What remains is read
for config-field claims (parallelism shorthands, image references,
concurrencies) and for recipe subjects with the value written next to them.

The extractor prefers silence: a subject without a value, a value without a
subject, or a phrase that fits two subjects yields an :class:`Unverified`
record, never a claim.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from ..findings import Location
from .scope import Scope
from .sentences import Clause, SourceText, split_clauses
from .subjects import Catalog, Subject, VocabularyEntry, stem
from .values import (
    IMAGE_RE, Bool, ClaimValue, Concurrency, Number, PerConc, Topology, Word, parse_bool, parse_dtype,
    parse_image, parse_number, parse_relative, parse_topology, parse_word,
)


@dataclass(frozen=True)
class Claim:
    kind: str  # "recipe" | "topology" | "image" | "concurrency"
    value: ClaimValue
    scope: Scope
    location: Location
    clause: str
    subject: Subject | None = None
    phrase: str = ""  # how the text named the subject
    # Several topologies in one sentence: each is one of the points, not all of them.
    existential: bool = False


@dataclass(frozen=True)
class Unverified:
    phrase: str
    location: Location
    reason: str
    candidates: tuple[str, ...] = ()


@dataclass
class Extraction:
    claims: list[Claim] = field(default_factory=list)
    unverified: list[Unverified] = field(default_factory=list)
    # Subjects the text names at all (with or without a value): for undocumented changes.
    mentioned: set[str] = field(default_factory=set)
    words: set[str] = field(default_factory=set)


# ---------------------------------------------------------------- tokens

@dataclass(frozen=True)
class Tok:
    text: str
    start: int  # offsets in the clause's source text
    end: int
    kind: str  # flag | assign | image | word | cjk | arrow | punct

    @property
    def low(self) -> str:
        return self.text.lower()


_TOKEN = re.compile(
    r"(?P<image>" + IMAGE_RE.pattern.replace("(?P<ref>", "(?:") + r")"
    r"|(?P<flag>--[A-Za-z0-9][A-Za-z0-9_-]*(?:=[^\s,;)\]`'\"]+)?)"
    r"|(?P<assign>[A-Za-z_][A-Za-z0-9_]*=[^\s,;)\]、，。`'\"]+)"
    r"|(?P<arrow>→|->|=>|⇒)"
    r"|(?P<word>[A-Za-z0-9_](?:[A-Za-z0-9_.+/%-]*[A-Za-z0-9_%])?)"
    r"|(?P<cjk>[\u4e00-\u9fff]+)"
    r"|(?P<punct>\S)"
)


def tokenize(clause: Clause) -> list[Tok]:
    text = clause.source.text
    out: list[Tok] = []
    for m in _TOKEN.finditer(text, clause.start, clause.end):
        kind = m.lastgroup or "punct"
        out.append(Tok(m.group(), m.start(), m.end(), kind))
    return out


# ---------------------------------------------------------------- markers

# A clause reporting what failed, was tried, was removed or was the case before.
_SKIP_CLAUSE = re.compile(
    r"\b(?:kill(?:s|ed)?|crash(?:es|ed)?|ooms?|oom-kills?|oomed|fail(?:s|ed|ing)?|hang(?:s|ing)?|"
    r"reject(?:s|ed)?|cannot|can't|could|would|tried|previously|formerly|used to|originally|no longer|"
    r"regress\w*|remov(?:e|es|ed|ing)|drop(?:s|ped|ping)?|delet(?:e|es|ed|ing)|exclud(?:e|es|ed|ing)|"
    r"retir(?:e|es|ed|ing)|revert(?:s|ed|ing)?|if|unless|not|never|was|were|tbd|todo|maybe|"
    r"might|should|negative|broke|broken|claim(?:s|ed|ing)?|says|said|stating|contradict\w*|disagree\w*|"
    r"mismatch\w*|discrepanc\w*)\b|n't"
    r"|之前|此前|以前|原先|曾经|删除|移除|去掉|不|未|没有|若|如果",
    re.IGNORECASE,
)
_QUOTED = re.compile(r"(?<![\w])'[^'\n]*\s[^'\n]*'(?![\w])|\"[^\"\n]*\s[^\"\n]*\"|“[^”]*”|「[^」]*」|‘[^’]*\s[^’]*’")
# Clauses that contrast with the one before ("..., while preserving the TP band") name their own jobs.
_CONTRAST = re.compile(r"^(?:while|whereas|but|except|although|though|leaving|preserving|keeping)\b", re.I)
_FROM = {"from", "从"}
_TO = {"to", "into", "为", "到", "改为", "切换为", "切换到", "换成", "变为"}
_FILLERS = {"to", "of", "at", "is", "are", "=", ":", "as", "be", "equal", "equals", "set", "becomes", "now", "stays",
            "remains", "the", "a", "value", "设置为", "设为", "为"}
_OFF_VERBS = {"disable", "disables", "disabled", "disabling", "without", "no"}
_ON_VERBS = {"enable", "enables", "enabled", "enabling", "with", "add", "adds", "pass", "passes", "use", "uses"}
_CJK_OFF = ("关闭", "禁用", "关掉")
_CJK_ON = ("开启", "启用", "打开")
_LIST_GLUE = {"and", ",", "/", "the", "both", "&", "和", "及", "以及", "also", "+"}
_DP_WORDS = {"dep", "dpa", "dp-attention", "dp-attn", "dp_attn", "dp-on"}
_TP_WORDS = {"tp-only", "tp_only", "dp-off"}
_BAND_NOUNS = {"band", "arm", "path", "branch", "points", "point", "rows", "row", "tier", "sweep", "cells", "档位"}
_MULTINODE = re.compile(r"^\d*P\d*D$|^TP\d+[PD]$|^\d+P\d+D$", re.IGNORECASE)

_CONC_LIST = r"\[?\s*\d+(?:\s*(?:,\s*(?:and\s+|or\s+)?|/|\s+and\s+|\s+or\s+|\.\.|-|–|\s+to\s+|\s+through\s+)\s*\d+)*\s*\]?"
_CONC_RE = re.compile(
    r"(?<![\w-])(?:conc(?:urrenc(?:y|ies))?(?:-list)?|并发)\s*(?:=|:|of)?\s*(?P<list>" + _CONC_LIST + r")(?![\w.])",
    re.IGNORECASE,
)
_C_RE = re.compile(r"(?<![\w/.-])c(?P<list>\d+(?:\s*(?:/|-|–)\s*c?\d+|,\s*c\d+)*)(?![\w.])")
_AT_LEAST = re.compile(r"\s*(?:and above|and higher|or above|or higher|or more|\+|及以上|以上)")


def _parse_conc(text: str) -> tuple[tuple[int, ...], bool]:
    body = text.strip().strip("[]")
    is_range = bool(re.search(r"\d\s*(?:-|–|\.\.|\bto\b|\bthrough\b)\s*c?\d", body))
    values = tuple(int(v) for v in re.findall(r"\d+", body))
    if is_range and len(values) == 2:
        return values, True
    if is_range:
        return (), False  # "4-8, 16": too irregular to read
    return values, False


@dataclass
class _Mention:
    start: int  # token index range [start, end)
    end: int
    subjects: list[Subject]
    phrase: str
    via: str  # "identifier" | "vocabulary" | "words"
    vocab: VocabularyEntry | None = None
    attached: str | None = None  # value written into the token (--flag=v, NAME=v)


class _ClauseReader:
    def __init__(self, clause: Clause, catalog: Catalog | None, inherited: Scope, out: Extraction) -> None:
        self.clause = clause
        self.source: SourceText = clause.source
        self.catalog = catalog
        self.inherited = inherited
        self.out = out
        self.toks = tokenize(clause)
        self.masked = [False] * len(self.toks)
        self.used = [False] * len(self.toks)
        whole = clause.source.text[clause.whole[0]:clause.whole[1]] if clause.whole else clause.text
        self.skip = bool(_SKIP_CLAUSE.search(whole))
        self.scope = inherited

    def loc(self, start: int, end: int) -> Location:
        return self.source.location(self.toks[start].start, self.toks[end - 1].end)

    # -------------------------------------------------------- masking

    def mask_history(self) -> None:
        toks = self.toks
        lows = [t.low for t in toks]
        n = len(toks)
        for i, low in enumerate(lows):
            if low in _FROM or (toks[i].kind == "cjk" and toks[i].text.startswith("从")):
                j = next((k for k in range(i + 1, n) if lows[k] in _TO or toks[k].kind == "arrow"
                          or (toks[k].kind == "cjk" and any(toks[k].text.startswith(w) for w in _TO))), None)
                if j is not None:
                    for k in range(i + 1, j):
                        self.masked[k] = True
            if low in {"replace", "replaces", "replacing", "替换"}:
                j = next((k for k in range(i + 1, n) if lows[k] in {"with", "by", "为"}), None)
                if j is not None:
                    for k in range(i + 1, j):
                        self.masked[k] = True
            if (low in {"instead", "rather"} and i + 1 < n and lows[i + 1] in {"of", "than"}) or low in {"vs", "versus"}:
                for k in range(i, n):
                    if toks[k].text in {",", ";"}:
                        break
                    self.masked[k] = True
            if toks[i].kind == "arrow" and i > 0:
                k = i - 1
                self.masked[k] = True
        for m in re.finditer(r"\((?:was|previously|formerly|from|vs\.?|default)\b[^)]*\)", self.clause.text, re.I):
            a, b = self.clause.start + m.start(), self.clause.start + m.end()
            for k, t in enumerate(toks):
                if t.start >= a and t.end <= b:
                    self.masked[k] = True
        # Quoted text is somebody else's words ('... zero request equivalence ...'), not a claim.
        for a, b in _quoted_spans(self.source):
            for k, t in enumerate(toks):
                if t.start >= a and t.end <= b:
                    self.masked[k] = True
        if self.skip:
            self.masked = [True] * n

    def live(self, i: int) -> bool:
        return 0 <= i < len(self.toks) and not self.masked[i] and not self.used[i]

    # -------------------------------------------------------- scope

    def read_scope(self) -> None:
        dp_values: set[bool] = set()
        dp_label = ""
        toks = self.toks
        for i, t in enumerate(toks):
            if self.masked[i]:
                continue
            low = t.low
            nxt = toks[i + 1].low if i + 1 < len(toks) else ""
            prev = toks[i - 1].low if i > 0 else ""
            if prev in {"no", "without", "non"} and (low in _DP_WORDS or low == "dp"):
                dp_values.add(False)  # "no DP-attention": the TP side
                dp_label = dp_label or "TP"
            elif low in _DP_WORDS or (low in {"dp", "dp-attention", "dpa"} and nxt in _BAND_NOUNS) or (
                    low == "dp" and nxt in {"attention", "path", "arm"}):
                dp_values.add(True)
                dp_label = dp_label or {"dep": "DEP", "dpa": "DPA"}.get(low, "DP-attention")
            elif low in _TP_WORDS or (low == "tp" and (nxt in _BAND_NOUNS or prev == "pure" or t.text == "TP")):
                dp_values.add(False)
                dp_label = dp_label or "TP"
            elif low.startswith("pure-tp") or low.startswith("tp-only") or (prev == "pure" and low.startswith("tp")):
                dp_values.add(False)
                dp_label = dp_label or "TP"
        own = Scope()
        if len(dp_values) == 1:
            own = Scope(dp_attn=dp_values.pop(), dp_label=dp_label)
        concs: set[int] = set()
        at_least: int | None = None
        for value, _, _ in self.concurrency_specs():
            if value.at_least is not None:
                at_least = value.at_least
            else:
                concs.update(value.values if not value.is_range else ())
                if value.is_range:
                    lo, hi = value.values
                    concs.update(c for c in _doubling(lo, hi))
        if concs or at_least is not None:
            own = Scope(own.dp_attn, frozenset(concs) if concs else None, at_least, own.dp_label)
        self.scope = own.merged_over(self.inherited)

    def concurrency_specs(self) -> list[tuple[Concurrency, int, int]]:
        text = self.source.text
        out: list[tuple[Concurrency, int, int]] = []
        seen: list[tuple[int, int]] = []
        for rx in (_CONC_RE, _C_RE):
            for m in rx.finditer(text, self.clause.start, self.clause.end):
                a, b = m.start(), m.end()
                if any(a < e and s < b for s, e in seen):
                    continue
                if self._masked_span(a, b):
                    continue
                values, is_range = _parse_conc(m.group("list"))
                if not values:
                    continue
                tail = _AT_LEAST.match(text, b, self.clause.end)
                at_least = values[-1] if tail and len(values) == 1 else None
                if tail:
                    b = tail.end()
                seen.append((a, b))
                out.append((Concurrency(text[a:b], values, is_range, at_least), a, b))
        return out

    def _masked_span(self, a: int, b: int) -> bool:
        return any(self.masked[k] for k, t in enumerate(self.toks) if t.start < b and a < t.end)

    def _use_span(self, a: int, b: int) -> None:
        for k, t in enumerate(self.toks):
            if t.start < b and a < t.end:
                self.used[k] = True

    # -------------------------------------------------------- config fields

    def read_config_fields(self, several_topologies: bool) -> None:
        for value, a, b in self.concurrency_specs():
            self._use_span(a, b)
            # Checked against the whole entry: which band a list belongs to is
            # too easily misread ("48 and 64 to the TP8/EP1 sweep, and 64 and
            # 192 to the DP-attention sweep").
            self.out.claims.append(Claim("concurrency", value, Scope(), self.source.location(a, b), self.clause.text))
        for i, t in enumerate(self.toks):
            if not self.live(i):
                continue
            if t.kind == "image":
                img = parse_image(t.text)
                if img is not None:
                    self.used[i] = True
                    self.out.claims.append(Claim("image", img, self.scope, self.loc(i, i + 1), self.clause.text))
                continue
            if t.kind != "word" or _MULTINODE.match(t.text):
                continue
            if any(_MULTINODE.match(p) for p in re.split(r"[/+]", t.text)):
                continue
            topos = parse_topology(t.text)
            if not topos:
                continue
            self.used[i] = True
            # Universal only over an explicit concurrency band: "the c48-256 band ... to DEP (TP8/DPA8/EP8)".
            banded = self.scope.concs is not None or self.scope.conc_min is not None
            existential = several_topologies or len(topos) > 1 or not banded
            for topo in topos:
                self.out.claims.append(Claim("topology", topo, self.scope, self.loc(i, i + 1), self.clause.text,
                                             existential=existential))

    # -------------------------------------------------------- subjects

    def find_mentions(self) -> list[_Mention]:
        mentions: list[_Mention] = []
        cat = self.catalog
        if cat is None:
            return mentions
        toks = self.toks
        taken = [False] * len(toks)
        # Identifiers first: --flag, --flag=v, NAME=v, NAME, max-num-seqs.
        for i, t in enumerate(toks):
            if self.used[i]:
                continue
            name, attached = t.text, None
            if t.kind in ("flag", "assign") and "=" in t.text:
                name, _, attached = t.text.partition("=")
            if t.kind == "flag" or t.kind == "assign" or (t.kind == "word" and re.match(r"^[A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)+$", t.text)):
                found = cat.by_identifier(name)
                self.out.words.add(name)
                if found:
                    mentions.append(_Mention(i, i + 1, found, name, "identifier", attached=attached))
                    taken[i] = True
                elif t.kind in ("flag", "assign") or name.isupper():
                    self.out.unverified.append(Unverified(name, self.loc(i, i + 1), "no recipe in scope sets this name"))
                    taken[i] = True
        # Word slots (sub-words of hyphenated tokens; "KV/index" offers alternatives).
        slots: list[tuple[int, frozenset[str]]] = []
        for i, t in enumerate(toks):
            if taken[i] or self.used[i] or t.kind not in ("word", "cjk"):
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
            self.out.words.add(w)
        # Vocabulary terms.
        vocab_taken: set[int] = set()
        for entry in sorted(cat.settings.vocabulary, key=lambda e: -len(e.term_words)):
            tw = entry.term_words
            if not tw:
                continue
            for si in range(len(slots) - len(tw) + 1):
                if any(si + k in vocab_taken for k in range(len(tw))):
                    continue
                if all(_slot_has(slots[si + k][1], tw[k]) for k in range(len(tw))):
                    a, b = slots[si][0], slots[si + len(tw) - 1][0] + 1
                    subjects = cat.resolve_vocabulary(entry)
                    for k in range(len(tw)):
                        vocab_taken.add(si + k)
                    if len(subjects) == 1:
                        mentions.append(_Mention(a, b, subjects, entry.term, "vocabulary", vocab=entry))
                    else:
                        self.out.unverified.append(Unverified(
                            entry.term, self.loc(a, b),
                            "the term names several subjects" if subjects else "no subject for this term",
                            tuple(s.name for s in subjects)))
                    for k in range(a, b):
                        taken[k] = True
        # Derived words: >= 2 consecutive words of one subject's identifier.
        free = [(si, s) for si, s in enumerate(slots) if si not in vocab_taken and not taken[s[0]]]
        pos = 0
        while pos < len(free):
            best_len = 0
            best: dict[str, tuple[Subject, tuple[str, ...]]] = {}
            index = cat.word_index()
            starts: set[tuple[str, int]] = set()
            for word in free[pos][1][1]:
                for key in _index_keys(word):
                    for subject, j in index.get(key, ()):
                        starts.add((subject.name, j))
            order = {name: n for n, name in enumerate(cat.subjects)}
            for name, j in sorted(starts, key=lambda s: (order[s[0]], s[1])):
                subject = cat.subjects[name]
                words = cat.words_of(subject)
                k = 0
                while (pos + k < len(free) and j + k < len(words)
                       and _slot_has(free[pos + k][1][1], words[j + k])
                       and (k == 0 or free[pos + k][0] == free[pos + k - 1][0] + 1)):
                    k += 1
                if k >= 2 and k >= best_len and not set(words[j:j + k]) <= _GENERIC_WORDS:
                    used_words = words[j:j + k]
                    if k > best_len:
                        best = {}
                        best_len = k
                    best[subject.name] = (subject, used_words)
            if best_len >= 2:
                a, b = free[pos][1][0], free[pos + best_len - 1][1][0] + 1
                phrase = self.source.text[toks[a].start:toks[b - 1].end]
                groups: dict[tuple[str, ...], list[Subject]] = {}
                for subject, used_words in best.values():
                    groups.setdefault(used_words, []).append(subject)
                for used_words, subjects in groups.items():
                    full = [s for s in subjects if len(cat.words_of(s)) == best_len]
                    if len(subjects) > 1 and len(full) == 1:
                        subjects = full
                    mentions.append(_Mention(a, b, subjects, phrase, "words"))
                pos += best_len
            else:
                pos += 1
        mentions.sort(key=lambda m: m.start)
        return mentions

    # -------------------------------------------------------- values

    def value_after(self, m: _Mention) -> tuple[ClaimValue, int, int] | None:
        toks = self.toks
        i = m.end
        skipped = 0
        while i < len(toks) and toks[i].low in _FILLERS and skipped < 3:
            i += 1
            skipped += 1
        if i < len(toks) and toks[i].low in _FROM:
            j = next((k for k in range(i + 1, min(len(toks), i + 8)) if toks[k].low in _TO or toks[k].kind == "arrow"), None)
            if j is None:
                return None
            i = j + 1
        if i + 1 < len(toks) and toks[i + 1].kind == "arrow":
            i += 2  # "4 → 8": the new value
        if i >= len(toks) or not self.live(i):
            return None
        # Enum-like words only where the syntax says "value": right after a spelled
        # --flag ("--moe-backend auto") or after "to"/"=" ("set the balancer to least_tokens").
        direct = m.via == "identifier" and toks[m.start].kind == "flag" and skipped == 0
        after_to = skipped == 1 and toks[m.end].low in {"to", "=", "设置为", "设为", "为"}
        return self._value_at(i, allow_word=direct or after_to, allow_bool=True)

    def _value_at(self, i: int, *, allow_word: bool, allow_bool: bool) -> tuple[ClaimValue, int, int] | None:
        toks = self.toks
        t = toks[i]
        words = [x.text for x in toks[i:i + 4]]
        rel = parse_relative(words)
        if rel is not None:
            n = len(rel.text.split())
            if all(self.live(k) for k in range(i, i + n)):
                return rel, i, i + n
        if t.kind not in ("word", "cjk"):
            return None
        num = parse_number(t.text)
        if num is not None:
            unit = num.unit
            end = i + 1
            if not unit and end < len(toks) and toks[end].low in {"token", "tokens", "seconds", "second", "s", "ms"}:
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
        glued = self.source.text[t.end:t.end + 1]
        if allow_word and t.kind == "word" and glued not in (":", "=", "{", "["):  # "mode:3+fuse": part of a larger value
            w = parse_word(t.text)
            if w is not None and t.low not in _STOPWORDS:
                return w, i, i + 1
        return None

    def value_before(self, m: _Mention) -> tuple[ClaimValue, int, int] | None:
        i = m.start - 1
        if i < 0 or not self.live(i):
            return None
        t = self.toks[i]
        if t.kind != "word":
            return None
        num = parse_number(t.text)
        if num is not None:
            return num, i, i + 1
        dtype = parse_dtype(t.text)
        if dtype is not None:
            return dtype, i, i + 1
        return None

    def bool_verb(self, m: _Mention, mentions: list[_Mention]) -> tuple[Bool, int] | None:
        """A verb before a (list of) subject(s): ``disable EPLB and TBO``, ``关闭 TBO 和 EPLB``."""
        starts = {x.start: x for x in mentions}
        i = m.start - 1
        while i >= 0:
            t = self.toks[i]
            if self.masked[i]:
                return None
            low = t.low
            if low in _OFF_VERBS or (low == "off" and i > 0 and self.toks[i - 1].low in {"turn", "turns", "switch"}):
                return Bool(t.text, False), i
            if low in {"turn", "switch"} and i + 1 < len(self.toks) and self.toks[i + 1].low == "on":
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
            if low in _LIST_GLUE or self.used[i]:
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

    def bool_after(self, m: _Mention, mentions: list[_Mention]) -> tuple[Bool, int] | None:
        """``TBO off``, ``TBO and EPLB off``."""
        i = m.end
        while i < len(self.toks):
            t = self.toks[i]
            if self.masked[i]:
                return None
            if t.low in {"off", "on", "disabled", "enabled"}:
                if t.low == "on" and i + 1 < len(self.toks) and self.toks[i + 1].kind in ("word", "cjk"):
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

    # -------------------------------------------------------- claims

    def read_subjects(self) -> None:
        mentions = self.find_mentions()
        for m in mentions:
            for s in m.subjects:
                self.out.mentioned.add(s.name)
        if self.skip:
            return
        shared: dict[tuple[int, int], tuple[ClaimValue, int, int]] = {}
        for m in mentions:
            if any(self.masked[k] for k in range(m.start, m.end)):
                continue
            if len(m.subjects) != 1:
                self.out.unverified.append(Unverified(m.phrase, self.loc(m.start, m.end), "the phrase fits several subjects",
                                                      tuple(s.name for s in m.subjects)))
                continue
            subject = m.subjects[0]
            found: tuple[ClaimValue, int, int] | None = shared.get((m.start, m.end))
            if found is None and m.attached is not None:
                found = self._attached(m.attached, m)
            if found is None and m.vocab is not None:
                after = self.value_after(m)
                found = after if after is not None and not isinstance(after[0], Bool) else self._vocab_word(m)
            if found is None:
                found = self.value_after(m)
                if found is not None and isinstance(found[0], Bool) and not self._boolish(subject, m):
                    found = None
            if found is None:
                found = self.value_before(m)
            if found is None and self._boolish(subject, m):
                verb = self.bool_verb(m, mentions) or self.bool_after(m, mentions)
                if verb is not None:
                    found = (verb[0], verb[1], verb[1] + 1)
            if found is not None and not isinstance(found[0], Bool) and self._bool_only(subject):
                found = None  # "TBO is a prefill-only optimisation": not a value of an on/off setting
            if found is not None and isinstance(found[0], Word) and found[0].dtype and not _takes_dtype(subject):
                found = None  # "the gfx950 MXFP4 MoE backend": a dtype names no backend
            if found is not None and isinstance(found[0], Bool) and m.via != "identifier" and _inverted(subject):
                # "radix cache disabled" is --disable-radix-cache passed.
                b = found[0]
                found = (Bool(b.text, not b.on), found[1], found[2])
            if found is None:
                self.out.unverified.append(Unverified(m.phrase, self.loc(m.start, m.end), "no value next to the subject"))
                continue
            shared[(m.start, m.end)] = found
            value, v_start, v_end = found
            start, end = min(v_start, m.start), max(v_end, m.end)
            for k in range(v_start, v_end):
                self.used[k] = True
            self.out.claims.append(Claim("recipe", value, self.scope, self.loc(start, end), self.clause.text,
                                         subject=subject, phrase=m.phrase))

    def _attached(self, text: str, m: _Mention) -> tuple[ClaimValue, int, int] | None:
        for parse in (parse_number, parse_dtype, parse_bool, parse_word):
            v = parse(text)
            if v is not None:
                return v, m.start, m.end
        return None

    def _vocab_word(self, m: _Mention) -> tuple[ClaimValue, int, int] | None:
        entry = m.vocab
        assert entry is not None
        i = m.start - 1
        if i >= 0 and not self.masked[i]:
            t = self.toks[i]
            low = t.low
            for w in entry.true_words:
                if low == w.lower() or (t.kind == "cjk" and t.text.endswith(w)):
                    return Bool(t.text, True), i, i + 1
            for w in entry.false_words:
                if low == w.lower() or (t.kind == "cjk" and t.text.endswith(w)):
                    return Bool(t.text, False), i, i + 1
        for k in range(m.start, m.end):
            low = self.toks[k].low
            if low in (w.lower() for w in entry.true_words):
                return Bool(self.toks[k].text, True), m.start, m.end
        return None

    def _bool_only(self, subject: Subject) -> bool:
        assert self.catalog is not None
        return self.catalog.is_boolean(subject) or subject.name not in self.catalog.subjects

    def _boolish(self, subject: Subject, m: _Mention) -> bool:
        assert self.catalog is not None
        return (m.via == "vocabulary" or self.catalog.is_boolean(subject)
                or bool(re.search(r"(?:^|[-_])(?:enable|disable|use|no)(?:[-_]|$)", subject.name, re.I)))


_STOPWORDS = {
    "the", "a", "an", "and", "or", "with", "for", "on", "in", "at", "to", "of", "by", "from", "so", "that", "this",
    "its", "it", "both", "all", "each", "every", "as", "per", "plus", "only", "also", "default", "same", "new",
    "every", "when", "which", "while", "than", "then", "into", "via", "rank", "ranks", "path", "arm", "band",
    "flag", "flags", "option", "setting", "argument", "parameter", "kept", "needs", "mapping", "wired", "tested",
    "budget", "stays", "remains", "unchanged", "is", "was",
}
# Words that cannot name a subject on their own: a derived match needs one other word.
_GENERIC_WORDS = {"no", "enable", "disable", "use", "set", "max", "min", "num", "size", "mode", "type", "config",
                  "path", "value", "default", "per", "total", "count", "is", "of"}


@functools.lru_cache(maxsize=512)
def _quoted_in(text: str) -> tuple[tuple[int, int], ...]:
    return tuple((m.start(), m.end()) for m in _QUOTED.finditer(text))


def _quoted_spans(source: SourceText) -> tuple[tuple[int, int], ...]:
    """Spans of the quoted passages of a text (a quote may open in an earlier clause)."""
    return _quoted_in(source.text)


def _takes_dtype(subject: Subject) -> bool:
    name = subject.name.lower()
    return any(w in name for w in ("dtype", "cache", "kv", "quant", "precision", "type"))


def _inverted(subject: Subject) -> bool:
    """Flags whose presence turns something off (``--disable-radix-cache``, ``--no-enable-x``)."""
    return subject.kind == "flag" and bool(re.match(r"^--(?:disable|no)-", subject.name))


def _index_keys(word: str) -> list[str]:
    """The subject words a text word can stand for (see :func:`_slot_has`)."""
    keys = [word]
    for suffix in ("s", "es", "ed", "ing"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            keys.append(word[: -len(suffix)])
    return keys


def _slot_has(slot: frozenset[str], word: str) -> bool:
    return word in slot or any(s.startswith(word) and len(word) >= 4 and word.isascii() and len(s) - len(word) <= 3
                               and s[len(word):] in {"s", "es", "ed", "ing"} for s in slot)


def _split_bands(clause: Clause) -> list[Clause]:
    """``a TP8/EP1 band at concurrency 1/2/4 and a DP-attention band at concurrency 48/64``: one clause per band."""
    text = clause.source.text
    specs = sorted({(m.start(), m.end()) for rx in (_CONC_RE, _C_RE) for m in rx.finditer(text, clause.start, clause.end)})
    cuts: list[tuple[int, int]] = []
    for (_, end), (start, _) in zip(specs, specs[1:]):
        seps = list(re.finditer(r",?\s+and\s+(?![0-9])|,\s+(?=(?:an?|the)\s)", text[end:start]))
        if seps:
            m = seps[-1]
            cuts.append((end + m.start(), end + m.end()))
    if not cuts:
        return [clause]
    out: list[Clause] = []
    pos = clause.start
    for a, b in cuts:
        out.append(Clause(clause.source, pos, a, clause.sentence, clause.index, (clause.start, clause.end)))
        pos = b
    out.append(Clause(clause.source, pos, clause.end, clause.sentence, clause.index, (clause.start, clause.end)))
    return out


def _conflicting(topologies: list[Topology]) -> bool:
    """Two topologies of one sentence that cannot describe the same jobs (TP8/EP1 and TP8/EP8)."""
    for attr in ("tp", "ep", "dp_attn"):
        if len({getattr(t, attr) for t in topologies if getattr(t, attr) is not None}) > 1:
            return True
    return False


def _doubling(lo: int, hi: int) -> list[int]:
    out: list[int] = []
    v = lo
    while 0 < v < hi:
        out.append(v)
        v *= 2
    out.append(hi)
    return out


def extract(source: SourceText, catalog: Catalog | None, base_scope: Scope | None = None) -> Extraction:
    """Every claim of one text (a description bullet, a PR body)."""
    out = Extraction()
    clauses = [part for c in split_clauses(source) for part in _split_bands(c)]
    by_sentence: dict[int, list[Clause]] = {}
    for c in clauses:
        by_sentence.setdefault(c.sentence, []).append(c)
    for sentence_clauses in by_sentence.values():
        readers: list[_ClauseReader] = []
        inherited = base_scope or Scope()
        for clause in sentence_clauses:
            if _CONTRAST.match(clause.text):
                inherited = base_scope or Scope()
            reader = _ClauseReader(clause, catalog, inherited, out)
            reader.mask_history()
            reader.read_scope()
            inherited = reader.scope
            readers.append(reader)
        topologies = [topo for r in readers for i, t in enumerate(r.toks)
                      if not r.masked[i] and t.kind == "word" for topo in parse_topology(t.text)]
        for reader in readers:
            reader.read_config_fields(_conflicting(topologies))
            reader.read_subjects()
    return out
