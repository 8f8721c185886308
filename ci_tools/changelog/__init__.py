"""The append-only perf changelog: its layout, the gate, appended entries, ``changelog new``.

Modules: :mod:`.layout` (lines and entry blocks), :mod:`.history` (what a
change did to history), :mod:`.entries` (the appended entries, parsed with
head positions), :mod:`.lint` (the gate's rules), :mod:`.schema` (the entry
schema for appended entries), :mod:`.append_only` (the ``append-only: true``
proof), :mod:`.config_keys` (config keys by a line scan), :mod:`.new`
(``changelog new``).
"""
