"""srt-slurm's override files: ``base`` + ``override_<name>`` + ``zip_override_<name>``, and selectors.

The semantics are srt-slurm's own (``generate_override_configs`` in
NVIDIA/srt-slurm ``src/srtctl/core/config.py`` and ``parse_config_arg`` in
``cli/submit.py``; the merge, zip and selector code is identical in every tag
from v1.0.0 to v1.0.68):

- a file is an override file when it has a top-level ``base`` key;
- ``override_<name>`` is deep-merged into ``base``: mappings merge
  recursively, lists and scalars replace, ``null`` deletes the key;
- ``zip_override_<name>`` gives N variants: every list leaf is a zip
  dimension (length 1 broadcasts, a list of lists gives a literal list),
  variant i takes element i of each and is deep-merged into ``base``;
- a selector (``file.yaml:<selector>``) is ``base``, ``override_<name>``,
  ``zip_override_<name>`` (all its variants), ``zip_override_<name>[i]``, or
  a shell glob over the override and zip keys (``base`` excluded); without a
  selector every override and zip variant is submitted, ``base`` excluded;
- a selector on a file without ``base`` is ignored (srtctl warns).

Every value keeps its source position through the merge (:mod:`.located`).
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass

from .located import Located

_ZIP_INDEX = re.compile(r"(zip_override_[\w-]+)\[(\d+)\]")
_VALID = (re.compile(r"override_\S+"), re.compile(r"zip_override_[\w-]+"), re.compile(r"zip_override_[\w-]+\[\d+\]"))


class VariantError(Exception):
    """The selector or the override sections cannot give a config (srtctl would refuse too)."""


@dataclass(frozen=True)
class Variant:
    """One config the file yields: its srt-slurm suffix (``lowlat_2``, ``base``, "" for a plain file)."""

    suffix: str
    config: Located


def split_config_file(value: str) -> tuple[str, str | None]:
    """``path:selector`` as srtctl splits it (at the last colon)."""
    if ":" in value:
        path, selector = value.rsplit(":", 1)
        return path, selector
    return value, None


def check_selector(selector: str) -> None:
    if selector == "base" or "*" in selector or "?" in selector or any(p.fullmatch(selector) for p in _VALID):
        return
    raise VariantError(f"invalid selector {selector!r}: expected base, override_<name>, zip_override_<name>, "
                       "zip_override_<name>[N] or a glob pattern")


def deep_merge(base: Located, override: Located) -> Located:
    """srt-slurm's deep merge; the result keeps each value's own position."""
    merged = dict(base.value) if base.is_map else {}
    for key, value in override.value.items():
        if value.value is None:
            merged.pop(key, None)
        elif value.is_map and key in merged and merged[key].is_map:
            merged[key] = deep_merge(merged[key], value).keyed(value.key)
        else:
            merged[key] = value
    return Located(merged, base.location, base.key)


def _list_lengths(section: Located) -> list[int]:
    out: list[int] = []
    for value in section.value.values():
        if value.is_list:
            out.append(len(value.value))
        elif value.is_map:
            out.extend(_list_lengths(value))
    return out


def _zip_length(name: str, section: Located) -> int:
    lengths = _list_lengths(section)
    if not lengths:
        raise VariantError(f"{name} contains no list values: nothing to zip")
    if 0 in lengths:
        raise VariantError(f"{name} contains an empty list: cannot zip zero-length lists")
    longer = {n for n in lengths if n != 1}
    if len(longer) > 1:
        raise VariantError(f"{name} has incompatible zip lengths {sorted(longer)}: every list must have the "
                           "same length or length 1 (broadcast)")
    return longer.pop() if longer else 1


def _zip_slice(section: Located, index: int) -> Located:
    out: dict[str, Located] = {}
    for key, value in section.value.items():
        if value.is_list:
            items = value.value
            out[key] = items[0 if len(items) == 1 else index].keyed(value.key)
        elif value.is_map:
            out[key] = _zip_slice(value, index)
        else:
            out[key] = value
    return Located(out, section.location, section.key)


def _zip_variants(key: str, root: Located, base: Located) -> list[Variant]:
    section = _section(root, key)
    group = key.removeprefix("zip_override_")
    return [Variant(f"{group}_{i}", deep_merge(base, _zip_slice(section, i)))
            for i in range(_zip_length(key, section))]


def _override_variant(key: str, root: Located, base: Located) -> Variant:
    return Variant(key.removeprefix("override_"), deep_merge(base, _section(root, key)))


def _section(root: Located, key: str) -> Located:
    section = root.get(key)
    if section is None or not section.is_map:
        raise VariantError(f"section {key} is not a mapping")
    return section


def variants(root: Located, selector: str | None) -> list[Variant]:
    """The configs ``srtctl apply -f FILE[:selector]`` submits, in srtctl's order."""
    if not root.is_map:
        raise VariantError("the recipe is not a YAML mapping")
    if "base" not in root.value:
        return [Variant("", root)]  # srtctl ignores a selector on a plain config
    base = _section(root, "base")
    overrides = sorted(k for k in root.value if k.startswith("override_"))
    zips = sorted(k for k in root.value if k.startswith("zip_override_"))
    available = ", ".join([*overrides, *(f"{k}[i]" for k in zips)]) or "(none)"
    if selector is None:
        out = [_override_variant(k, root, base) for k in overrides]
        for k in zips:
            out.extend(_zip_variants(k, root, base))
        return out
    check_selector(selector)
    m = _ZIP_INDEX.fullmatch(selector)
    if m:
        key, index = m.group(1), int(m.group(2))
        if key not in root.value:
            raise VariantError(f"selector {selector!r}: no section {key}; available: {available}")
        group = _zip_variants(key, root, base)
        if index >= len(group):
            raise VariantError(f"selector {selector!r}: index {index} is out of range, {key} has "
                               f"{len(group)} variant{'s' if len(group) != 1 else ''} (0-{len(group) - 1})")
        return [group[index]]
    if selector == "base":
        return [Variant("base", base)]
    if "*" in selector or "?" in selector:
        matched = [k for k in sorted(overrides + zips) if fnmatch.fnmatch(k, selector)]
        if not matched:
            raise VariantError(f"selector {selector!r} matches no section; available: {available}")
        out = []
        for k in matched:
            out.extend(_zip_variants(k, root, base) if k.startswith("zip_override_") else [_override_variant(k, root, base)])
        return out
    if selector not in root.value:
        raise VariantError(f"selector {selector!r}: no such section; available: {available}")
    if selector.startswith("zip_override_"):
        return _zip_variants(selector, root, base)
    return [_override_variant(selector, root, base)]
