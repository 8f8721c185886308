"""The part of the sweep a clause excepts: "--moe-runner-backend flashinfer_mxfp4 for all configs except ep=8",
"65536 except at conc 1, 32 and 512".

The arms after "except", "excluding", "apart from", "other than", "save for", "with the exception of",
"everywhere but", "but not" or "outside", those a parenthesis sets apart ("(TP4 excepted)"), and those a contrast
names ("unlike", "as opposed to", "compared to", "versus", "rather than"), are where the clause's setting does not
hold: the claim is about the jobs outside them (``Claim.outside``), and they are no scope of the claim.  Without this, "except ep=8" read the
claim as one about the ep=8 jobs, the very ones it leaves out.
"""

from __future__ import annotations

from typing import Sequence

from .arms import Arm, Atom
from .concs import ConcSpec, conc_scope
from .scope import Scope
from .tokens import Tok
from .values import parse_number

# Each marker as its lower-case words; the longest is tried first where two begin alike.
_MARKERS: tuple[tuple[str, ...], ...] = tuple(sorted((
    ("except",), ("except", "for"), ("excepting",), ("excluding",), ("apart", "from"), ("other", "than"),
    ("other", "than", "for"), ("other", "than", "on"), ("save", "for"), ("with", "the", "exception", "of"),
    ("everywhere", "but"), ("but", "not"), ("but", "not", "for"), ("but", "not", "on"), ("but", "not", "in"),
    # a contrast: what the arms after it run differs ("prefill uses 0.8, unlike decode (0.9)")
    ("unlike",), ("as", "opposed", "to"), ("in", "contrast", "to"), ("in", "contrast", "with"), ("compared", "to"),
    ("compared", "with"), ("versus",), ("vs",), ("vs.",), ("rather", "than"), ("outside",), ("outside", "of"),
), key=len, reverse=True))
_FIRST_WORDS = frozenset(m[0] for m in _MARKERS)
# Words between the marker and the arms, and nouns after them, that belong to the excepted part.
_LEAD = frozenset({"the", "on", "for", "in", "at"})
# Between an excepted arm's value and the arm: "except 4096 on TP8".
_VALUE_LEAD = frozenset({"on", "for", "in", "at", "with"})
_GLUE = frozenset({",", "and", "or", "/", "nor"})
_NOUNS = frozenset({"row", "rows", "config", "configs", "job", "jobs", "point", "points", "arm", "arms", "case", "cases",
                    "variant", "variants", "recipe", "recipes", "entry", "entries", "one", "ones"})


def excepted_part(toks: Sequence[Tok], masked: Sequence[bool], found: Sequence[Atom],
                  concs: Sequence[ConcSpec] = ()) -> tuple[int, int, Scope] | None:
    """(start, end, scope): the token range of the first marker with the arms (or the concurrencies: "except at
    conc 1, 32 and 512") it excepts, and those as a scope (alternatives); None when the clause has no marker
    directly followed by one."""
    starts = {a.start: a for a in found}
    spec_at = {k: spec for spec in concs for k, t in enumerate(toks) if t.start == spec.start}
    low = [t.low for t in toks]
    aside = _aside_of_its_own(toks, low, masked, starts)
    if aside is not None:
        return aside
    for i in range(len(toks)):
        if masked[i] or low[i] not in _FIRST_WORDS:
            continue
        marker = next((m for m in _MARKERS if tuple(low[i:i + len(m)]) == m), None)
        if marker is None:
            continue
        k = i + len(marker)
        while k < len(toks) and low[k] in _LEAD:
            k += 1
        arms_at = _arms_after_a_value(toks, k, starts)
        if arms_at is not None and k not in starts and toks[k].kind == "word":
            k = arms_at  # "except 4096 on TP8": the excepted arms' own value (exceptions.excepted_value_claims)
        if k in spec_at and k not in starts:
            spec = spec_at[k]
            end = next((j for j in range(k, len(toks)) if toks[j].start >= spec.end), len(toks))
            return i, end, conc_scope(spec)
        arms, k = _arms_from(low, starts, k, len(toks))
        if not arms:
            continue
        return i, k, Scope(tuple(arms))
    return None


def _arms_after_a_value(toks: Sequence[Tok], k: int, starts: dict[int, Atom]) -> int | None:
    """Where the arms begin when a value starts at ``k`` and the arms it is for follow it ("4096 on TP8", with what
    is written apart from the value: "16 K tokens for TP8", "89 % on TP8"); None when they do not."""
    k += 1
    if k < len(toks) and toks[k].text in ("K", "k", "M", "%"):
        k += 1
    if k < len(toks) and toks[k].low == "tokens":
        k += 1
    return k + 1 if k + 1 < len(toks) and toks[k].low in _VALUE_LEAD and k + 1 in starts else None


def _arms_from(low: Sequence[str], starts: dict[int, Atom], k: int, stop: int) -> tuple[list[Arm], int]:
    """The arms named from token ``k`` on (before ``stop``), joined by glue ("ep=8 and TP4"), with the nouns after
    them ("rows", "configs"); and the token after them."""
    arms: list[Arm] = []
    while k in starts and starts[k].end <= stop:
        arms.extend(starts[k].arms)
        k = starts[k].end
        if k < stop and low[k] in _GLUE and k + 1 in starts:
            k += 1
    while arms and k < stop and low[k] in _NOUNS:
        k += 1
    return arms, k


# A clause of arms that says it keeps a value of its own ("; the ep=8 configs override it").
_OWN_VALUE = (("override", "it"), ("overrides", "it"), ("override", "this"), ("overrides", "this"), ("override",),
              ("overrides",), ("differ",), ("differs",))


def excepts_the_clause_before(lead: str, toks: Sequence[Tok], masked: Sequence[bool], found: Sequence[Atom],
                              excepted: tuple[int, int, Scope] | None) -> Scope | None:
    """The arms a clause excepts from the one before it, when the clause is nothing but that exception:
    "... everywhere but the ep=8 rows", "... but not on ep=8" (split at "but", which ``lead``, the text between the
    clauses, holds), ", with the exception of ep=8", ", the ep=8 configs override it"."""
    if excepted is not None and is_only_an_exception(toks, excepted):
        return excepted[2]
    low = [t.low for t in toks]
    tail = next((len(v) for v in _OWN_VALUE if tuple(low[len(low) - len(v):]) == v), 0)
    lead_words = lead.lower().split()
    if not tail and lead_words[-1:] != ["but"]:
        return None
    arms: list[Arm] = []
    k = 0
    starts = {a.start: a for a in found}
    end = len(toks) - tail
    arms_at = _arms_after_a_value(toks, 1, starts) if low[:1] in (["use"], ["uses"]) else None
    if not tail and arms_at is not None:
        k = arms_at  # "... but use 4096 on TP8": the arms' own value (exceptions.excepted_value_claims)
    while k < end:
        if k in starts:
            arms.extend(starts[k].arms)
            k = starts[k].end
        elif low[k] in _LEAD or low[k] in _GLUE or low[k] in _NOUNS or (k == 0 and low[k] == "not"):
            k += 1
        else:
            return None
    return Scope(tuple(arms)) if arms and k == end and not any(masked[:end]) else None


def is_only_an_exception(toks: Sequence[Tok], excepted: tuple[int, int, Scope] | None) -> bool:
    """The clause is a marker and its arms, nothing else ("Except for ep=8, use ..."): it excepts them from the
    clause after it."""
    return excepted is not None and excepted[0] == 0 and excepted[1] == len(toks)


# "(ep=8 keeps mega_moe)", "(TP4 uses 0.85)": a parenthesis that gives some arms a value of their own.
_OWN_VALUE_VERBS = frozenset({"keeps", "keep", "uses", "use", "stays", "stay", "runs", "run", "gets", "get", "has",
                              "have", "passes", "pass", "overrides", "override", "differs", "differ"})


# "(TP4 excepted)", "(TP4 aside)": a parenthesis that sets arms apart.
_SET_APART = frozenset({"excepted", "aside", "excluded", "exempt", "exempted", "apart"})


def _aside_of_its_own(toks: Sequence[Tok], low: Sequence[str], masked: Sequence[bool],
                      starts: dict[int, Atom]) -> tuple[int, int, Scope] | None:
    """A parenthesis of arms and a verb of their own value ("--moe-runner-backend flashinfer_mxfp4 (ep=8 keeps
    mega_moe)"), or of a value and the arms it is for ("0.8 (0.75 on TP4)"): those arms are where the clause's
    claim does not hold."""
    for i, t in enumerate(toks):
        if t.text != "(" or masked[i]:
            continue
        close = next((j for j in range(i + 1, len(toks)) if toks[j].text == ")"), None)
        if close is None:
            return None
        k = i + 1
        while k < close and low[k] in _LEAD:
            k += 1
        arms, k = _arms_from(low, starts, k, close)
        if arms and k < close and (low[k] in _OWN_VALUE_VERBS or low[k] in _SET_APART):
            return i, close + 1, Scope(tuple(arms))
        if i + 3 <= close and parse_number(toks[i + 1].text) is not None and low[i + 2] in _LEAD:
            # "free_gpu_memory_fraction 0.8 (0.75 on TP4)", "128 (32 for tp=4)": a value the arms have instead
            arms, k = _arms_from(low, starts, i + 3, close)
            if arms and k == close:
                return i, close + 1, Scope(tuple(arms))
    return None
