"""One revision's configs loaded beside another's, parsing only the text that differs.

A pull request changes a few configs of one master file, and ``check``
loads both sides: the head in full (it is validated), then the base.  The
base's files are mostly the head's bytes: a master file or runners file
identical at both is the head's parse, and in a master file that differs,
each config whose text and lines are the head's is the head's parse of it
(positions included: the same lines hold it, and the same kind of thing
follows it).  Only the other configs are parsed, each alone
(:func:`ci_tools.model.partial.parse_piece`).

The result equals ``load_repo(snapshot, config, with_changelog=False)`` in
every config, position, finding and file path.  A master file assembled from
pieces keeps its configs but not the document as a whole (its ``value`` is
None, as with :class:`ci_tools.model.partial.PartialLoader`).  Whatever the
split does not trust (anchors, inline values, a key twice, a file that gives
a finding) is loaded in full instead.
"""

from __future__ import annotations

from ..config import ProjectConfig
from ..config.limits import limits_of
from ..revision.snapshot import Snapshot
from ..revision.yamlpos import LoadedYaml, PosMap
from .partial import parse_piece, split_top_level
from .repository import (
    ConfigEntry,
    LoadedFile,
    RepoData,
    _load_file,
    load_repo,
    master_paths,
)


def _clean(file: LoadedFile | None) -> bool:
    """A file whose load gave no finding (parsed, a document, no duplicate key, no key YAML reads as other than
    text): its parse can be shared."""
    if file is None or file.yaml is None or file.yaml.value is None or file.yaml.duplicates:
        return False
    root = file.yaml.value
    return not isinstance(root, dict) or all(isinstance(key, str) for key in root)


def _entries(file: LoadedFile) -> list[ConfigEntry]:
    """The configs of a whole parsed master file, as :func:`load_repo` makes them."""
    root = file.value
    if not isinstance(root, PosMap):
        return []  # the schema rules report the wrong root type
    return [ConfigEntry(str(key), file, data, root.key_span(key)) for key, data in root.items()]


def _from_pieces(path: str, raw: bytes, known: LoadedFile,
                 known_configs: dict[str, ConfigEntry]) -> tuple[LoadedFile, list[ConfigEntry]] | None:
    """The configs of a master file that differs from ``known`` (the same path on the other side), each
    shared when it stands on the same lines with the same text there, else parsed alone; None when unsure."""
    try:
        text, known_text = raw.decode("utf-8"), known.raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    pieces, known_pieces = split_top_level(text), split_top_level(known_text)
    if not pieces or known_pieces is None or len({p.key for p in pieces}) != len(pieces):
        return None  # a layout the split does not trust, or a key twice (the full load reports it)
    lines, known_lines = text.split("\n"), known_text.split("\n")
    # A config's closing positions are where the next key starts, or the end of the file: the same only
    # when the same follows it on both sides.
    places = {(p.key, p.start, p.end, p.end == len(known_lines)) for p in known_pieces}
    file = LoadedFile(path=path, raw=raw, yaml=LoadedYaml(path, None))
    out: list[ConfigEntry] = []
    for piece in pieces:
        shared = known_configs.get(piece.key)
        if (shared is not None and shared.key_span[0] == piece.start
                and (piece.key, piece.start, piece.end, piece.end == len(lines)) in places
                and lines[piece.start - 1: piece.end] == known_lines[piece.start - 1: piece.end]):
            out.append(ConfigEntry(piece.key, file, shared.data, shared.key_span))
            continue
        entry = parse_piece(lines, piece, file)
        if entry is None:
            return None
        out.append(entry)
    return file, out


def load_beside(snapshot: Snapshot, config: ProjectConfig, known: RepoData) -> RepoData:
    """The configs and runners of ``snapshot`` (no changelog), sharing ``known``'s parses of the same text."""
    max_bytes = limits_of(config).max_file_bytes
    paths = master_paths(snapshot, config)
    known_files = {f.path: f for f in known.master_files}
    if not paths:
        return load_repo(snapshot, config, with_changelog=False)  # the full load words the finding
    repo = RepoData(snapshot=snapshot, config=config)
    for path in paths:
        raw = snapshot.read(path)
        same = known_files.get(path)
        if raw is None or len(raw) > max_bytes or same is None or not _clean(same):
            return load_repo(snapshot, config, with_changelog=False)
        if raw == same.raw:
            file, entries = same, _entries(same)
        else:
            known_configs = {e.key: e for e in (*known.configs.values(), *known.shadowed) if e.file is same}
            found = _from_pieces(path, raw, same, known_configs)
            if found is None:
                loaded = _load_file(snapshot, path, repo.problems, required=True, max_bytes=max_bytes)
                if loaded is None or not _clean(loaded):
                    return load_repo(snapshot, config, with_changelog=False)
                found = loaded, _entries(loaded)
            file, entries = found
        repo.master_files.append(file)
        for entry in entries:
            if entry.key in repo.configs:
                repo.shadowed.append(entry)
            else:
                repo.configs[entry.key] = entry
    runners = snapshot.read(config.runners)
    if known.runners is not None and _clean(known.runners) and runners == known.runners.raw:
        repo.runners = known.runners
    else:
        repo.runners = _load_file(snapshot, config.runners, repo.problems, required=True, max_bytes=max_bytes)
    return repo
