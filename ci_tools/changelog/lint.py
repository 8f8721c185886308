"""The append-only gate: every byte, line and entry rule of FORMATS.md.

:class:`ChangelogChange` holds the changelog at the base and at the head and
derives, once and lazily, the history diff and the parsed appended entries;
the gate, coverage, ``append-only`` proofs and the claims checker all read
the same object.  :func:`lint_changelog` turns it into findings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Callable, Sequence

from ..config import ProjectConfig
from ..config.limit_rules import TOO_MANY_APPENDED
from ..config.limits import Limits, too_large_finding
from ..findings import Finding, Location, Severity, make_finding
from ..revision.yamlpos import YamlLoadError, decode_utf8
from . import rules as R
from .entries import NewEntry, ParsedEntries, parse_entries
from .history import PR_LINK_PREFIX, EditKind, HistoryDiff, diff_history, pr_link_value
from .layout import Layout, binary_evidence, is_blank, line_and_column
from .policy import GatePolicy

PLACEHOLDER = "XXX"


@dataclass(frozen=True)
class HeadConfigs:
    """What config-key globs are matched against: the head's config keys and where they come from."""

    keys: tuple[str, ...]
    files: tuple[str, ...]


class ChangelogChange:
    """The changelog at two revisions.  ``compared`` is False when there is no base to compare with."""

    def __init__(self, path: str, base: bytes | None, head: bytes | None, *, compared: bool = True,
                 base_label: str = "base revision", limits: Limits = Limits(),
                 policy: GatePolicy = GatePolicy()) -> None:
        self.path = path
        self.base_bytes = base
        self.head_bytes = head
        self.compared = compared
        self.base_label = base_label
        self.limits = limits
        self.policy = policy

    @property
    def oversized(self) -> bool:
        """The head is past ``limits.max-file-bytes``: it is measured, never read."""
        return self.head_bytes is not None and len(self.head_bytes) > self.limits.max_file_bytes

    @cached_property
    def head(self) -> Layout | None:
        """The head's lines; None when there is no head file, or no line of it may be read (too large, not text).

        Everything that reads the head's lines or entries goes through here,
        so the limits and the binary check hold for every reader at once.
        """
        if self.head_bytes is None or self.oversized or self.binary is not None:
            return None
        return Layout(self.head_bytes)

    @cached_property
    def base(self) -> Layout | None:
        return Layout(self.base_bytes) if self.base_bytes is not None and self.compared else None

    @cached_property
    def diff(self) -> HistoryDiff | None:
        """None when there is no head file, or no line view of it (too large, or not text)."""
        if self.head is None:
            return None
        if not self.compared:
            return HistoryDiff(self.head, None, 1, list(self.head.blocks), whole_file=True)
        return diff_history(self.base, self.head, gaps_editable=self.policy.gaps_editable)

    @property
    def emptied(self) -> bool:
        """The head keeps none of the base's entries (an emptied file, or one of blanks and comments): one
        finding says so, where an entry-by-entry comparison would repeat it once per entry."""
        return (self.compared and self.head is not None and not self.head.blocks and self.base is not None
                and bool(self.base.blocks))

    @cached_property
    def binary(self) -> tuple[int, str] | None:
        """Where the head shows it is not text at all (see :func:`binary_evidence`), else None."""
        return binary_evidence(self.head_bytes) if self.head_bytes is not None else None

    @cached_property
    def parsed(self) -> ParsedEntries:
        if self.diff is None or self.head is None:
            return ParsedEntries()
        if self.diff.whole_file:
            return parse_entries(self.path, self.head, 1, whole_file=True)
        if not self.diff.new_blocks:
            return ParsedEntries()
        return parse_entries(self.path, self.head, self.diff.new_blocks[0].start)

    @property
    def new_entries(self) -> list[NewEntry]:
        """Entries the change appends (every entry when nothing is compared).

        At most ``limits.max-appended-entries``: claims and coverage read
        these, and each costs recipe evaluations; the gate reports the rest.
        """
        return self.parsed.entries[: self.limits.max_appended_entries] if self.compared else []

    @cached_property
    def added_entries(self) -> list[NewEntry]:
        """Entries the change adds wherever they stand, found by content (what claims and coverage read)."""
        if not self.compared or self.head is None:
            return []
        from .added import added_entries

        return added_entries(self.path, self.base, self.head, self.limits.max_appended_entries)

    def base_loc(self, line: int) -> Location:
        return Location(self.path, line, 1, note=f"at the {self.base_label}")


def lint_changelog(change: ChangelogChange, config: ProjectConfig, *, pr_number: int | None,
                   head_configs: Callable[[], HeadConfigs], feature_branch: str | None = None) -> list[Finding]:
    """All gate findings.  ``pr_number`` None means the main branch, unless ``feature_branch`` names
    the local branch of a pull request not opened yet (then a canonical link or the placeholder)."""
    if change.oversized:  # reported on every run, like validate does: the file is never read
        return [too_large_finding(change.path, len(change.head_bytes or b""), change.limits.max_file_bytes)]
    if change.compared and change.base_bytes == change.head_bytes:
        return []
    if change.binary is not None:
        return [_binary_finding(change, change.binary)]
    path, head, diff = change.path, change.head, change.diff
    if head is None or diff is None:
        if change.compared and change.base_bytes is not None:
            return [make_finding(R.ENTRY_REMOVED, f"the changelog was deleted; it exists at the {change.base_label} and may only grow",
                                 Location(path), data={"path": path})]
        return []
    if change.emptied:
        assert change.base is not None
        count = len(change.base.blocks)
        return [make_finding(
            R.ENTRY_REMOVED, f"the changelog was emptied: all {count:,} entries of the {change.base_label} were removed; "
            f"expected every historical entry to stay (restore them with `git checkout <base> -- {path}`)",
            Location(path, 1, 1), related=[change.base_loc(change.base.blocks[0].start)], data={"removed": count})]
    findings: list[Finding] = []
    new_from = diff.new_lines_from
    findings += _byte_rules(path, head, new_from, whitespace=change.compared)
    findings += _file_end_rules(path, head, new_from)
    findings += change.parsed.findings
    if not change.compared:
        return findings
    findings += _appended_count_rule(change, diff)
    findings += _history_rules(change, diff, config)
    findings += _separator_rules(path, head, diff, _history_blank_lines(change))
    entries = change.parsed.entries
    findings += _pr_link_rules(entries, config, pr_number, feature_branch)
    if entries:
        findings += _key_rules(entries, head_configs())
    return findings


def read_problems(change: ChangelogChange) -> list[Finding]:
    """What keeps the entries a change appends from being read (too large, not text, not YAML, not a list, more
    than the limit): the gate's findings of that kind, for the commands that read the entries without the gate."""
    if change.oversized:
        return [too_large_finding(change.path, len(change.head_bytes or b""), change.limits.max_file_bytes)]
    if change.compared and change.base_bytes == change.head_bytes:
        return []
    if change.binary is not None:
        return [_binary_finding(change, change.binary)]
    # past the limit the entries are not read: said, or `claims` alone would pass them in silence
    beyond = _appended_count_rule(change, change.diff) if change.compared and change.diff is not None else []
    return [f for f in change.parsed.findings if f.severity is Severity.ERROR] + beyond


def _appended_count_rule(change: ChangelogChange, diff: HistoryDiff) -> list[Finding]:
    """Counted from the entry blocks (a line scan), before anything parses or evaluates them."""
    limit = change.limits.max_appended_entries
    if len(diff.new_blocks) <= limit:
        return []
    first_unchecked = diff.new_blocks[limit]
    return [make_finding(
        TOO_MANY_APPENDED,
        f"this change appends {len(diff.new_blocks):,} entries, more than the limit of {limit}; the entries from this "
        f"one on are not checked for claims or coverage. Expected at most {limit} (set `limits.max-appended-entries` "
        "in .ci-tools.yaml if a change really needs more)",
        Location(change.path, first_unchecked.start, 1),
        related=[Location(change.path, diff.new_blocks[0].start, 1, note="first appended entry")],
        data={"appended": len(diff.new_blocks), "limit": limit},
    )]


def _binary_finding(change: ChangelogChange, evidence: tuple[int, str]) -> Finding:
    offset, what = evidence
    data = change.head_bytes or b""
    line, column = line_and_column(data, offset)
    against = f"; none of its lines can be compared with the {change.base_label}" if change.compared else ""
    return make_finding(
        R.ENCODING,
        f"the changelog is not text: {what} at line {line}, column {column}{against}; expected UTF-8 text "
        "(was it saved as UTF-16, or replaced by a binary file?)",
        Location(change.path, line, column), data={"path": change.path, "offset": offset, "found": what},
    )


def _byte_rules(path: str, head: Layout, first: int, *, whitespace: bool) -> list[Finding]:
    out: list[Finding] = []
    names = {0x0D: "a carriage return (CR)", 0x09: "a tab", 0x00: "a NUL byte"}
    region = head.text(first) if first <= len(head.lines) else b""
    try:
        decode_utf8(region, path)
    except YamlLoadError as exc:
        out.append(make_finding(R.ENCODING, exc.message, Location(path, exc.line + first - 1, exc.column), data={"path": path}))
    # Byte searches in C first: most changes have none of these bytes at all.
    any_forbidden = any(b in region for b in (b"\r", b"\t", b"\x00"))
    for number in range(first, len(head.lines) + 1):
        line = head.line(number)
        bad = [i for i, byte in enumerate(line) if byte in names] if any_forbidden else []
        if bad:
            found = ", ".join(dict.fromkeys(names[line[i]] for i in bad))
            out.append(make_finding(
                R.FORBIDDEN_BYTE, f"line contains {found}; expected only LF line ends and spaces",
                Location(path, number, bad[0] + 1), data={"bytes": sorted({f"0x{line[i]:02x}" for i in bad})},
            ))
        if whitespace:
            body = line.rstrip(b"\r")
            stripped = body.rstrip(b" \t")
            if stripped != body:
                what = "whitespace-only line" if not stripped else "line ends with whitespace"
                out.append(make_finding(
                    R.TRAILING_WHITESPACE, f"{what} in a new entry; expected no trailing spaces",
                    Location(path, number, len(stripped) + 1, number, len(body) + 1),
                ))
    return out


def _file_end_rules(path: str, head: Layout, first: int) -> list[Finding]:
    out: list[Finding] = []
    lines = head.lines
    if head.data and not head.ends_with_newline:
        out.append(make_finding(R.FINAL_NEWLINE, "file does not end with a newline; expected exactly one `\\n` after the last entry",
                                Location(path, len(lines), len(lines[-1]) + 1)))
    trailing = len(lines)
    while trailing >= 1 and is_blank(lines[trailing - 1]):
        trailing -= 1
    if trailing < len(lines) and len(lines) >= first:
        line = max(trailing + 1, first)
        count = len(lines) - trailing
        out.append(make_finding(
            R.TRAILING_BLANK,
            f"file ends with {count} blank line{'s' if count > 1 else ''}; expected the last entry's last line to end the file",
            Location(path, line, 1), data={"blank_lines": count},
        ))
    return out


def _shown(text: bytes, limit: int = 60) -> str:
    s = text.decode("utf-8", "replace").strip()
    return s if len(s) <= limit else s[: limit - 3] + "..."


def _was(change: ChangelogChange, line: int) -> str:
    """What the base had at ``line``, for messages."""
    base = change.base
    if base is None or not 1 <= line <= len(base.lines):
        return "past its end"
    text = base.line(line)
    if not text.strip():
        return "a blank line there" if not text else "a whitespace-only line there"
    trailing = len(text) - len(text.rstrip())
    return f"`{_shown(text)}` there" + (f", followed by {trailing} whitespace character(s)" if trailing else "")


def _entry_title(layout: Layout, line: int) -> str:
    """``config-keys: a, b`` of the entry starting at ``line``, for messages."""
    first = layout.line(line)
    inline = first[len(b"- config-keys:"):].strip() if first.startswith(b"- config-keys:") else b""
    if inline:
        return f"config-keys: {_shown(inline)}"
    keys: list[str] = []
    for number in range(line + 1, len(layout.lines) + 1):
        text = layout.line(number)
        if not text.startswith(b"    - "):
            break
        keys.append(_shown(text[6:]))
    return f"config-keys: {', '.join(keys)}" if keys else f"`{_shown(first)}`"


# Changed historical entries reported one by one (each at its first changed line); past them, one finding counts
# the rest (a re-indented or re-wrapped file would otherwise give one finding per entry: a flood, not a review).
CHANGED_ENTRIES_SHOWN = 20


def _history_rules(change: ChangelogChange, diff: HistoryDiff, config: ProjectConfig) -> list[Finding]:
    path = change.path
    if _line_ends_rewritten(change):
        return [make_finding(
            R.HISTORY_CHANGED,
            f"history changed: every line now ends in CRLF (`\\r\\n`) where the {change.base_label}'s end in `\\n`; "
            "existing entries are immutable, expected the head to start with the base's bytes (convert the file "
            "back to LF line ends)", Location(path, 1, 1), related=[change.base_loc(1)], data={"base_line": 1})]
    out: list[Finding] = []
    canonical = config.pr_link_regex()
    changed = [edit for edit in diff.edits if edit.kind is EditKind.CHANGED]
    if len(changed) > CHANGED_ENTRIES_SHOWN:
        rest = changed[CHANGED_ENTRIES_SHOWN]
        out.append(make_finding(
            R.HISTORY_CHANGED,
            f"history changed: {len(changed) - CHANGED_ENTRIES_SHOWN} more historical entries changed from here on "
            f"(line {rest.base_line} at the {change.base_label} onwards), not listed one by one; existing entries "
            "are immutable, expected the head to start with the base's bytes",
            Location(path, rest.head_line, 1), related=[change.base_loc(rest.base_line)],
            data={"base_line": rest.base_line, "more": len(changed) - CHANGED_ENTRIES_SHOWN}))
    shown = 0
    for edit in diff.edits:
        if edit.kind is EditKind.CHANGED:
            shown += 1
            if shown > CHANGED_ENTRIES_SHOWN:
                continue  # in the finding above, not one by one
        here = Location(path, edit.head_line, 1)
        if edit.kind is EditKind.CHANGED:
            out.append(make_finding(
                R.HISTORY_CHANGED,
                f"history changed: this line differs from line {edit.base_line} at the {change.base_label} "
                f"({_was(change, edit.base_line)}); existing entries are immutable, expected the head to start with the base's bytes",
                here, related=[change.base_loc(edit.base_line)], data={"base_line": edit.base_line},
            ))
        elif edit.kind is EditKind.CONTINUED:
            out.append(make_finding(
                R.HISTORY_CHANGED,
                f"appended text `{_shown(edit.text)}` extends the last historical entry (line {edit.base_line} at the "
                f"{change.base_label}); expected new text to start a new entry with `- config-keys:`",
                here, related=[change.base_loc(edit.base_line)], data={"base_line": edit.base_line},
            ))
        elif edit.kind is EditKind.REMOVED:
            title = _entry_title(change.base, edit.base_line) if change.base else ""
            out.append(make_finding(
                R.ENTRY_REMOVED,
                f"the entry at line {edit.base_line} of the {change.base_label} ({title}) was removed; "
                "expected every historical entry to stay",
                here, related=[change.base_loc(edit.base_line)], data={"base_line": edit.base_line},
            ))
        elif edit.kind is EditKind.INSERTED:
            out.append(make_finding(
                R.NOT_AT_END, "new entry inserted before existing entries; expected new entries only at the end of the file",
                here,
            ))
        else:
            value = pr_link_value(edit.text)
            if not canonical.match(value):
                out.append(make_finding(
                    R.PR_LINK_CORRECTION,
                    f"corrected pr-link `{value}` is not canonical; expected {config.pr_link('<number>')}",
                    Location(path, edit.head_line, len(PR_LINK_PREFIX) + 2), related=[change.base_loc(edit.base_line)],
                    data={"value": value},
                ))
    corrections = diff.pr_link_corrections
    if corrections and diff.new_blocks:
        first = corrections[0]
        out.append(make_finding(
            R.CORRECTION_MIXED,
            f"this change corrects {len(corrections)} historical pr-link(s) and also appends "
            f"{len(diff.new_blocks)} entr{'y' if len(diff.new_blocks) == 1 else 'ies'}; expected a pr-link correction alone",
            Location(path, first.head_line, 1),
            related=[Location(path, diff.new_blocks[0].start, 1, note="first appended entry")],
        ))
    return out


def _line_ends_rewritten(change: ChangelogChange) -> bool:
    """The head is the base (and perhaps more) with every ``\\n`` turned into ``\\r\\n``: an editor's line-end
    conversion, one change of the whole file rather than one per line."""
    base, head = change.base_bytes, change.head_bytes
    if not base or head is None or b"\r\n" not in head or b"\r\n" in base:
        return False
    return head.replace(b"\r\n", b"\n").startswith(base)


def _history_blank_lines(change: ChangelogChange) -> int:
    """Blank lines the base ends with that the change must keep (the whitespace policy ``history``)."""
    base = change.base
    if change.policy.gaps_editable or base is None or not base.lines:
        return 0
    return len(base.lines) - len(base.lines_without_trailing_blanks)


def _separator_rules(path: str, head: Layout, diff: HistoryDiff, kept: int) -> list[Finding]:
    """Exactly one blank line above each appended entry; above the first, the ``kept`` blank lines the base ends
    with when the policy keeps them as history and they are more than one (the change then adds none)."""
    out: list[Finding] = []
    for n, block in enumerate(diff.new_blocks):
        if n == 0 and block.start == 1:
            continue  # the first entry of the file has nothing to be separated from
        expected = max(1, kept) if n == 0 else 1
        blanks = head.blank_lines_above(block.start)
        if blanks != expected:
            found = "no blank line" if blanks == 0 else f"{blanks} blank lines"
            why = (f"exactly {expected}, the blank lines the base ends with (history under the "
                   "whitespace policy `history`; add none)" if expected > 1 else "exactly one blank line")
            out.append(make_finding(
                R.SEPARATOR, f"new entry is preceded by {found}; expected {why}",
                Location(path, block.start, 1), data={"blank_lines": blanks, "expected": expected},
            ))
    return out


def _placeholder_regex(config: ProjectConfig) -> re.Pattern[str]:
    repo = re.escape(config.repository) if config.repository else r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+"
    head, _, tail = config.pr_link_pattern.partition("{number}")
    return re.compile("^" + re.escape(head).replace(re.escape("{repository}"), repo) + PLACEHOLDER + re.escape(tail) + "$")


def _pr_link_rules(entries: Sequence[NewEntry], config: ProjectConfig, pr_number: int | None,
                   feature_branch: str | None = None) -> list[Finding]:
    out: list[Finding] = []
    canonical = config.pr_link_regex()
    placeholder = _placeholder_regex(config)
    pending = pr_number is None and feature_branch is not None
    if pr_number is not None:
        expected = f"this PR's link {config.pr_link(pr_number)} or the placeholder {config.pr_link(PLACEHOLDER)}"
    elif pending:
        expected = (f"a canonical link {config.pr_link('<number>')} or the placeholder {config.pr_link(PLACEHOLDER)} "
                    f"(branch {feature_branch} will be a PR; pass --pr-number N to require that PR's link)")
    else:
        expected = f"a canonical link {config.pr_link('<number>')} (no PR number given, so this is the main branch)"
    for entry in entries:
        if not isinstance(entry.data, dict):
            continue
        if "pr-link" not in entry.data:
            out.append(make_finding(R.PR_LINK, f"new entry has no `pr-link`; expected {expected}", Location(entry.path, entry.line, 1)))
            continue
        value = entry.data["pr-link"]
        loc = entry.value_loc("pr-link")
        text = value if isinstance(value, str) else ""
        match = canonical.match(text)
        if pr_number is not None:
            if text == PLACEHOLDER or placeholder.match(text) or (match and int(match.group("number")) == pr_number):
                continue
            if match:
                problem = f"links PR #{match.group('number')}, not this PR (#{pr_number})"
            else:
                problem = f"`{value}` is not a link to this PR"
        else:
            if match or (pending and (text == PLACEHOLDER or placeholder.match(text))):
                continue
            if text == PLACEHOLDER or placeholder.match(text):
                problem = f"`{text}` is a placeholder"
            else:
                problem = f"`{value}` is not a canonical link"
        out.append(make_finding(R.PR_LINK, f"pr-link {problem}; expected {expected}", loc, data={"value": str(value)}))
    return out


def _key_rules(entries: Sequence[NewEntry], head: HeadConfigs) -> list[Finding]:
    from ..model.keys import match_key_glob

    out: list[Finding] = []
    where = ", ".join(head.files) if head.files else "no master config file"
    known = set(head.keys)
    matched: dict[str, bool] = {}  # per distinct glob: a large append repeats the same few
    for entry in entries:
        for key, loc in entry.config_keys:
            if key in known:
                continue
            if key not in matched:
                matched[key] = any(match_key_glob(key, k) for k in head.keys)
            if not matched[key]:
                kind = "glob " if "*" in key else ""
                out.append(make_finding(
                    R.KEY_UNMATCHED,
                    f"config-key {kind}`{key}` matches no config at the head ({len(head.keys)} configs in {where}); "
                    "expected an existing config key or a `*` glob matching one",
                    loc, data={"key": key},
                ))
    return out
