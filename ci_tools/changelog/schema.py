"""The changelog-entry schema, held to the entries a change appends.

``validate`` checks every entry of a changelog it loads.  When the head only
appends to the base, ``check`` does not load the history at all (it is the
base's bytes, and a defect in it is not the change's finding); the appended
entries are checked here instead, with the same rule, messages and data as
``validate`` gives them, numbered as entries of the whole file.
"""

from __future__ import annotations

from ..findings import Finding, Location, make_finding
from .layout import is_item_start
from .lint import ChangelogChange


def appended_schema_findings(change: ChangelogChange) -> list[Finding]:
    entries = change.new_entries
    if not entries or change.head is None:
        return []
    from ..schemacheck import check as sc
    from ..validation.rules import CHANGELOG_ENTRY_SCHEMA

    head = change.head
    before = sum(1 for line in head.lines[: entries[0].line - 1] if is_item_start(line))
    out: list[Finding] = []
    for i, entry in enumerate(entries):
        number = before + i + 1
        anchor = sc.Anchor(entry.data, entry.span, entry.span, f"changelog entry {number}")
        for p in sc.check(sc.CHANGELOG_ENTRY, anchor):
            out.append(make_finding(
                CHANGELOG_ENTRY_SCHEMA, p.message, Location(change.path, *p.span),
                data={"entry": number, "path": [str(x) for x in p.path], "keyword": p.keyword, **p.data},
            ))
    return out
