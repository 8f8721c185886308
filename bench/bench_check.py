"""Benchmark of ``ci-tools check`` on one-PR changes of the real InferenceX tree.

A throwaway git repository holds the real tree at 843c6254f (base commit);
each case changes the work tree the way a pull request does and runs
``ci-tools check --base BASE`` as a fresh process:

- ``changelog only``: one entry appended (no config affected: coverage and
  the recipes stage have nothing to evaluate);
- ``recipe change``: one single-node recipe changes a server flag, with its
  changelog entry (the 5 jobs running it are re-evaluated by the recipes stage,
  and by the claims stage from the same cache);
- ``config change``: one config raises conc-end, with its changelog entry (only
  the new point is evaluated).

Beside them, in the same run: ``check`` as ci-tools was at ``--baseline-rev``
(default: the revision before check loaded the base beside the head and read
git without gitpython), and ``validate`` of the same work tree, the floor of
every ``check`` (it validates the head first).

Run: ``.venv/bin/python bench/bench_check.py [--runs N] [--baseline-rev REV | --no-baseline]``
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import (FULL_CORPUS, Table, bench_arguments, ci_tools_at, committed_tree, git,  # noqa: E402
                      load_average, measure, require, tool_env)

BASELINE_REV = "c891bff"
TARGET = 0.5  # seconds for check of a one-PR change of the real tree
RECIPE = "benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi325x.sh"
ENTRY = ("\n- config-keys:\n    - dsr1-fp8-mi325x-sglang\n  description:\n    - {text}\n"
         "  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/XXX\n")


def replace(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    if old not in text:
        raise SystemExit(f"{path}: {old!r} not found; the tree changed")
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def append_entry(repo: Path, text: str) -> None:
    with (repo / "perf-changelog.yaml").open("a", encoding="utf-8") as fh:
        fh.write(ENTRY.format(text=text))


def recipe_change(repo: Path) -> None:
    replace(repo / RECIPE, "--mem-fraction-static=0.8 ", "--mem-fraction-static=0.85 ")
    append_entry(repo, "Lower the static memory fraction")


def config_change(repo: Path) -> None:
    replace(repo / "configs" / "amd-master.yaml", "      - { tp: 8, conc-start: 4, conc-end: 64 }\n\n# DeepSeek-V4-Pro FP8",
            "      - { tp: 8, conc-start: 4, conc-end: 128 }\n\n# DeepSeek-V4-Pro FP8")
    append_entry(repo, "Add c128")


CASES = {
    "changelog only": lambda repo: append_entry(repo, "Re-run the published points"),
    "recipe change": recipe_change,
    "config change": config_change,
}


def main() -> int:
    args = bench_arguments(__doc__, runs=7, ci_tools=True, baseline_rev=BASELINE_REV).parse_args()
    require(FULL_CORPUS)
    print(f"ci-tools: {args.ci_tools}; {load_average()}; {args.runs} runs each")
    table = Table(label_width=36)
    table.print_header()
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "ix"
        base = committed_tree(repo)
        report = Path(tmp) / "report.json"
        env = tool_env(Path(tmp) / "pycache")
        builds = {"check": [args.ci_tools]}
        if not args.no_baseline:
            builds[f"check@{args.baseline_rev}"] = list(ci_tools_at(args.baseline_rev, Path(tmp) / "baseline").command)
        for name, change in CASES.items():
            git(repo, "checkout", "-q", "--", ".")
            change(repo)
            output = ["--repo", str(repo), "--format", "json", "--output", str(report)]
            measured = {label: measure([*cli, "check", "--base", base, *output], args.runs, env=env)
                        for label, cli in builds.items()}
            measured["validate"] = measure([args.ci_tools, "validate", *output], args.runs, env=env)
            baseline = None if args.no_baseline else measured[f"check@{args.baseline_rev}"]
            for label, got in measured.items():
                table.print_row(f"{name}: {label}", got, baseline if label == "check" else None)
    print(f"\ntarget: check of a one-PR change of the real tree <= {TARGET:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
