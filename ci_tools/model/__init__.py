"""The repository's data, loaded with positions from one snapshot."""

from __future__ import annotations

from .repository import ConfigEntry, LoadedFile, RepoData, load_repo

__all__ = ["ConfigEntry", "LoadedFile", "RepoData", "load_repo"]
