"""``ci-tools rules`` and ``ci-tools explain ID``."""

from __future__ import annotations

import click

from ..findings import all_rules, get_rule
from .common import EXIT_USAGE, handle_errors


@click.command("rules")
@handle_errors
def rules_command() -> None:
    """List every rule: id, severity and summary."""
    rules = all_rules()
    width = max(len(r.id) for r in rules)
    for r in rules:
        click.echo(f"{r.id:<{width}}  {r.severity.value:<7}  {r.summary}")


@click.command("explain")
@click.argument("rule_id")
@handle_errors
def explain_command(rule_id: str) -> None:
    """Print the documentation of one rule: what, why, example, fix."""
    rule = get_rule(rule_id)
    if rule is None:
        ids = ", ".join(r.id for r in all_rules())
        click.echo(f"ci-tools: error: unknown rule {rule_id!r}; known rules: {ids}", err=True)
        raise SystemExit(EXIT_USAGE)
    click.echo(rule.docs(), nl=False)
