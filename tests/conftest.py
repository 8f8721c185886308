"""Shared test helpers: the corpus location and a CLI runner."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "inferencex-843c625"


def corpus_dir() -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"real-data corpus not found at {CORPUS}")
    return CORPUS


@pytest.fixture
def corpus_copy(tmp_path: Path) -> Path:
    """A writable copy of the real InferenceX data, laid out as a repository."""
    dest = tmp_path / "corpus"
    shutil.copytree(corpus_dir(), dest)
    return dest
