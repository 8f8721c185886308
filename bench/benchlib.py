"""What every benchmark here needs: measuring a process, git, another ci-tools build, a side-by-side table.

Each benchmark is a script run by hand (``.venv/bin/python bench/<name>.py``);
these helpers keep the measuring the same everywhere:

- wall time from this process, CPU time (user + system of the process and the
  children it waited for) from ``wait4``;
- peak RSS of the measured process alone, reported by GNU time (``-f %M``):
  ``wait4`` on a child forked from this Python process counts this process's
  pages too (Linux keeps the high-water mark across ``fork`` and ``exec``), so
  a benchmark that grew large would inflate every later figure;
- medians over runs (the fastest and slowest run are kept as well), after a
  warm-up run that writes the compiled-module cache as an installed tool has it;
- one table for every script: each row beside its baseline, with the ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parent.parent
# The real InferenceX tree at 843c6254f, committed with the tests (tests/data/inferencex-843c625/NOTICE).
FULL_CORPUS = ROOT / "tests" / "data" / "inferencex-843c625"
# Benchmarks that need only the configs and the changelog read them from the same tree.
CORPUS = FULL_CORPUS
# The ci-tools executable beside this Python (the build under measurement) and the same as a module.
CI_TOOLS = str(Path(sys.executable).with_name("ci-tools"))
THIS_BUILD = (sys.executable, "-m", "ci_tools")
# Fixed identities and dates: a benchmark repository gets the same commit ids on every run.
GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
           "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid",
           "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
GNU_TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None
OK_EXITS = (0, 1)  # 1: findings were reported, which is a normal outcome of the commands measured

T = TypeVar("T")


# --- the command line every benchmark shares ----------------------------------------------------------------


def bench_arguments(doc: str | None, runs: int | None = None, *, ci_tools: bool = False,
                    baseline_rev: str | None = None) -> argparse.ArgumentParser:
    """The options benchmarks share: ``--runs`` (with its default), ``--ci-tools`` (the executable measured),
    ``--baseline-rev`` and ``--no-baseline`` (ci-tools as it was at a revision, run beside this build)."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0] if doc else None)
    if runs is not None:
        parser.add_argument("--runs", type=int, default=runs, help=f"Runs per measurement (default {runs}).")
    if ci_tools:
        parser.add_argument("--ci-tools", default=CI_TOOLS,
                            help="ci-tools executable to measure (default: the one beside this Python)")
    if baseline_rev is not None:
        parser.add_argument("--baseline-rev", default=baseline_rev,
                            help=f"The ci-tools revision to run beside this one (default {baseline_rev}).")
        parser.add_argument("--no-baseline", action="store_true", help="Do not run a previous revision.")
    return parser


def require(*paths: Path) -> None:
    """Stop the benchmark (exit 2, the reason on stderr) when data it measures is not there."""
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        print(f"not found: {', '.join(missing)} (the real tree or a corpus this benchmark reads)", file=sys.stderr)
        raise SystemExit(2)


def read_report(path: Path) -> Any:
    """The JSON report a `--report FILE` option names; exit 2 with what was wrong when it is missing or not JSON."""
    require(path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        print(f"{path}: not a JSON report of `ci-tools claims --history --format json` ({exc})", file=sys.stderr)
        raise SystemExit(2) from None


# --- measuring ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    """One run: wall seconds, CPU seconds, peak RSS in KiB (None where it was not measured)."""

    wall_s: float
    cpu_s: float
    peak_rss_kib: int | None = None


@dataclass(frozen=True)
class Measurement:
    """Several runs of one thing: median wall and CPU seconds, the largest peak RSS, the fastest and slowest wall."""

    wall_s: float
    cpu_s: float
    peak_rss_kib: int | None
    fastest_s: float
    slowest_s: float
    runs: int

    @classmethod
    def of(cls, samples: Sequence[Sample]) -> Measurement:
        if not samples:
            raise ValueError("a measurement needs at least one run")
        walls = [s.wall_s for s in samples]
        peaks = [s.peak_rss_kib for s in samples if s.peak_rss_kib is not None]
        return cls(wall_s=statistics.median(walls), cpu_s=statistics.median(s.cpu_s for s in samples),
                   peak_rss_kib=max(peaks) if peaks else None, fastest_s=min(walls), slowest_s=max(walls),
                   runs=len(samples))

    @property
    def peak_rss_mib(self) -> float | None:
        return None if self.peak_rss_kib is None else self.peak_rss_kib / 1024


def pinned(cmd: Sequence[str]) -> list[str]:
    """``cmd`` bound to the first core (``taskset -c 0``) where taskset exists: figures free of core migration."""
    taskset = shutil.which("taskset")
    return [taskset, "-c", "0", *cmd] if taskset else list(cmd)


def tool_env(pycache: Path | None = None, **extra: str) -> dict[str, str]:
    """The environment of an installed tool outside CI: no ``GITHUB_*`` variables (they change what ci-tools
    does), compiled modules cached (pip compiles them at install; ``pycache``: where, for a build outside
    the work tree), plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_") and k != "PYTHONDONTWRITEBYTECODE"}
    if pycache is not None:
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    return {**env, **extra}


def run_once(cmd: Sequence[str], cwd: Path | None = None, env: Mapping[str, str] | None = None,
             ok: Sequence[int] = OK_EXITS, pin: bool = False) -> Sample:
    """One run of ``cmd`` as its own process; an exit code outside ``ok`` stops the benchmark with its stderr."""
    with tempfile.NamedTemporaryFile("w+b") as rss_file, tempfile.TemporaryFile("w+b") as err:
        argv = [GNU_TIME, "-f", "%M", "-o", rss_file.name, *cmd] if GNU_TIME else list(cmd)
        argv = pinned(argv) if pin else argv
        start = time.perf_counter()
        # stderr to a file, not a pipe: a chatty command would fill the pipe and block while nobody reads it.
        proc = subprocess.Popen(argv, cwd=cwd, env=None if env is None else dict(env), stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
        if code not in ok:
            err.seek(0)
            raise SystemExit(f"{' '.join(cmd)} exited {code}: {err.read().decode(errors='replace')[-2000:]}")
        # GNU time writes "Command exited with non-zero status N" before the figure when the command fails.
        peak = int(rss_file.read().split()[-1]) if GNU_TIME else usage.ru_maxrss
    return Sample(wall, usage.ru_utime + usage.ru_stime, peak)


def measure(cmd: Sequence[str], runs: int, cwd: Path | None = None, env: Mapping[str, str] | None = None,
            ok: Sequence[int] = OK_EXITS, pin: bool = False, warmup: bool = True) -> Measurement:
    """``runs`` runs of ``cmd`` (after one uncounted warm-up run unless ``warmup`` is false)."""
    return measure_each([cmd], runs, cwd, env, ok, pin, warmup)[0]


def measure_each(cmds: Sequence[Sequence[str]], runs: int, cwd: Path | None = None,
                 env: Mapping[str, str] | None = None, ok: Sequence[int] = OK_EXITS, pin: bool = False,
                 warmup: bool = True) -> list[Measurement]:
    """The commands round-robin, ``runs`` rounds: a change of the machine's load hits each of them alike."""
    if warmup:
        for cmd in cmds:
            run_once(cmd, cwd, env, ok, pin)
    samples: list[list[Sample]] = [[] for _ in cmds]
    for _ in range(runs):
        for i, cmd in enumerate(cmds):
            samples[i].append(run_once(cmd, cwd, env, ok, pin))
    return [Measurement.of(s) for s in samples]


def measure_call(call: Callable[[], T]) -> tuple[T, Sample]:
    """``call()`` in this process: its result, wall seconds and CPU seconds (this process's and those of the
    processes it waited for meanwhile); no RSS: this process holds more than the call."""
    start, cpu = time.perf_counter(), _cpu_with_children()
    result = call()
    return result, Sample(time.perf_counter() - start, _cpu_with_children() - cpu)


def _cpu_with_children() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def driver_reports(cmd: Sequence[str], runs: int, cwd: Path | None = None, pin: bool = False) -> list[Any]:
    """``runs`` runs of a driver that measures inside its own process and prints its figures as JSON on its
    last line of output; the parsed figures of each run."""
    reports = []
    for _ in range(runs):
        done = subprocess.run(pinned(cmd) if pin else list(cmd), capture_output=True, text=True, cwd=cwd)
        if done.returncode != 0:
            raise SystemExit(f"driver failed ({' '.join(cmd[:3])} ...):\n{done.stderr[-2000:]}")
        reports.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return reports


def median_of(reports: Iterable[Mapping[str, Any]], key: str) -> float:
    return float(statistics.median(float(r[key]) for r in reports))


# --- git and other builds ----------------------------------------------------------------------------------


def git(repo: Path, *args: str, stdin: bytes | None = None) -> str:
    """``git -C repo ARGS`` with a fixed identity and no user configuration; its output, stripped."""
    done = subprocess.run(["git", "-C", str(repo), "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main",
                           *args], input=stdin, capture_output=True, env=GIT_ENV, check=False)
    if done.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} in {repo} failed: {done.stderr.decode(errors='replace')[-2000:]}")
    return done.stdout.decode(errors="replace").strip()


def file_at(repo: Path, rev: str, path: str) -> str | None:
    """The text of ``path`` at ``rev`` of ``repo``; None where the revision or the file is not there."""
    done = subprocess.run(["git", "-C", str(repo), "show", f"{rev}:{path}"], capture_output=True, env=GIT_ENV,
                          check=False)
    return done.stdout.decode(errors="replace") if done.returncode == 0 else None


def extract(repo: Path, rev: str, dest: Path, paths: Sequence[str]) -> None:
    """The files of ``paths`` (those present at ``rev``) as they are at ``rev`` of ``repo``, written below ``dest``."""
    present = [p for p in paths if git(repo, "ls-tree", "--name-only", rev, p)]
    dest.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "-C", str(repo), "archive", rev, *present], capture_output=True, env=GIT_ENV,
                             check=False)
    if archive.returncode != 0:
        raise SystemExit(f"git archive {rev} failed: {archive.stderr.decode(errors='replace')[-2000:]}")
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)


@dataclass(frozen=True)
class Build:
    """ci-tools as it was at a revision of this repository: its code below ``root``, run by ``command``."""

    rev: str
    root: Path
    command: tuple[str, ...]

    @property
    def label(self) -> str:
        return f"ci-tools@{self.rev[:12]}"


def ci_tools_at(rev: str, dest: Path) -> Build:
    """ci-tools's code at ``rev`` of this repository extracted to ``dest`` (removed with it), run by the same
    interpreter and libraries.

    ``-P``: without it Python puts the working directory first on the path, and a benchmark started from
    this repository's root would run this build's ci_tools under the baseline's name.
    """
    extract(ROOT, rev, dest, ("ci_tools", "schemas"))
    return Build(rev, dest, ("env", f"PYTHONPATH={dest}", sys.executable, "-P", "-m", "ci_tools"))


def merge_base_with_main() -> str:
    """The default previous implementation: where this branch left ``main``; on ``main`` itself (where that is
    HEAD, and a build would be compared with itself) the commit before HEAD."""
    base = git(ROOT, "merge-base", "HEAD", "main")
    return git(ROOT, "rev-parse", "HEAD~1") if base == git(ROOT, "rev-parse", "HEAD") else base


def committed_tree(dest: Path, source: Path = FULL_CORPUS) -> str:
    """A git repository at ``dest`` holding ``source`` without its oracles (``expected/``), committed once;
    returns the commit's id."""
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("expected"))
    for path in [dest, *dest.rglob("*")]:
        path.chmod(path.stat().st_mode | 0o200)
    git(dest, "init", "-q")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "base")
    return git(dest, "rev-parse", "HEAD")


def clone(source: Path, dest: Path, rev: str | None = None) -> Path:
    """A throwaway clone of ``source`` at ``dest`` (checked out at ``rev``): the source is never written."""
    git(dest.parent, "clone", "-q", str(source), str(dest))
    if rev is not None:
        git(dest, "checkout", "-q", rev)
    return dest


# --- reporting ---------------------------------------------------------------------------------------------


def load_average() -> str:
    """The line every benchmark prints first: figures are noisy on a busy machine."""
    return f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs"


def ratio(value: float, baseline: float) -> str:
    """``value`` as a multiple of ``baseline`` (``0.42x``: this takes 0.42 of the baseline's time)."""
    if baseline <= 0:
        return "n/a"
    shown = value / baseline
    return f"{shown:.2f}x" if shown < 100 else f"{shown:.0f}x"


@dataclass(frozen=True)
class Table:
    """Rows of measurements, each optionally beside its baseline: median wall, fastest wall, median CPU, peak
    RSS, and CPU time as a multiple of the baseline's (CPU time moves far less with the machine's load)."""

    label_width: int = 52

    def header(self) -> str:
        return (f"{'':<{self.label_width}} {'wall s':>8} {'min s':>8} {'cpu s':>8} {'peak MiB':>9} "
                f"{'cpu vs baseline':>16}")

    def row(self, label: str, measured: Measurement | Sample, baseline: Measurement | Sample | None = None,
            note: str = "") -> str:
        fastest = measured.fastest_s if isinstance(measured, Measurement) else measured.wall_s
        rss = measured.peak_rss_kib
        versus = "" if baseline is None else ratio(measured.cpu_s, baseline.cpu_s)
        line = (f"{label:<{self.label_width}} {measured.wall_s:>8.3f} {fastest:>8.3f} {measured.cpu_s:>8.3f} "
                f"{'-' if rss is None else f'{rss / 1024:.1f}':>9} {versus:>16}")
        return f"{line}  {note}" if note else line

    def print_header(self, title: str = "") -> None:
        if title:
            print(title)
        print(self.header(), flush=True)

    def print_row(self, label: str, measured: Measurement | Sample, baseline: Measurement | Sample | None = None,
                  note: str = "") -> None:
        print(self.row(label, measured, baseline, note), flush=True)
