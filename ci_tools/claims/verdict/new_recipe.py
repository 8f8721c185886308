"""An entry that adds a recipe: what its bullets say may be said of that recipe alone.

"Add GB200 Dynamo vLLM MegaMOE max-throughput recipe at conc=4096 ... Uses
deep_gemm_mega_moe on prefill/decode, TORCH_SYMMMEM=NVSHMEM" describes the
recipe the change adds (``disagg-gb200-max-tpt-megamoe.yaml``); the key's other
recipes, which the entry does not speak of, keep their own settings.  So a
claim that holds on every job of the recipe the entry adds is not partly
contradicted by the key's other jobs.  When the change adds several recipes,
the entry's words choose among them by the words of their file names that set
them apart ("MegaMOE max-throughput": ``max-tpt-megamoe``, not
``low-middle-curve``); when they choose none, no recipe is the entry's.
"""

from __future__ import annotations

import re
from typing import Iterable, Mapping

from ...jobs.job import Job
from ...shell.model import RecipeEval
from .changed import ChangedLines
from .named_recipes import file_words

# "Add ... recipe", "adds two recipes", "New ... recipe": the entry says it brings a recipe in.
_ADDS_A_RECIPE = re.compile(r"\b(?:add(?:s|ed|ing)?|introduc(?:e|es|ed|ing)|new)\b[^.;:]*?\brecipes?\b", re.I)
_WORD = re.compile(r"[a-z0-9]+")


def added_recipe_jobs(texts: Iterable[str], jobs: Iterable[Job], evals: Mapping[str, RecipeEval | None],
                      changed: ChangedLines | None) -> frozenset[str]:
    """The ids of the jobs that run the recipe(s) the entry says the change adds (empty when it says none, or the
    change adds none of its jobs' recipes, or its words do not tell which)."""
    text = " ".join(texts)
    if changed is None or changed.base is None or not _ADDS_A_RECIPE.search(text):
        return frozenset()
    by_recipe: dict[str, set[str]] = {}
    for job in jobs:
        ev = evals.get(job.id)
        if ev is not None and ev.recipe and not ev.errors and changed.base.read(ev.recipe) is None \
                and changed.head.read(ev.recipe) is not None:
            by_recipe.setdefault(ev.recipe, set()).add(job.id)
    if len(by_recipe) == 1:
        return frozenset(next(iter(by_recipe.values())))
    if not by_recipe:
        return frozenset()
    names = {recipe: file_words(recipe) for recipe in by_recipe}
    telling = frozenset().union(*names.values()) - frozenset.intersection(*names.values())
    said = set(_WORD.findall(text.lower()))
    chosen = [recipe for recipe, words in names.items() if words & telling & said]
    return frozenset(job_id for recipe in chosen for job_id in by_recipe[recipe])


def holds_on_the_added_recipe(known: Iterable[tuple[str, bool | None]], added: frozenset[str]) -> bool:
    """Each (job id, verdict) the claim was judged on: it holds on every judged job of the added recipe(s), and
    was judged on at least one of them."""
    mine = [verdict for job_id, verdict in known if job_id in added and verdict is not None]
    return bool(mine) and all(mine)
