"""Exceptions an entry writes to a default: another value for a part of the jobs, and the default itself.

"Default --mem-fraction-static 0.85; TP8 uses 0.88", "--mem-fraction-static is 0.85 (0.88 for TP8)",
"scheduler-recv-interval: 30 for CONC>=16, 10 otherwise", or a later bullet "For B300, max-running-requests
is 256": the default is said of the jobs the exception leaves, so a job of the excepted part that runs the
exception's value does not contradict it.  A value is tied to what is named nearest to it in its sentence (an
arm, concurrencies, or a word that tells the entry's config keys apart); words of history ("was 0.85") and the
concurrencies themselves are no values here, and a part that every job of the entry belongs to is no exception.

The other way round, a claim about some jobs may give the default of the rest: "override --mem-fraction-static from
0.85 to 0.8 when ISL=8192, OSL=1024, and CONC>128 (default 0.85 elsewhere)", "30 for CONC>4, 10 otherwise": the
default is a claim about the jobs the claim's scope leaves out (:func:`elsewhere_claims`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Iterable, Sequence

from ...findings import Location
from ...jobs.job import Job
from ..text.arms import atoms
from ..text.claim import Claim
from ..text.concs import ConcSpec, conc_scope, conc_specs
from ..text.context import BY_DEFAULT, mask_history
from ..text.scope import Scope
from ..text.sentences import SourceText, split_clauses
from ..text.tokens import THOUSANDS, Tok, tokenize
from ..text.values import IMAGE_RE, Bool, ClaimValue, Word, parse_bool, parse_dtype, parse_number, parse_word
from .actual import UNKNOWN, Actual, compare_text
from .compare import Judgement

_NOWHERE = Location("", 0)


@dataclass(frozen=True)
class Stated:
    """A value the text gives for the jobs of a part: arms, concurrencies ("30 for CONC>=16") or the configs
    whose keys have a word ("256 on B300")."""

    scope: Scope
    value: ClaimValue
    keys: frozenset[str] | None = None  # the config keys of the part, when a key word names it
    # The setting the text gives the value to, where it names one right before it ("ATOM_DP_LB_REQ_EQUIV=512",
    # "--max-running-requests 128"): the value of that setting only.
    setting: str = ""
    # Parts named together with this one ("when ISL=8192, OSL=1024, and CONC>128", "the DEP8 arm of 8k1k"): the
    # value is said of the jobs of all of them.
    also: tuple[Stated, ...] = ()

    def admits(self, job: Job) -> bool:
        own = job.config_key in self.keys if self.keys is not None else self.scope.admits(job)
        return own and all(part.admits(job) for part in self.also)

    def gives(self, actual: Actual, job: Job, kind: str = "recipe", subject: str = "") -> bool:
        """The job's value is the one stated: equal as a value, or a setting not passed where the text says off
        (an on/off word says nothing of a value: "disable EPLB" is not ATOM_DP_LB_REQ_EQUIV=0)."""
        if self.setting and _setting_words(self.setting) != _setting_words(subject):
            return False
        if isinstance(self.value, Bool):
            return actual.value in ("absent", "present") and self.value.on == (actual.value == "present")
        if actual.value in ("absent", "present"):
            return False
        if kind == "image":
            # "... image v0.5.12; the MTP keys use v0.5.16-cu130": a tag (or the part of one) the job's image has
            tag = self.value.text if isinstance(self.value, Word) else ""
            return len(tag) >= 4 and any(c.isdigit() for c in tag) and tag in actual.value
        return compare_text(self.value, actual.value, job, "", _NOWHERE).verdict is True


# On/off words that state a setting's state (not "on TP8", "no EP", "without DP attention", which name arms).
_STATE_WORDS = {"off": False, "disabled": False, "unset": False, "dropped": False, "removed": False, "omitted": False,
                "enabled": True}


# An image tag written alone: "v0.5.16-cu130", "0.5.12.post1", "1.2-rc1".
_TAG = re.compile(r"v\d+(?:\.\w+)+(?:-[\w.]+)*|\d+(?:\.\w+){2,}(?:-[\w.]+)*|\d+(?:\.\w+)+-[\w.]+")


def _setting_words(name: str) -> str:
    return name.lower().lstrip("-").replace("-", "_").rsplit(".", 1)[-1]


def _stated_value(text: str) -> ClaimValue | None:
    text = text.strip("`'\"")
    if "=" in text:
        text = text.partition("=")[2]
    if text.lower() in _STATE_WORDS:
        return Bool(text, _STATE_WORDS[text.lower()])
    if IMAGE_RE.fullmatch(text) or _TAG.fullmatch(text):
        return Word(text, text)  # an image or its tag ("v0.5.16-cu130"): compared as written
    return parse_number(text) or parse_dtype(text) or parse_word(text)


def _value_token(t: Tok) -> bool:
    if t.kind == "assign" or (t.kind == "flag" and "=" in t.text):
        return True
    return t.kind == "word" and (parse_number(t.text) is not None or parse_dtype(t.text) is not None
                                 or any(c in t.text for c in "_-.") or t.text.isalpha())


def _key_words(jobs: Sequence[Job]) -> dict[str, frozenset[str]]:
    """The words that tell the entry's config keys apart, each with the keys that have it."""
    parts = {k: set(k.split("-")) for k in {j.config_key for j in jobs}}
    if len(parts) < 2:
        return {}
    common = set.intersection(*parts.values())
    return {w: frozenset(k for k, p in parts.items() if w in p) for p in parts.values() for w in p - common
            if not w.isdigit()}


def stated_values(sources: Iterable[SourceText], jobs: Sequence[Job]) -> list[Stated]:
    """Every value of the texts with the part of the jobs named nearest to it in its sentence (the one before
    on a tie)."""
    out: list[Stated] = []
    key_words = _key_words(jobs)
    whole_keys = {j.config_key.lower() for j in jobs} if len({j.config_key for j in jobs}) > 1 else set()
    anywhere = Bool("", True)  # the value slot of a place (a part named), filled in per value below
    for source in sources:
        sentences: dict[int, list[tuple[Tok, Stated | None, int]]] = {}
        for clause in split_clauses(source):
            toks = tokenize(clause)
            found = atoms(toks, [True] * len(toks))
            designated = {k for a in found for k in range(a.start, a.end)}
            value_like = [k in designated or _value_token(t) for k, t in enumerate(toks)]
            masked = mask_history(toks, clause, value_like, False, [k in designated for k in range(len(toks))])
            live = atoms(toks, [not m for m in masked]) if any(masked) else found  # nothing masked: the same
            specs = conc_specs(clause)
            place: dict[int, Stated] = {a.start: Stated(Scope(a.arms), anywhere) for a in live}
            for spec in specs:
                k = next((k for k, t in enumerate(toks) if t.start >= spec.start), None)
                if k is not None and not masked[k]:
                    place.setdefault(k, Stated(conc_scope(spec), anywhere))
            for k, t in enumerate(toks):
                word = t.low.strip(":`'\"")
                keys = key_words.get(word.replace("-", "")) or (frozenset({word}) if word in whole_keys else None)
                if k not in place and not masked[k] and keys:
                    place[k] = Stated(Scope(), anywhere, keys)
            taken = {k for a in live for k in range(a.start, a.end)}
            # "(8192 elsewhere)", "8192 by default": the value of the jobs outside the part the clause names, which
            # elsewhere_claims reads; never the named part's own value.
            # So is the value before an exception ("8192, except 4096 on TP8"), which is said of the jobs the
            # exception leaves.
            # (in source offsets: an exception is often a clause of its own)
            defaults = [(clause.start + m.start("v"), clause.start + m.end("v")) for m in _ELSEWHERE.finditer(clause.text)]
            defaults += [m.span("v") for m in _BEFORE_EXCEPTION.finditer(source.text, clause.start,
                                                                        clause.end + _EXCEPTION_REACH)]
            taken |= {k for a, b in defaults for k, t in enumerate(toks) if a <= t.start < b}
            for k, t in enumerate(toks):
                if k in place:
                    sentences.setdefault(clause.sentence, []).append((t, place[k], clause.index))
                elif k not in taken and not masked[k] and t.kind in ("word", "assign", "flag", "image") and \
                        not any(spec.start <= t.start < spec.end for spec in specs):
                    if k + 1 < len(toks) and toks[k + 1].text == "%" and t.text[-1:].isdigit():
                        t = Tok(t.text + "%", t.start, toks[k + 1].end, t.kind)  # "89 % on TP8": one value
                    sentences.setdefault(clause.sentence, []).append((t, None, clause.index))
        for items in sentences.values():
            runs = _runs(items)
            for i, (t, where, clause_index) in enumerate(items):
                value = _stated_value(t.text) if where is None and runs else None
                if value is None:
                    continue
                # the parts named together nearest to it in its clause, else in its sentence
                near = [r for r in runs if r[2] == clause_index] or runs
                # on a tie, the part after it when a preposition leads there ("0.82 at TP8 and 0.95 at TP4"); right
                # after that preposition, whatever is nearer before ("8192 for conc<=32, 16384 for conc 512")
                ahead = i + 1 < len(items) and items[i + 1][0].low in _LEADS
                led = [r for r in near if ahead and r[0] == i + 2]
                first, last, _, parts = led[0] if led else min(
                    near, key=lambda r: (min(abs(r[0] - i), abs(r[1] - i)), (r[0] < i) if ahead else (r[0] > i)))
                out.append(replace(parts[0], value=value, setting=_setting_of(t, _flag_before(items, i)),
                                   also=tuple(parts[1:])))
    return out


_LEADS = frozenset({"at", "for", "on", "in", "with", "under", "when"})
# Words that join parts named together ("the DEP8 arm of 8k1k", "ISL=8192, OSL=1024, and CONC>128").
_JOINERS = frozenset({"and", "of", "at", "with", "when", "for", "in", "on", "the", "a", "arm", "arms", "band", "rows",
                      "row", "jobs", "sweep", "only", "&&"})


def _runs(items: Sequence[tuple[Tok, Stated | None, int]]) -> list[tuple[int, int, int, list[Stated]]]:
    """The parts a sentence names, those named together (only joining words between, in one clause) as one run:
    (first item, last item, clause, parts)."""
    runs: list[tuple[int, int, int, list[Stated]]] = []
    for i, (_, where, clause_index) in enumerate(items):
        if where is None:
            continue
        if runs and runs[-1][2] == clause_index and all(
                items[k][1] is None and items[k][0].low in _JOINERS for k in range(runs[-1][1] + 1, i)):
            first, _, c, parts = runs[-1]
            runs[-1] = (first, i, c, [*parts, where])
        else:
            runs.append((i, i, clause_index, [where]))
    return runs


# Words between a flag and the value a clause gives it: "Set --chunked-prefill-size to 8192", "--x from 4 to 8".
_TO_ITS_VALUE = frozenset({"to", "is", "=", "of", "as", "from", "->", "→", "at", "on", "for", "and", "in"})


def _flag_before(items: Sequence[tuple[Tok, Stated | None, int]], i: int) -> Tok | None:
    """The flag a value is given to in its clause: right before it, or before it across "to", "from A to" and
    the values and parts of other arms ("Set --chunked-prefill-size to 32768 on TP8 and 8192 on TP4": its 8192 on
    TP4 excepts that setting's TP4 jobs only, not --max-prefill-tokens' ones); else the token right before it."""
    k = i - 1
    while k >= 0 and items[k][2] == items[i][2] and k >= i - 12:
        t, where, _ = items[k]
        if t.kind == "flag" and "=" not in t.text:
            return t
        if where is None and t.low not in _TO_ITS_VALUE and _stated_value(t.text) is None:
            break
        k -= 1
    return items[i - 1][0] if i else None


def _setting_of(t: Tok, before: Tok | None) -> str:
    """The setting a value token is written for: its own name (NAME=V, --flag=V) or a flag right before it."""
    if t.kind in ("assign", "flag") and "=" in t.text:
        return t.text.partition("=")[0]
    if before is not None and before.kind == "flag" and "=" not in before.text:
        return before.text
    return ""


def without_stated_exceptions(judgement: Judgement, stated: Sequence[Stated], jobs: Sequence[Job]) -> Judgement:
    """The judgement with each contradiction that an exception of the text states made unknown: the job runs the
    value the text gives its part, and that part is not every job of the entry."""
    if not stated or judgement.claim.kind not in ("recipe", "image"):
        return judgement
    # A part every job of the entry belongs to is no exception: asked once, not again for each contradiction.
    parts = [s for s in stated if not all(s.admits(j) for j in jobs)]
    subject = judgement.claim.subject.name if judgement.claim.subject is not None else ""
    actuals = list(judgement.actuals)
    for n, (job, actual) in enumerate(zip(judgement.jobs, judgement.actuals)):
        if actual.verdict is not False or not actual.value or actual.value in ("unset", "partly"):
            continue
        if any(s.admits(job) and s.gives(actual, job, judgement.claim.kind, subject) for s in parts):
            actuals[n] = UNKNOWN
    return Judgement(judgement.claim, judgement.jobs, tuple(actuals), judgement.existential)


# "(default 0.85 elsewhere)", "10 otherwise", "0.9 for the other jobs": the value of the jobs a claim leaves out
# (a number written with thousands separators whole: "(default 10,240 elsewhere)").
_ELSEWHERE = re.compile(r"(?:\bdefaults?\s+(?:to\s+|of\s+|is\s+)?)?(?P<v>" + THOUSANDS + r"|[\w.%-]+)\s+"
                        r"(?:elsewhere|otherwise|everywhere else|" + BY_DEFAULT + r"|"
                        r"for (?:all )?(?:the )?(?:other|remaining) (?:jobs|configs|points|arms|rows|cases|concurrencies))\b",
                        re.IGNORECASE)


# What a default is written as: a number, an identifier-like name (fp8_e4m3, flashinfer_trtllm, and so a dtype: fp8,
# bf16, int4) or on/off; not a word of prose ("Serve shape is otherwise identical").
_VALUE_SHAPE = re.compile(r"[\d.]+%?|" + THOUSANDS + r"|\d[\w.]*|[A-Za-z][\w.-]*[\d_.-][\w.-]*|on|off|true|false|enabled|disabled|auto|"
                          r"none", re.IGNORECASE)


# "Set X to 8192, except 4096 on TP8": the value of the arms a claim excepts (text/excepted.py), and the value the
# others keep.
_EXCEPTION_WORDS = r"(?:except|excepting|excluding|but use)"
_BEFORE_EXCEPTION = re.compile(r"(?P<v>" + THOUSANDS + r"|[\w.%-]+)\s*,?\s*" + _EXCEPTION_WORDS + r"\b", re.IGNORECASE)
# How far past a clause's end its exception's words may reach (", excepting": an exception is often a clause of its
# own, and the value before it ends the clause before).
_EXCEPTION_REACH = len(", excepting ")
_EXCEPTED_VALUE = re.compile(r"\b" + _EXCEPTION_WORDS + r"\s+(?:for\s+)?(?P<v>(?:" + THOUSANDS + r"|[\w.%-]+)"
                             r"(?:\s?[KkM%](?!\w))?)(?:\s+tokens)?\s+(?:on|for|in|at|with)\b", re.IGNORECASE)


def _of_the_kind(value: ClaimValue, text: str) -> ClaimValue | None:
    """``text`` read as a value of the kind ``value`` is (the other value an exception gives the same setting: a
    word such as "mnnvl" where the claim's value is "trtllm", "true" where it is "false"); None when it is none."""
    if text.lower() in _NOT_VALUES:
        return None
    if isinstance(value, Bool):
        return parse_bool(text)
    stated = _stated_value(text)
    return stated if type(stated) is type(value) else None


# Words an exception's "except ... on TP8" may hold that are no value ("except those on TP8").
_NOT_VALUES = frozenset({"those", "the", "that", "these", "when", "where", "jobs", "runs", "rows", "arms", "configs",
                         "points", "it", "them", "ones"})


def excepted_value_claims(claims: Sequence[Claim]) -> list[Claim]:
    """For each recipe claim whose clause excepts arms with a value of their own ("except 4096 on TP8"), a claim
    of that value about the excepted arms."""
    out: list[Claim] = []
    for claim in claims:
        if claim.kind != "recipe" or claim.subject is None or claim.outside is None or claim.outside.concs:
            continue
        # (in the clause, or in a clause of its own after it: "Set X to 8192, except 4096 on TP8")
        found = _EXCEPTED_VALUE.search(claim.clause) or _EXCEPTED_VALUE.search(claim.sentence)
        value = _of_the_kind(claim.value, found.group("v").replace(" ", "")) if found else None  # ("16 K": 16K)
        if value is None:
            continue
        # (a value equal to the others' is claimed too: it still says what the excepted arms run)
        out.append(replace(claim, value=value, scope=claim.outside, outside=None, unnamed_scope=None,
                           conditioned=False))
    return out


def elsewhere_claims(claims: Sequence[Claim]) -> list[Claim]:
    """For each recipe claim about some jobs whose clause gives the value of the others, a claim of that value
    about the jobs outside its scope."""
    out: list[Claim] = []
    for claim in claims:
        if claim.kind != "recipe" or claim.subject is None or not claim.scope.narrowed:
            continue
        found = _ELSEWHERE.search(claim.clause)
        value = _stated_value(found.group("v")) if found and _VALUE_SHAPE.fullmatch(found.group("v")) else None
        if value is None:
            continue
        if type(value) is not type(claim.value) or value == claim.value:
            continue  # another kind of value than the claim's (a word where it says a number) is no default of it
        # The condition the claim was read with is what the default's jobs lie outside of: where the recipe runs
        # another value there, it is no longer a condition the checker did not read.
        out.append(replace(claim, value=value, scope=Scope(), outside=claim.scope, unnamed_scope=None,
                           conditioned=False))
    return out
