"""The image a config runs, as a setting: edited in its master config in a copy of the tree.

An image is what changelogs state most often ("Bump image to rocm/atom-dev:MiniMax-M3-20260623", "Update SGLang
image from v0.5.8 to v0.5.9", "Image: vllm/vllm-openai:v0.17.0"), whole, by its tag, or by the version its tag
starts with.  The edit writes a new tag of the same repository (its first version number, else its first number,
one higher) where the config's ``image:`` is written; the lie is the tag two higher.  One setting per image the
tree's configs run: the config with the fewest jobs that runs it.
"""

from __future__ import annotations

import re
from typing import Mapping, Sequence

from ci_tools.claims.verdict.check import EvalCache
from ci_tools.config import ProjectConfig
from ci_tools.jobs.job import Job
from ci_tools.jobs.matrix import expand
from ci_tools.model.repository import RepoData, load_repo
from ci_tools.revision.yamlpos import PosMap

from .settings import OverlaySnapshot, Setting, edited_files

# The engine an image's repository serves, as the history names it ("Update SGLang image ...").
_ENGINES = (("sglang", "SGLang"), ("vllm", "vLLM"), ("atom", "ATOM"), ("tensorrt", "TensorRT-LLM"),
            ("trtllm", "TensorRT-LLM"), ("dynamo", "Dynamo"))
_DOTTED = re.compile(r"\d+(?:\.\d+)+")
_NUMBER = re.compile(r"\d+")
# A tag that starts with a version and goes on with a build's platform ("v0.5.12-rocm700-mi35x", "v0.5.10.post1-cu130"):
# the version alone abbreviates it.  Not a version's own last parts ("1.3" of 1.3.1rc18, "v0.5.13" of v0.5.13.post1:
# another release).
_LEADING_VERSION = re.compile(r"(v?\d+(?:\.\d+)+(?:\.?post\d+|rc\d+)?)(?=[-_+][A-Za-z0-9])")


def engine_of(image: str) -> str:
    repository = image.rpartition(":")[0].lower()
    return next((name for word, name in _ENGINES if word in repository), "")


def bumped(image: str, by: int) -> str | None:
    """The image with its tag's first version number (else its first number) ``by`` higher; None without a tag."""
    repository, colon, tag = image.rpartition(":")
    if not colon or "/" in tag or not repository or "@" in image:
        return None  # (an image pinned by its digest has no tag to bump)
    m = _DOTTED.search(tag) or _NUMBER.search(tag)
    if m is None:
        return None
    head, _, last = m.group().rpartition(".")
    number = f"{head}.{int(last) + by}" if head else str(int(last) + by)
    return f"{repository}:{tag[:m.start()]}{number}{tag[m.end():]}"


def image_spellings(image: str) -> dict[str, str]:
    """Every way a sentence may write the image: whole, its tag, the version its tag starts with, its tag with the
    words between its first and last left out (735a05dd03b7: "to rocm7.2.3_..._atom20260511"), the repository
    with its tag cut after its first word."""
    out = {"plain": image}
    tag = image.rpartition(":")[2]
    if tag != image:
        out["tag"] = tag
        m = _LEADING_VERSION.match(tag)
        if m:
            out["version"] = m.group(1)
        words = tag.split("_")
        if len(words) >= 4:
            out["elided"] = f"{words[0]}_..._{words[-1]}"
        # the repository with its "_"-joined tag cut after its first word, a version (18f85edb0060: "Base image
        # rocm/atom:rocm7.2.2 (MI355X ROCm 7.2.2, ...)" of rocm/atom:rocm7.2.2_ubuntu24.04_py3.12_...); a tag cut at
        # a "-" is another published image (vllm/vllm-openai:v0.17.0 beside v0.17.0-cu130)
        if len(words) >= 2 and _DOTTED.search(words[0]):
            out["cut"] = f"{image.rpartition(':')[0]}:{words[0]}"
    return out


def image_candidates(repo: RepoData, jobs_of: Mapping[str, Sequence[Job]]) -> dict[tuple[str, str, str], list[Setting]]:
    """One candidate per image the configs run, each config that runs it an option (fewest jobs first)."""
    out: dict[tuple[str, str, str], list[Setting]] = {}
    for key, jobs in sorted(jobs_of.items()):
        entry = repo.configs.get(key)
        images = {j.fields.get("image") for j in jobs}
        if entry is None or not isinstance(entry.data, PosMap) or "image" not in entry.data or len(images) != 1:
            continue
        image = entry.data.get("image")
        truth, lie = (bumped(image, 1), bumped(image, 2)) if isinstance(image, str) else (None, None)
        if not isinstance(image, str) or truth is None or lie is None or image not in images:
            continue
        where = entry.file.loc(entry.data.value_span("image"))
        setting = Setting("image", "image", "", f"image {engine_of(image) or 'other'}", where.path, where.line,
                          where.column, image, "image", truth=truth, lie=lie, config_key=key, jobs=len(jobs))
        out.setdefault(("image", image, setting.family), []).append(setting)
    for options in out.values():
        options.sort(key=lambda s: (s.jobs, s.config_key))
    return out


def plan_image(setting: Setting, config: ProjectConfig, base: object) -> \
        tuple[Setting, OverlaySnapshot, EvalCache, RepoData] | str:
    """The edited copy of the tree, its configs read again, when every job of the setting's config runs the new
    image there; or why not."""
    edited = edited_files(setting, base)
    if isinstance(edited, str):
        return edited
    overlay = OverlaySnapshot(base, edited)
    head = load_repo(overlay, config, with_changelog=False)  # type: ignore[arg-type]
    jobs = [j for j in expand(head) if j.config_key == setting.config_key]
    if not jobs or any(j.fields.get("image") != setting.truth for j in jobs):
        return f"{setting.config_key}: not every job runs the edited image"
    return setting, overlay, EvalCache(config), head
