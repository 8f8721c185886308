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
from ..revision.yamlpos import key_line

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
    config.reject_unknown_keys(SECTION, _KEYS)
    section = config.section(SECTION)
    value = section.get("whitespace-between-entries", EDITABLE)
    if value not in WHITESPACE_CHOICES:
        raise UsageError(f"`{SECTION}.whitespace-between-entries` is {value!r}, expected one of: "
                         f"{', '.join(WHITESPACE_CHOICES)}", path=config.source,
                         line=key_line(section, "whitespace-between-entries"))
    return GatePolicy(str(value))


__all__ = ["EDITABLE", "HISTORY", "GatePolicy", "load_gate_policy"]
