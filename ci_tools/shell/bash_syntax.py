"""Whether bash itself reads a script that tree-sitter-bash cannot: the judge of a syntax error.

tree-sitter-bash refuses some valid bash (``"${X:-$((A / (8 / TP)))}"``, a JSON default with escaped
quotes ``"${X:-{\\"name\\":\\"$Y\\"}}"``: 102 versions of 22 files of InferenceX's history).  A recipe
is not wrong because the grammar cannot read it: before a syntax error is reported, ``bash -n``
(which parses and executes nothing) is asked, once per content.
"""

from __future__ import annotations

import shutil
import subprocess

# A script bash needs longer than this to parse is not judged (it is left to the grammar's verdict).
_TIMEOUT_S = 10


def bash_accepts(source: bytes) -> bool | None:
    """True when ``bash -n`` reads ``source`` without error, False when it refuses it, None when there is no
    bash to ask (or it did not answer): then the grammar's errors stand."""
    bash = shutil.which("bash")
    if bash is None:
        return None
    try:
        # The script (a pull request's, in a PR check) is data on stdin: `-n` reads it and runs nothing, and the
        # environment is emptied so that no BASH_ENV or exported function of ours is read either.
        done = subprocess.run([bash, "-n"], input=source, capture_output=True, timeout=_TIMEOUT_S, check=False,
                              env={})
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.returncode == 0
