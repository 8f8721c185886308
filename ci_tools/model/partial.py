"""Master configs loaded for a few config keys only, for replays over many revisions.

A master file is a mapping whose keys start at column 0, one config per key;
master files of a benchmark repository are hundreds of kilobytes, and a
changelog entry is about a handful of keys.  Splitting the text at its
top-level keys costs a line scan; parsing only the configs an entry names,
each behind as many empty lines as precede it (so every position is one of
the whole file), costs a few milliseconds instead of a full parse.

The split is only trusted on a plain layout: every line at column 0 is a
``key:`` line, a comment, blank or a document marker.  Anything else (a flow
mapping, a key with an inline value, anchors shared between configs that a
piece cannot resolve alone) falls back to loading the whole repository, so
the result is always the one a full load gives for those keys.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from ..bounded import LeastRecentlyStored
from ..config import ProjectConfig
from ..config.limits import limits_of
from ..findings import Finding
from ..revision.snapshot import Snapshot, content_id
from ..revision.yamlpos import LoadedYaml, PosMap, YamlLoadError, load_yaml
from .keys import keys_matching
from .repository import (
    ConfigEntry,
    LoadedFile,
    RepoData,
    _load_file,
    load_repo,
    master_paths,
)

_KEY_LINE = re.compile(r"""^(?P<key>[A-Za-z0-9_.+-]+|"[^"\\]*"|'[^']*'):[ \t]*(?:#.*)?$""")


@dataclass(frozen=True)
class _Piece:
    key: str
    start: int  # 1-based first line
    end: int  # 1-based last line (inclusive)


# The newline before each line that starts at column 0 with something other than a blank or a comment (a
# literal "\n" first, which the regex engine finds by a fast scan; a "^" with re.M is tried at every character).
_AT_COLUMN_0 = re.compile(r"\n[^ \t#\n]")


def split_top_level(text: str) -> list[_Piece] | None:
    """The top-level ``key:`` pieces of a master file, or None when its layout is not plain.

    Only the lines at column 0 are looked at, found by one regex scan (a master file of 10,000 lines has a
    few hundred), their numbers counted from the newlines between them."""
    total = text.count("\n") + 1
    pieces: list[_Piece] = []
    number, counted = 1, 0
    # The newline before a line leaves out the first line: a file starting at column 0 starts it at offset 0.
    firsts = [0] if text[:1] not in ("", " ", "\t", "#", "\n") else []
    for at in [*firsts, *(found.start() + 1 for found in _AT_COLUMN_0.finditer(text))]:
        number += text.count("\n", counted, at)
        counted = at
        end = text.find("\n", at)
        line = text[at:end if end >= 0 else len(text)]
        if line.startswith("---") or line.startswith("..."):
            continue
        m = _KEY_LINE.match(line.rstrip("\r"))
        if m is None:
            return None
        key = m.group("key")
        if key[0] in "\"'":
            key = key[1:-1]
        if pieces:
            pieces[-1] = _Piece(pieces[-1].key, pieces[-1].start, number - 1)
        pieces.append(_Piece(key, number, total))
    if _has_alias(text):
        return None  # anchors and aliases may cross pieces: only a whole parse resolves them
    return pieces


def _has_alias(text: str) -> bool:
    """A merge key (``<<:``), or an anchor or alias (``&name``, ``*name``) at the start or after a blank,
    ``[``, ``{`` or ``,``: what ``re.search(r"(?:^|[\\s\\[{,])[&*][A-Za-z0-9_-]|<<:", text)`` finds, by
    ``str.find`` of the two marks (the regex tried its alternation at every position: 7 ms a version of a
    400 KB master file, 754 versions in a replay of the history)."""
    if "<<:" in text:
        return True
    for mark in "&*":
        at = text.find(mark)
        while at >= 0:
            after = text[at + 1:at + 2]
            if (after and after.isascii() and (after.isalnum() or after in "_-")
                    and (at == 0 or text[at - 1].isspace() or text[at - 1] in "[{,")):
                return True
            at = text.find(mark, at + 1)
    return False


def parse_piece(lines: list[str], piece: _Piece, file: LoadedFile) -> ConfigEntry | None:
    """The config of one piece, parsed alone with every position as in the whole file; None when the piece
    does not parse to exactly that one key (the caller then loads the whole file)."""
    text = "\n" * (piece.start - 1) + "\n".join(lines[piece.start - 1: piece.end])
    if piece.end < len(lines):
        text += "\n"  # as in the whole file: a block ends where the next key's line starts
    try:
        loaded = load_yaml(text, file.path)
    except YamlLoadError:
        return None
    if loaded.duplicates or not isinstance(loaded.value, PosMap) or len(loaded.value) != 1:
        return None
    key = next(iter(loaded.value))
    if not isinstance(key, str) or key != piece.key:
        return None  # `2026:` is a number to YAML: the whole file's load says so
    return ConfigEntry(piece.key, file, loaded.value[key], loaded.value.key_span(key))


class PartialLoader:
    """RepoData holding only the configs some key patterns select, cached across revisions by blob id."""

    def __init__(self, config: ProjectConfig, *, limit: int = 4096) -> None:
        self.config = config
        self._max_bytes = limits_of(config).max_file_bytes
        self._files: LeastRecentlyStored[str, tuple[list[str], list[_Piece] | None]] = LeastRecentlyStored(64)
        self._parsed: LeastRecentlyStored[tuple[str, int, str], ConfigEntry | None] = LeastRecentlyStored(limit)
        self._runners: LeastRecentlyStored[str, tuple[LoadedFile | None, list[Finding]]] = LeastRecentlyStored(64)

    def load(self, snapshot: Snapshot, patterns: Iterable[str]) -> RepoData:
        """The configs ``patterns`` select, as a full load would give them (falls back to one when unsure)."""
        wanted = list(patterns)
        repo = RepoData(snapshot=snapshot, config=self.config)
        for path in master_paths(snapshot, self.config):
            raw = snapshot.read(path)
            if raw is None or len(raw) > self._max_bytes:
                return self._full(snapshot)  # a missing or oversized file: the full load words the finding
            blob = content_id(snapshot, path, raw)
            found = self._files.get(blob)
            if found is None:
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError:
                    return self._full(snapshot)
                found = self._files.put(blob, (text.split("\n"), split_top_level(text)))
            lines, pieces = found
            if pieces is None:
                return self._full(snapshot)
            keys = set(keys_matching(wanted, [p.key for p in pieces]))
            file = LoadedFile(path=path, raw=raw, yaml=LoadedYaml(path, None))
            repo.master_files.append(file)
            for piece in pieces:
                if piece.key not in keys:
                    continue
                entry = self._entry(blob, lines, piece, file)
                if entry is None:
                    return self._full(snapshot)
                if entry.key in repo.configs:
                    repo.shadowed.append(entry)
                else:
                    repo.configs[entry.key] = entry
        if not repo.master_files:
            return self._full(snapshot)
        repo.runners = self._load_runners(snapshot, repo)
        return repo

    def _full(self, snapshot: Snapshot) -> RepoData:
        return load_repo(snapshot, self.config, with_changelog=False)

    def _entry(self, blob: str, lines: list[str], piece: _Piece, file: LoadedFile) -> ConfigEntry | None:
        cache_key = (blob, piece.start, piece.key)
        if cache_key in self._parsed:
            cached = self._parsed[cache_key]
            return None if cached is None else ConfigEntry(cached.key, file, cached.data, cached.key_span)
        return self._parsed.put(cache_key, parse_piece(lines, piece, file))

    def _load_runners(self, snapshot: Snapshot, repo: RepoData) -> LoadedFile | None:
        path = self.config.runners
        raw = snapshot.read(path)
        blob = content_id(snapshot, path, raw) if raw is not None else f"missing:{path}"
        found = self._runners.get(blob)
        if found is None:
            problems: list[Finding] = []
            found = self._runners.put(blob, (_load_file(snapshot, path, problems, required=True, max_bytes=self._max_bytes),
                                            problems))
        repo.problems.extend(found[1])
        return found[0]
