"""``changelog new``: append one correctly separated entry, never touching an entry's bytes.

ruamel.yaml emits the entry (quoting whatever needs quoting) in the layout the
file already uses; the entry is then appended to the file's bytes with
exactly one blank line before it, so history stays byte-for-byte intact, and
the result is read back before it is written (:func:`read_back`).  A file
that ends with more than one blank line is separated as the gate's
whitespace policy reads it (:mod:`ci_tools.changelog.policy`): with
``editable`` the extra blank lines become one, with ``history`` they are kept
and are the separator.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from ..errors import UsageError
from ..revision.yamlpos import YamlLoadError, decode_utf8, load_yaml
from .layout import Layout, binary_evidence, is_blank, line_and_column
from .policy import GatePolicy


@dataclass(frozen=True)
class NewEntrySpec:
    config_keys: tuple[str, ...]
    description: tuple[str, ...]
    pr_link: str
    scenario_types: tuple[str, ...] = ()
    append_only: bool = False


def render_entry(spec: NewEntrySpec) -> bytes:
    """The entry as YAML text: ``- config-keys:`` first, 2-space mapping, 4-space list indentation."""
    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString

    if not spec.config_keys:
        raise UsageError("a changelog entry needs at least one config key; pass --key")
    if not spec.description or not all(m.strip() for m in spec.description):
        raise UsageError("a changelog entry needs a non-empty description; pass --message")
    entry = CommentedMap()
    entry["config-keys"] = CommentedSeq(spec.config_keys)
    if spec.scenario_types:
        entry["scenario-type"] = CommentedSeq(spec.scenario_types)
    entry["description"] = CommentedSeq(DoubleQuotedScalarString(m.strip()) for m in spec.description)
    entry["pr-link"] = spec.pr_link
    if spec.append_only:
        entry["append-only"] = True
    yaml = YAML()
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 4096  # one bullet per line, as the file's history writes them
    out = io.StringIO()
    yaml.dump(entry, out)
    # Dumped as a top-level mapping, then made a list item: "- " before the
    # first line, two spaces before the others (ruamel would indent a
    # top-level list like the nested ones).
    lines = out.getvalue().splitlines()
    item = ["- " + lines[0]] + ["  " + line if line else line for line in lines[1:]]
    return ("\n".join(item) + "\n").encode("utf-8")


def require_text(path: str, existing: bytes | None) -> None:
    """Refuse to append to a changelog that is not UTF-8 text: the result would be neither text nor history."""
    if existing is None:
        return
    evidence = binary_evidence(existing)
    if evidence is not None:
        line, column = line_and_column(existing, evidence[0])
        raise UsageError(f"the changelog is not text ({evidence[1]} at column {column}); refusing to append to it. "
                         f"Restore it first (for example `git checkout -- {path}`)", path=path, line=line)
    try:
        decode_utf8(existing, path)
    except YamlLoadError as exc:
        raise UsageError(f"{exc.message} (column {exc.column}); refusing to append to it. Fix that byte first",
                         path=path, line=exc.line) from None


def read_back(path: str, updated: bytes, entry: bytes) -> None:
    """Refuse a write whose result does not read as the file's entries followed by the new one.

    The entry is ruamel.yaml's round-trip output, so it reads back as written; what is checked here is the
    file around it: a changelog that is not a YAML list, or does not parse, would take the appended text as
    something else (or stay broken), and a user's file is never written into that state.
    """
    try:
        whole = load_yaml(updated, path).value
    except YamlLoadError as exc:
        raise UsageError(f"after the append the changelog would not parse ({exc.message}); refusing to write it. "
                         "Fix the file first (`ci-tools validate` shows where)", path=path, line=exc.line) from None
    wanted = load_yaml(entry, path).value
    if not isinstance(whole, list) or not whole or whole[-1] != wanted[0]:
        raise UsageError("the changelog is not a YAML list of entries, so the appended text would not be one of "
                         "them; refusing to write it", path=path, line=1)


def append_entry(existing: bytes | None, entry: bytes, policy: GatePolicy = GatePolicy()) -> bytes:
    """``existing`` followed by ``entry``, separated the way the gate accepts under ``policy``."""
    if not existing:
        return entry
    layout = Layout(existing)
    trailing = len(layout.lines) - len(layout.lines_without_trailing_blanks)
    if trailing > 1 or (trailing == 1 and not existing.endswith(b"\n")):
        if not policy.gaps_editable:
            # The blank lines are history: they stay, and separate the new entry.
            return existing + (b"" if existing.endswith(b"\n") else b"\n") + entry
        kept = b"\n".join(layout.lines_without_trailing_blanks)
        return kept + b"\n\n" + entry
    if trailing == 1:
        return existing + entry
    if existing.endswith(b"\n"):
        return existing + b"\n" + entry
    return existing + b"\n\n" + entry
