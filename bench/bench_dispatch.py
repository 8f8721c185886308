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

import json
import shutil
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import CI_TOOLS, Table, bench_arguments, git, load_average, measure, require, tool_env  # noqa: E402
from benchlib import FULL_CORPUS as CORPUS  # noqa: E402

NAIVE = r"""
import fnmatch, subprocess, sys, yaml
keys = []
for name in ("amd-master.yaml", "nvidia-master.yaml"):
    text = subprocess.run(["git", "show", f"{sys.argv[1]}:configs/{name}"], check=True, capture_output=True).stdout
    keys += [k for k in yaml.safe_load(text) if fnmatch.fnmatchcase(k, "*")]
print(len(keys))
"""


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


def main() -> int:
    args = bench_arguments(__doc__, runs=9).parse_args()
    require(CORPUS)
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
        env = tool_env(Path(tmp) / "pycache")
        env_gh = {**env, "GITHUB_API_URL": f"http://127.0.0.1:{server.server_address[1]}", "GITHUB_TOKEN": "t"}
        rows = [
            ("dispatch parse --rev: every config (`*`)",
             [CI_TOOLS, "dispatch", "parse", "--rev", head, "/run-benchmark *"], env),
            ("dispatch parse --rev --base: `changelog`",
             [CI_TOOLS, "dispatch", "parse", "--rev", head, "--base", base, "/run-benchmark changelog"], env),
            ("dispatch comment, end to end (`changelog`)",
             [CI_TOOLS, "dispatch", "comment", "--event", str(event), "--no-fetch"], env_gh),
            ("dispatch comment, end to end (`dsr1-fp4-mi355x-*`)",
             [CI_TOOLS, "dispatch", "comment", "--event", str(keys_event), "--no-fetch"], env_gh),
            ("baseline: git show + yaml.safe_load + fnmatch", [sys.executable, "-c", NAIVE, head], env),
            ("baseline: python startup", [sys.executable, "-c", "pass"], env),
        ]
        # Measure the path that dispatches, not a refusal.
        for _, argv, _ in rows[2:4]:
            once = subprocess.run(argv, cwd=repo, env=env_gh, capture_output=True, text=True, check=False)
            if not once.stdout.startswith("dispatched: "):
                raise SystemExit(f"dispatch comment did not dispatch: {once.stdout}{once.stderr}")
        print(f"real corpus {CORPUS.name} ({len(list((CORPUS / 'configs').glob('*-master.yaml')))} master file(s)), "
              f"{args.runs} runs each; {load_average()}")
        measured = [(name, measure(argv, args.runs, repo, run_env, ok=(0,))) for name, argv, run_env in rows]
        baseline = dict(measured)["baseline: git show + yaml.safe_load + fnmatch"]
        table = Table()
        table.print_header()
        for name, got in measured:
            table.print_row(name, got, None if name.startswith("baseline") else baseline)
        server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
