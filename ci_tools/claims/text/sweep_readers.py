"""What a clause says of the sweep's shape rather than of one setting.

Counts of its points (``9 MTP configs``, ``from 18 configs to 13``), arms no job
runs (``drop TP8``, ``... but off this sweep's ladder``), a part that keeps its
old image, and items of a list setting (``add mia1-p01-g09 to submit.sh``).
:class:`SweepReaders` is a part of the clause reader
(:class:`ci_tools.claims.extract.ClauseReader`), kept apart because each of
these readings has its own vocabulary.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from ...jobs.sequence_lengths import kilo_words
from .arms import Arm, Atom, Group, groups
from .claim import Claim, Extraction, Unverified
from .concs import ConcSpec
from .scope import Scope
from .segments import PART_NOUNS, Segment, merge_where_compatible
from .sentences import Clause, SourceText
from .subjects import Catalog, Subject
from .tokens import Reading, Tok
from .values import NUMBER_WORDS, Absent, Count, FamilyArm, Member, NoArm, item_shape

# Words before a number that make it no total of the sweep: a share, or how many are added or dropped.
_NOT_A_TOTAL = frozenset({"of", "add", "adds", "added", "adding", "append", "appends", "drop", "drops", "dropping",
                          "remove", "removes", "removing", "another", "extra", "additional", "new"})
# Words after a number that make it a count of what is added: "two more topologies", "3 new configs".
_ADDED_AFTER = frozenset({"more", "additional", "extra", "new", "added"})
# Nouns that count the points of a sweep (a "config" of a search space is one point), and layouts.
_COUNT_NOUNS = frozenset({"config", "configs", "configurations", "points", "cells", "topology", "topologies"})


# Words that make a count one of sequence lengths ("three seq-len configs").
_SEQ_LEN_WORDS = frozenset({"seq-len", "seqlen", "sequence-length", "isl/osl", "seq-lens", "sequence", "seq"})
# Words that make a count one of config keys, not of a sweep's points ("4 single-node configs", "the two TRT
# configs", "3 config keys").
_KEY_COUNT_WORDS = frozenset({"single-node", "multi-node", "multinode", "single_node", "multi_node", "trt", "trtllm",
                              "vllm", "sglang", "atom", "dynamo", "master", "model", "models"})
_LARGEST_COUNT = 100_000  # a number past it is an id (a CI run's), not how many points
# Words that cannot stand between a count and what it counts ("1 for DEP configs" counts nothing).
_NOT_IN_A_COUNT = frozenset({"for", "to", "on", "in", "at", "with", "of", "per", "across", "over", "into", "by"})


def _count_word(t: Tok) -> int | None:
    if t.kind != "word":
        return None
    if t.text.isdigit():
        return int(t.text)
    n = NUMBER_WORDS.get(t.low)
    return int(n) if n is not None and n == int(n) and n > 1 else None


# Verbs that put items into a list setting, and items named like hosts or devices (letters and numbers).
_MEMBER_VERBS = frozenset({"add", "adds", "added", "adding", "exclude", "excludes", "excluded", "excluding",
                           "include", "includes", "included", "including"})
_NOT_NOW = re.compile(r"\b(?:was|were|previously|formerly|used to|originally|would|could|might|should|if|unless|"
                      r"revert\w*|tried|attempt\w*|instead of|rather than)\b", re.IGNORECASE)
_HOST_LIKE = re.compile(r"[A-Za-z]+\d*(?:[-_.][A-Za-z]*\d+)+")


def _completed(previous: str, short: str) -> str:
    """``g14`` after ``mia1-p01-g09`` is ``mia1-p01-g14``: the last part of the item before, replaced."""
    head, sep, last = previous.rpartition("-")
    if sep and item_shape(last) == item_shape(short):
        return f"{head}-{short}"
    return short


# A part of the sweep said to keep the image it had.
_KEEPS_IMAGE = re.compile(r"\b(?:retain|retains|keep|keeps|leave|leaves)\b.{0,80}?\b(?:on|at|with)\s+(?:its|their|the)\s+"
                          r"(?:legacy|old|previous|existing|current|original|prior)\s+image\b", re.IGNORECASE)
# "X ... off this sweep's ladder", "X are not swept", "X arms are commented out", "X is skipped": the arms named
# before it do not run.
NOT_SWEPT = re.compile(r"(?:^|\bbut\s+|\b(?:is|are)\s+)(?:off\s+(?:this|the)\s+sweep(?:'s)?(?:\s+ladder)?|"
                       r"not\s+swept|not\s+(?:part\s+of|in)\s+(?:this|the)\s+sweep|commented\s+out)\b|\bskipped\b", re.IGNORECASE)
_DROP_VERBS = frozenset({"drop", "drops", "dropping", "remove", "removes", "removing", "retire", "retires"})
# What may stand between the arms a drop verb lists: "drop the TP8 and TP4/EP layouts".
_LIST_JOINS = frozenset({"the", "and", ",", "or", "both", "its", "all"}) | PART_NOUNS


# Nouns a role may name its jobs by ("drop the decode workers"): any other noun after a role is what the role owns.
_ROLE_NOUNS = PART_NOUNS | {"servers", "server", "nodes", "node", "side", "role", "roles", "instances", "instance",
                            "engines", "engine", "jobs", "job", "pool", "pools", "stage", "stages", "phase", "arm"}


def _qualifies_a_noun(g: Group, toks: Sequence[Tok]) -> bool:
    """The group names a server role only, and a word that is no name of the role's jobs follows it."""
    if not g.arms or any(a.parallelism or a.seq is not None or not a.role for a in g.arms):
        return False
    after = toks[g.end] if g.end < len(toks) else None
    return after is not None and after.kind in ("word", "flag") and after.low not in _ROLE_NOUNS and \
        after.low not in _LIST_JOINS and after.low not in ("from", "in", "on", "for", "at", "to", "with")


# A recipe family's name: two words of letters, hyphenated ("low-latency", "mid-curve").
_FAMILY_WORD = re.compile(r"[a-z]{3,}-[a-z]{3,}", re.IGNORECASE)


class SweepReaders:
    """The readings above, over the state of a clause reader."""

    clause: Clause
    source: SourceText
    catalog: Catalog | None
    inherited: Scope
    out: Extraction
    toks: list[Tok]
    all_atoms: list[Atom]
    concs: list[ConcSpec]
    r: Reading
    segments: list[Segment]
    skip: bool
    rejects: bool
    reports: bool
    unswept: bool

    def scope_at(self, i: int) -> Scope:
        raise NotImplementedError

    def _read_absent_arms(self) -> None:
        """Arms the text says no job runs: the objects of ``drop``/``remove`` (``drop TP8 and TP4/EP4``,
        ``drop the DP-attention no-offload point``), and arms said to be off the sweep.  Read on every word
        of the clause (dropping is what masks it for other claims), and not where concurrencies are named:
        dropping points of an arm (``drop conc 1 from the GPU-resident arm``) is no claim that it is gone."""
        toks = self.toks
        if not self.unswept and not any(t.low in _DROP_VERBS for t in toks):
            return
        if self.reports or any(re.fullmatch(r"\d+(?:/\d+)*", t.text) for t in toks) or self.concs \
                or (self.skip and not self.rejects):
            return
        found = groups(toks, self.all_atoms)
        chosen: list[Group] = []
        if self.unswept:
            chosen = [g for g in found if g.end <= self._unswept_at()]
        else:
            k = next(k for k, t in enumerate(toks) if t.low in _DROP_VERBS) + 1  # there is one (checked above)
            for g in found:
                if g.start < k:
                    continue
                if any(toks[j].low not in _LIST_JOINS for j in range(k, g.start)):
                    break
                chosen.append(g)
                k = g.end
        # "remove decode context_length", "Remove the prefill-only X env": a role before another noun says whose
        # thing is removed, not that the role's jobs are.
        chosen = [g for g in chosen if not _qualifies_a_noun(g, toks)]
        arms = [a for g in chosen for a in g.arms if not a.empty]
        if not arms:
            return
        lengths = {a.seq for a in self.inherited.arms}
        if len(lengths) == 1 and (seq := lengths.pop()) is not None:
            # "For 8k/1k, use TP4/EP1 c1-c8 and TP2/EP1 c8-c256; drop TP8.": gone at the sequence lengths the
            # sentence is about, not from every job
            arms = [a.merged(Arm(seq=seq, label=_seq_words(seq))) or a if a.seq is None else a for a in arms]
        first, last = chosen[0], chosen[-1]
        text = self.source.text[toks[first.start].start:toks[last.end - 1].end]
        # "conc 4096: drop the 4p2d-dep2-tep4 arm": gone at the concurrencies the clause is about.
        scope = Scope(tuple(arms), self.inherited.concs, self.inherited.conc_min)
        self.out.claims.append(Claim("arm", NoArm(text), scope, self.r.loc(first.start, last.end), self.clause.text))

    def _unswept_at(self) -> int:
        """Where the clause says its arms are off the sweep (its end when the next clause says so)."""
        m = NOT_SWEPT.search(self.clause.text)
        return self.r.index_at(self.clause.start + m.start()) if m else len(self.toks)

    def _read_kept_image(self) -> None:
        """``Retain the 2P1D DEP4 recipe on its legacy image``: that part of the sweep keeps the image it had,
        so a new image the entry names for the rest is not claimed for it (the checker does not know the old
        image from this text; the claim only narrows the other)."""
        m = _KEEPS_IMAGE.search(self.clause.text)
        if m is None or self.skip:
            return
        i = self.r.index_at(self.clause.start + m.start())
        scope = self.scope_at(i)
        if scope.arms:
            end = self.r.index_at(self.clause.start + m.end() - 1) + 1
            self.out.claims.append(Claim("image", Absent(m.group()), scope, self.r.loc(i, end), self.clause.text))

    def _read_counts(self) -> None:
        """``9 MTP configs``, ``six topologies``, ``drops the recipe from 18 configs to 13``: how many points
        the jobs of the clause's scope are.  Not a share of a run (``8 of 24 jobs``, ``all 12 configs green``
        in a report) and not jobs or runs, which name what ran rather than what the sweep has."""
        r = self.r
        toks = self.toks
        for i, t in enumerate(toks):
            n = _count_word(t)
            # "from 18 configs to 13": the old count is masked, and a clause that drops points ("Cutting it
            # drops the recipe from 18 configs to 13") still says how many are left.
            old = i > 0 and toks[i - 1].low == "from"
            before = toks[i - 1].low if i > 0 else ""
            # "8 of 24 jobs", "PR#173 topology", "add two high concurrency configs" (how many are added).
            if n is None or r.used[i] or not (old or r.live(i)) or before in _NOT_A_TOTAL or \
                    (i > 0 and toks[i - 1].end == t.start and toks[i - 1].text == "#"):
                continue
            noun = next((k for k in range(i + 1, min(len(toks), i + 4))
                         if toks[k].low in _COUNT_NOUNS and (n == 1 or toks[k].low.endswith("s"))), None)
            if noun is None or not all(toks[k].kind == "word" and (old or r.live(k)) for k in range(i + 1, noun + 1)):
                continue
            if toks[i + 1].low in _ADDED_AFTER:
                continue  # "two more topologies alongside the baseline": how many are added, not the total
            if any(toks[k].low in _NOT_IN_A_COUNT for k in range(i + 1, noun)):
                continue  # "reduce MTP to 1 for DEP configs": the number is a value, the configs where it is set
            if any(toks[k].low in _SEQ_LEN_WORDS for k in range(i + 1, noun)):
                # "all three seq-len configs (1k1k, 1k8k, 8k1k)": how many sequence lengths, not points
                self.out.unverified.append(Unverified(self.source.text[t.start:toks[noun].end], r.loc(i, noun + 1),
                                                      "a count of sequence lengths, not of the sweep's points"))
                continue
            if noun + 1 < len(toks) and toks[noun + 1].low in ("of", "keys", "key", "files", "file"):
                continue
            if toks[noun - 1].low == "curve":
                # "across 4 curve points": the layouts along the Pareto curve ("Top of curve", "Bottom of curve"
                # rows), not the concurrencies the sweep runs
                self.out.unverified.append(Unverified(self.source.text[t.start:toks[noun].end], r.loc(i, noun + 1),
                                                      "a count of the curve's layouts, not of the sweep's points"))
                continue
            # ("all 3 NVIDIA GPT-OSS configs": every config key of a kind the change touched)
            if n > _LARGEST_COUNT or any(toks[k].low in _KEY_COUNT_WORDS for k in range(i + 1, noun)) or \
                    (before == "all" and noun > i + 1):
                self.out.unverified.append(Unverified(self.source.text[t.start:toks[noun].end], r.loc(i, noun + 1),
                                                      "a count of config keys or an id, not of the sweep's points"))
                continue
            end = noun + 1
            if old:
                new = end + 1
                if new < len(toks) and toks[end].low == "to" and not r.used[new] and _count_word(toks[new]) is not None:
                    n, end = _count_word(toks[new]), new + 1
                else:
                    continue
            elif self.skip or self.rejects:
                continue
            assert n is not None
            kind = "points" if toks[noun].low in ("points", "cells") else \
                "topologies" if toks[noun].low.startswith("topolog") else "configs"
            scope = self._count_scope(i, end)
            if scope is None:
                continue
            for k in range(i, end):
                r.used[k] = True
            whole = Claim("count", Count(self.source.text[t.start:toks[end - 1].end], n, kind), scope,
                          r.loc(i, end), self.clause.text)
            self.out.claims.append(whole)
            self._read_count_items(whole, end)

    def _read_count_items(self, whole: Claim, k: int) -> None:
        """``23 MTP configs: 13 for 1K/1K, 10 for 8K/1K``: the count split by the arms its items name."""
        r, toks = self.r, self.toks
        assert isinstance(whole.value, Count)
        if k >= len(toks) or toks[k].text != ":":
            return
        k += 1
        while k + 2 < len(toks) and r.live(k) and toks[k + 1].low == "for":
            n = _count_word(toks[k])
            group = next((g for seg in self.segments for g in seg.groups if g.start == k + 2), None)
            if n is None or group is None:
                return
            arms = merge_where_compatible(list(whole.scope.arms), group.arms, keep=False) if whole.scope.arms \
                else list(group.arms)
            for i in range(k, group.end):
                r.used[i] = True
            text = self.source.text[toks[k].start:toks[group.end - 1].end]
            self.out.claims.append(replace(whole, value=Count(text, n, whole.value.noun), scope=Scope(tuple(arms)),
                                           location=r.loc(k, group.end)))
            k = group.end
            if k < len(toks) and toks[k].text == ",":
                k += 1

    def _count_scope(self, i: int, end: int) -> Scope | None:
        """What a count counts: every job of the entry for ``all seven points``; else the arms its own words
        name (``9 MTP configs``, ``six 8k1k EAGLE3 topologies``, ``14 configs for ISL1K/OSL1K``) within those of
        the list it is an item of.  The other arms of the clause describe what is counted ("1P1D-4P1D (TP4/DEP4
        prefill, hicache) over 7 Pareto points"), and its concurrencies where the points run: neither narrows
        the count."""
        toks = self.toks
        if i > 0 and toks[i - 1].low == "all":
            return Scope()
        after = end + 1 if end < len(toks) and toks[end].low == "for" else end
        if after > end and not any(g.start == after for seg in self.segments for g in seg.groups):
            return None  # "N configs for <something no arm names>": what is counted is not known
        arms: list[Arm] | None = None
        for g in (g for seg in self.segments for g in seg.groups if i < g.start and (g.end < end or g.start == after)):
            arms = list(g.arms) if arms is None else merge_where_compatible(arms, g.arms, keep=False)
        return Scope(tuple(arms or ())).merged_over(Scope(self.inherited.arms))

    def _read_families(self) -> None:
        """``per-node TP8 low-latency``: a parallelism right before a family name says what that family's
        recipes run.  Whether the name is a family is the jobs' business (their recipe files must name it);
        a name no recipe file has claims nothing."""
        r, toks = self.r, self.toks
        if self.skip or self.reports:
            return
        for seg in self.segments:
            for g in seg.groups:
                k = g.end
                if k >= len(toks) or not r.live(k) or not _FAMILY_WORD.fullmatch(toks[k].text):
                    continue
                arms = tuple(a for a in g.arms if a.parallelism)
                if not arms or (k + 1 < len(toks) and toks[k + 1].kind == "word" and toks[k + 1].low not in PART_NOUNS
                                and toks[k + 1].low not in ("recipe", "recipes")):
                    continue
                text = self.source.text[toks[g.start].start:toks[k].end]
                self.out.claims.append(Claim("arm", FamilyArm(text, toks[k].text), Scope(arms, seg.scope.concs,
                                                                                      seg.scope.conc_min),
                                             r.loc(g.start, k + 1), self.clause.text))

    def _read_memberships(self) -> None:
        """``add mia1-p01-g09 (broken pyxis) to submit.sh``, ``exclude nodes mia1-p01-g09,g14``: items a list
        setting of the recipes' scripts holds, the one list whose items are named alike (``mia#-p#-g#``)."""
        assert self.catalog is not None
        r, toks = self.r, self.toks
        # Excluding is what such a clause does, and a reason in parentheses ("(broken pyxis)") is no report of
        # the past: only a clause about what was, or what might be, is not read.
        if not self.catalog.lists or self.reports or _NOT_NOW.search(re.sub(r"\([^)]*\)", "", self.clause.text)):
            return
        for v, t in enumerate(toks):
            if t.low not in _MEMBER_VERBS or r.used[v]:
                continue
            k = next((j for j in range(v + 1, min(len(toks), v + 4)) if _HOST_LIKE.fullmatch(toks[j].text)), None)
            if k is None or any(r.used[j] for j in range(v + 1, k + 1)):
                continue
            items = [toks[k].text]
            end = k + 1
            while end + 1 < len(toks) and toks[end].text == "," and re.fullmatch(r"[A-Za-z]*\d+", toks[end + 1].text):
                items.append(_completed(items[-1], toks[end + 1].text))  # "mia1-p01-g09,g14"
                end += 2
            shape = item_shape(items[0])
            names = [n for n, listed in self.catalog.lists.items() if any(item_shape(x) == shape for x in listed)]
            if len(names) != 1:
                continue
            for j in range(k, end):
                r.used[j] = True
            self.out.claims.append(Claim("recipe", Member(self.source.text[toks[k].start:toks[end - 1].end],
                                                          tuple(items)),
                                         self.scope_at(k), r.loc(k, end), self.clause.text,
                                         subject=Subject("list", names[0]), phrase=names[0], explicit=True))


def _seq_words(seq: tuple[int | None, int | None]) -> str:
    """``(8192, 1024)`` -> ``8k/1k``, as changelogs write sequence lengths."""
    return "/".join("any" if n is None else kilo_words(n) for n in seq)
