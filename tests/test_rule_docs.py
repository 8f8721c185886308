"""One documentation page per rule, generated from the registry into docs/rules/, and linked from reports."""

from __future__ import annotations

import json
from pathlib import Path

from ci_tools.findings import Finding, Location, Severity, all_rules
from ci_tools.report import markdown, sarif
from ci_tools.report.context import RULES_URL, rule_url
from ci_tools.report.rule_docs import DOCS_DIR, INDEX, pages

ROOT = Path(__file__).resolve().parent.parent


def test_the_pages_in_the_repository_are_what_the_registry_generates() -> None:
    """Regenerate with `python -m ci_tools.report.rule_docs` when this fails."""
    directory = ROOT / DOCS_DIR
    wanted = pages()
    on_disk = {p.name: p.read_text(encoding="utf-8") for p in directory.glob("*.md")}
    stale = sorted(set(on_disk) - set(wanted))
    missing = sorted(set(wanted) - set(on_disk))
    differ = sorted(name for name in set(wanted) & set(on_disk) if wanted[name] != on_disk[name])
    assert (stale, missing, differ) == ([], [], []), "run: python -m ci_tools.report.rule_docs"


def test_every_rule_has_a_page_with_its_four_sections() -> None:
    for rule in all_rules():
        page = (ROOT / DOCS_DIR / f"{rule.id}.md").read_text(encoding="utf-8")
        assert page.startswith(f"# `{rule.id}`\n\n**{rule.severity.value}**")
        for section in (rule.what, rule.why, rule.fix):
            assert section in page
    index = (ROOT / DOCS_DIR / INDEX).read_text(encoding="utf-8")
    assert index.count("| [`") == len(all_rules())


def test_reports_link_each_rule_to_its_page_in_the_repository() -> None:
    finding = Finding("runner-undefined", Severity.ERROR, "label x", Location("configs/a.yaml", 3, 11))
    url = rule_url("runner-undefined")
    # The URL is the page of this repository's docs/rules/ on its default branch.
    assert url.startswith(RULES_URL) and (ROOT / DOCS_DIR / url.removeprefix(RULES_URL)).is_file()
    rule = json.loads(sarif.render([finding]))["runs"][0]["tool"]["driver"]["rules"][0]
    assert rule["helpUri"] == url
    assert f"[`runner-undefined`]({url})" in markdown.render([finding])
