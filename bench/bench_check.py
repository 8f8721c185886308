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
  the new point is evaluated);
- ``false claim``: one entry whose claim the recipe contradicts (the
  acceptance case: 1 new finding, 13 already on the base);
- ``runner fixed``: one config's undefined runner label replaced by a defined
  one, with its entry (a master file differs, so the base is validated again,
  loaded beside the head);
- ``library function``: one option added to ``build_replay_cmd`` of
  ``benchmarks/benchmark_lib.sh`` (the agentic replay's client), no entry, the
  commonest shape of a shared-library change in the history: coverage decides
  which configs' runs it changes (single-node rows evaluated where they call it
  after their server, multinode rows where their chain may call it);
- ``multinode client``: the router port of ``amd_utils/bench.sh`` changed,
  the client the AMD disaggregated throughput jobs' chains name, no entry
  (their rows evaluated at the head; the base only where the head names no
  such script).

``check`` evaluates the base too and marks each finding new, unchanged or
absent.  Beside it, in the same run: ``check`` as ci-tools was at
``--baseline-rev`` (default: where this branch left ``main``; on ``main`` the
commit before), and ``validate`` of the same work tree, the floor of every
``check`` (it validates the head first).

Run: ``.venv/bin/python bench/bench_check.py [--runs N] [--baseline-rev REV | --no-baseline]``
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import (FULL_CORPUS, Table, bench_arguments, ci_tools_at, committed_tree, git,  # noqa: E402
                      load_average, measure, merge_base_with_main, require, tool_env)

TARGET = 0.5  # seconds for check of a one-PR change of the real tree
# check with the base evaluated, against check as it was before it evaluated the base
TARGET_RATIO = 1.3
RECIPE = "benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi325x.sh"
ENTRY = ("\n- config-keys:\n    - {key}\n  description:\n    - {text}\n"
         "  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/XXX\n")


def replace(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    if old not in text:
        raise SystemExit(f"{path}: {old!r} not found; the tree changed")
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def append_entry(repo: Path, text: str, key: str = "dsr1-fp8-mi325x-sglang") -> None:
    with (repo / "perf-changelog.yaml").open("a", encoding="utf-8") as fh:
        fh.write(ENTRY.format(text=text, key=key))


def recipe_change(repo: Path) -> None:
    replace(repo / RECIPE, "--mem-fraction-static=0.8 ", "--mem-fraction-static=0.85 ")
    append_entry(repo, "Lower the static memory fraction")


def config_change(repo: Path) -> None:
    replace(repo / "configs" / "amd-master.yaml", "      - { tp: 8, conc-start: 4, conc-end: 64 }\n\n# DeepSeek-V4-Pro FP8",
            "      - { tp: 8, conc-start: 4, conc-end: 128 }\n\n# DeepSeek-V4-Pro FP8")
    append_entry(repo, "Add c128")


def runner_fixed(repo: Path) -> None:
    replace(repo / "configs" / "amd-master.yaml", "  runner: cluster:mi325x-tw\n  precision: fp8\n",
            "  runner: cluster:mi325x-amds\n  precision: fp8\n")
    append_entry(repo, "Run on the mi325x-amds cluster", key="dsv4-fp8-mi325x-vllm")


def library_change(repo: Path) -> None:
    replace(repo / "benchmarks" / "benchmark_lib.sh", '    REPLAY_CMD+=" --endpoint /v1/chat/completions"\n',
            '    REPLAY_CMD+=" --endpoint /v1/chat/completions"\n    REPLAY_CMD+=" --verbose"\n')


def multinode_client(repo: Path) -> None:
    replace(repo / "benchmarks" / "multi_node" / "amd_utils" / "bench.sh", 'ROUTER_PORT="${ROUTER_PORT:-30000}"',
            'ROUTER_PORT="${ROUTER_PORT:-30001}"')


CASES = {
    "changelog only": lambda repo: append_entry(repo, "Re-run the published points"),
    "recipe change": recipe_change,
    "config change": config_change,
    "false claim": lambda repo: append_entry(repo, "Set --mem-fraction-static to 0.9"),
    "runner fixed": runner_fixed,
    "library function": library_change,
    "multinode client": multinode_client,
}


def main() -> int:
    args = bench_arguments(__doc__, runs=7, ci_tools=True, baseline_rev="").parse_args()
    args.baseline_rev = args.baseline_rev or merge_base_with_main()
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
            builds[f"check@{args.baseline_rev[:12]}"] = list(ci_tools_at(args.baseline_rev, Path(tmp) / "baseline").command)
        for name, change in CASES.items():
            git(repo, "checkout", "-q", "--", ".")
            change(repo)
            output = ["--repo", str(repo), "--format", "json", "--output", str(report)]
            measured = {label: measure([*cli, "check", "--base", base, *output], args.runs, env=env)
                        for label, cli in builds.items()}
            measured["validate"] = measure([args.ci_tools, "validate", *output], args.runs, env=env)
            baseline = None if args.no_baseline else measured[f"check@{args.baseline_rev[:12]}"]
            for label, got in measured.items():
                table.print_row(f"{name}: {label}", got, baseline if label == "check" else None)
    print(f"\ntargets: check of a one-PR change of the real tree <= {TARGET:.2f} s of CPU, and with the base evaluated "
          f"<= {TARGET_RATIO}x the CPU of check@{args.baseline_rev[:12]} (before it evaluated the base)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
