"""The rule registry and the one way to create a finding."""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from ..findings import Finding, Location, Severity

_RULES: dict[str, "Rule"] = {}
_DISCOVERED = False


@dataclass(frozen=True)
class Rule:
    """A rule's identity and its user documentation (ruff's four sections)."""

    id: str
    summary: str
    severity: Severity
    what: str
    why: str
    example: str
    fix: str
    family: str

    def docs(self) -> str:
        return (
            f"{self.id} ({self.severity.value}, {self.family})\n\n{self.summary}\n\n"
            f"What it does\n  {self.what}\n\nWhy\n  {self.why}\n\n"
            f"Example\n{_indent(self.example)}\n\nFix\n  {self.fix}\n"
        )


def _indent(text: str) -> str:
    return "\n".join("  " + line if line else "" for line in text.strip("\n").splitlines())


def register(
    id: str, *, summary: str, what: str, why: str, example: str, fix: str,
    family: str, severity: Severity = Severity.ERROR,
) -> Rule:
    if id in _RULES:
        raise RuntimeError(f"rule {id} registered twice")
    rule = Rule(id=id, summary=summary, severity=severity, what=what, why=why,
                example=example, fix=fix, family=family)
    _RULES[id] = rule
    return rule


def _discover() -> None:
    global _DISCOVERED
    if _DISCOVERED:
        return
    from .. import rules as package

    for info in pkgutil.iter_modules(package.__path__):
        if info.name != "registry":
            importlib.import_module(f"{package.__name__}.{info.name}")
    _DISCOVERED = True


def all_rules() -> list[Rule]:
    _discover()
    return sorted(_RULES.values(), key=lambda r: (r.family, r.id))


def get_rule(rule_id: str) -> Rule | None:
    _discover()
    return _RULES.get(rule_id)


def make_finding(
    rule: Rule, message: str, location: Location, *,
    related: Iterable[Location] = (), data: Mapping[str, Any] | None = None,
    severity: Severity | None = None,
) -> Finding:
    return Finding(rule=rule.id, severity=severity or rule.severity, message=message,
                   location=location, related=tuple(related), data=dict(data or {}))


def matches(rule_id: str, patterns: Iterable[str]) -> bool:
    """``--select``/``--ignore`` match a whole id or a family prefix (``changelog-``)."""
    for p in patterns:
        if rule_id == p or (rule_id.startswith(p) and (p.endswith("-") or rule_id[len(p):].startswith("-"))):
            return True
    return False


def unknown_patterns(patterns: Iterable[str]) -> list[str]:
    """The ``--select``/``--ignore`` values that match no registered rule id.

    A typo there would otherwise hide every finding (``--select``) or none
    (``--ignore``) while the run reports success.
    """
    ids = [r.id for r in all_rules()]
    return [p for p in patterns if not any(matches(rule_id, [p]) for rule_id in ids)]


def filter_findings(findings: list[Finding], select: Iterable[str], ignore: Iterable[str]) -> list[Finding]:
    sel, ign = list(select), list(ignore)
    return [f for f in findings if (not sel or matches(f.rule, sel)) and not matches(f.rule, ign)]
