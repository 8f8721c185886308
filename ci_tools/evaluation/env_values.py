"""The values of a job's environment as the evaluator sees them: one shared object per name and text.

Its own module because both the single-node evaluator and the multinode script chain seed an
interpreter with them, and the first dispatches to the second.
"""

from __future__ import annotations

from ..bounded import BoundedDict
from ..shell.model import Value
from ..shell.relocate import JOB_ENV

ENV_NOTE = "job environment"
RUNTIME_NOTE = f"{ENV_NOTE}, set at run time"

# Jobs of one config share most of their environment: its values are built once.
_ENV_VALUES: BoundedDict[tuple[str, str | None], Value] = BoundedDict(200_000)


def env_value(name: str, text: str | None) -> Value:
    """A variable of the job's environment (None: known only at run time), at the stand-in location.

    One object per name and text: jobs that get the same value share it, so what is computed from it
    is computed once (see .pure and .memo).
    """
    key = (name, text)
    found = _ENV_VALUES.get(key)
    if found is None:
        note = ENV_NOTE if text is not None else RUNTIME_NOTE
        found = _ENV_VALUES.put(key, Value(text, JOB_ENV, expression=f"${name} ({note})"))
    return found


def set_at_run_time(value: Value | None) -> bool:
    """A job variable passed on as is whose value only the node knows (its port, a launcher's path)."""
    return value is not None and value.text is None and value.expression.endswith(f"({RUNTIME_NOTE})")
