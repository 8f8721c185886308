"""``validate``: every finding about the repository's data at one revision.

Order of work: loading problems (syntax, duplicates, missing files) come from
:func:`ci_tools.model.repository.load_repo`; then each governed file is held
to its schema (:mod:`ci_tools.schemacheck.check`); then the cross-field and
cross-file rules run (:mod:`ci_tools.validation.config_checks`).
"""

from __future__ import annotations

from typing import Any

from ..findings import Finding, Rule, Severity, make_finding
from ..model.repository import ConfigEntry, LoadedFile, RepoData
from ..revision.yamlpos import PosMap, PosSeq, describe_type
from ..schemacheck import check as sc
from .rules import CHANGELOG_ENTRY_SCHEMA, CONFIG_SCHEMA, RUNNERS_SCHEMA

_FILE_START = (1, 1, 1, 1)


def _schema_findings(rule: Rule, schema: str, file: LoadedFile, anchor: sc.Anchor, **data: Any) -> list[Finding]:
    return [
        make_finding(rule, p.message, file.loc(p.span), data={**data, "path": [str(x) for x in p.path], "keyword": p.keyword, **p.data})
        for p in sc.check(schema, anchor)
    ]


def _whole_floats(file: LoadedFile, first: tuple[int, int, int, int], last: tuple[int, int, int, int]) -> bool:
    """Whether the loader saw a float with a whole value (8.0) between these spans (or cannot tell)."""
    return file.yaml is None or file.yaml.whole_float_within(first[0], last[2])


def _root_span(value: Any) -> tuple[int, int, int, int]:
    span = getattr(value, "span", None)
    return (span[0], span[1], span[0], span[1]) if span else _FILE_START


def check_master_files(repo: RepoData) -> list[Finding]:
    out: list[Finding] = []
    for file in repo.master_files:
        root = file.value
        if root is None:
            # Unparsable or empty (yaml-syntax says so: no configs), or assembled from its configs, each parsed
            # where it stands (the base beside the head, model/beside.py): each is held to the schema all the same.
            out.extend(f for entry in _assembled(repo, file) for f in _entry_findings(entry))
            continue
        if not isinstance(root, PosMap):
            out.extend(_wrong_root(CONFIG_SCHEMA, file, "a master config file must be a mapping from config keys to configs"))
            continue
        for key in root:
            out.extend(_config_findings(file, root, key))
    return out


def _config_findings(file: LoadedFile, root: PosMap, key: Any) -> list[Finding]:
    key_span, value_span = root.key_span(key), root.value_span(key)
    anchor = sc.Anchor(root[key], key_span, value_span, f"config `{key}`", _whole_floats(file, key_span, value_span))
    return _schema_findings(CONFIG_SCHEMA, sc.MASTER_CONFIG, file, anchor, config_key=str(key))


def _assembled(repo: RepoData, file: LoadedFile) -> list[ConfigEntry]:
    """The configs of a master file that holds no document, in the file's order."""
    return sorted((e for e in (*repo.configs.values(), *repo.shadowed) if e.file is file), key=lambda e: e.key_span)


def _entry_findings(entry: ConfigEntry) -> list[Finding]:
    """:func:`_config_findings` of a config known by itself (a scalar's own span is not kept: its key's stands)."""
    value_span = entry.data.span if isinstance(entry.data, (PosMap, PosSeq)) else entry.key_span
    anchor = sc.Anchor(entry.data, entry.key_span, value_span, f"config `{entry.key}`",
                       _whole_floats(entry.file, entry.key_span, value_span))
    return _schema_findings(CONFIG_SCHEMA, sc.MASTER_CONFIG, entry.file, anchor, config_key=entry.key)


def input_findings(repo: RepoData) -> list[Finding]:
    """What keeps jobs from being built as the files say, for the commands that build them (``matrix``,
    ``recipe``, ``claims``, ``dispatch``, ``sweep plan``): files that do not load, a master file or runners
    file of the wrong shape, and each master config that fails its schema (no job is built from it:
    :attr:`~ci_tools.model.repository.ConfigEntry.readable`)."""
    out = [p for p in repo.problems if p.severity is Severity.ERROR]
    for file in repo.master_files:
        if file.value is not None and not isinstance(file.value, PosMap):
            out.extend(_wrong_root(CONFIG_SCHEMA, file, "a master config file must be a mapping from config keys to configs"))
    for entry in [*repo.configs.values(), *repo.shadowed]:
        root = entry.file.value
        if not entry.readable and isinstance(root, PosMap) and entry.key in map(str, root):
            key = next(k for k in root if str(k) == entry.key)
            out.extend(_config_findings(entry.file, root, key))
    out.extend(check_runners(repo))
    return out


def _wrong_root(rule: Rule, file: LoadedFile, expected: str) -> list[Finding]:
    found = describe_type(file.value)
    return [make_finding(rule, f"{expected}, found {found}", file.loc(_root_span(file.value)), data={"path": file.path})]


def check_runners(repo: RepoData) -> list[Finding]:
    file = repo.runners
    if file is None or file.value is None:
        return []
    root = file.value
    if not isinstance(root, PosMap):
        return _wrong_root(RUNNERS_SCHEMA, file, "the runners file must be a mapping with `labels` and `hardware`")
    anchor = sc.Anchor(root, _root_span(root), root.span, "the runners file", _whole_floats(file, root.span, root.span))
    return _schema_findings(RUNNERS_SCHEMA, sc.RUNNERS, file, anchor)


def check_changelog(repo: RepoData) -> list[Finding]:
    file = repo.changelog
    if file is None or file.value is None:
        return []
    root = file.value
    if not isinstance(root, PosSeq):
        return _wrong_root(CHANGELOG_ENTRY_SCHEMA, file, "the changelog must be a list of entries")
    out: list[Finding] = []
    for index, entry in enumerate(root):
        span = root.item_span(index)
        anchor = sc.Anchor(entry, span, span, f"changelog entry {index + 1}", _whole_floats(file, span, span))
        out.extend(_schema_findings(CHANGELOG_ENTRY_SCHEMA, sc.CHANGELOG_ENTRY, file, anchor, entry=index + 1))
    return out


def require_readable(repo: RepoData) -> None:
    """Raise a usage error naming the first of :func:`input_findings` (for the runner side, which must run
    exactly what was planned or nothing)."""
    from ..errors import UsageError

    findings = [f for f in input_findings(repo) if f.severity is Severity.ERROR]
    if findings:
        first = findings[0]
        more = f" (and {len(findings) - 1} more problem(s): `ci-tools validate` lists them)" if len(findings) > 1 else ""
        raise UsageError(f"{first.message} [{first.rule}]; no job is built from what cannot be read{more}",
                         path=first.location.path, line=first.location.line)


def validate(repo: RepoData) -> list[Finding]:
    # Imported here: the commands that only need input_findings (matrix, recipe, dispatch) do not pay for the
    # cross-file rules' imports (recipe resolution, the shell interpreter: ~55 ms).
    from .config_checks import check_configs

    findings = list(repo.problems)
    findings.extend(check_master_files(repo))
    findings.extend(check_runners(repo))
    findings.extend(check_changelog(repo))
    findings.extend(check_configs(repo))
    return findings
