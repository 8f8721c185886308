"""Every setting of a tree, planned and checked: what the bench runs in full and the test on a sample."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

from ci_tools.claims.verdict.check import EvalCache
from ci_tools.config import ProjectConfig, load_config
from ci_tools.jobs.contract import resolve_recipe
from ci_tools.jobs.job import Job
from ci_tools.jobs.matrix import expand
from ci_tools.model.repository import RepoData, load_repo
from ci_tools.revision.snapshot import WorkTreeSnapshot

from .forms import Form, Sentence, load_forms, sentences
from .images import image_candidates, plan_image
from .run import Outcome, check_sentences, held_out_setting
from .settings import Discovery, OverlaySnapshot, Setting, discover, plan, split_arm


@dataclass
class Tree:
    config: ProjectConfig
    snapshot: WorkTreeSnapshot
    repo: RepoData
    jobs_of: dict[str, list[Job]]


def load_tree(root: Path) -> Tree:
    config = load_config(root)
    snapshot = WorkTreeSnapshot(config.root)
    repo = load_repo(snapshot, config, with_changelog=False)
    jobs_of: dict[str, list[Job]] = {}
    for job in expand(repo):
        jobs_of.setdefault(job.config_key, []).append(job)
    return Tree(config, snapshot, repo, jobs_of)


def discover_tree(tree: Tree) -> Discovery:
    """Every literal setting of every job of the tree (each job's recipe evaluated once), and the image of
    every config."""
    cache = EvalCache(tree.config)
    jobs = [j for js in tree.jobs_of.values() for j in js]
    evals = {j.id: cache.evaluate(j, tree.snapshot) for j in jobs}
    kinds = {j.id: resolve_recipe(j, tree.config, tree.snapshot).kind for j in jobs if j.multinode}
    found = discover(evals, jobs, kinds, tree.snapshot)
    for group, options in image_candidates(tree.repo, tree.jobs_of).items():
        found.candidates[group] = options
        found.jobs_at.update((s.key, {s.config_key}) for s in options)
    return found


@dataclass
class Run:
    outcomes: list[Outcome] = field(default_factory=list)
    planned: list[Setting] = field(default_factory=list)
    unplanned: dict[str, str] = field(default_factory=dict)  # (kind name family) -> why no location could be edited
    seconds: float = 0.0


def plan_any(tree: Tree, setting: Setting, configs: Iterable[str]) -> \
        tuple[Setting, OverlaySnapshot, EvalCache, RepoData | None] | str:
    """The setting planned (see ``plan``), with the edited copy's configs read again where the edit is one of
    them (a config's image: ``plan_image``), else None."""
    if setting.kind == "image":
        return plan_image(setting, tree.config, tree.snapshot)
    planned = plan(setting, tree.config, tree.snapshot, tree.jobs_of, configs)
    return planned if isinstance(planned, str) else (*planned, None)


def check_setting(tree: Tree, setting: Setting, forms: Sequence[Form], configs: Iterable[str]) -> \
        tuple[Setting, list[Outcome]] | str:
    planned = plan_any(tree, setting, configs)
    if isinstance(planned, str):
        return planned
    edited, overlay, cache, head = planned
    said = sentences(edited, forms, held_out_setting(edited))
    outcomes = check_sentences(tree.config, tree.repo, edited, overlay, cache, said, head)
    split = split_edit(tree, edited, forms)
    if split is not None:
        outcomes += check_sentences(tree.config, tree.repo, *split)
    return edited, outcomes


def split_edit(tree: Tree, edited: Setting, forms: Sequence[Form]) \
        -> tuple[Setting, OverlaySnapshot, EvalCache, list[Sentence]] | None:
    """The setting edited again on one TP arm of its config only, with the sentences of the forms that state a
    default beside that arm's value ({R}); None where the config has no such arm or no form needs it."""
    defaults = [f for f in forms if "{R}" in f.text]
    split = split_arm(edited, tree.jobs_of[edited.config_key]) if defaults else None
    again = plan(split, tree.config, tree.snapshot, tree.jobs_of, [edited.config_key]) if split else None
    if again is None or isinstance(again, str):
        return None
    return (*again, sentences(again[0], defaults, held_out_setting(again[0])))


def run_all(tree: Tree, discovery: Discovery, forms: Sequence[Form] | None = None, limit: int | None = None,
            tries: int = 3, progress: Callable[[int, int], None] | None = None) -> Run:
    """One setting per (kind, name, family): its first location (fewest configs) that can be stated truly."""
    forms = list(forms or load_forms())
    run = Run()
    start = time.perf_counter()
    groups = sorted(discovery.candidates.items())
    if limit is not None:
        groups = groups[:limit]
    for n, (group, options) in enumerate(groups):
        why: list[str] = []
        for candidate in options[:tries]:
            found = check_setting(tree, candidate, forms, discovery.jobs_at[candidate.key])
            if isinstance(found, str):
                why.append(found)
                continue
            run.planned.append(found[0])
            run.outcomes.extend(found[1])
            break
        else:
            run.unplanned[" ".join(group)] = "; ".join(why)
        if progress is not None:
            progress(n + 1, len(groups))
    run.seconds = time.perf_counter() - start
    return run


def run_sample(tree: Tree, sample: Sequence[Setting], forms: Sequence[Form] | None = None) -> Run:
    """Settings planned before (``Setting.to_json``): each re-planned on its own config."""
    forms = list(forms or load_forms())
    run = Run()
    for setting in sample:
        found = check_setting(tree, setting, forms, [setting.config_key])
        if isinstance(found, str):
            run.unplanned[setting.key] = found
            continue
        run.planned.append(found[0])
        run.outcomes.extend(found[1])
    return run
