"""Compare `ci-tools matrix` with InferenceX's generator at other revisions of InferenceX.

For each revision of a clone of InferenceX (with history), the tree is
exported to a temporary directory; the generator of that revision runs its
full sweep there (`python3 utils/matrix_logic/generate_sweep_configs.py
full-sweep`), and this checkout's `ci-tools matrix` expands the same files.
Entries are compared job for job (fields and key order).  The env contract
of each revision is loaded too: every job must be run by a job of that
revision's run-sweep.yml, with no problem reading the workflows, and the
variables derived from the job (EXP_NAME, CONC/CONC_LIST, MODEL) must carry
its values.

Nothing here is a test: the history is not part of the repository.  The
generator needs pydantic (`.venv/bin/pip install -e '.[bench]'`).

Run: .venv/bin/python bench/matrix_revisions.py REPO [REV ...]
     (default revisions: those changing the generator since 2026-07-02, and HEAD)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import extract, git  # noqa: E402

PATHS = ("configs", "utils", ".github/workflows", "runners")
GENERATOR = "utils/matrix_logic/generate_sweep_configs.py"


def generator_sweep(tree: Path) -> list[dict[str, Any]] | str:
    masters = sorted(str(p.relative_to(tree)) for p in (tree / "configs").glob("*-master.yaml"))
    proc = subprocess.run([sys.executable, GENERATOR, "full-sweep", "--config-files", *masters,
                           "--runner-config", "configs/runners.yaml"], cwd=tree, capture_output=True, text=True)
    if proc.returncode != 0:
        return proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}"
    data = json.loads(proc.stdout)
    return data if isinstance(data, list) else []


def ours(tree: Path) -> tuple[list[Any], list[dict[str, Any]], Any, list[str]]:
    from ci_tools.config import load_config
    from ci_tools.jobs.env.contract import contract_for
    from ci_tools.jobs.matrix import expand
    from ci_tools.model.repository import load_repo
    from ci_tools.revision.snapshot import WorkTreeSnapshot

    config = load_config(tree)
    snapshot = WorkTreeSnapshot(tree)
    repo = load_repo(snapshot, config, with_changelog=False)
    jobs = expand(repo)
    contract = contract_for(config, snapshot)
    problems = list(contract.problems)
    for job in jobs:
        if contract.caller_for(job) is None:
            problems.append(f"{job.label()}: no job of {contract.source} runs it")
            continue
        env = contract.workflow_env(job)
        want = {"EXP_NAME": job.get("exp-name"), "MODEL": job.get("model")}
        if job.multinode:
            want["CONC_LIST"] = " ".join(str(c) for c in job.concs)
        else:
            want["CONC"] = str(job.conc)
        for name, value in want.items():
            got = env.get(name)
            if got is None or got.value != value:
                problems.append(f"{job.label()}: {name} is {got.value if got else 'absent'!r}, expected {value!r}")
    entries = [dict(j.fields) for j in jobs]
    return jobs, entries, contract, problems


def compare(repo: Path, rev: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp)
        extract(repo, rev, tree, PATHS)
        theirs = generator_sweep(tree)
        jobs, entries, contract, problems = ours(tree)
    head = f"{rev[:9]} {git(repo, 'log', '-1', '--format=%ad', '--date=short', rev).strip()}"
    if isinstance(theirs, str):
        print(f"{head}: the generator fails ({theirs}); ci-tools expands {len(entries)} jobs")
    else:
        differing = Counter()
        for a, b in zip(entries, theirs):
            if a != b or list(a) != list(b):
                for k in sorted(set(a) | set(b)):
                    if a.get(k, "<absent>") != b.get(k, "<absent>"):
                        differing[k] += 1
                if a == b:
                    differing["<key order>"] += 1
        same = len(entries) == len(theirs) and not differing
        print(f"{head}: generator {len(theirs)} jobs, ci-tools {len(entries)} jobs: "
              + ("identical" if same else f"differ on {dict(differing)}"))
    print(f"    env contract ({contract.source}): {len(contract.workflows.callers)} sweep jobs, "
          f"{len(contract.launchers)} launchers, {len(problems)} problem(s)")
    for problem in problems[:5]:
        print(f"      {problem}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", type=Path, help="a clone of InferenceX with its history (bare is fine)")
    parser.add_argument("revs", nargs="*")
    args = parser.parse_args()
    revs = args.revs or [*reversed(git(args.repo, "log", "--since=2026-07-02", "--format=%H", "--",
                                       GENERATOR).split()), "HEAD"]
    for rev in revs:
        compare(args.repo, rev)
    return 0


if __name__ == "__main__":
    sys.exit(main())
