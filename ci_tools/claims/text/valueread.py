"""The value a clause gives a mentioned subject: written after it, before it, or as an on/off verb.

``--max-num-seqs 32``, ``set the balancer to least_tokens``, ``32K state
checkpoints``, ``disable EPLB and TBO``, ``TBO off``, ``from 4 to 8`` (the
new value).  Enum-like words are values only where the syntax says so (right
after a spelled ``--flag``, or after ``to``/``=``); a placeholder
(``--ep-size EP_SIZE``) and a verb (``scaled``) are no values.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Callable, Container, Sequence

from .arms import ROLE_WORDS, names_an_arm
from .context import (CHANGE_VERBS, DROP_OBJECT_GLUE, DROP_VERBS, FROM, NAME_OF_A_VALUE, NOT_GIVEN_AFTER, STOP_VERBS,
                      STOPPED_GERUNDS, TO,
                      old_value_before_to, starts_old_part, symbolic)
from .mentions import Mention, is_prose_word, names_another_thing
from .subjects import Catalog, Subject
from .tokens import Reading, Tok, back_over
from .values import (
    NUMBER_WORDS,
    Absent,
    Bool,
    ClaimValue,
    Items,
    Multiples,
    NotPassed,
    Number,
    Word,
    normalise_word,
    parse_bool,
    parse_dtype,
    parse_number,
    parse_relative,
    parse_word,
    percent,
    scaled,
)

# How a changelog sentence gives a setting its value, after the setting's name (the grammar this module reads):
#
#   name  [link]{0,3}  value                 --max-num-seqs 32, max-num-seqs to 32, X is now 0.88, X of 16K tokens
#   name  [link]*  from old to value         X raised from 0.85 to 0.88, X: from 4 to 8
#   name  [link]*  old -> value              X: 0.85 -> 0.88, X 8→1, X (0.85 -> 0.88)
#   name=value, NAME=value                   (attached to the name's token)
#   verb name to value                       Raise X to 0.88 (the verb's object is the setting, not an old value)
#   value name                               32K state checkpoints, FP8 KV cache (:func:`value_before`)
#   keep name in/on value                    Keep the indexer cache in FP4, Keep attention on TRITON_ATTN
#
# A value is a number (0.88, 16384, 16K, 16 K, 1,800, 88%, 88 %, 8192 tokens), a dtype (fp8, FP8, bfloat16), true or
# false, a list ([1, 2, 4], 1,2,4, 1/2/4) or, where a link says "value" (to, =, :, is now, an arrow, from A to),
# a name (least_tokens, FLASH_ATTN).  Quotes and backticks around either are not read (:mod:`.tokens`).

FILLERS = {"to", "of", "at", "is", "are", "=", ":", "as", "be", "equal", "equals", "set", "becomes", "now", "stays",
           "remains", "the", "a", "value", "设置为", "设为", "为"}
# A participle between a setting and its value says how it moved ("mem-fraction-static lowered to 0.8").
PARTICIPLES = {"raised", "lowered", "increased", "decreased", "reduced", "bumped", "changed", "moved", "switched",
               "updated", "dropped", "pinned", "capped", "tuned", "adjusted", "kept", "left", "lifted", "cut", "trimmed",
               "grown", "shrunk", "restored", "reverted", "fixed", "held", "floored"}
LINKS = FILLERS | PARTICIPLES
# Nouns a setting's name qualifies before its value: "the batched-token budget to 128K", "the --foo flag to 3".
HEAD_NOUNS = {"budget", "limit", "cap", "threshold", "setting", "flag", "option", "knob", "parameter", "variable",
              "override"}
# Links after which a word that is a name is the value ("set the balancer to least_tokens", "backend: CUTLASS").
_VALUE_LINKS = {"to", "=", ":", "now", "becomes", "into", "设置为", "设为", "为"}
_OFF_VERBS = {"disable", "disables", "disabled", "disabling", "without", "no"}
_ON_VERBS = {"enable", "enables", "enabled", "enabling", "with", "add", "adds", "pass", "passes", "use", "uses"}
# Words that may stand between an on/off verb and its subject: a role ("Enable prefill X", "Keep decode X on V")
# and an article.
_BETWEEN_VERB_AND_SUBJECT = ROLE_WORDS | {"the"}
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
    *PARTICIPLES, "now", "not", "no",
}
# Words of prose that stand after a setting's name and are never its value: what it does or is ("--hicache-size
# works", "X yields", "the --max-num-seqs plumbing", "FULL_DECODE_ONLY mode", "to support ...", "X is missing").
PROSE_WORDS = {
    "works", "work", "worked", "working", "yields", "yield", "support", "supports", "supported", "plumbing", "missing",
    "mode", "modes", "paths", "separates", "handling", "logic", "wiring", "behaviour", "behavior", "semantics",
    "helps", "help", "matters", "applies", "apply", "fails", "crashes", "hangs", "needed", "required", "untouched",
    "intact", "opt-out", "opt-in", "worker-side", "server-side", "client-side", "branch", "syntax", "pattern",
    "properly", "correctly", "instead", "again", "too", "here", "there", "anyway", "itself", "alone", "change",
    "changes", "fix", "fixes", "usage", "plumbed", "parsing", "handled", "lookup", "overrides", "override",
}
_UNIT_WORDS = {"token", "tokens", "seconds", "second", "s", "ms"}
# Nouns after "X=V" that make it a condition of the code, not a setting ("the X=1 branch", "the X=0 case").
_CONDITION_NOUNS = {"branch", "branches", "case", "cases", "condition", "conditions", "check", "guard", "path"}
_KEEP_VERBS = {"keep", "keeps", "kept", "keeping", "leave", "leaves", "left", "leaving", "use", "uses", "using",
               "retain", "retains", "with"}
# The last word of a setting that takes a name as its value ("the dsv4 attention backend").
_ENUM_NOUNS = {"backend", "parser", "parsing", "kernel", "algorithm", "method", "strategy", "policy", "scheduler"}
_NOT_NAMES = {"new", "old", "same", "default", "current", "native", "custom", "fast", "slow", "sparse", "dense",
              "fused", "shared", "separate", "single", "own", "other", "upstream", "stock", "legacy", "generic"}

ValueAt = tuple[ClaimValue, int, int]  # the value and its token range [start, end)


def value_position(r: Reading, m: Mention, names: Container[str] = frozenset()) -> tuple[int, bool] | None:
    """Where the grammar puts the value of the setting named at ``m`` (a token index), and whether a name may
    stand there as the value; None when the words after the name are no link to a value."""
    toks = r.toks
    i = m.end
    skipped: list[str] = []
    if i < len(toks) and toks[i].text == "(" and r.live(i) and i + 1 < len(toks):
        # "--max-num-seqs (1*CONC)", "X (0.85 -> 0.88)": the value in a parenthesis right after the name.
        rel = parse_relative([x.text for x in toks[i + 1:i + 5]])
        num = parse_number(toks[i + 1].text)
        arrow = i + 2 < len(toks) and toks[i + 2].kind == "arrow"
        if rel is not None or arrow or (num is not None and i + 2 < len(toks) and toks[i + 2].text == ")"):
            i += 1
    if i + 1 < len(toks) and toks[i].low in HEAD_NOUNS and (toks[i + 1].low in LINKS or toks[i + 1].low in FROM) \
            and r.live(i):
        i += 1  # "the batched-token budget to 128K" (or "from 8192 to 32K"): the noun the setting's name qualifies
    while i < len(toks) and toks[i].low in LINKS and len(skipped) < 3:
        skipped.append(toks[i].low)
        i += 1
    # "X is aiter by default and triton on TP8": the value after the default, which stands where the default's
    # value stood (a name too)
    parallel = i in r.passed
    while i in r.passed:
        i += 1
    if skipped[:1] == ["to"] and _added(r, m):
        return None  # "Adds SPEC_SUFFIX to the three H100 launchers": where it is added, not its value
    if skipped and skipped[-1] in ("the", "a") and i < len(toks) and toks[i].low in NUMBER_WORDS:
        return None  # "to the three launchers": a count of things, not a value
    after_from = False
    # "Switch from --attention-backend flashinfer to trtllm_mla": the name opens the old part, the new value follows
    # its "to" ("decoupled from --max-num-seqs (1*CONC)", with no "to", gives the setting's value as it is)
    to = next((k for k in range(i + 1, min(len(toks), i + 6)) if toks[k].low in TO or toks[k].low == "onto"), None) \
        if starts_old_part(toks, m.start) and i < len(toks) and toks[i].low not in TO else None
    if to is not None:
        i, after_from = to + 1, True
    elif i < len(toks) and toks[i].low in FROM:
        # "from TP: 64 / DEP: 128 to 256": the old value may be given per arm.
        j = next((k for k in range(i + 1, min(len(toks), i + 13)) if toks[k].low in TO or toks[k].kind == "arrow"), None)
        if j is None:
            return None
        i, after_from = j + 1, True
    # "4 → 8", "16 K tokens -> 32 K tokens": the new value is after the arrow.
    arrow_at = next((k for k in range(i + 1, min(len(toks), i + 4)) if toks[k].kind == "arrow"
                     and all(toks[x].text in ("K", "k", "M", "%") or toks[x].low in _UNIT_WORDS
                             for x in range(i + 1, k))), None)
    arrow = arrow_at is not None
    if arrow_at is not None:
        i = arrow_at + 1
    elif i + 2 < len(toks) and toks[i + 1].low == "to" and old_value_before_to(toks, i + 1):
        i, after_from = i + 2, True  # "block-size 64 to 1": the value before "to" is the old one
    if i >= len(toks) or not r.live(i):
        return None
    # Names only where the syntax says "value": right after a spelled --flag ("--moe-backend auto"), after a
    # value link ("set the balancer to least_tokens", "backend: CUTLASS", "is now"), an arrow or "from A to".
    # ... or after a setting's identifier when the word is written as a name ("attention-backend FLASHINFER_MLA",
    # "DYN_TOKENIZER fastokens" after "use"/"pass").
    direct = not skipped and (
        (m.via == "identifier" and (toks[m.start].kind == "flag" or (_used_as(r, m) and m.subjects[0].name in names)))
        # (not after a model or hardware name whose parts are words of a setting: "MiniMax-M3-MXFP8 GB300",
        # "DSv4 FP4 MI355X")
        or (bool(NAME_OF_A_VALUE.fullmatch(toks[i].text)) and ("_" in toks[i].text or toks[i].text.isupper())
            and not all(names_another_thing(toks[k].text) for k in range(m.start, m.end))
            if m.via != "identifier" else bool(NAME_OF_A_VALUE.fullmatch(toks[i].text)))
        # "the disaggregation transfer backend nixl": a name after a setting that takes one (not a participle:
        # "tool-call parsing inherited from ...")
        or (m.via != "identifier" and toks[m.end - 1].low in _ENUM_NOUNS
            and not re.search(r"(?:ed|ing|ly)$", toks[i].low))
        # "..., safetensors-load-strategy lazy, ...": an item of a list of settings and their values
        # (the word ends the item: "X hands MLA prologue tensors across streams" is a verb and its object)
        # (or the part of the sweep it is for follows it: "attention-backend triton on all TP8 workers")
        or (m.via == "identifier" and _list_item(r, m) and not re.search(r"(?:ed|ing|ly)$", toks[i].low)
            and (i + 1 >= len(toks) or toks[i + 1].text in (",", ";", ")", "(", ".", "and")
                 or (toks[i + 1].low in _PREPOSITIONS_OF_A_PART and _names_a_part_at(toks, i + 2))
                 # (or a word that says the item is needed: "--block-size 128 is mandatory")
                 or (toks[i + 1].low in ("is", "are") and i + 2 < len(toks) and toks[i + 2].low in _NEEDED))))
    linked = bool(skipped) and skipped[-1] in _VALUE_LINKS
    named = bool(skipped) and skipped[-1] in ("is", "are", "at", "of") and bool(NAME_OF_A_VALUE.fullmatch(toks[i].text))
    return i, direct or linked or named or arrow or after_from or parallel or _said_against_another(toks, i) or \
        _plain_word_after_is(toks, m, skipped, i)


# What a list item of a setting and its value may say of itself ("load-format fastsafetensors is mandatory").
_NEEDED = frozenset({"mandatory", "required", "needed", "necessary", "essential"})
# What may follow a value that ends its clause ("--moe-backend is triton now", "... is triton for TP8").
_AFTER_A_CLOSING_VALUE = {",", ";", ".", ")", "(", "now", "for", "on", "in", "at", "and", "across"}


def _plain_word_after_is(toks: Sequence[Tok], m: Mention, skipped: Sequence[str], i: int) -> bool:
    """"--moe-backend is triton": a plain word after "is", where the text spells the flag itself and the word ends
    its clause, is the flag's value; not a word of prose ("--x is required", "--x is unchanged") nor a participle
    or an adverb."""
    if not skipped or skipped[-1] not in ("is", "are") or m.via != "identifier" or toks[m.start].kind != "flag":
        return False
    word = toks[i].text
    return (re.fullmatch(r"[a-z][a-z0-9]*", word) is not None and word not in PROSE_WORDS and word not in STOPWORDS
            and word not in _JUDGEMENTS and _PROSE_ENDING.search(word) is None
            and (i + 1 >= len(toks) or toks[i + 1].low in _AFTER_A_CLOSING_VALUE))


# Words that judge a setting rather than give its value ("--x is important for EP", "--x is fine"): a participle,
# an adverb, an adjective of the common endings, a comparative.
_PROSE_ENDING = re.compile(r"(?:ed|ing|ly|ant|ent|ive|ous|al|ible|able|ful|less|est)$")
_JUDGEMENTS = {"fine", "good", "bad", "new", "safe", "enough", "same", "wrong", "right", "correct", "faster", "slower",
               "better", "worse", "higher", "lower", "larger", "smaller", "back", "there", "here", "ok", "okay", "key",
               "critical", "optional", "mandatory", "redundant", "obsolete", "unset", "set"}


def _said_against_another(toks: Sequence[Tok], i: int) -> bool:
    """The word at ``i`` is set against another value ("SGLANG_SIMULATE_ACC_METHOD dspark rather than
    match-expected", "X nixl on the prefill workers vs mooncake"): a value, as what it is set against is.  Only
    the jobs it is for may stand between ("lazy_offload is emitted as a JSON boolean rather than ..." sets a way
    of writing against another, and "emitted" is no value)."""
    for j in range(i + 1, min(len(toks), i + 6)):
        low = toks[j].low
        if low in ("vs", "vs.", "versus") or (low == "rather" and j + 1 < len(toks) and toks[j + 1].low == "than"):
            return j + (2 if low == "rather" else 1) < len(toks)  # (the other value after the phrase)
        if j == i + 1 and low not in ("on", "for", "in", "at"):
            return False
        if low in (",", ";", ".", "and", "but", "(", ")"):
            return False
    return False


_ADD_VERBS = {"add", "adds", "added", "adding", "append", "appends", "appended", "wire", "wires", "wired", "copy",
              "copies", "copied", "port", "ports", "ported", "bring", "brings", "mirror", "mirrors"}


def _added(r: Reading, m: Mention) -> bool:
    """The setting is what a verb of adding puts somewhere ("Add X to the launchers"): its "to" is a place."""
    k = m.start - 1
    while k >= 0 and r.toks[k].low in ("the", "a", "an", "new"):
        k -= 1
    if k < 0 or r.toks[k].low not in _ADD_VERBS:
        return False
    to = m.end + 1 if m.end < len(r.toks) and r.toks[m.end].low in HEAD_NOUNS else m.end  # "Add --x flag to ..."
    after = r.toks[to + 1] if to + 1 < len(r.toks) else None
    return after is not None and (after.low in ("the", "a", "an", "all", "every", "both", "each") or "/" in after.text
                                  or after.text.endswith((".sh", ".yaml", ".yml", ".py")) or bool(_PLACE.match(after.text)))


# A fleet's GPU or a launcher program after "add X to": where the setting is added, never its value.
_PLACE = re.compile(r"(?:mi\d{3}x?|[abhl]\d{2,3}|gb\d{3}|salloc|sbatch|srun|launchers?|scripts?|recipes?|"
                    r"workflows?|templates?)$", re.I)


_USE_VERBS = {"use", "uses", "using", "pass", "passes", "passing", "serve", "serves", "run", "runs", "export",
              "exports", "with"}


def _used_as(r: Reading, m: Mention) -> bool:
    """The setting is the object of a verb of using ("Use safetensors-load-strategy prefetch")."""
    k = m.start - 1
    while k >= 0 and r.toks[k].low in ("the", "a", "an"):
        k -= 1
    return k >= 0 and r.toks[k].low in _USE_VERBS


def _list_item(r: Reading, m: Mention) -> bool:
    """The setting begins an item of a list (after a comma, a colon, a parenthesis or "and")."""
    before = [t.text.lower() for t in r.toks[max(0, m.start - 2):m.start]]
    return m.start == 0 or before[-1] in (",", ":", "(", ";") or before == [",", "and"]


def value_after(r: Reading, m: Mention, names: Container[str] = frozenset()) -> ValueAt | None:
    found = value_position(r, m, names)
    if found is None:
        return None
    i, allow_word = found
    if _starts_a_new_line(r, i, m):
        return None
    return value_at(r, i, allow_word=allow_word, allow_bool=True, names=names)


def _starts_a_new_line(r: Reading, i: int, m: Mention) -> bool:
    """The word after the setting is the capitalised first word of the next line, the setting ending its own with
    no "to", "=" or ":" before the break: "... with triton attention backend" / "Add qwen3.5 config" is two
    lines of a commit message, not the backend "Add"."""
    toks = r.toks
    if i != m.end or i == 0 or not toks[i].text[:1].isupper() or not toks[i].text[1:2].islower():
        return False
    return "\n" in r.source.text[toks[i - 1].end:toks[i].start]


def _number_at(r: Reading, i: int) -> ValueAt | None:
    """A number and what is written apart from it: ``16 K``, ``88 %``, ``8192 tokens``, ``8 K tokens``."""
    toks = r.toks
    num = parse_number(toks[i].text)
    if num is None:
        return None
    if i + 2 < len(toks) and toks[i + 1].text == "/" and parse_number(toks[i + 2].text) is not None:
        return None  # "0.8 / 0.9 for prefill / decode": a value for each part, in turn, not one value
    end = i + 1
    if end < len(toks) and r.live(end) and toks[end].start == toks[i].end + 1 and toks[end].text in ("K", "k", "M"):
        wider = scaled(num, toks[end].text, r.source.text[toks[i].start:toks[end].end])
        if wider is not None:
            num, end = wider, end + 1
    elif end < len(toks) and toks[end].text == "%" and not num.unit:
        num, end = percent(r.source.text[toks[i].start:toks[end].end], next(iter(num.candidates))), end + 1
    unit = num.unit
    if not unit and end < len(toks) and toks[end].low in _UNIT_WORDS:
        unit = toks[end].low
        end += 1
    candidates = num.candidates
    while end + 1 < len(toks) and toks[end].low == "or" and r.live(end + 1) and not unit:
        # "-tp 4 or 8": either value holds (a job passing one of them keeps the claim)
        other = parse_number(toks[end + 1].text)
        if other is None or other.unit:
            break
        candidates, end = candidates | other.candidates, end + 2
    text = num.text if candidates is num.candidates else r.source.text[toks[i].start:toks[end - 1].end]
    return Number(text, candidates, unit), i, end


def _items_at(r: Reading, i: int) -> ValueAt | None:
    """A list value: ``[1, 2, 4]``, ``1,2,4`` (glued), ``1/2/4``."""
    toks = r.toks
    t = toks[i]
    if t.kind == "word" and "/" in t.text and all(p.isdigit() for p in t.text.split("/")) and t.text.count("/") >= 1:
        return Items(t.text, tuple(int(p) for p in t.text.split("/"))), i, i + 1
    bracketed = t.text == "["
    k = i + 1 if bracketed else i
    items: list[int] = []
    while k < len(toks) and toks[k].text.isdigit() and r.live(k):
        items.append(int(toks[k].text))
        glued = k + 1 < len(toks) and toks[k + 1].text == "," and toks[k + 1].start == toks[k].end and \
            k + 2 < len(toks) and (bracketed or toks[k + 2].start == toks[k + 1].end)
        if not glued:
            break
        k += 2
    if len(items) < 2:
        return None
    end = k + 1
    if bracketed:
        if end >= len(toks) or toks[end].text != "]":
            return None
        end += 1
    return Items(r.source.text[t.start:toks[end - 1].end], tuple(items)), i, end


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
    listed = _items_at(r, i)
    if listed is not None:
        return listed
    if t.kind not in ("word", "cjk"):
        return None
    if symbolic(t.text, names):
        return None  # "--ep-size EP_SIZE": a placeholder, not a value
    number = _number_at(r, i)
    if number is not None:
        return number
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
        if w is not None and t.low not in STOPWORDS and t.low not in PROSE_WORDS and not names_an_arm(t.text):
            return w, i, i + 1
    return None


def value_slots(r: Reading, mentions: list[Mention], names: Container[str] = frozenset()) -> set[int]:
    """The words that stand where the grammar puts a mention's value and a name may be that value."""
    at: set[int] = set()
    for m in mentions:
        found = value_position(r, m, names)
        if found is not None and found[1] and r.toks[found[0]].kind == "word":
            at.add(found[0])
        old = _old_value_after(r, m)
        if old is not None:
            at.add(old)
    return at


def _old_value_after(r: Reading, m: Mention) -> int | None:
    """The word after "(changes) from" right after a mention ("--moe-runner-backend changes from flashinfer_cutedsl"):
    the setting's old value, which names no setting of its own."""
    k = m.end
    if k < len(r.toks) and r.toks[k].low in CHANGE_VERBS:
        k += 1
    if k + 1 < len(r.toks) and r.toks[k].low in FROM and r.toks[k + 1].kind == "word":
        return k + 1
    return None


def values_not_names(r: Reading, mentions: list[Mention], unknown: list[tuple[str, int]]) -> \
        tuple[list[Mention], list[tuple[str, int]]]:
    """Mentions and unknown names that stand where the grammar puts another mention's value are that value:
    ``deepseek_v4`` of "set the reasoning parser to deepseek_v4", ``FLASH_ATTN`` of "backend: FLASH_ATTN"."""
    at = value_slots(r, mentions)
    kept = [m for m in mentions if not (m.start in at and m.end == m.start + 1 and r.toks[m.start].kind == "word")]
    return kept, [(name, i) for name, i in unknown if i not in at]


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
    if t.low in _UNIT_WORDS or t.text in ("K", "k", "M", "%"):
        # "Use 65536 tokens chunked prefill size", "a 16 K tokens budget": the number and what is written apart
        for j in (i - 1, i - 2):
            number = _number_at(r, j) if j >= 0 and r.live(j) else None
            if number is not None and number[2] == m.start:
                return number
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
            and t.low not in STOPWORDS and t.low not in _NOT_NAMES and t.low not in PROSE_WORDS and not _a_verb(r, i):
        w = parse_word(t.text)
        if w is not None:
            return w, i, i + 1
    return None


_VERBS = {"switch", "switches", "set", "sets", "use", "uses", "change", "changes", "move", "moves", "pin", "pins",
          "keep", "keeps", "make", "makes", "enable", "enables", "disable", "disables", "select", "selects", "pick",
          "picks", "force", "forces", "default", "defaults", "update", "updates", "bump", "bumps", "restore",
          "replace", "add", "adds", "drop", "drops", "remove", "removes", "tune", "tunes", "align", "aligns"}


def _a_verb(r: Reading, i: int) -> bool:
    """The word at ``i`` is a verb ("Switch attention backend from A to B"), not a name given to the setting."""
    first = next((k for k in range(len(r.toks)) if not r.masked[k]), 0)
    return r.toks[i].low in _VERBS or (i == first and r.toks[i].text[:1].isupper() and r.toks[i].text[1:].islower())


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


_KEEP_IN = {"keep", "keeps", "kept", "keeping", "leave", "leaves", "left", "stays", "stay", "remains", "remain", "run",
            "runs", "serve", "serves", "store", "stores", "hold", "holds", "put", "puts", "move", "moves", "switch",
            "switches"}


# The same verbs after the setting: "MoE backend left at auto" (d536e0eebe86), "X stays on V".
_KEPT_AFTER = frozenset({"left", "kept", "stays", "stay", "remains", "remain"})


def kept_in(r: Reading, m: Mention, names: Container[str] = frozenset()) -> ValueAt | None:
    """``Keep the indexer cache in FP4`` (a dtype), ``Keep attention on TRITON_ATTN`` (a name): a verb of keeping
    before the setting, ``in``/``on`` and the value after it."""
    toks = r.toks
    k = m.start - 1
    while k >= 0 and (toks[k].low in ("the", "a", "its", "their") or toks[k].low in ROLE_WORDS):
        k -= 1  # "Keep prefill X on V": the role is the claim's scope
    i = m.end
    if i + 2 < len(toks) and toks[i].low in _KEPT_AFTER and r.live(i):
        i, k = i + 1, i  # "MoE backend left at auto", "X stays on V": the verb after the setting
    if k < 0 or toks[k].low not in _KEEP_IN or i + 1 >= len(toks) or toks[i].low not in ("in", "on", "at"):
        return None
    if not r.live(i + 1):
        return None
    t = toks[i + 1]
    if toks[i].low == "in":
        dtype = parse_dtype(t.text)
        return (dtype, i + 1, i + 2) if dtype is not None else None
    return value_at(r, i + 1, allow_word=True, allow_bool=toks[i].low == "at", names=names)


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


_TURN = frozenset({"turn", "turns", "turned", "switch", "switches", "switched"})


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
        if low in _OFF_VERBS or (low == "off" and i > 0 and toks[i - 1].low in _TURN):
            return Bool(t.text, False), i
        if low == "on" and i > 0 and toks[i - 1].low in _TURN:
            return Bool(t.text, True), i  # "Turn on X"
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
        if low in _BETWEEN_VERB_AND_SUBJECT:
            i -= 1  # "Enable prefill NCCL_MNNVL_ENABLE", "Disable the decode X": the role is the claim's scope
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


# After "on", words that show it is the value: the clause goes on ("Keep X on and Y off", "X on now"), or a
# preposition names the part of the sweep it is on for ("Turn X on for prefill", "X on on TP4"; not "on for
# trajectory reuse", a purpose, nor "on the DEP band", where "on" is the preposition).
_GOES_ON_AFTER_ON = {"and", "but", "so", "because", "while", "now", "too", "again", "instead", "everywhere", "only"}
_PREPOSITIONS_OF_A_PART = {"for", "on", "in", "at", "across", "with", "via", "through", "under", "from"}


def _on_is_the_value(toks: Sequence[Tok], i: int) -> bool:
    """The "on" at ``i``, followed by a word, is the setting's value rather than a preposition."""
    nxt = toks[i + 1].low
    if nxt in _GOES_ON_AFTER_ON:
        return True
    if nxt not in _PREPOSITIONS_OF_A_PART:
        return False
    return _names_a_part_at(toks, i + 2)


def _names_a_part_at(toks: Sequence[Tok], k: int) -> bool:
    """The words from ``k`` name a part of the sweep ("prefill", "the decode workers", "all TP8 jobs", "conc 64"),
    or all of it ("all workers", "every job")."""
    start = k
    while k < len(toks) and toks[k].low in ("the", "all", "both", "every", "each"):
        k += 1
    if k > start and k < len(toks) and toks[k].low in _THE_WHOLE_SWEEP:
        return True
    return k < len(toks) and (names_an_arm(toks[k].text) or toks[k].low in ("conc", "concurrency")
                              or re.fullmatch(r"c\d+", toks[k].low) is not None)


# What "all"/"every"/"both" before it makes the whole sweep: "on all workers", "for every job".
_THE_WHOLE_SWEEP = {"workers", "worker", "jobs", "job", "servers", "server", "configs", "config", "rows", "arms",
                    "nodes", "roles"}


def bool_after(r: Reading, m: Mention, mentions: list[Mention]) -> tuple[Bool, int] | None:
    """``TBO off``, ``TBO and EPLB off``."""
    toks = r.toks
    i = m.end
    while i < len(toks):
        t = toks[i]
        if r.masked[i]:
            return None
        if t.low in {"off", "on", "disabled", "enabled"}:
            if t.low == "on" and i + 1 < len(toks) and toks[i + 1].kind in ("word", "cjk") \
                    and not _on_is_the_value(toks, i):
                return None  # "on the DEP band": a preposition (not "on for prefill", "on on TP4")
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


def dropped(r: Reading, m: Mention, mentions: list[Mention]) -> ValueAt | None | bool:
    """``Drop --enforce-eager``, ``Remove the deprecated --async-scheduling flag``, ``drop X=1 and Y``, ``Stop passing
    --x``: the setting is one of the objects of a drop verb that begins the clause (its value: not passed).  True
    when the object is a value of the setting ("Stop using --attention-backend flashinfer", "Dropped X flashinfer
    in favour of trtllm_mla"): neither that value nor the setting's absence is the new state; None when no drop
    verb governs the setting."""
    verb = _drop_verb_of(r, m, mentions)
    if verb is None:
        return None
    toks = r.toks
    if toks[m.start].kind == "flag" and m.end < len(toks) and toks[m.end].kind == "word" and \
            parse_number(toks[m.end].text) is None and toks[m.end].low not in _NOT_A_DROPPED_VALUE:
        return True
    k, at = verb
    return NotPassed(toks[k].text), at, k + 1


def _drop_verb_of(r: Reading, m: Mention, mentions: list[Mention]) -> tuple[int, int] | None:
    """(the drop verb's token, where the claim starts) when ``m`` is an object of a drop verb beginning the clause."""
    if m.via != "identifier":
        return None
    toks = r.toks
    nxt = toks[m.end].low if m.end < len(toks) else ""
    if nxt in ("to", "by") or (nxt == "from" and any(t.low in TO for t in toks[m.end + 1:m.end + 5])):
        return None  # "Drop --mem-fraction-static to 0.8", "from 0.85 to 0.8": a value lowered, not a setting dropped
    ends = {x.end: x for x in mentions}
    k = m.start - 1
    while k >= 0:
        if toks[k].low in DROP_VERBS or (toks[k].low in STOPPED_GERUNDS and k > 0 and toks[k - 1].low in STOP_VERBS):
            verb = k - 1 if toks[k].low in STOPPED_GERUNDS else k  # "Stop passing --x"
            first = next((i for i in range(len(toks)) if not r.masked[i] or i == verb), verb)
            return (k, verb) if verb == first or (verb == 1 and toks[0].low == "and") else None
        if toks[k].low in DROP_OBJECT_GLUE or toks[k].low in _LIST_GLUE or parse_number(toks[k].text) is not None \
                or parse_dtype(toks[k].text) is not None or toks[k].low in ROLE_WORDS:
            k -= 1  # "Drop --mem-fraction-static 0.88 and --max-total-tokens": past the first one's value
        elif k + 1 in ends:
            k = ends[k + 1].start - 1
        elif k in ends and toks[k].kind == "word":
            k = ends[k].start - 1  # "Drop --tool-call-parser deepseek_v4 / --enable-auto-tool-choice": past its value
        else:
            return None
    return None


# Words after a dropped flag that are no value of it ("Drop --enforce-eager everywhere", "Remove --x and --y").
_NOT_A_DROPPED_VALUE = frozenset({"and", "or", "on", "for", "in", "from", "at", "with", "by", "to", "as", "since",
                                  "because", "which", "that", "now", "again", "too", "also", "here", "where", "when",
                                  "if", "so", "flag", "flags", "option", "options", "setting", "settings", "argument",
                                  "arguments", "everywhere", "entirely", "completely", "altogether", "anymore",
                                  "the", "a", "an", "of", "it", "them", "prefill", "decode"})


_CAP_VERBS = {"cap", "caps", "capped", "capping", "limit", "limits", "limited", "limiting", "clamp", "clamps",
              "clamped", "bound", "bounded"}


_FLOOR_VERBS = {"floor", "floors", "floored", "flooring"}


def _capped(r: Reading, m: Mention) -> bool:
    """A verb of capping governs the setting: "Cap X at 1024", "X capped at 512", "limit X to 64"."""
    return any(w in _CAP_VERBS for w in _verbs_near(r, m))


def _floored(r: Reading, m: Mention) -> bool:
    """A verb of flooring governs the setting: "Floor X at 8", "X floored at 8"."""
    return any(w in _FLOOR_VERBS for w in _verbs_near(r, m))


def _verbs_near(r: Reading, m: Mention) -> list[str]:
    """The words a verb governing the setting stands among: up to three before its name, two after it."""
    return [t.low for t in r.toks[max(0, m.start - 3):m.start]] + [t.low for t in r.toks[m.end:m.end + 2]]


_BOUND_BEFORE = (("up", "to"), ("at", "most"), ("max",), ("maximum",), ("<=",), ("≤",))
_BOUND_AFTER = (("max",), ("maximum",), ("or", "fewer"), ("or", "less"), ("or", "lower"), ("or", "below"), ("at", "most"))


def _said_around(r: Reading, start: int, end: int, m: Mention, before: Sequence[tuple[str, ...]],
                 after: Sequence[tuple[str, ...]]) -> bool:
    """One of the word sequences ``before`` ends right before the number at [start, end), or one of ``after`` begins
    right after it; the words of the setting's own name count as none ("Use 64 max num seqs")."""
    low = [t.low if not m.start <= k < m.end else "" for k, t in enumerate(r.toks)]
    return any(tuple(low[max(0, start - len(w)):start]) == w for w in before) or \
        any(tuple(low[end:end + len(w)]) == w for w in after)


def _a_bound(r: Reading, start: int, end: int, m: Mention) -> bool:
    """The number at [start, end) is a bound, not the value: "up to 1088", "1088 max", "1088 or fewer"."""
    return _said_around(r, start, end, m, _BOUND_BEFORE, _BOUND_AFTER)


_FLOOR_BEFORE = (("at", "least"), ("min",), ("minimum",), (">=",), ("≥",))
_FLOOR_AFTER = (("or", "higher"), ("or", "more"), ("or", "above"), ("or", "greater"), ("or", "larger"), ("at", "least"),
                ("min",), ("minimum",), ("and", "up"), ("and", "above"))


def _a_floor(r: Reading, start: int, end: int, m: Mention) -> bool:
    """The number at [start, end) is the least the setting may be: "at least 0.8", "0.82 or higher", "0.82+" (a "+"
    written against it: "X=1 + --flag" joins two settings)."""
    toks = r.toks
    glued_plus = end < len(toks) and toks[end].text == "+" and toks[end].start == toks[end - 1].end
    return glued_plus or _said_around(r, start, end, m, _FLOOR_BEFORE, _FLOOR_AFTER)


# After "from A to B": the values differ by jobs, nothing changed from A ("from 8192 to 32768 depending on TP").
_BY_JOB = (("depending", "on"), ("depending", "upon"), ("according", "to"), ("based", "on"), ("per",), ("by",),
           ("across",))


def _a_range_by(r: Reading, start: int, end: int) -> bool:
    k = start - 1
    while k >= 0 and r.toks[k].low not in TO:
        k -= 1
    if k < 1 or not any(t.low in FROM for t in r.toks[max(0, k - 4):k]):
        return False
    low = [t.low for t in r.toks[end:end + 2]]
    return any(tuple(low[:len(w)]) == w for w in _BY_JOB)


# "per-scheduler", "per-DP-rank", "per GPU": a value said of one of the job's ranks, schedulers or devices.
_PER_UNIT = re.compile(r"per-(?:dp-)?(?:schedulers?|ranks?|gpus?|workers?|devices?|dp)")
_UNITS = frozenset({"scheduler", "schedulers", "rank", "ranks", "gpu", "gpus", "worker", "workers", "device",
                    "devices", "dp"})


def _per_unit(r: Reading, end: int, m: Mention) -> bool:
    """The setting's value is said per rank, scheduler or device ("DPA per-scheduler chunked prefill from 8K to
    16K", "16384 tokens per DP rank"): the recipe passes the whole job's, which that share does not name (SGLang
    divides its chunk across DP schedulers), so it is compared with nothing.  Asked of counts and sizes only: a
    fraction "per GPU" (0.85 of each GPU's memory) is what the setting itself says."""
    toks = r.toks
    return _names_a_unit([t.low for t in toks[max(0, m.start - 3):m.start]]) or \
        _names_a_unit([t.low for t in toks[end:end + 3]])


def _names_a_unit(words: list[str]) -> bool:
    """A "per-rank" word or a "per rank" pair among ``words``."""
    return any(_PER_UNIT.fullmatch(a) or (a == "per" and b in _UNITS) for a, b in zip(words, words[1:] + [""]))


# "the canonical checkpoint ships no chat_template": what something else has, not what the recipe passes.
_HAS_VERBS = {"ships", "ship", "has", "have", "had", "contains", "contain", "provides", "provide", "includes",
              "include", "carries", "carry", "needs", "need", "requires", "require", "supports", "support", "with"}


# Words that may stand between a negation and the setting it negates: "no explicit --quantization",
# "WITHOUT setting VLLM_USE_BREAKABLE_CUDAGRAPH=0", "without passing --enable-torch-compile".
_NEGATION_FILLERS = frozenset({"explicit", "explicitly", "setting", "passing", "exporting", "specifying", "using",
                               "any", "an", "a", "the"})


_NOT_GIVEN = re.compile(NOT_GIVEN_AFTER, re.IGNORECASE)


def not_given_after(r: Reading, m: Mention) -> ValueAt | None:
    """An identifier followed by "is not passed" (or set, given, exported ...): the setting is absent."""
    if m.end >= len(r.toks):
        return None
    text = r.source.text
    found = _NOT_GIVEN.match(text, r.toks[m.end - 1].end)
    if found is None:
        return None
    end = next((k for k in range(m.end, len(r.toks)) if r.toks[k].start >= found.end()), len(r.toks))
    return Absent(found.group(0).strip()), m.end, end


def negation_before(toks: Sequence[Tok], start: int, live: Callable[[int], bool] = lambda _: True) -> int | None:
    """The index of a "no" / "without" that negates the setting at ``start``: right before it, or before at most
    two words that only say how it would be given; None when there is none."""
    k = back_over(toks, start, _NEGATION_FILLERS)
    return k if k >= 0 and toks[k].low in ("no", "without") and live(k) else None


# Words after which a number word is a value ("set the batch size to one", "lower it to one").
_VALUE_GLUE = frozenset({"to", "=", "at", "of", ":"})


def _a_word_of_prose(r: Reading, m: Mention, at: int) -> bool:
    """A number word of prose about a setting named in words: glued to a noun ("one-token"), or after the setting
    without a "to" or "=" before it ("are one coupled configuration"); before the setting, alone, it is the value
    ("zero request equivalence", "three draft tokens")."""
    word, hyphen, _ = r.toks[at].low.partition("-")
    if m.via == "identifier" or word not in NUMBER_WORDS:
        return False
    # "one-token sparse-attention calls", "its three-token golden acceptance length": an adjective wherever it stands
    return bool(hyphen) or (at >= m.end and r.toks[at - 1].low not in _VALUE_GLUE)


def read_value(r: Reading, cat: Catalog, m: Mention, mentions: list[Mention]) -> ValueAt | None:
    """The value the clause gives the (single) subject of ``m``, or None."""
    subject = m.subjects[0]
    drop = dropped(r, m, mentions)
    if drop is True:
        return None  # a value dropped, not the setting
    if isinstance(drop, tuple):
        return drop
    found: ValueAt | None = None
    negation = negation_before(r.toks, m.start, r.live) if m.via == "identifier" else None
    if negation is not None and negation < m.start - 1 and m.end < len(r.toks) and \
            r.toks[m.end].text not in (",", ")", ";", ".", "and", "or"):
        negation = None  # "without passing --stream-interval 10": a value is negated, not the setting
    before = r.toks[negation - 1].low if negation else ""
    if negation is not None and not boolish(cat, subject, m) and before not in _HAS_VERBS:
        # "No --hf-overrides indexer-skipping knobs", "no explicit --quantization": the setting is not given
        # (whatever follows names it).
        return Absent(r.toks[negation].text), negation, m.start
    if m.via == "identifier":
        found = not_given_after(r, m)
        if found is not None:
            return found
    if m.attached is not None and m.end < len(r.toks) and r.toks[m.end].low in _CONDITION_NOUNS:
        return None  # "switch the SGLANG_ROUTER_STDOUT_LOGS=1 branch to ...": a condition the code tests
    if m.attached is not None:
        found = attached_value(m.attached, m, cat.subjects)
        if found is not None and isinstance(found[0], Number) and m.end < len(r.toks) and \
                r.toks[m.end].text in ("K", "k", "M", "%"):
            # "max_total_tokens=2048 K tokens", "X=88 %": the rest of the number is written apart.
            tail = r.toks[m.end]
            number = found[0]
            joined = percent(f"{number.text} %", next(iter(number.candidates))) if tail.text == "%" else \
                scaled(number, tail.text, f"{number.text} {tail.text}")
            if joined is not None and tail.start == r.toks[m.end - 1].end + 1:
                found = (joined, m.start, m.end + 1)
    if found is None and m.vocab is not None:
        after = value_after(r, m, cat.subjects)
        found = after if after is not None and not isinstance(after[0], Bool) else vocab_word(r, m)
    if found is None:
        found = value_after(r, m, cat.subjects)
        if found is not None and isinstance(found[0], Bool) and not boolish(cat, subject, m) and \
                found[0].text.lower() not in ("true", "false"):
            # "--max-num-seqs on decode": a preposition; "X to True" is the value true; "Set
            # NVSHMEM_REMOTE_TRANSPORT to none" (where the grammar says a name may stand): the name none
            position = value_position(r, m, cat.subjects) if m.via == "identifier" and \
                found[0].text.lower() == "none" else None
            named = position is not None and position[1] and position[0] == found[1]
            found = (Word(found[0].text, normalise_word(found[0].text)), found[1], found[2]) if named else None
    if found is None:
        found = value_before(r, m) or default_after(r, m) or list_step(r, m) or kept_in(r, m, cat.subjects)
    if found is None:
        verb = bool_verb(r, m, mentions) or bool_after(r, m, mentions)
        # "Enable X", "X disabled": on/off said of any setting the text names by its identifier; "with X",
        # "use X" only of an on/off one.
        said = verb is not None and (boolish(cat, subject, m) or (
            m.via == "identifier" and verb[0].text.lower().startswith(("enabl", "disabl", "turn", "switch", "on",
                                                                       "off"))))
        if verb is not None and said:
            found = (verb[0], verb[1], verb[1] + 1)
    if found is not None and not isinstance(found[0], (Bool, Absent)) and bool_only(cat, subject, m):
        found = None  # "TBO is a prefill-only optimisation": not a value of an on/off setting
    if found is not None and isinstance(found[0], Number) and (_capped(r, m) or _a_bound(r, found[1], found[2], m)):
        found = (replace(found[0], at_most=True), found[1], found[2])
    elif found is not None and isinstance(found[0], Number) and (_floored(r, m) or _a_floor(r, found[1], found[2], m)):
        found = (replace(found[0], at_least=True), found[1], found[2])  # "0.82 or higher", "Floor X at 8"
    elif found is not None and isinstance(found[0], Number) and _a_range_by(r, found[1], found[2]):
        found = None  # "from 8192 to 32768 depending on TP": the values the jobs range over, no change
    if found is not None and isinstance(found[0], Number) and all(c >= 1 for c in found[0].candidates) and \
            _per_unit(r, found[2], m):
        found = None  # "a per-scheduler chunked prefill of 16K": a share of what the recipe passes for all ranks
    if found is not None and isinstance(found[0], Number) and _a_word_of_prose(r, m, found[1]):
        found = None  # "batching one-token calls", "are one coupled configuration": a determiner, not a count
    if found is not None and isinstance(found[0], Word) and found[0].dtype and not takes_dtype(subject):
        found = None  # "the gfx950 MXFP4 MoE backend": a dtype names no backend
    if found is not None and isinstance(found[0], Word) and found[1] == m.end and is_prose_word(r.toks[found[1]].text) and \
            (cat.takes_numbers_only(subject) or r.toks[found[1]].low in CHANGE_VERBS):
        # "--max-num-seqs follows CONC", "... ranges from 16 to 2048": a word of prose, not a count; "X changes from
        # A": a verb, whatever the setting takes
        found = None
    if found is not None and isinstance(found[0], Bool) and m.via != "identifier" and inverted(subject):
        # "radix cache disabled" is --disable-radix-cache passed.
        b = found[0]
        found = (Bool(b.text, not b.on), found[1], found[2])
    if found is not None and isinstance(found[0], Word) and found[0].norm in _UNSET_WORDS:
        found = (Absent(found[0].text), found[1], found[2])  # "Leave --hicache-mem-layout unset": not given
    return found


# Words that say a setting is given no value at all, rather than name one.
_UNSET_WORDS = frozenset({"unset", "unspecified"})
