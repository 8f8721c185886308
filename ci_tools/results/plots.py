"""Frontier figures: one per model x hardware x ISL/OSL, base and PR frontiers of each configuration.

:func:`figures` computes what each figure shows (tested without pixels);
:func:`render` draws it with matplotlib (Agg backend, PNG, no timestamp or
version in the file, so the same data gives the same bytes with the same
matplotlib).  matplotlib is an optional extra (``pip install
ci-tools[plots]``): only the job that draws needs it.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from typing import Mapping, Sequence

from .pareto import FrontierComparison, FrontierPoint

PLOTS_DIR = "plots"


@dataclass(frozen=True)
class Series:
    label: str  # config key, and which side
    side: str  # base | pr
    points: tuple[FrontierPoint, ...]  # every valid point
    frontier: tuple[FrontierPoint, ...]


@dataclass(frozen=True)
class Figure:
    title: str
    filename: str
    groups: tuple[tuple[str, str, int, int], ...]  # the frontier groups drawn in it
    series: tuple[Series, ...]


def figure_of(group: tuple[str, str, int, int]) -> tuple[str, str, str]:
    """(model, hardware, sequence) of a configuration: InferenceX keys read <model>-<precision>-<gpu>-<framework>."""
    config, scenario, isl, osl = group
    parts = config.split("-")
    model, hardware = (parts[0], parts[2]) if len(parts) >= 3 else (config, "")
    seq = "agentic" if scenario == "agentic-coding" else f"{isl}x{osl}"
    return model, hardware, seq


def filename(model: str, hardware: str, seq: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", f"{model}_{hardware}_{seq}") + ".png"


def figures(frontiers: Sequence[FrontierComparison]) -> list[Figure]:
    by_figure: dict[tuple[str, str, str], list[FrontierComparison]] = {}
    for f in frontiers:
        by_figure.setdefault(figure_of(f.group), []).append(f)
    out = []
    for (model, hardware, seq), items in sorted(by_figure.items()):
        items = sorted(items, key=lambda f: f.group)
        series: list[Series] = []
        for f in items:
            series.append(Series(f"{f.group[0]} (base)", "base", f.base_all, f.base))
            series.append(Series(f"{f.group[0]} (PR)", "pr", f.pr_all, f.pr))
        title = f"{model} on {hardware}, {seq.replace('x', '/')}" if hardware else f"{model}, {seq}"
        out.append(Figure(title, filename(model, hardware, seq), tuple(f.group for f in items), tuple(series)))
    return out


def render(figure: Figure) -> bytes:
    """The figure as PNG bytes (needs matplotlib: ``pip install ci-tools[plots]``)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    fig, ax = plt.subplots(figsize=(12, 6.5), dpi=100)
    colours = plt.get_cmap("tab20")
    configs = sorted({s.label.rsplit(" (", 1)[0] for s in figure.series})
    for s in figure.series:
        colour = colours(configs.index(s.label.rsplit(" (", 1)[0]) % 20)
        dashed = s.side == "base"
        ax.scatter([p.x for p in s.points], [p.y for p in s.points], s=14, color=colour,
                   marker="o" if dashed else "^", alpha=0.45 if dashed else 0.9)
        ax.plot([p.x for p in s.frontier], [p.y for p in s.frontier], color=colour,
                linestyle="--" if dashed else "-", linewidth=1.2 if dashed else 1.8, label=s.label)
        if not dashed:
            for p in s.frontier:
                ax.annotate(f"c{p.concurrency}", (p.x, p.y), textcoords="offset points", xytext=(3, 3), fontsize=7,
                            color=colour)
    ax.set_xlabel("interactivity (tok/s/user)")
    ax.set_ylabel("throughput per GPU (tok/s/GPU, log scale)")
    ax.set_yscale("log")  # concurrencies 1 to thousands span orders of magnitude of throughput
    ax.set_title(figure.title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), title="dashed: base, solid: PR",
              title_fontsize=7)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()


def store_paths(figs: Sequence[Figure], sha: str) -> dict[str, Figure]:
    return {f"{PLOTS_DIR}/{sha}/{fig.filename}": fig for fig in figs}


def urls(figs: Sequence[Figure], sha: str, *, repository: str, commit: str,
         server: str = "https://github.com") -> Mapping[tuple[str, str, int, int], str]:
    """Each frontier group -> the commit-pinned URL of the figure that draws it."""
    out: dict[tuple[str, str, int, int], str] = {}
    for fig in figs:
        for group in fig.groups:
            out[group] = f"{server}/{repository}/blob/{commit}/{PLOTS_DIR}/{sha}/{fig.filename}?raw=true"
    return out
