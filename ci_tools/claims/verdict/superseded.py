"""Claims a later entry of the same change speaks of again.

A pull request that appends several entries (each with its ``pr-link``) tells its story in steps: "Raise the conc-1536 point" in one,
"Restore 1152 after 1536 failed" in the next; "TEMP(validation): sweep only conc 512" after the full sweep.
Checked at the pull request's head, only the last word about a setting can hold; an earlier entry's claim
about the same setting of the same configs that the head contradicts is a step of that story, not a lie, and
is left unverified with the entry that speaks of it later.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ...findings import Location
from ..text.claim import Claim
from ..text.extract import extract
from ..text.sentences import SourceText
from ..text.subjects import Catalog


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
        for name in sorted(found.mentioned):
            said.setdefault(name, source.location(0, 0))
    return said


def spoken_of_later(entries: Sequence[Sequence[SourceText]], owners: Sequence[tuple[str, set[str]]],
                    catalog: Catalog | None) -> list[Mapping[str, Location]]:
    """For each entry, the topics a later entry of the same pull request (the same ``pr-link``) and of one of
    its config keys speaks of, with where it does; ``owners``: each entry's pr-link and config keys.  Entries
    of other pull requests appended by one change (a batch, a re-ingest), or without a pr-link, each stand
    alone."""
    pairs = [(i, j) for i in range(len(entries)) for j in range(i + 1, len(entries))
             if owners[i][0] and owners[i][0] == owners[j][0] and owners[i][1] & owners[j][1]]
    topics: dict[int, dict[str, Location]] = {}  # read only for the later entries of a pair: most changes have none
    later: list[dict[str, Location]] = [{} for _ in entries]
    for i, j in pairs:
        if j not in topics:
            topics[j] = _topics(entries[j], catalog)
        for name, where in topics[j].items():
            later[i].setdefault(name, where)
    return list(later)
