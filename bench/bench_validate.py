"""Benchmark of ``ci-tools validate``: whole process, median wall time and peak RSS.

Repositories measured (built in a temporary directory):

- ``corpus``: the real InferenceX data in ../shared/corpus (52 KB of master
  configs, runners.yaml, a 395 KB changelog of 772 entries);
- ``public-size``: the corpus with its master configs grown to about 370 KB
  (the size of the public repository's two master files, about 400 configs
  here), same changelog;
- ``masters-only``: the public-size master configs and runners.yaml without
  a changelog: the cost of the master configs alone;
- ``10x``: every governed file ten times the corpus (528 KB of master
  configs, a 3.9 MB changelog of 7,720 entries).

Each gets an empty recipe script for every job (the corpus has none; a real
repository does), so that validate reports what such a repository would: the
two undefined runner labels of the data, repeated per copy.  Each is validated
by a fresh ``ci-tools validate`` process (all rules; the report goes to a
file), several runs; the
baseline is a fresh Python process that only loads the same YAML files with
PyYAML's libyaml ``CSafeLoader`` (no positions, no validation).

With ``--large``: the full InferenceX tree (../shared/corpus/
inferencex-843c625-full) with copies of its changelog's history appended
until it is 50 MB, validated with the default limits (the file is measured,
not read: one `file-too-large` finding) and with ``limits.max-file-bytes``
raised to 1 GiB (the whole file parsed with positions, what validate did
before the limit), beside the CSafeLoader baseline on the same files.

Run: ``.venv/bin/python bench/bench_validate.py [--runs N] [--large | --only-large]``
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "inferencex-843c625"
FULL_CORPUS = ROOT.parent / "shared" / "corpus" / "inferencex-843c625-full"
CI_TOOLS = Path(sys.executable).with_name("ci-tools")
TOP_KEY = re.compile(r"^([A-Za-z0-9][^\s:#]*):[ \t]*$", re.M)
FILES = ("configs/amd-master.yaml", "configs/nvidia-master.yaml", "configs/runners.yaml", "perf-changelog.yaml")

BASELINE = """
import sys, yaml
for path in sys.argv[1:]:
    with open(path, 'rb') as f:
        yaml.load(f.read().decode('utf-8'), Loader=yaml.CSafeLoader)
"""


def _grow_master(text: str, copies: int) -> str:
    """``copies`` copies of a master file, config keys made unique per copy."""
    parts = [text] + [TOP_KEY.sub(lambda m, i=i: f"{m.group(1)}-gen{i}:", text) for i in range(1, copies)]
    return "\n".join(parts)


def add_recipes(repo: Path) -> int:
    """An (empty) recipe script at the first candidate path of every job.

    The corpus carries no scripts; a real repository does, and validate then
    reports only the data's real defects instead of a recipe-missing finding
    per row.  Returns the number of scripts written.
    """
    sys.path.insert(0, str(ROOT))
    from ci_tools.config import load_config
    from ci_tools.contract import recipe_candidates
    from ci_tools.matrix import expand
    from ci_tools.model.repository import load_repo
    from ci_tools.snapshot import WorkTreeSnapshot

    config = load_config(repo)
    paths = {recipe_candidates(job, config)[0] for job in expand(load_repo(WorkTreeSnapshot(config.root), config))}
    for rel in paths:
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text("#!/usr/bin/env bash\n", encoding="utf-8")
    return len(paths)


def build(dest: Path, master_copies: int, changelog_copies: int, split: bool) -> Path:
    """A copy of the corpus with grown master configs and changelog (0 copies: no changelog)."""
    shutil.copytree(CORPUS, dest)
    master = (CORPUS / "configs" / "amd-master.yaml").read_text(encoding="utf-8")
    grown = _grow_master(master, master_copies)
    if split:
        # Two master files, like the public repository (AMD and NVIDIA).
        half = master_copies // 2
        (dest / "configs" / "amd-master.yaml").write_text(_grow_master(master, half), encoding="utf-8")
        other = TOP_KEY.sub(lambda m: f"{m.group(1)}-nv:", _grow_master(master, master_copies - half))
        (dest / "configs" / "nvidia-master.yaml").write_text(other, encoding="utf-8")
    else:
        (dest / "configs" / "amd-master.yaml").write_text(grown, encoding="utf-8")
    changelog = (CORPUS / "perf-changelog.yaml").read_text(encoding="utf-8")
    if changelog_copies:
        (dest / "perf-changelog.yaml").write_text("\n".join([changelog] * changelog_copies), encoding="utf-8")
    else:
        (dest / "perf-changelog.yaml").unlink()
    # In a child process: this process stays small, so the children it forks
    # for the measurements do not inherit its memory in their peak RSS.
    subprocess.run([sys.executable, __file__, "--add-recipes", str(dest)], check=True)
    return dest


def measure(argv: list[str], runs: int) -> tuple[float, float, int, float]:
    """(median wall s, min wall s, peak RSS KiB, median CPU s) over the runs.

    CPU time (user + system) is printed beside wall time because wall time
    includes waiting for a core when the machine is busy.
    """
    walls, cpus, peak = [], [], 0
    # Bytecode caching as on a user's machine (a warm-up run writes the .pyc files).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        walls.append(time.perf_counter() - start)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"{argv[0]} failed with exit code {proc.returncode}: {proc.stderr.read().decode() if proc.stderr else ''}")
        if proc.stderr:
            proc.stderr.close()
        peak = max(peak, usage.ru_maxrss)
        cpus.append(usage.ru_utime + usage.ru_stime)
    return statistics.median(walls), min(walls), peak, statistics.median(cpus)


def sizes(repo: Path) -> tuple[int, int]:
    master = sum(p.stat().st_size for p in (repo / "configs").glob("*-master.yaml"))
    changelog = repo / "perf-changelog.yaml"
    return master, changelog.stat().st_size if changelog.exists() else 0


def build_large(dest: Path, size: int) -> Path:
    """The full real tree with its changelog grown past ``size`` bytes by copies of its history."""
    shutil.copytree(FULL_CORPUS, dest, ignore=shutil.ignore_patterns("expected"))
    for path in [dest, *dest.rglob("*")]:
        path.chmod(path.stat().st_mode | 0o200)
    history = (dest / "perf-changelog.yaml").read_bytes()
    body = history[history.index(b"\n- config-keys:") + 1:]
    grown = bytearray(history)
    while len(grown) < size:
        grown += b"\n" + body
    (dest / "perf-changelog.yaml").write_bytes(bytes(grown))
    return dest


def large(tool: str, runs: int, tmp: Path) -> None:
    repo = build_large(tmp / "large", 50 * 1000 * 1000)
    report = tmp / "large-report.json"
    size = (repo / "perf-changelog.yaml").stat().st_size
    files = [str(repo / f) for f in FILES]
    print(f"\nthe real tree with a {size / 1e6:.1f} MB changelog ({runs} run(s) each, the raised limit 1 run)")
    default = measure([tool, "validate", "--repo", str(repo), "--format", "json", "--output", str(report)], runs)
    (repo / ".ci-tools.yaml").write_text("limits:\n  max-file-bytes: 1073741824\n", encoding="utf-8")
    raised = measure([tool, "validate", "--repo", str(repo), "--format", "json", "--output", str(report)], 1)
    base = measure([sys.executable, "-c", BASELINE, *files], 1)
    for name, (wall, _fastest, rss, cpu) in (("validate, default limits (8 MiB)", default),
                                             ("validate, limit raised to 1 GiB", raised),
                                             ("baseline: CSafeLoader, same files", base)):
        print(f"{name:<36} wall {wall:>7.2f}s  cpu {cpu:>7.2f}s  peak RSS {rss / 1024:>7.0f} MiB")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--ci-tools", default=str(CI_TOOLS),
                        help="ci-tools executable to measure (default: the one beside this Python)")
    parser.add_argument("--add-recipes", metavar="DIR", help=argparse.SUPPRESS)
    parser.add_argument("--large", action="store_true", help="Also validate the real tree with a 50 MB changelog.")
    parser.add_argument("--only-large", action="store_true", help="Only the 50 MB case of --large.")
    args = parser.parse_args()
    if args.add_recipes:
        add_recipes(Path(args.add_recipes))
        return 0
    if not CORPUS.is_dir():
        print(f"corpus not found at {CORPUS}", file=sys.stderr)
        return 2
    if (args.large or args.only_large) and not FULL_CORPUS.is_dir():
        print(f"full corpus not found at {FULL_CORPUS}", file=sys.stderr)
        return 2
    if args.only_large:
        with tempfile.TemporaryDirectory() as tmp:
            large(args.ci_tools, args.runs, Path(tmp))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        repos = {
            "corpus": build(Path(tmp) / "corpus", 1, 1, split=False),
            "public-size": build(Path(tmp) / "public", 7, 1, split=True),
            "masters-only": build(Path(tmp) / "masters", 7, 0, split=True),
            "10x": build(Path(tmp) / "ten", 10, 10, split=False),
        }
        report = Path(tmp) / "report.json"
        header = (f"{'repository':<12} {'master KB':>9} {'changelog KB':>12} | {'validate wall':>13} {'min':>7} "
                  f"{'cpu':>7} {'peak RSS':>9} | {'baseline wall':>13} {'cpu':>7} {'peak RSS':>9}")
        print(f"ci-tools: {args.ci_tools}; load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
        print(header)
        print("-" * len(header))
        results = {}
        for name, repo in repos.items():
            master, changelog = sizes(repo)
            files = [str(repo / f) for f in FILES if (repo / f).exists()]
            tool = measure([args.ci_tools, "validate", "--repo", str(repo), "--format", "json", "--output", str(report)], args.runs)
            base = measure([sys.executable, "-c", BASELINE, *files], args.runs)
            results[name] = (master + changelog, tool[3])
            print(f"{name:<12} {master / 1000:>9.0f} {changelog / 1000:>12.0f} | {tool[0]:>12.3f}s {tool[1]:>6.3f}s "
                  f"{tool[3]:>6.3f}s {tool[2] / 1024:>6.1f}MiB | {base[0]:>12.3f}s {base[3]:>6.3f}s {base[2] / 1024:>6.1f}MiB")
        startup = measure([args.ci_tools, "--version"], args.runs)
        print(f"\nci-tools --version (process start-up and CLI import): wall {startup[0]:.3f}s, cpu {startup[3]:.3f}s, "
              f"peak RSS {startup[2] / 1024:.1f}MiB")
        (small_bytes, small_t), (big_bytes, big_t) = results["corpus"], results["10x"]
        per_mb_small = (small_t - startup[3]) / (small_bytes / 1e6)
        per_mb_big = (big_t - startup[3]) / (big_bytes / 1e6)
        print(f"cpu time per MB of input beyond start-up: corpus {per_mb_small:.3f}s/MB, 10x {per_mb_big:.3f}s/MB "
              f"(ratio {per_mb_big / per_mb_small:.2f}; 1.0 is linear)")
        if args.large:
            large(args.ci_tools, args.runs, Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
