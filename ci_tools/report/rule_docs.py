"""One documentation page per rule under ``docs/rules/``, generated from the rule registry.

Reports link each rule id to its page (the Markdown report, SARIF's
``helpUri``), as ruff and zizmor do; the pages are the registry's own text
(summary, what, why, example, fix), so they cannot say something the
``explain`` command does not.  A test fails when a page is stale or missing.

Regenerate with: ``python -m ci_tools.report.rule_docs``
"""

from __future__ import annotations

import sys
from pathlib import Path

from ..findings import Rule, all_rules

DOCS_DIR = Path("docs") / "rules"
INDEX = "README.md"


def rule_page(rule: Rule) -> str:
    return (
        f"# `{rule.id}`\n\n"
        f"**{rule.severity.value}** · family `{rule.family}` · {rule.summary}\n\n"
        f"## What it does\n\n{rule.what}\n\n"
        f"## Why\n\n{rule.why}\n\n"
        f"## Example\n\n```\n{rule.example.strip(chr(10))}\n```\n\n"
        f"## Fix\n\n{rule.fix}\n\n"
        "## Not reporting it\n\n"
        f"`--ignore {rule.id}` leaves it out of one run. To leave it out of every run for some files, add an "
        "entry with the reason to `ignore:` in `.ci-tools.yaml` (rule, path glob, optionally config key); "
        "`check` counts what it suppresses and warns about an entry that suppresses nothing.\n\n"
        f"_Generated from the rule registry (`ci-tools explain {rule.id}` prints the same); "
        "regenerate with `python -m ci_tools.report.rule_docs`._\n"
    )


def index_page(rules: list[Rule]) -> str:
    rows = "".join(f"| [`{r.id}`]({r.id}.md) | {r.severity.value} | {r.family} | {_cell(r.summary)} |\n" for r in rules)
    return ("# Rules\n\nEvery rule ci-tools reports, one page each (generated from the rule registry; "
            "regenerate with `python -m ci_tools.report.rule_docs`).\n\n"
            "| rule | severity | family | summary |\n|---|---|---|---|\n" + rows)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def pages() -> dict[str, str]:
    """File name under ``docs/rules/`` -> its text."""
    rules = all_rules()
    out = {f"{rule.id}.md": rule_page(rule) for rule in rules}
    out[INDEX] = index_page(rules)
    return out


def write_pages(directory: Path) -> list[Path]:
    """Write every page into ``directory`` and delete pages of rules that no longer exist."""
    directory.mkdir(parents=True, exist_ok=True)
    wanted = pages()
    for stale in directory.glob("*.md"):
        if stale.name not in wanted:
            stale.unlink()
    written = []
    for name, text in wanted.items():
        path = directory / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":  # pragma: no cover - the maintainer's regeneration step
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / DOCS_DIR
    print(f"wrote {len(write_pages(target))} pages to {target}")
