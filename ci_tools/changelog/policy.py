"""The ``changelog-gate:`` section of ``.ci-tools.yaml``: what the append-only gate lets a change touch.

Example::

    changelog-gate:
      # Blank or whitespace-only lines between entries (and before the first, after the last):
      #   editable  a change may add, remove or empty them (the default: InferenceX's own check has
      #             allowed deleting them since its #623, and its history has such edits)
      #   history   they are history like every line of an entry: only lines after the base's last byte are new
      whitespace-between-entries: editable

Either way the gate never contradicts itself: an entry appended after a base
that ends with extra blank lines passes with ``editable`` when the change
leaves one (it may remove the others), and with ``history`` when it adds none
(the base's blank lines are then the separator).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..config import ProjectConfig
from ..errors import UsageError
from ..revision.yamlpos import PosMap

SECTION = "changelog-gate"
EDITABLE, HISTORY = "editable", "history"
WHITESPACE_CHOICES = (EDITABLE, HISTORY)
_KEYS = ("whitespace-between-entries",)


@dataclass(frozen=True)
class GatePolicy:
    whitespace_between_entries: str = EDITABLE

    @property
    def gaps_editable(self) -> bool:
        """Blank lines outside entries are not history (a change may edit them)."""
        return self.whitespace_between_entries == EDITABLE


def load_gate_policy(config: ProjectConfig) -> GatePolicy:
    """The ``changelog-gate`` section, checked; errors name the file and line."""
    section = config.section(SECTION)
    path = config.source

    def line(key: str) -> int:
        return section.key_span(key)[0] if isinstance(section, PosMap) and key in section else 0

    for key in section:
        if key not in _KEYS:
            raise UsageError(f"unknown setting `{SECTION}.{key}`, expected one of: {', '.join(_KEYS)}",
                             path=path, line=line(key))
    value = section.get("whitespace-between-entries", EDITABLE)
    if value not in WHITESPACE_CHOICES:
        raise UsageError(f"`{SECTION}.whitespace-between-entries` is {value!r}, expected one of: "
                         f"{', '.join(WHITESPACE_CHOICES)}", path=path, line=line("whitespace-between-entries"))
    return GatePolicy(str(value))


__all__ = ["EDITABLE", "HISTORY", "GatePolicy", "load_gate_policy"]
