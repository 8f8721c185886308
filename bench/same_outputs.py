"""Same outputs before and after: validate, matrix and check on the real tree, byte for byte.

Runs every command below twice, with ci-tools as it was at ``--baseline-rev``
(a temporary git worktree of this repository, same interpreter and
libraries) and with the ci-tools beside this Python, and compares exit code,
standard output, standard error and the report file of each:

- ``validate`` (json and sarif) and ``validate --rev`` of the real InferenceX
  tree (tests/data/inferencex-843c625, committed into a throwaway
  repository);
- ``matrix`` (all jobs, a key glob with filters, ``--env``, ``--explain``);
- ``check --base BASE`` on one-PR changes of that tree in the work tree: a
  changelog entry appended, a recipe flag changed, a config's conc-end
  raised, a search-space row added (the lines below it move), a config
  removed, runners.yaml changed, a new recipe script, the changelog history
  edited; and changes without a changelog entry (a recipe, a config,
  benchmark_lib.sh, a launcher, an srt-slurm recipe, a node's hardware), whose
  uncovered-key findings list every cause;
- with ``--ix-clone DIR`` (a clone of InferenceX with its history), ``check
  --base C^ --head C`` for real commits that changed master configs and
  recipes.

``matrix --env`` and ``--explain`` are compared with each job's variables in
name order (a launch step's exports used to come out of a set, in an order
that changed from run to run, and with them the shards' digests).

Exit 0 when every output is identical, 1 otherwise (the first differing
lines are printed).

Run: ``.venv/bin/python bench/same_outputs.py [--baseline-rev main] [--ix-clone /work/ix-clone]``
"""

from __future__ import annotations

import argparse
import difflib
import json
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import CI_TOOLS, FULL_CORPUS, ci_tools_at, clone, committed_tree, git, tool_env  # noqa: E402

RECIPE = "benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi325x.sh"
AMD = "configs/amd-master.yaml"
SRT_RECIPE = ("benchmarks/multi_node/srt-slurm-recipes/trtllm/deepseek-v4/agentx-gb300-20260811/"
              "dynamo-disagg-gb300-1p4d-dep4-tep8-c4-b1-mtp.yaml")
ENTRY = ("\n- config-keys:\n    - {key}\n  description:\n    - {text}\n"
         "  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/XXX\n")
# Real commits of InferenceX that changed master configs, recipes or both (checked with --ix-clone).
REAL_COMMITS = ("843c6254f", "49ac5c0a0", "e0e8bfddf", "fbb480e5f", "e944302e8", "9c3f66972", "64c7b6126")


@dataclass(frozen=True)
class Case:
    name: str
    argv: list[str]  # after the ci-tools command; REPORT is replaced by the report file
    change: Callable[[Path], None] | None = None  # applied to the work tree before the command
    # `matrix --env` used to print a launch step's exports in set order (different from run to
    # run): the variables of each job are compared in name order.
    env_in_name_order: bool = False


def replace(repo: Path, rel: str, old: str, new: str) -> None:
    path = repo / rel
    text = path.read_text(encoding="utf-8")
    if old not in text:
        raise SystemExit(f"{rel}: {old!r} not found; the tree changed")
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def append_entry(repo: Path, key: str, text: str) -> None:
    with (repo / "perf-changelog.yaml").open("a", encoding="utf-8") as fh:
        fh.write(ENTRY.format(key=key, text=text))


def add_row(repo: Path) -> None:
    replace(repo, AMD, "      - { tp: 8, conc-start: 4, conc-end: 64 }\n\n# DeepSeek-V4-Pro FP8",
            "      - { tp: 8, conc-start: 4, conc-end: 64 }\n      - { tp: 4, conc-start: 4, conc-end: 16 }\n"
            "\n# DeepSeek-V4-Pro FP8")
    append_entry(repo, "dsr1-fp8-mi325x-sglang", "Add TP4")


def remove_config(repo: Path) -> None:
    text = (repo / AMD).read_text(encoding="utf-8")
    start = text.index("\ndsr1-fp8-mi325x-sglang:\n") + 1
    end = text.index("\n\n", start) + 1
    (repo / AMD).write_text(text[:start] + text[end:], encoding="utf-8")
    append_entry(repo, "dsr1-fp8-mi325x-sglang", "Retire the config")


def new_recipe(repo: Path) -> None:
    shutil.copy(repo / RECIPE, repo / "benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi325x_mtp.sh")


def edit_history(repo: Path) -> None:
    replace(repo, "perf-changelog.yaml", "description:\n", "description:\n    - Rewritten\n")


def cases(base: str) -> list[Case]:
    check = ["check", "--base", base, "--format", "json", "--output", "REPORT"]
    return [
        Case("validate json", ["validate", "--format", "json", "--output", "REPORT"]),
        Case("validate sarif", ["validate", "--format", "sarif"]),
        Case("validate --rev", ["validate", "--rev", base, "--format", "json"]),
        Case("matrix", ["matrix"]),
        Case("matrix glob + filters", ["matrix", "dsr1-*", "--scenario", "fixed-seq-len", "--conc", "64", "--tp", "8"]),
        Case("matrix --env", ["matrix", "--env"], env_in_name_order=True),
        Case("matrix --explain", ["matrix", "--explain", "dsr1-fp8-mi325x-sglang"], env_in_name_order=True),
        Case("check, nothing changed", check),
        Case("check, changelog only", check, lambda r: append_entry(r, "dsr1-fp8-mi325x-sglang", "Re-run")),
        Case("check, recipe change", check, lambda r: (
            replace(r, RECIPE, "--mem-fraction-static=0.8 ", "--mem-fraction-static=0.85 "),
            append_entry(r, "dsr1-fp8-mi325x-sglang", "Lower the static memory fraction"))),
        Case("check, config change", check, lambda r: (
            replace(r, AMD, "      - { tp: 8, conc-start: 4, conc-end: 64 }\n\n# DeepSeek-V4-Pro FP8",
                    "      - { tp: 8, conc-start: 4, conc-end: 128 }\n\n# DeepSeek-V4-Pro FP8"),
            append_entry(r, "dsr1-fp8-mi325x-sglang", "Add c128"))),
        Case("check, row added (lines move)", check, add_row),
        Case("check, config removed", check, remove_config),
        Case("check, runners change", check, lambda r: replace(
            r, "configs/runners.yaml", "  h100-multinode:\n", "  h100-multinode:\n    - h100-cw_01\n")),
        Case("check, new recipe uncovered", check, new_recipe),
        Case("check, history edited", check, edit_history),
        # Changes without a changelog entry: uncovered-key findings carry every cause found.
        Case("check, recipe change, no entry", check, lambda r: replace(
            r, RECIPE, "--mem-fraction-static=0.8 ", "--mem-fraction-static=0.85 ")),
        Case("check, config change, no entry", check, lambda r: replace(
            r, AMD, "      - { tp: 8, conc-start: 4, conc-end: 64 }\n\n# DeepSeek-V4-Pro FP8",
            "      - { tp: 8, conc-start: 4, conc-end: 128 }\n\n# DeepSeek-V4-Pro FP8")),
        Case("check, benchmark_lib change, no entry", check, lambda r: replace(
            r, "benchmarks/benchmark_lib.sh", "\n", "\n# changed\n")),
        Case("check, launcher change, no entry", check, lambda r: replace(
            r, "runners/launch_mi325x-amds.sh", "\n", "\nexport EXTRA_FLAG=1\n")),
        Case("check, srt-slurm recipe change, no entry", check, lambda r: replace(
            r, SRT_RECIPE, "\n", "\n# changed\n")),
        Case("check, node hardware change, no entry", check, lambda r: replace(
            r, "configs/runners.yaml", "available-cpu-dram-mib: 3_095_781", "available-cpu-dram-mib: 2_095_781")),
        Case("check, text report", ["check", "--base", base, "--format", "text"],
             lambda r: append_entry(r, "dsr1-fp8-mi325x-sglang", "Re-run")),
    ]


def env_in_name_order(stdout: str) -> str:
    """``matrix --env`` JSON with each job's variables in name order (and so without the shards' digests,
    which follow the order); ``matrix --explain`` text with each run of indented lines sorted."""
    if not stdout.startswith("{"):
        out: list[str] = []
        run: list[str] = []
        for line in stdout.splitlines():
            if line.startswith("    "):
                run.append(line)
                continue
            out += sorted(run) + [line]
            run = []
        return "\n".join(out + sorted(run))
    document = json.loads(stdout)
    for shard in document["shards"]:
        for entry in shard["include"]:
            entry["env"] = dict(sorted(entry["env"].items()))
    for shard in document["index"]["shards"]:
        shard.pop("sha256", None)
    return json.dumps(document, separators=(",", ":"))


def run(cmd: list[str], repo: Path, case: Case, report: Path) -> str:
    report.unlink(missing_ok=True)
    args = [str(report) if a == "REPORT" else a for a in case.argv]
    env = tool_env(GITHUB_REPOSITORY="SemiAnalysisAI/InferenceX")
    done = subprocess.run([*cmd, args[0], "--repo", str(repo), *args[1:]], capture_output=True, env=env)
    text = report.read_text(encoding="utf-8") if report.exists() else ""
    stdout = done.stdout.decode(errors="replace")
    if case.env_in_name_order and done.returncode == 0:
        stdout = env_in_name_order(stdout)
    return (f"exit {done.returncode}\n--- stdout\n{stdout}"
            f"--- stderr\n{done.stderr.decode(errors='replace')}--- report\n{text}")


def compare(name: str, before: str, after: str) -> bool:
    if before == after:
        print(f"identical  {name} ({len(after):,} bytes)")
        return True
    print(f"DIFFERENT  {name}")
    diff = difflib.unified_diff(before.splitlines(), after.splitlines(), "before", "after", lineterm="", n=1)
    for line in list(diff)[:30]:
        print(f"    {line[:200]}")
    return False


def synthetic(tmp: Path, builds: dict[str, list[str]], only: str) -> bool:
    repo = tmp / "ix"
    base = committed_tree(repo)
    ok = True
    for case in cases(base):
        if only not in case.name:
            continue
        git(repo, "checkout", "-q", "--", ".")
        git(repo, "clean", "-qfd")
        if case.change:
            case.change(repo)
        outputs = [run(cmd, repo, case, tmp / "report") for cmd in builds.values()]
        ok &= compare(case.name, *outputs)
    return ok


def real_commits(tmp: Path, source: Path, builds: dict[str, list[str]]) -> bool:
    repo = clone(source, tmp / "history")
    ok = True
    for commit in REAL_COMMITS:
        case = Case(commit, ["check", "--base", f"{commit}^", "--head", commit, "--format", "json", "--output", "REPORT"])
        outputs = [run(cmd, repo, case, tmp / "report") for cmd in builds.values()]
        subject = git(repo, "log", "-1", "--format=%s", commit)[:60]
        ok &= compare(f"check {commit}^..{commit} ({subject})", *outputs)
    return ok


def require_code_from(cmd: list[str], tree: Path) -> None:
    """The baseline command must import ci_tools from its own tree, not from this one (the comparison would
    then compare this build with itself)."""
    probe = [*cmd[:-2], "-c", "import ci_tools; print(ci_tools.__file__)"]
    found = subprocess.run(probe, capture_output=True, text=True, check=True).stdout.strip()
    if not found.startswith(str(tree)):
        raise SystemExit(f"the baseline imports ci_tools from {found}, not from {tree}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline-rev", default="main", help="The ci-tools revision to compare with (default: main).")
    parser.add_argument("--ix-clone", type=Path, default=None, help="A clone of InferenceX with its history.")
    parser.add_argument("--only", default="", help="Run only the synthetic cases whose name contains this text.")
    args = parser.parse_args()
    if not FULL_CORPUS.is_dir():
        print(f"the real tree is not at {FULL_CORPUS}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        builds = {"before": list(ci_tools_at(args.baseline_rev, tmp / "baseline").command), "after": [CI_TOOLS]}
        require_code_from(builds["before"], tmp / "baseline")
        ok = synthetic(tmp, builds, args.only)
        if args.ix_clone is not None:
            ok &= real_commits(tmp, args.ix_clone, builds)
    print("every output identical" if ok else "OUTPUTS DIFFER")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
