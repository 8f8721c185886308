"""Benchmark: real bash against the recipe evaluator, over every job the stand-ins can carry.

Each single-node job of a tree (and, with ``--multinode``, each multinode job
whose recipe is a script of the repository) runs for real: ``ci-tools sweep
run`` (or, ``--through step``, the workflow's launch step itself), the fleet's
launcher, the recipe, with the stand-ins of tests/standins on PATH in a
sandbox of its own.  What ``recipe show`` states
for the job (every flag with a known value, every switch, every variable the
recipe sets) is checked against the argv and environment of the servers bash
started (tests/standins/compare.py).  Prints the jobs run and compared, the
statements checked and equal, each disagreement grouped by recipe and name,
and why a job was not compared.

The tree is the committed InferenceX 843c6254f (tests/data), or a revision of
a clone of InferenceX (``--ix CLONE --rev REV``: extracted with ``git
archive`` into a scratch directory, never the clone's work tree; there a
job whose recipe ci-tools' resolution rules (InferenceX's launchers at
843c6254f) do not find is evaluated from the recipe bash ran, and a runners
file of the old format is put in today's for ci-tools to read).

Run: .venv/bin/python bench/bench_bash_oracle.py [--ix CLONE --rev REV] [--keys GLOB] [--workers 4]
     [--through sweep|step] [--limit N] [--multinode] [--no-process] [--keep DIR] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import FULL_CORPUS, ROOT, load_average  # noqa: E402

sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def _tree(args: argparse.Namespace, scratch: Path) -> Path:
    if args.ix is None:
        return FULL_CORPUS
    dest = scratch / "tree"
    archive = subprocess.run(["git", "-C", str(args.ix), "archive", args.rev], check=True, capture_output=True).stdout
    dest.mkdir()
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    # Symbolic links come out of `git archive` as links: the launch step sees them as a checkout has them.
    # A runners file of the format before 2026-07-02 (labels at the top) is put in today's (under `labels:`),
    # which ci-tools reads; no launcher or recipe reads it.
    import yaml

    for runners in (dest / ".github" / "configs" / "runners.yaml", dest / "configs" / "runners.yaml"):
        if runners.is_file():
            data = yaml.safe_load(runners.read_text())
            if isinstance(data, dict) and "labels" not in data:
                runners.write_text(yaml.safe_dump({"labels": data}, sort_keys=False))
    return dest


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--ix", type=Path, default=None, help="a clone of InferenceX (with --rev)")
    ap.add_argument("--rev", default="HEAD", help="the revision of --ix to run (default HEAD)")
    ap.add_argument("--keys", default="*", help="only jobs of config keys matching this glob")
    ap.add_argument("--workers", type=int, default=4, help="jobs run at once (default 4)")
    ap.add_argument("--limit", type=int, default=None, help="at most this many jobs (evenly spread)")
    ap.add_argument("--multinode", action="store_true", help="also multinode jobs whose recipe is a script")
    ap.add_argument("--no-process", action="store_true", help="leave out the workflow's Process result step")
    ap.add_argument("--through", choices=("sweep", "step"), default="sweep",
                    help="run each job through `ci-tools sweep run` (default) or the launch step's own script")
    ap.add_argument("--timeout", type=float, default=90.0, help="seconds a job may run (default 90)")
    ap.add_argument("--keep", type=Path, default=None, help="keep the scratch of each job that disagrees here")
    ap.add_argument("--json", type=Path, default=None, help="write the totals and every disagreement here")
    args = ap.parse_args()

    from ci_tools.config import layout_at, load_config
    from ci_tools.jobs.matrix import expand
    from ci_tools.model.keys import keys_matching
    from ci_tools.model.repository import load_repo
    from ci_tools.revision.snapshot import WorkTreeSnapshot
    from standins.oracle import run_oracle
    from standins.sandbox import unavailable

    reason = unavailable()
    if reason is not None:
        print(reason, file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="bench-oracle-") as scratch:
        root = _tree(args, Path(scratch))
        config = load_config(root)
        snapshot = WorkTreeSnapshot(config.root)
        config = layout_at(config, lambda pattern: [str(p.relative_to(root)) for p in root.glob(pattern)])
        repo = load_repo(snapshot, config, with_changelog=False)
        keys = keys_matching([args.keys], repo.configs) if args.keys != "*" else list(repo.configs)
        jobs = [j for j in expand(repo, keys) if args.multinode or not j.multinode]
        if args.limit is not None and len(jobs) > args.limit:
            step = len(jobs) / args.limit
            jobs = [jobs[int(i * step)] for i in range(args.limit)]
        done = [0]

        def progress(outcome: object) -> None:
            done[0] += 1
            if done[0] % 50 == 0:
                print(f"  {done[0]} of {len(jobs)} jobs", file=sys.stderr, flush=True)

        load = load_average()
        start, before = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
        report = run_oracle(jobs, config, snapshot, root, workers=args.workers, timeout=args.timeout,
                            process=not args.no_process, through=args.through, evaluate_ran=args.ix is not None,
                            keep=args.keep, progress=progress)
        wall, after = time.monotonic() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    totals = report.totals()
    ran = sum(1 for o in report.outcomes if o.exit_code is not None)
    label = f"{args.ix} at {args.rev}" if args.ix else "tests/data/inferencex-843c625 (843c6254f)"
    print(f"bash against recipe show: {label}, keys {args.keys!r}")
    print(f"  jobs                 {totals['jobs']:>6}  ({ran} run in bash, {totals['compared']} reached a server and "
          f"were compared)")
    print(f"  flags stated         {totals['flags_stated']:>6}  equal {totals['flags_equal']} "
          f"({_pct(totals['flags_equal'], totals['flags_stated'])})")
    print(f"  variables stated     {totals['env_stated']:>6}  equal {totals['env_equal']} "
          f"({_pct(totals['env_equal'], totals['env_stated'])})")
    print(f"  servers stated       {totals['servers_stated']:>6}  started {totals['servers_run']}"
          + (f" ({totals['replicas']} more nodes or workers of a role, not compared)" if totals["replicas"] else ""))
    compared_servers = totals["servers_run"] - totals["replicas"]
    print(f"  routers stated       {totals['routers_stated']:>6}  started {totals['routers_run']}; lines bash gave as "
          f"stated {totals['router_lines_identical']}")
    print(f"  server lines bash gave as stated (same flags, order, every known value) {totals['lines_identical']} "
          f"of {compared_servers} ({_pct(totals['lines_identical'], compared_servers)}); of them with every "
          f"value known to ci-tools {totals['lines_identical_known']}")
    print(f"  jobs whose every stated variable is in the server's environment with its value "
          f"{totals['env_jobs_equal']} of {totals['compared']} ({_pct(totals['env_jobs_equal'], totals['compared'])})")
    print(f"  flags bash gave that recipe show does not list at all: {totals['unstated']} (not statements; a "
          f"recipe show line of an unknown flag covers them)")
    if report.evaluated_ran:
        print(f"  ({report.evaluated_ran} jobs evaluated from the recipe bash ran: ci-tools' resolution rules "
              f"are those of 843c6254f)")
    print(f"  jobs with no disagreement {totals['jobs_equal']} of {totals['compared']}; result files "
          f"{totals['result_files']}, processed by utils/process_result.py {totals['processed']}")
    failed = Counter(o.job.config_key for o in report.outcomes if o.exit_code not in (None, 0))
    if args.through == "sweep":
        print(f"  jobs that ended with exit 0 {totals['succeeded']} of {ran}; points in their records "
              f"{totals['points']}, valid {totals['valid_points']}")
    print(f"  {wall:.1f} s wall, {cpu:.1f} s CPU of the jobs' processes ({cpu / max(ran, 1):.2f} s a job), "
          f"{args.workers} at once, {load}")
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for o in report.compared:
        assert o.comparison is not None
        for d in o.comparison.disagreements:
            groups[(o.job.config_key, d.name)].append(f"{o.job.label()}: {d}")
    if groups:
        print("disagreements (config key, name: jobs, first):")
        for (key, name), items in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            print(f"  {len(items):>5}  {key} {name}\n         {items[0]}")
    unknown = Counter(name for o in report.compared if o.comparison for name in o.comparison.unknown)
    print(f"  flags whose value recipe show leaves to run time (no statement): {sum(unknown.values())} "
          f"({', '.join(f'{n} {name}' for name, n in unknown.most_common(8))})")
    if args.through == "step":
        print(f"  variables in a server's environment that the launch step did not start with and recipe show does "
              f"not list (bash's own and Slurm's left out): {totals['env_unstated']}")
    unstated = Counter(f"{o.job.config_key}: {flag.split()[0]}" for o in report.compared if o.comparison
                       for flag in o.comparison.unstated)
    unstated.update(f"{o.job.config_key}: {item.split('=')[0]}" for o in report.compared if o.comparison
                    for item in o.comparison.env_unstated)
    if unstated:
        print("flags and variables recipe show does not list (config key: name, jobs):")
        for what, n in unstated.most_common(20):
            print(f"  {n:>5}  {what}")
    skipped = Counter(_shape(o.skipped) for o in report.outcomes if o.skipped)
    if skipped:
        print("not compared, by reason:")
        for why, n in skipped.most_common():
            print(f"  {n:>5}  {why}")
    if failed:
        print("jobs run that did not end with exit 0 (config key: jobs):")
        for key, n in failed.most_common():
            print(f"  {n:>5}  {key}")
    if args.json:
        args.json.write_text(json.dumps({"tree": label, "totals": totals, "wall": wall, "cpu": cpu,
                                         "failed": dict(failed),
                                         "disagreements": {f"{k} {n}": v for (k, n), v in groups.items()},
                                         "skipped": dict(skipped)}, indent=2) + "\n")
    return 0


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.2f} %" if whole else "-"


def _shape(reason: str) -> str:
    """A reason with its job-specific numbers blanked, so that the same cause counts once."""
    import re

    return re.sub(r"\d+", "N", reason)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    sys.exit(main())
