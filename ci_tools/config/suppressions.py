"""``ignore:`` in ``.ci-tools.yaml``: findings a repository has decided not to report, each with its reason.

```yaml
ignore:
  - rule: runner-undefined          # a rule id, or a prefix ending where a word ends (`changelog-`)
    path: configs/nvidia-master.yaml  # a glob; `**` crosses directories
    config-key: dsv4-fp4-gb300-*    # optional: only findings about these configs
    reason: the gb300-nv fleet is being renamed in #2700
```

A suppressed finding is not reported, and never dropped silently: ``check``
counts the suppressed findings in its summary line and lists them with their
reasons in the job summary; an entry that suppresses nothing is a warning
(``config-ignore-unused``), so stale entries do not pile up.  The schema has
checked the keys; this reader checks what it cannot: that the rule names a
rule, and that the globs are globs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable, Iterable, Mapping, Sequence

from ..errors import UsageError
from ..findings import Finding, matches


@dataclass(frozen=True)
class Suppression:
    rule: str
    path: str
    reason: str
    config_key: str | None = None
    line: int = 0  # the entry's line in the configuration file

    @cached_property
    def _path(self) -> re.Pattern[str]:
        return glob_regex(self.path)

    @cached_property
    def _key(self) -> re.Pattern[str] | None:
        return None if self.config_key is None else glob_regex(self.config_key, crosses="")

    def covers(self, finding: Finding) -> bool:
        if not matches(finding.rule, [self.rule]) or not self._path.fullmatch(finding.location.path):
            return False
        if self._key is None:
            return True
        keys = config_keys_of(finding)
        return bool(keys) and all(self._key.fullmatch(key) for key in keys)


def config_keys_of(finding: Finding) -> tuple[str, ...]:
    """The configs a finding is about, as the rules record them (``data["config_key"]``: one key or a list)."""
    value = finding.data.get("config_key")
    if isinstance(value, str):
        return (value,)
    if isinstance(value, (list, tuple)):
        return tuple(v for v in value if isinstance(v, str))
    return ()


def glob_regex(glob: str, crosses: str = "/") -> re.Pattern[str]:
    """A path glob as ruff and .gitignore read one: ``*`` and ``?`` within a directory, ``**`` across
    directories, ``[...]`` a class.  ``crosses=""``: a name glob (config keys), where ``*`` matches anything."""
    out: list[str] = []
    i = 0
    while i < len(glob):
        c = glob[i]
        if glob.startswith("**/", i) and crosses:
            out.append("(?:.*/)?")
            i += 3
            continue
        if glob.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append(f"[^{re.escape(crosses)}]*" if crosses else ".*")
        elif c == "?":
            out.append(f"[^{re.escape(crosses)}]" if crosses else ".")
        elif c == "[":
            end = glob.find("]", i + 2)
            if end < 0:
                raise ValueError(f"`[` at column {i + 1} is not closed by `]`")
            body = glob[i + 1:end]
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body).replace("\\", "\\\\") + "]")
            i = end + 1
            continue
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out))


def read_suppressions(entries: Sequence[Mapping[str, Any]], shown: str,
                      span_of: Callable[[int], tuple[int, ...]]) -> tuple[Suppression, ...]:
    """The entries of ``ignore:`` (schema-checked), each rule and glob checked with its line (``span_of``: an
    entry's span, line first)."""
    from ..findings import unknown_patterns

    out: list[Suppression] = []
    for index, entry in enumerate(entries):
        line = span_of(index)[0]
        rule = str(entry["rule"])
        if unknown_patterns([rule]):
            raise UsageError(f"`ignore` entry {index + 1}: `rule: {rule}` matches no rule; expected a rule id or a "
                             "prefix of ids ending where a word ends (`ci-tools rules` lists them)", path=shown, line=line)
        key = entry.get("config-key")
        suppression = Suppression(rule, str(entry["path"]), str(entry["reason"]).strip(),
                                  None if key is None else str(key), line)
        for name, glob in (("path", suppression.path), ("config-key", suppression.config_key)):
            if glob is None:
                continue
            try:
                glob_regex(glob)
            except ValueError as exc:
                raise UsageError(f"`ignore` entry {index + 1}: `{name}: {glob}` is not a glob: {exc}",
                                 path=shown, line=line) from None
        if not suppression.reason:
            raise UsageError(f"`ignore` entry {index + 1}: `reason` is empty; say why these findings are not reported",
                             path=shown, line=line)
        out.append(suppression)
    return tuple(out)


@dataclass(frozen=True)
class Suppressed:
    """The outcome of applying ``ignore:``: what is still reported, what each entry suppressed."""

    kept: list[Finding]
    suppressed: list[tuple[Finding, Suppression]]
    unused: list[Suppression]


def apply_suppressions(findings: Iterable[Finding], suppressions: Sequence[Suppression]) -> Suppressed:
    """Split ``findings`` by the first entry that covers each; ``unused``: entries that covered none."""
    kept: list[Finding] = []
    suppressed: list[tuple[Finding, Suppression]] = []
    used: set[int] = set()
    for finding in findings:
        for index, suppression in enumerate(suppressions):
            if suppression.covers(finding):
                suppressed.append((finding, suppression))
                if finding.counts:  # fixing a suppressed finding is no use of the entry at the head
                    used.add(index)
                break
        else:
            kept.append(finding)
    return Suppressed(kept, suppressed, [s for i, s in enumerate(suppressions) if i not in used])


def unused_finding(suppression: Suppression, shown: str) -> Finding:
    """The warning that an entry of ``ignore:`` suppressed nothing, at its line of the configuration
    (``shown``: the file as findings name it)."""
    from ..findings import Location, make_finding
    from .ignore_rules import IGNORE_UNUSED

    key = f", config-key `{suppression.config_key}`" if suppression.config_key else ""
    return make_finding(
        IGNORE_UNUSED,
        f"this `ignore` entry (rule `{suppression.rule}`, path `{suppression.path}`{key}) suppressed no finding; "
        f"its reason was \"{suppression.reason}\". Expected an entry to cover at least one finding: remove it, "
        "or narrow it to what it is still meant to cover",
        Location(shown, suppression.line, 1), data={"rule": suppression.rule, "path": suppression.path})
