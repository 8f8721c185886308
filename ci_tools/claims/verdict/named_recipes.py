"""The recipes a sentence names: "on the low-middle-curve recipe", "the MegaMOE recipes", "in dsv4_fp8_h200.sh".

A config key whose jobs run several recipe files (a multinode key's srt-slurm recipes: ``disagg-gb200-low-latency``,
``disagg-gb200-low-middle-curve``, ``disagg-gb200-max-tpt-megamoe``) is spoken of recipe by recipe: "Set decode
gpu-memory-utilization to 0.85 on the low-middle-curve recipe" is said of the jobs of that file, not of the key's
others.  Two ways of naming them are read: a file name ("dsv4_fp8_h200.sh and dsv4_fp8_h200_mtp.sh"), and the
words right before "recipe(s)" that are words of the files' names ("the high-throughput and max-throughput
recipes"; "throughput" as the names write it or shorten it, ``tpt``), each conjunct a recipe of its own.  A
capitalised word no file's name holds is a product's name between them ("both aggregate Mooncake Store recipes");
other words that are no file's ("update the resident recipes") end the words read, and name none alone.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Mapping, Sequence

from ...jobs.job import Job
from ...shell.model import RecipeEval

_WORD = re.compile(r"[a-z0-9]+")
# How recipe file names shorten the words prose writes in full (some names write them in full: either is read).
_SHORT = {"throughput": "tpt", "aggregate": "agg", "aggregated": "agg", "disaggregated": "disagg"}
_WORD_CASED = re.compile(r"[A-Za-z0-9]+")
_FILE = re.compile(r"([\w.-]+)\.(?:ya?ml|sh)\b", re.IGNORECASE)
# A name of words joined by "-", "_" or "." as a whole ("agg-2n-low-latency", not "low-latency" of "ultra-low-latency").
_JOINED = re.compile(r"(?<![\w.-])[A-Za-z0-9]+(?:[-_.][A-Za-z0-9]+)+(?![\w-])")
_RECIPE_NOUN = re.compile(r"\brecipes?\b", re.IGNORECASE)
_CONJUNCTIONS = frozenset({"and", "or"})


def file_words(path: str) -> frozenset[str]:
    """The words of a recipe file's name (its stem): ``disagg-gb200-max-tpt-megamoe.yaml`` -> disagg, gb200, max, ..."""
    return frozenset(_WORD.findall(PurePosixPath(path).stem.lower()))


def _named_files(text: str, files: Mapping[str, frozenset[str]]) -> set[str]:
    """The files whose name the text writes out: with its extension, or a stem of several joined words written
    whole ("agg-2n-low-latency for conc 1-64": ``agg-2n-low-latency.yaml``)."""
    stems = {PurePosixPath(m.group(0)).stem.lower() for m in _FILE.finditer(text)}
    written = {w.lower() for w in _JOINED.findall(text)}
    return {path for path in files if (stem := PurePosixPath(path).stem.lower()) in stems
            or (stem in written and len(_WORD.findall(stem)) >= 3)}


def _named_by_words(text: str, files: Mapping[str, frozenset[str]]) -> set[str]:
    """The files the words right before each "recipe(s)" name, one conjunct at a time."""
    known = frozenset().union(*files.values())
    telling = known - frozenset.intersection(*files.values())
    chosen: set[str] = set()
    unnamed = False  # a "recipes" whose words name no file
    for noun in _RECIPE_NOUN.finditer(text):
        conjuncts: list[set[str]] = [set()]
        for written in reversed(_WORD_CASED.findall(text[:noun.start()])):
            word = written.lower()
            if word in _CONJUNCTIONS:
                conjuncts.append(set())
            elif word in known or _SHORT.get(word) in known:
                conjuncts[-1].add(word if word in known else _SHORT[word])
            elif not (written[0].isupper() and written[1:].islower()):
                break
        named = {path for conjunct in conjuncts if (said := conjunct & telling)
                 for path, own in files.items() if said <= own}
        unnamed = unnamed or not named
        chosen |= named
    # "3 high-throughput conc=8192 recipes (...), 4 flat low-latency dep4 recipes (...)": one list names recipes its
    # words do not spell beside those they do; which jobs a claim of it is about is not told by the names.
    return set() if unnamed else chosen


def named_recipe_jobs(texts: Sequence[str], jobs: list[Job], evals: Mapping[str, RecipeEval | None]) -> list[Job]:
    """The jobs of the recipe files the first of ``texts`` that names some does (the clause, then the words before
    it); every job when none names one, or they name every file."""
    recipes = {job.id: ev.recipe for job in jobs if (ev := evals.get(job.id)) is not None and ev.recipe}
    files = {path: file_words(path) for path in set(recipes.values())}
    if len(files) < 2:
        return jobs
    for text in texts:
        chosen = (_named_files(text, files) or _named_by_words(text, files)) if text else set()
        if chosen:
            return [job for job in jobs if recipes.get(job.id) in chosen] if len(chosen) < len(files) else jobs
    return jobs
