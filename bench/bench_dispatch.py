"""Benchmark: `/run-benchmark` handling on the real InferenceX data.

A throwaway git repository holds the corpus (base = the changelog without its
last entry, head = the whole file).  Measured as whole ``ci-tools``
processes: ``dispatch parse --rev`` resolving a command against the pinned
commit (all configs with ``*``; the appended changelog entry), and
``dispatch comment`` end to end against a minimal local GitHub stand-in (it
answers the REST calls: permission, pull request, branch activity for the
pin, workflow runs for the dispatch key, the dispatch, reactions and the
reply; no validation, that is the tests' job).  The baseline, measured in
the same run, is the naive planner: ``git show`` of the master configs,
``yaml.safe_load`` and fnmatch over their keys.

Run: ``.venv/bin/python bench/bench_dispatch.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "inferencex-843c625-full"
CI_TOOLS = Path(sys.executable).with_name("ci-tools")
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
}
NAIVE = r"""
import fnmatch, subprocess, sys, yaml
keys = []
for name in ("amd-master.yaml", "nvidia-master.yaml"):
    text = subprocess.run(["git", "show", f"{sys.argv[1]}:configs/{name}"], check=True, capture_output=True).stdout
    keys += [k for k in yaml.safe_load(text) if fnmatch.fnmatchcase(k, "*")]
print(len(keys))
"""


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main", *args], cwd=repo,
                          env={**os.environ, **GIT_ENV}, check=True, capture_output=True, text=True).stdout.strip()


def build_repo(tmp: Path) -> tuple[Path, str, str]:
    repo = tmp / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    shutil.copytree(CORPUS / "configs", repo / "configs")
    (repo / ".ci-tools.yaml").write_text("repository: SemiAnalysisAI/InferenceX\ndispatch:\n  max-jobs: 100000\n")
    full = (CORPUS / "perf-changelog.yaml").read_bytes()
    (repo / "perf-changelog.yaml").write_bytes(full)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD")
    # The shape of a typical AMD PR: one appended entry for the MI355X configs of one model.
    entry = (b'\n- config-keys:\n    - dsr1-fp4-mi355x-*\n  description:\n    - "Bench entry."\n'
             b"  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/XXX\n")
    (repo / "perf-changelog.yaml").write_bytes(full + entry)
    git(repo, "commit", "-q", "-am", "append one entry")
    return repo, base, git(repo, "rev-parse", "HEAD")


class StandIn(BaseHTTPRequestHandler):
    """Just enough of GitHub for one `dispatch comment` run."""

    pull: dict[str, Any] = {}

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        return

    def _send(self, status: int, payload: Any) -> None:
        data = b"" if payload is None else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802
        if self.path.endswith("/permission"):
            self._send(200, {"permission": "admin", "role_name": "admin"})
        elif "/pulls/" in self.path:
            self._send(200, self.pull)
        elif "/activity?" in self.path:
            # The head branch was created on the head commit before the comment.
            self._send(200, [{"before": "0" * 40, "after": self.pull["head"]["sha"], "activity_type": "branch_creation",
                              "timestamp": "2026-01-01T00:00:00Z", "actor": {"login": "author"}}])
        elif "/runs?" in self.path:
            self._send(200, {"total_count": 0, "workflow_runs": []})
        else:
            self._send(200, [])

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._send(204 if self.path.endswith("/dispatches") else 201, None if self.path.endswith("/dispatches")
                   else {"id": 1, "html_url": "https://example.invalid/c/1"})

    do_PATCH = do_POST


def measure(argv: list[str], cwd: Path, runs: int, env: dict[str, str]) -> tuple[float, float, float, int]:
    """(median wall s, min wall s, median CPU s, peak RSS KiB): CPU time is steadier on a loaded machine."""
    times: list[float] = []
    cpu: list[float] = []
    peak = 0
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        times.append(time.perf_counter() - start)
        cpu.append(usage.ru_utime + usage.ru_stime)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"{' '.join(argv)} failed")
        peak = max(peak, usage.ru_maxrss)
    return statistics.median(times), min(times), statistics.median(cpu), peak


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    if not CORPUS.is_dir():
        print(f"corpus not found at {CORPUS}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        repo, base, head = build_repo(Path(tmp))
        StandIn.pull = {"state": "open", "draft": False, "merged": False,
                        "head": {"sha": head, "ref": "amd-update", "repo": {"full_name": "SemiAnalysisAI/InferenceX"}},
                        "base": {"sha": base, "repo": {"full_name": "SemiAnalysisAI/InferenceX"}}}
        server = ThreadingHTTPServer(("127.0.0.1", 0), StandIn)
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()
        event = Path(tmp) / "event.json"
        event.write_text(json.dumps({
            "action": "created", "repository": {"full_name": "SemiAnalysisAI/InferenceX"},
            "issue": {"number": 1, "pull_request": {"url": "x"}},
            "comment": {"id": 1, "body": "/run-benchmark changelog", "created_at": "2026-02-01T00:00:00Z",
                        "user": {"login": "maintainer", "type": "User"}}}))
        keys_event = Path(tmp) / "event-keys.json"
        payload = json.loads(event.read_text())
        payload["comment"]["body"] = "/run-benchmark dsr1-fp4-mi355x-*"
        keys_event.write_text(json.dumps(payload))
        env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
        env_gh = {**env, "GITHUB_API_URL": f"http://127.0.0.1:{server.server_address[1]}", "GITHUB_TOKEN": "t"}
        rows = [
            ("dispatch parse --rev: every config (`*`)",
             [str(CI_TOOLS), "dispatch", "parse", "--rev", head, "/run-benchmark *"], env),
            ("dispatch parse --rev --base: `changelog`",
             [str(CI_TOOLS), "dispatch", "parse", "--rev", head, "--base", base, "/run-benchmark changelog"], env),
            ("dispatch comment, end to end (`changelog`)",
             [str(CI_TOOLS), "dispatch", "comment", "--event", str(event), "--no-fetch"], env_gh),
            ("dispatch comment, end to end (`dsr1-fp4-mi355x-*`)",
             [str(CI_TOOLS), "dispatch", "comment", "--event", str(keys_event), "--no-fetch"], env_gh),
            ("baseline: git show + yaml.safe_load + fnmatch", [sys.executable, "-c", NAIVE, head], env),
            ("baseline: python startup", [sys.executable, "-c", "pass"], env),
        ]
        # Measure the path that dispatches, not a refusal.
        for _, argv, _ in rows[2:4]:
            once = subprocess.run(argv, cwd=repo, env=env_gh, capture_output=True, text=True, check=False)
            if not once.stdout.startswith("dispatched: "):
                raise SystemExit(f"dispatch comment did not dispatch: {once.stdout}{once.stderr}")
        print(f"real corpus {CORPUS.name} ({len(list((CORPUS / 'configs').glob('*-master.yaml')))} master file(s)), "
              f"{args.runs} runs each")
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        print(f"{'command':<52} {'median s':>9} {'min s':>7} {'CPU s':>7} {'peak RSS MiB':>13}")
        for name, argv, run_env in rows:
            median, fastest, cpu, rss = measure(argv, repo, args.runs, run_env)
            print(f"{name:<52} {median:>9.3f} {fastest:>7.3f} {cpu:>7.3f} {rss / 1024:>13.1f}")
        server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
