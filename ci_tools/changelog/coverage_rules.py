"""Rules that tie changes of benchmark inputs to changelog entries."""

from __future__ import annotations

from ..findings import register

FAMILY = "coverage"

UNCOVERED_KEY = register(
    "coverage-uncovered-key",
    summary="a change affects a config that no appended changelog entry covers",
    what=(
        "Finds every config whose generated jobs or recipe changed between the base and the head: its "
        "master-config entry, the recipe script its jobs resolve to, benchmark_lib.sh or another file the "
        "recipe sources, or the launcher of its runner's fleet. Each such config key must match a config-key glob "
        "of an entry the change appends (and, when that entry names scenario types, for every affected scenario type)."
    ),
    why="Results of an affected config change; without an entry nobody can tell why the published numbers moved.",
    example="# benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi355x_atom.sh changed, no changelog entry appended",
    fix="Append an entry whose config-keys cover the key (`ci-tools changelog new` fills them in).",
    family=FAMILY,
)
