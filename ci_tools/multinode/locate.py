"""Which recipe a multinode job runs, and where it lives.

The launchers (``runners/launch_*.sh``) run ``srtctl apply -f $CONFIG_FILE``
when a worker block's ``additional-settings`` name a ``CONFIG_FILE``; that
path is relative to an srt-slurm checkout onto which they copy this
repository's ``benchmarks/multi_node/srt-slurm-recipes/<sub>`` as
``recipes/<sub>`` (or, for a path that already starts with
``benchmarks/multi_node/srt-slurm-recipes/``, to the same path).  A
``recipes/...`` path with no such file here comes from the srt-slurm
checkout itself: an external recipe.  The llm-d lane reads its
``CONFIG_FILE`` under ``benchmarks/multi_node/llm-d-recipes/``.  Without a
``CONFIG_FILE`` the job runs a bash recipe: the first existing of the
configured templates' paths and the names the launchers build
(:data:`LAUNCHER_SCRIPTS`).

:func:`locate_recipe` is the one place that decides this, so it can be
replaced by a shared recipe resolution.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from ..config import ProjectConfig
from ..contract import resolve_recipe
from ..matrix import AGENTIC, Job, gpu_name
from ..snapshot import Snapshot
from .srt_variants import split_config_file

SRT_RECIPES = "benchmarks/multi_node/srt-slurm-recipes"
LLM_D_RECIPES = "benchmarks/multi_node/llm-d-recipes"

# Script names the multinode launchers build, tried after the configured templates:
# launch_mi355x-amds.sh runs benchmarks/multi_node/[agentic/]<prefix>_<precision>_mi355x_<framework>.sh
# (no MTP suffix: MTP is DECODE_MTP_SIZE); launch_b200-dgxc.sh (TileRT) and launch_gb200-nv.sh
# (llm-d) run benchmarks/multi_node/<prefix>_<precision>_<gpu>_<framework>-disagg.sh.
LAUNCHER_SCRIPTS = (
    "benchmarks/multi_node/{agentic_dir}{model_prefix}_{precision}_{gpu}_{framework}.sh",
    "benchmarks/multi_node/{model_prefix}_{precision}_{gpu}_{framework}-disagg.sh",
)

SRT_SLURM = "srt-slurm"
SCRIPT = "script"
EXTERNAL = "external"
LLM_D = "llm-d"
MISSING = "missing"


@dataclass(frozen=True)
class MultinodeRecipe:
    """What a multinode job runs: ``kind`` is one of the constants above."""

    kind: str
    path: str | None
    selector: str | None = None
    config_file: str = ""
    reason: str = ""

    @property
    def label(self) -> str:
        """How the recipe is named in output: the file, with its selector."""
        shown = self.path or self.config_file
        return f"{shown}:{self.selector}" if self.selector is not None and shown else shown


def locate_recipe(job: Job, env: Mapping[str, object], config: ProjectConfig, snapshot: Snapshot) -> MultinodeRecipe:
    config_file = env.get("CONFIG_FILE")
    written = config_file.strip() if isinstance(config_file, str) else ""
    if not written:
        return _script(job, config, snapshot)
    path, selector = split_config_file(written)
    llm_d = f"{LLM_D_RECIPES}/{path}"
    if snapshot.read(llm_d) is not None:
        return MultinodeRecipe(LLM_D, llm_d, None, written, "llm-d recipes are not evaluated")
    if path.startswith(f"{SRT_RECIPES}/"):
        here = path
    elif path.startswith("recipes/"):
        here = f"{SRT_RECIPES}/{path.removeprefix('recipes/')}"
    else:
        return MultinodeRecipe(EXTERNAL, None, selector, written,
                               f"CONFIG_FILE {path} is neither under recipes/ nor under {SRT_RECIPES}/")
    if snapshot.read(here) is None:
        return MultinodeRecipe(EXTERNAL, None, selector, written,
                               f"external recipe: {path} is not in this repository ({here} does not exist); "
                               "the launcher takes it from its srt-slurm checkout")
    return MultinodeRecipe(SRT_SLURM, here, selector, written)


def _script(job: Job, config: ProjectConfig, snapshot: Snapshot) -> MultinodeRecipe:
    resolved = resolve_recipe(job, config, snapshot)
    if resolved.path is not None:
        return MultinodeRecipe(SCRIPT, resolved.path)
    values = {
        "agentic_dir": "agentic/" if job.scenario == AGENTIC else "",
        "model_prefix": job.get("model-prefix") or "",
        "precision": job.get("precision") or "",
        "gpu": gpu_name(str(job.get("runner") or "")),
        "framework": job.get("framework") or "",
    }
    tried = list(resolved.candidates)
    for template in LAUNCHER_SCRIPTS:
        path = template.format(**values)
        if snapshot.read(path) is not None:
            return MultinodeRecipe(SCRIPT, path)
        tried.append(path)
    return MultinodeRecipe(MISSING, None, reason="no CONFIG_FILE in additional-settings and no bash recipe exists "
                           f"(tried {', '.join(dict.fromkeys(tried))})")
