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

Beside them, in the same run: ``validate`` of the same work tree, the floor of
every ``check`` (it validates the head first).

Run: ``.venv/bin/python bench/bench_check.py [--runs N]``
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_validate import CI_TOOLS, TREE, measure, print_header, tree_missing  # noqa: E402

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
}
RECIPE = "benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi325x.sh"
ENTRY = ("\n- config-keys:\n    - dsr1-fp8-mi325x-sglang\n  description:\n    - {text}\n"
         "  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/XXX\n")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "commit.gpgsign=false", *args], cwd=repo, env={**os.environ, **GIT_ENV},
                          check=True, capture_output=True, text=True).stdout.strip()


def replace(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    if old not in text:
        raise SystemExit(f"{path}: {old!r} not found; the tree changed")
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def append_entry(repo: Path, text: str) -> None:
    with (repo / "perf-changelog.yaml").open("a", encoding="utf-8") as fh:
        fh.write(ENTRY.format(text=text))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--ci-tools", default=str(CI_TOOLS))
    args = parser.parse_args()
    if tree_missing():
        return 2
    cases = {
        "changelog only": lambda repo: append_entry(repo, "Re-run the published points"),
        "recipe change": lambda repo: (replace(repo / RECIPE, "--mem-fraction-static=0.8 ", "--mem-fraction-static=0.85 "),
                                       append_entry(repo, "Lower the static memory fraction")),
        "config change": lambda repo: (replace(repo / "configs" / "amd-master.yaml",
                                               "      - { tp: 8, conc-start: 4, conc-end: 64 }\n\n# DeepSeek-V4-Pro FP8",
                                               "      - { tp: 8, conc-start: 4, conc-end: 128 }\n\n# DeepSeek-V4-Pro FP8"),
                                       append_entry(repo, "Add c128")),
    }
    print_header(args.ci_tools, "change", "command")
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "ix"
        shutil.copytree(TREE, repo)
        for path in [repo, *repo.rglob("*")]:
            path.chmod(path.stat().st_mode | 0o200)
        git(repo, "init", "-q")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "base")
        base = git(repo, "rev-parse", "HEAD")
        report = Path(tmp) / "report.json"
        for name, change in cases.items():
            git(repo, "checkout", "-q", "--", ".")
            change(repo)
            for label, argv in {
                "check": [args.ci_tools, "check", "--repo", str(repo), "--base", base, "--format", "json",
                          "--output", str(report)],
                "validate": [args.ci_tools, "validate", "--repo", str(repo), "--format", "json", "--output", str(report)],
            }.items():
                wall, cpu, peak = measure(argv, args.runs)
                print(f"{name:<16} {label:<12} {wall:>7.3f}s {cpu:>7.3f}s {peak / 1024:>6.1f}MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
