"""The suite's xdist groups hold: tests marked with one ``xdist_group`` run on one worker.

The multinode tests (``standin-nodes``) bind the nodes' addresses at the ports their recipes give, and the bash
oracle's sample is shared by the tests of ``bash-oracle-sample``: both rely on ``--dist loadgroup``.  pytest 9.2
made that mode a silent no-op (its structured node ids drop the group xdist writes into them,
pytest-dev/pytest-xdist#1386); this runs a small suite of its own under the interpreter and plugins the suite
runs with and checks where each test ran.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SUITE = '''
import os
import pytest

GROUP = pytest.mark.xdist_group("one-worker")


def record(name: str) -> None:
    with open(os.environ["WHERE"], "a") as out:
        out.write(f"{name} {os.environ['PYTEST_XDIST_WORKER']}\\n")


@GROUP
@pytest.mark.parametrize("n", range(6))
def test_grouped(n: int) -> None:
    record(f"grouped{n}")


@pytest.mark.parametrize("n", range(6))
def test_free(n: int) -> None:
    record(f"free{n}")
'''


def test_tests_of_one_group_run_on_one_worker(tmp_path: Path) -> None:
    (tmp_path / "test_grouped.py").write_text(SUITE, encoding="utf-8")
    where = tmp_path / "where.txt"
    # (a basetemp of its own: the default one would make it prune the outer run's temporary directories)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2",
                           "--dist", "loadgroup", "-o", "addopts=", f"--basetemp={tmp_path / 'inner'}",
                           str(tmp_path / "test_grouped.py")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**_env(), "WHERE": str(where)})
    assert done.returncode == 0, done.stdout + done.stderr
    ran = dict(line.split() for line in where.read_text(encoding="utf-8").splitlines())
    assert len(ran) == 12
    grouped = {worker for name, worker in ran.items() if name.startswith("grouped")}
    assert len(grouped) == 1, f"the group's tests ran on {sorted(grouped)}: --dist loadgroup does not group"
    assert len(set(ran.values())) == 2  # the free tests were spread: both workers ran


def _env() -> dict[str, str]:
    """This process's environment without the variables xdist sets for the worker running this test."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
