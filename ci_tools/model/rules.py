"""Rules about YAML files as files: syntax, encoding, duplicate keys, presence."""

from __future__ import annotations

from ..findings import register

FAMILY = "yaml"

YAML_SYNTAX = register(
    "yaml-syntax",
    summary="a governed YAML file does not parse (syntax error, bad encoding or empty file)",
    what="Parses every master config, the runners file and the changelog with libyaml and reports the first syntax or encoding error at its position.",
    why="A file that does not parse generates no jobs at all; the sweep silently loses every config it holds.",
    example="dsv4-fp4-mi355x-atom:\n  image: rocm/atom-dev:nightly\n   model: x   # <- bad indentation",
    fix="Correct the YAML at the reported line (indentation, quoting, unclosed brackets) and keep the file UTF-8.",
    family=FAMILY,
)
YAML_DUPLICATE_KEY = register(
    "yaml-duplicate-key",
    summary="a mapping defines the same key twice",
    what="Reports every key that appears twice in one mapping, pointing at both definitions.",
    why="YAML loaders keep the last value silently, so a second `tp:` or a copied config block overrides the first without anyone noticing.",
    example="search-space:\n- { tp: 8, tp: 4, conc-start: 4, conc-end: 64 }",
    fix="Delete one of the two definitions, or rename the copy.",
    family=FAMILY,
)
FILE_MISSING = register(
    "file-missing",
    summary="a file the configuration names does not exist",
    what="Reports a runners file or changelog that the project configuration names but the repository does not have, and master-config globs that match no file.",
    why="Without the runners file no runner label can be checked; without master configs there is nothing to benchmark.",
    example="# .ci-tools.yaml\nrunners: configs/runner.yaml   # the file is configs/runners.yaml",
    fix="Create the file or correct the path in .ci-tools.yaml.",
    family=FAMILY,
)
