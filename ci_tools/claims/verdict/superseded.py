"""Claims a later entry of the same change, or a later bullet of the same entry, speaks of again.

A pull request that appends several entries (each with its ``pr-link``) tells its story in steps: "Raise the
conc-1536 point" in one, "Restore 1152 after 1536 failed" in the next; "TEMP(validation): sweep only conc 512"
after the full sweep. One entry can be such a log too, bullet after bullet. Checked at the pull request's head,
only the last word about a setting can hold; an earlier claim about the same setting of the same configs that the
head contradicts is a step of that story, not a lie, and is left unverified with where it is spoken of later.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from ...findings import Location
from ..text.arms import Arm, names_an_arm
from ..text.claim import Claim, Extraction
from ..text.extract import extract
from ..text.concs import conc_specs
from ..text.sentences import LIST_ITEM, SourceText, split_clauses
from ..text.subjects import Catalog
from ..text.values import Bool, Concurrency, Number


# The topic of an image a later entry names as the one the configs move away from ("from X to Y"), before X.
MOVED_FROM = "image moved from "


def topic(claim: Claim) -> str:
    """What a claim is about, in the words a later entry's claims and mentions are compared by."""
    return claim.subject.name if claim.subject is not None else claim.kind


def _topics(sources: Sequence[SourceText], catalog: Catalog | None) -> dict[str, Location]:
    """Each setting (or kind of matrix claim) an entry's text speaks of, with where it first does."""
    said: dict[str, Location] = {}
    for source in sources:
        found = extract(source, catalog)
        for claim in found.claims:
            said.setdefault(topic(claim), claim.location)
            for was in claim.was if claim.kind == "image" else ():
                said.setdefault(MOVED_FROM + was.text.lower(), claim.location)
        for name in sorted(found.mentioned):
            said.setdefault(name, source.location(0, 0))
    return said


def spoken_of_later(entries: Sequence[Sequence[SourceText]], owners: Sequence[tuple[str, set[str]]],
                    catalog: Catalog | None) -> list[Mapping[str, Location]]:
    """For each entry, the topics a later entry of the same pull request (the same ``pr-link``) and of one of
    its config keys speaks of, with where it does; ``owners``: each entry's pr-link and config keys.  Entries
    of other pull requests appended by one change (a batch, a re-ingest), or without a pr-link, each stand
    alone, but for an image a later entry of theirs moves the same configs away from."""
    pairs = [(i, j) for i in range(len(entries)) for j in range(i + 1, len(entries)) if owners[i][1] & owners[j][1]]
    topics: dict[int, dict[str, Location]] = {}  # read only for the later entries of a pair: most changes have none
    later: list[dict[str, Location]] = [{} for _ in entries]
    for i, j in pairs:
        same_change = bool(owners[i][0]) and owners[i][0] == owners[j][0]
        if j not in topics:
            topics[j] = _topics(entries[j], catalog)
        for name, where in topics[j].items():
            # An image a later entry of any pull request moves the same configs away from was theirs until then
            # ("Image: vllm/vllm-openai:cu129-nightly-8e98163...", then another pull request's "Refresh the
            # recipes from vllm/vllm-openai:cu129-nightly-8e98163... to ...nightly-4080263...").
            if same_change or name.startswith(MOVED_FROM):
                later[i].setdefault(name, where)
    return list(later)


def sweep_spoken_of_later(claim: Claim, later: Mapping[str, Location]) -> Location | None:
    """Where a later entry speaks of the claim's topic again; for a claim of how many points the sweep has, also
    where it speaks of the sweep's points: "Restructure the search space from 47 points to 12", then
    "TEMP(validation): reduce the agentic sweep to the single conc-512 point" counts them anew.  (Not for an arm
    said to run: a later entry's points need not drop it.)"""
    found = later.get(topic(claim))
    if found is None and claim.subject is None and claim.kind == "count":
        found = later.get("concurrency")
    if found is None and claim.kind == "image":
        found = later.get(MOVED_FROM + claim.value.text.lower())
    return found


def later_steps(claims: Sequence[Claim], place_of: Mapping[int, tuple[int, int]],
                  jobs_of: Callable[[Claim], set[str]]) -> dict[int, tuple[Location, bool]]:
    """For each claim (by ``id``), where a later bullet of the same entry, or a later sentence of its bullet,
    states the same topic with another value about the same part of the sweep (:meth:`_Part.covers`): an entry
    written as a log ("Narrow the second pass to TP8 c4/c6/c12", then "the final grid runs TP8 c1-c12"; "with
    X=auto, EP fell back to emulation. Forcing X aiter selects ...") says what holds at its end, so an earlier
    step's claim the head contradicts is not a lie.  ``place_of``: each claim's bullet and its sentence's
    :func:`sentence_number` in it (-1: not known, no sentence of its bullet is later or earlier).  Each location comes with
    whether it is in the claim's own bullet."""
    by_topic: dict[str, list[Claim]] = {}
    for claim in claims:
        if id(claim) in place_of:
            by_topic.setdefault(topic(claim), []).append(claim)
    parts: dict[int, _Part] = {}  # read once per claim compared (most topics have no later bullet)

    def part(claim: Claim) -> _Part:
        if id(claim) not in parts:
            parts[id(claim)] = _Part(tuple(replace(a, label="") for a in claim.scope.arms), claim.scope.role,
                                     _arm_words(claim.clause), frozenset(jobs_of(claim)))
        return parts[id(claim)]

    def after(other: Claim, claim: Claim) -> bool:
        (bullet, sentence), (its_bullet, its_sentence) = place_of[id(other)], place_of[id(claim)]
        return bullet > its_bullet or (bullet == its_bullet and sentence > its_sentence >= 0)

    out: dict[int, tuple[Location, bool]] = {}
    for said in by_topic.values():
        if len({place_of[id(c)] for c in said}) < 2:
            continue  # one sentence speaks of it: nothing later
        for claim in said:
            later = next((other for other in said if after(other, claim)
                          and not _same_value(other.value, claim.value) and part(other).covers(part(claim))), None)
            if later is not None:
                out[id(claim)] = (later.location, place_of[id(later)][0] == place_of[id(claim)][0])
    return out


# The end of a sentence of a story: a full stop (not of a number), "!", "?", a line break.  Not ";": the clauses
# it joins are said side by side ("X A on TP8; B on the other jobs"), neither after the other.
_STORY_BREAK = re.compile(r"[.!?]?[ \t]*\n|[.!?](?=[ \t])|[。！？]")


def sentence_number(text: str, sentence: str) -> int:
    """How many sentences of ``text`` end before ``sentence`` starts; -1 when it is not found in it."""
    at = text.find(sentence) if sentence else -1
    return len(_STORY_BREAK.findall(text, 0, at)) if at >= 0 else -1


@dataclass(frozen=True)
class _Part:
    """The part of the sweep a claim speaks of, as a later claim is compared with it."""

    arms: tuple[Arm, ...]  # as they select, whatever words named them
    role: str
    layout_words: frozenset[str]  # see _arm_words
    jobs: frozenset[str]  # its jobs, whatever its concurrencies

    def covers(self, earlier: _Part) -> bool:
        """This (later) claim speaks of the part the earlier one does: the same arms in other words (or none, all
        of the jobs), all of its jobs and the same servers (a "Decode:" bullet's setting is not its "Prefill:"
        bullet's; "TP8+DPA at ISL1024" is not "TP8+MTP3 at ISL8192", whatever jobs a reading of each selects)."""
        if self.arms and self.arms != earlier.arms:
            return False
        if self.layout_words and earlier.layout_words and self.layout_words != earlier.layout_words:
            return False  # parallel bullets of two arms whose words the reading merged ("TP8+MTP3 at ISL8192")
        return self.role == earlier.role and self.jobs >= earlier.jobs


# A layout's acronym with its size, whether or not the arm reader knows it (``MTP3``, ``ISL8192``, ``TEP8``), and
# DP attention's short names.
_LAYOUT_WORD = re.compile(r"[A-Z]{2,}\d+[A-Z0-9]*|DPA|dp-attn", re.IGNORECASE)


def _arm_words(clause: str) -> frozenset[str]:
    """The words of a clause that name a layout of the sweep (``TP8+MTP3`` is two, ``1P1D``, ``8k1k``)."""
    return frozenset(w.lower() for w in re.findall(r"[\w.-]+", clause)
                     if names_an_arm(w) or (_LAYOUT_WORD.fullmatch(w) and any(c.isupper() for c in w)))


# Where a PR description's next part begins: a blank line, or a list item ("- ", "* ", "+ ", "1. ").
_PART_START = re.compile(r"^(?:[ \t]*$|" + LIST_ITEM + ")")


def _parts(source: SourceText) -> list[SourceText]:
    """A PR description cut into its paragraphs and list items, each with the positions it has in the whole."""
    parts: list[SourceText] = []
    start = 0
    offset = 0
    for line in source.text.splitlines(keepends=True):
        if _PART_START.match(line) and offset > start:
            parts.append(SourceText(source.path, source.text[start:offset], source.positions[start:offset + 1]))
            start = offset
        offset += len(line)
    if offset > start:
        parts.append(SourceText(source.path, source.text[start:offset], source.positions[start:offset + 1]))
    return [p for p in parts if p.text.strip()]


def told_again_later(source: SourceText, catalog: Catalog | None) -> Callable[[Claim], Location | None]:
    """For a claim of a PR description, where a later paragraph or list item of it speaks of the same setting
    again, if one does: with another value, or naming it without stating the same value ("revert the X bump").
    A description is written while the change is: the title and the first items say what was tried first, a
    later item what the head holds (the commits a squash merge lists one by one), so only the last word about a
    setting is checked; an earlier one the head contradicts is a step of the story.  A part that states the same
    value again (a translation, "中文：...") is the same word, not a later one."""
    parts = _parts(source)
    read: dict[int, Extraction] = {}  # each part read when first asked

    def found(k: int) -> Extraction:
        if k not in read:
            read[k] = extract(parts[k], catalog)
        return read[k]

    def again(claim: Claim) -> Location | None:
        name = topic(claim)
        for k, part in enumerate(parts):
            if part.positions[0][0] <= claim.location.line:
                continue
            said = [c for c in found(k).claims if topic(c) == name]
            if any(_same_value(c.value, claim.value) for c in said):
                continue  # the same word again
            if said:
                return said[0].location
            if name in found(k).mentioned:
                return part.location(0, 0)
            if isinstance(claim.value, Concurrency) and (where := _names_points(part, set(claim.value.values))):
                return where  # "drop c128, c160 and c196": the points spoken of again, to leave the sweep
        return None

    return again


def _same_value(a: object, b: object) -> bool:
    """Two readings of one value in other words: "TBO off" and "关闭 TBO", "32K" and "32768"."""
    if isinstance(a, Number) and isinstance(b, Number):
        return bool(a.candidates & b.candidates) and a.at_most == b.at_most and a.at_least == b.at_least
    if isinstance(a, Bool) and isinstance(b, Bool):
        return a.on == b.on
    describe_a, describe_b = getattr(a, "describe", None), getattr(b, "describe", None)
    if describe_a is None or describe_b is None:
        return a == b
    return bool(str(describe_a()).lower() == str(describe_b()).lower())


def _names_points(part: SourceText, points: set[int]) -> Location | None:
    """Where the part names one of ``points`` as a concurrency, whatever it says of it (kept, dropped, moved)."""
    for clause in split_clauses(part):
        for spec in conc_specs(clause):
            if points & set(spec.value.values):
                return part.location(spec.start, spec.end)
    return None


# The parts of an arm's name: "TP8/PP2/EP8", "TP8xPP2", "aggregated TP8 + hicache".
_ARM_PARTS = re.compile(r"[\s/+,]+|(?<=\d)x(?=[a-z])")


def replaced_later(claim: Claim, bullet: int, left_by: Sequence[frozenset[str]]) -> tuple[str, int] | None:
    """A part of the name of the claim's arm that a later bullet of its entry names as what the change leaves
    ("One TP8/PP2/EP8 topology per seq-len", then "Replace PP2 with DP2 ..."): the arm so named is a step of the
    entry's story, not what runs at its end.  The part and that bullet's index, or None."""
    parts = {p for arm in claim.scope.arms for p in _ARM_PARTS.split(arm.label.lower()) if p}
    return next(((p, later) for later in range(bullet + 1, len(left_by)) for p in sorted(parts & left_by[later])),
                None)
