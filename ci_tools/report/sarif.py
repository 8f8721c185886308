"""SARIF 2.1.0 for code scanning: one rule entry per rule id that occurs.

Rules carry their documentation from the registry (summary, what, why,
example, fix) and ``helpUri``, the rule's page under docs/rules/; results
carry the primary location and the related ones (the PR description as a
logical location).
Paths are relative to the repository root (``%SRCROOT%``) and percent-encoded
as URI references.  Each result carries a ``partialFingerprints`` hash of its
rule, file and message (not its line), so code scanning keeps tracking a
finding when unrelated lines above it move, and, after ``check`` compared
with a base, ``baselineState`` (``new`` or ``unchanged``).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any
from urllib.parse import quote

from .. import __version__
from ..findings import Finding, Location, finding_key, get_rule
from .context import PLAIN, ReportContext, rule_url

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVELS = {"error": "error", "warning": "warning", "note": "note"}


def _rule_entry(rule_id: str) -> dict[str, Any]:
    rule = get_rule(rule_id)
    if rule is None:
        return {"id": rule_id, "shortDescription": {"text": rule_id}}
    help_text = (f"{rule.summary}\n\nWhat it does: {rule.what}\n\nWhy: {rule.why}\n\n"
                 f"Example:\n{rule.example}\n\nFix: {rule.fix}")
    help_markdown = (f"{rule.summary}\n\n**What it does**: {rule.what}\n\n**Why**: {rule.why}\n\n"
                     f"**Example**\n\n```yaml\n{rule.example}\n```\n\n**Fix**: {rule.fix}")
    return {
        "id": rule.id,
        "name": "".join(part.capitalize() for part in rule.id.split("-")),
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.what},
        "help": {"text": help_text, "markdown": help_markdown},
        "helpUri": rule_url(rule.id),
        "defaultConfiguration": {"level": _LEVELS[rule.severity.value]},
        "properties": {"family": rule.family},
    }


def _location(location: Location) -> dict[str, Any]:
    """A SARIF location: a region of a repository file, or the PR description as a logical location (code
    scanning attaches results to files; a URI of a file that does not exist would be a broken link)."""
    if location.in_repository:
        return {"physicalLocation": _physical(location)}
    logical: dict[str, Any] = {"name": location.path, "kind": "resource"}
    out: dict[str, Any] = {"logicalLocations": [logical]}
    if location.line > 0:
        out["message"] = {"text": f"{location.as_text()}"}
    return out


def _physical(location: Location) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": quote(location.path, safe="/"), "uriBaseId": "%SRCROOT%"}}
    if location.line > 0:
        region: dict[str, int] = {"startLine": location.line}
        if location.column > 0:
            region["startColumn"] = location.column
        if location.end_line >= location.line:
            region["endLine"] = location.end_line
            if location.end_column > 0 and (location.end_line > location.line or location.end_column > location.column):
                region["endColumn"] = location.end_column
        physical["region"] = region
    return physical


FINGERPRINT_KEY = "ciToolsFindingHash/v1"
# Rule, file and message without positions: the same key ``check`` matches the base's findings by.
fingerprint_content = finding_key


def fingerprints(findings: list[Finding]) -> list[str]:
    """One stable hash per finding; equal contents are told apart by their order in the file.

    Code scanning matches results of two analyses by ``partialFingerprints``:
    with a hash of the line number, every finding below an inserted line
    would be closed and opened again.
    """
    seen: dict[str, int] = {}
    out = []
    for finding in findings:
        content = fingerprint_content(finding)
        occurrence = seen.get(content, 0)
        seen[content] = occurrence + 1
        out.append(hashlib.sha256(f"{content}\0{occurrence}".encode("utf-8")).hexdigest())
    return out


def _result(finding: Finding, rule_index: int, fingerprint: str) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": finding.rule,
        "ruleIndex": rule_index,
        "level": _LEVELS[finding.severity.value],
        "message": {"text": finding.message},
        "locations": [_location(finding.location)],
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint},
    }
    if finding.related:
        result["relatedLocations"] = [
            {"id": i, **_location(r), **({"message": {"text": r.note}} if r.note else {})}
            for i, r in enumerate(finding.related)
        ]
    if finding.baseline is not None:
        result["baselineState"] = finding.baseline.value
    if finding.data:
        result["properties"] = {"data": json.loads(json.dumps(dict(finding.data), default=str))}
    return result


def to_sarif(findings: list[Finding], context: ReportContext = PLAIN) -> dict[str, Any]:
    """The log of a run.  Findings the change fixed (``absent``) are left out: code scanning closes an alert
    whose result is gone by itself, and would open a new alert for a result given with that state."""
    findings = [f for f in findings if f.counts]
    rule_ids = sorted({f.rule for f in findings})
    index = {rule_id: i for i, rule_id in enumerate(rule_ids)}
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "ci-tools",
                "version": __version__,
                "rules": [_rule_entry(r) for r in rule_ids],
            }},
            "originalUriBaseIds": {"%SRCROOT%": {"description": {"text": "The repository root."}}},
            "results": [_result(f, index[f.rule], h) for f, h in zip(findings, fingerprints(findings))],
        }],
    }


def render(findings: list[Finding], context: ReportContext = PLAIN) -> str:
    return json.dumps(to_sarif(findings, context), indent=2, ensure_ascii=False) + "\n"
