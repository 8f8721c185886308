"""The config keys a new changelog entry names: the given ones, checked, or those the change affects.

``changelog new`` asks the comparison of the work tree with its base (the
check's context) which configs the change affects, as coverage computes them.
"""

from __future__ import annotations

from typing import Sequence

from ..errors import UsageError
from . import CheckContext


def entry_keys(ctx: CheckContext, given: Sequence[str]) -> tuple[str, ...]:
    """The given keys, each checked against the head's configs; else the configs the change affects."""
    if given:
        from ..model.keys import match_key_glob

        known = ctx.head_configs().keys
        unknown = [k for k in given if not any(match_key_glob(k, key) for key in known)]
        if unknown:
            raise UsageError(f"--key {unknown[0]} matches no config in the work tree ({len(known)} configs); "
                             "expected an existing config key or a `*` glob matching one")
        return tuple(dict.fromkeys(given))
    if not ctx.compared:
        raise UsageError("cannot tell which configs this change affects without a base revision; pass --key KEY or --base REV")
    from ..changelog.coverage import affected_keys

    found = tuple(a.key for a in affected_keys(ctx.change_inputs()))
    if not found:
        raise UsageError(f"no config is affected by the changes since {ctx.base_snapshot.label}; pass --key KEY")
    return found
