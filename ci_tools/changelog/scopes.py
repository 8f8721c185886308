"""What the changelog entries a change adds ask to run: the scopes ``matrix --base`` selects jobs by."""

from __future__ import annotations

from ..errors import UsageError
from ..jobs.selection import ChangelogScope, scope_of_entry
from .lint import ChangelogChange

# Problems of the appended text that leave the PR's entries unknown (rule ids).
_UNREADABLE = ("yaml-syntax", "changelog-not-a-list")


def appended_scopes(base_raw: bytes | None, head_raw: bytes | None, path: str,
                    base_label: str = "base revision", head_label: str = "head") -> tuple[ChangelogScope, ...]:
    """Scopes of the entries the change adds to the changelog.

    The added entries are found and parsed by the changelog gate's own model
    (:class:`ci_tools.changelog.lint.ChangelogChange`): by content, wherever
    they stand, as InferenceX's own selection reads the added lines of a diff.
    A pr-link correction is the gate's finding, not a reason to run benchmarks.
    """
    change = ChangelogChange(path, base_raw, head_raw, base_label=base_label)
    for finding in change.parsed.findings:
        if finding.rule in _UNREADABLE:
            loc = finding.location
            raise UsageError(f"the changelog at {head_label} cannot be read, so the entries it appends are unknown: "
                             f"{finding.message}", path=loc.path, line=loc.line)
    out: list[ChangelogScope] = []
    # Added lines anywhere in the file, as InferenceX's process_changelog.py reads a diff: a squash
    # merge may insert its entry mid-file.
    for entry in change.added_entries:
        scope = scope_of_entry(entry.data, entry.line)
        if scope is not None:
            out.append(scope)
    return tuple(out)
