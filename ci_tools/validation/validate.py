"""``validate``: every finding about the repository's data at one revision.

Order of work: loading problems (syntax, duplicates, missing files) come from
:func:`ci_tools.model.repository.load_repo`; then each governed file is held
to its schema (:mod:`ci_tools.schemacheck.check`); then the cross-field and
cross-file rules run (:mod:`ci_tools.validation.config_checks`).
"""

from __future__ import annotations

from typing import Any

from ..findings import Finding, Rule, make_finding
from ..model.repository import LoadedFile, RepoData
from ..revision.yamlpos import PosMap, PosSeq, describe_type
from ..schemacheck import check as sc
from .config_checks import check_configs
from .rules import CHANGELOG_ENTRY_SCHEMA, CONFIG_SCHEMA, RUNNERS_SCHEMA

_FILE_START = (1, 1, 1, 1)


def _schema_findings(rule: Rule, schema: str, file: LoadedFile, anchor: sc.Anchor, **data: Any) -> list[Finding]:
    return [
        make_finding(rule, p.message, file.loc(p.span), data={**data, "path": [str(x) for x in p.path], "keyword": p.keyword, **p.data})
        for p in sc.check(schema, anchor)
    ]


def _root_span(value: Any) -> tuple[int, int, int, int]:
    span = getattr(value, "span", None)
    return (span[0], span[1], span[0], span[1]) if span else _FILE_START


def check_master_files(repo: RepoData) -> list[Finding]:
    out: list[Finding] = []
    for file in repo.master_files:
        root = file.value
        if root is None:
            continue  # unparsable or empty: yaml-syntax says so
        if not isinstance(root, PosMap):
            out.extend(_wrong_root(CONFIG_SCHEMA, file, "a master config file must be a mapping from config keys to configs"))
            continue
        for key, data in root.items():
            anchor = sc.Anchor(data, root.key_span(key), root.value_span(key), f"config `{key}`")
            out.extend(_schema_findings(CONFIG_SCHEMA, sc.MASTER_CONFIG, file, anchor, config_key=str(key)))
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
    anchor = sc.Anchor(root, _root_span(root), root.span, "the runners file")
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
        anchor = sc.Anchor(entry, span, span, f"changelog entry {index + 1}")
        out.extend(_schema_findings(CHANGELOG_ENTRY_SCHEMA, sc.CHANGELOG_ENTRY, file, anchor, entry=index + 1))
    return out


def validate(repo: RepoData) -> list[Finding]:
    findings = list(repo.problems)
    findings.extend(check_master_files(repo))
    findings.extend(check_runners(repo))
    findings.extend(check_changelog(repo))
    findings.extend(check_configs(repo))
    return findings
