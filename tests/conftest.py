"""Shared test helpers: the corpus locations and a CLI runner."""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from ci_tools.jobs.job import Job
    from ci_tools.model.repository import RepoData

ROOT = Path(__file__).resolve().parent.parent
# The real InferenceX tree at 843c6254f with its oracles (expected/), committed
# under tests/data with InferenceX's LICENSE and a NOTICE naming the commit:
# the reference every rule and model is measured against.
FULL_CORPUS = ROOT / "tests" / "data" / "inferencex-843c625"
# The three files older tests were written against (AMD master, runners,
# changelog), taken from the full tree into a directory of their own.
_THREE_FILES = ("configs/amd-master.yaml", "configs/runners.yaml", "perf-changelog.yaml")
_three_file_dir: Path | None = None


def _keep_bytecode() -> None:
    """Write bytecode for this process and every Python it starts, even where the environment says not to
    (PYTHONDONTWRITEBYTECODE, set on the developers' machines).

    The suite starts ci-tools (``python -m ci_tools``) and other Python programs in a few hundred processes;
    without bytecode each of them compiles every module of ci-tools it imports again (about 12 s of the suite's
    CPU).  Bytecode goes where Python puts it by default (``__pycache__``, ignored by git), beside the
    installed packages' own, and is checked against its source's time and size, so it is never stale.
    """
    if os.environ.pop("PYTHONDONTWRITEBYTECODE", None):
        sys.dont_write_bytecode = False


_keep_bytecode()


def corpus_dir() -> Path:
    """A read-only directory holding only the AMD master file, runners.yaml and the changelog of the real tree."""
    global _three_file_dir
    if _three_file_dir is None:
        dest = Path(tempfile.mkdtemp(prefix="ix-three-files-"))
        for rel in _THREE_FILES:
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(full_corpus_dir() / rel, dest / rel)
        atexit.register(shutil.rmtree, dest, True)
        _three_file_dir = dest
    return _three_file_dir


def full_corpus_dir() -> Path:
    """The full real InferenceX tree (committed with the tests; never skipped)."""
    if not FULL_CORPUS.is_dir():
        raise FileNotFoundError(f"the real InferenceX tree is missing from the checkout: {FULL_CORPUS}")
    return FULL_CORPUS


@pytest.fixture
def corpus_copy(tmp_path: Path) -> Path:
    """A writable copy of the real InferenceX data, laid out as a repository."""
    dest = tmp_path / "corpus"
    shutil.copytree(corpus_dir(), dest)
    return dest


@pytest.fixture
def full_corpus_copy(tmp_path: Path) -> Path:
    """A writable copy of the full real InferenceX tree (files only, no git history)."""
    dest = tmp_path / "ix"
    shutil.copytree(full_corpus_dir(), dest)
    for path in dest.rglob("*"):  # the shared copy is read-only; tests edit theirs
        path.chmod(path.stat().st_mode | 0o200)
    dest.chmod(dest.stat().st_mode | 0o200)
    return dest



@pytest.fixture(scope="session")
def full_corpus_repo() -> RepoData:
    """The full real tree loaded once per test session (configs, runners; no changelog)."""
    from ci_tools.config import load_config
    from ci_tools.model.repository import load_repo
    from ci_tools.revision.snapshot import WorkTreeSnapshot

    config = load_config(full_corpus_dir())
    return load_repo(WorkTreeSnapshot(config.root), config, with_changelog=False)


@pytest.fixture(scope="session")
def full_corpus_jobs(full_corpus_repo: RepoData) -> list[Job]:
    """Every job of the full real tree (InferenceX's full sweep), expanded once per test session."""
    from ci_tools.jobs.matrix import expand

    return expand(full_corpus_repo)


# The real tree as a git repository.  Defined here rather than in a helper module that test modules import:
# a session fixture imported into a module is a fixture of that module, set up again for each one (it was 20
# commits of the tree per run, some 40,000 files for pytest to create and later prune).
@pytest.fixture(scope="session")
def real_origin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One commit holding the real tree (without the oracles in expected/) on branch main, tagged ``base``.

    A clone (:func:`real_repo`) shares its objects, so a test that edits files pays for a checkout, not for
    committing 800 files again."""
    from fuzzing import make_tree

    return make_tree(tmp_path_factory.mktemp("inferencex") / "origin")


@pytest.fixture
def real_repo(real_origin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A writable clone of :func:`real_origin` (``origin/main`` is its only commit), outside GitHub Actions."""
    from fuzzing import clone
    from test_changelog_support import clear_github_env

    clear_github_env(monkeypatch)
    return clone(real_origin, tmp_path / "ix")


# Edits of what real jobs run after their server, checked for coverage once: the tests reading it run in one group.
CLIENT_EDITS = pytest.mark.xdist_group("real-client-edits")
TRAP_RECIPE = "benchmarks/single_node/agentic/minimaxm3_fp4_b300_mtp.sh"


@pytest.fixture(scope="session")
def real_client_edits(real_origin: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A clone of the real tree with two edits committed, and each config key ``check --select
    coverage-uncovered-key`` finds uncovered -> its finding (JSON): the grace period of the function
    `minimaxm3_fp4_b300_mtp.sh` runs at its end by a trap (it changes how its jobs end), and #2171's override of
    `build_replay_cmd` that keeps its default (it changes no single-node job's client)."""
    import json

    from ci_tools.cli.main import main
    from fuzzing import clone
    from test_changelog_support import clear_github_env, git

    repo = clone(real_origin, tmp_path_factory.mktemp("client-edits") / "ix")
    for path, old, new in ((TRAP_RECIPE, 'stop_background_process_tree "$SERVER_PID" "vLLM server" 60',
                            'stop_background_process_tree "$SERVER_PID" "vLLM server" 120'),
                           ("benchmarks/benchmark_lib.sh", 'REPLAY_CMD+=" --num-dataset-entries 393"',
                            'REPLAY_CMD+=" --num-dataset-entries ${AIPERF_NUM_DATASET_ENTRIES:-393}"')):
        text = (repo / path).read_text(encoding="utf-8")
        assert old in text, (path, old)
        (repo / path).write_text(text.replace(old, new, 1), encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a longer grace period; smoke tests may load fewer traces")
    report = repo.parent / "coverage.json"
    with pytest.MonkeyPatch.context() as monkeypatch:
        clear_github_env(monkeypatch)
        code = main(["check", "--repo", str(repo), "--base", "origin/main", "--format", "json", "--output",
                     str(report), "--select", "coverage-uncovered-key"])
    assert code in (0, 1)
    findings = json.loads(report.read_text(encoding="utf-8"))["findings"]
    return repo, {key: f for f in findings for key in f["data"].get("keys", [f["data"]["key"]])}
