"""A models program's escaping helper: what the shell reads back is the value itself, in the quotes it is made for.

InferenceX's ``amd_utils/server_vllm.sh`` (e.g. at c1e6635843d1) evals what
an inline program prints: each value goes through ``bash_escape`` (a
backslash before ``\\``, ``"``, ``$`` and a backquote) and is printed inside
double quotes.  The model took the helper for an unknown function, so every
vLLM disaggregated job's server flags and model environment were unknown.
Real Python and real bash are the oracle here: the program runs, bash evals
its output, and the model must state exactly what bash then holds.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ci_tools.findings import Location
from ci_tools.evaluation.multinode.py_snippet import model_snippet

MODELS = """\
Kimi-K2.5-MXFP4:
  prefill_flags: "--tensor-parallel-size 8 --block-size 1 --kv-transfer-config '{\\"kv_role\\": \\"kv_producer\\"}'"
  env: "VLLM_USE_V1=1 TRICKY=$HOME`id`\\\\n QUOTE=\\"x\\""
"""

PROGRAM = """\
import yaml, sys

with open('{models}') as f:
    models = yaml.safe_load(f)

m = models['Kimi-K2.5-MXFP4']

def bash_escape(s):
    \"\"\"Escape a value for safe embedding in a bash double-quoted assignment.\"\"\"
    return {body}

pf = bash_escape(m.get('prefill_flags', '--tensor-parallel-size 8'))
ev = bash_escape(m.get('env', ''))
dev = bash_escape(m.get('decode_env', ''))
print(f{outer}PREFILL_SERVER_CONFIG={quote}{{pf}}{quote}{outer})
print(f{outer}MODEL_ENVS={quote}{{ev}}{quote}{outer})
print(f{outer}DECODE_MODEL_ENVS={quote}{{dev}}{quote}{outer})
"""
ESCAPE = "s.replace('\\\\', '\\\\\\\\').replace('\"', '\\\\\"').replace('$', '\\\\$').replace('`', '\\\\`')"
NAMES = ("PREFILL_SERVER_CONFIG", "MODEL_ENVS", "DECODE_MODEL_ENVS")


def _program(tmp_path: Path, body: str = ESCAPE, quote: str = '"') -> tuple[str, Path]:
    models = tmp_path / "models_vllm.yaml"
    models.write_text(MODELS, encoding="utf-8")
    outer = '"' if quote == "'" else "'"
    return PROGRAM.format(models=models, body=body, quote=quote, outer=outer), models


def _modelled(program: str, models: Path) -> dict[str, tuple[str | None, str]]:
    def read_text(path: str) -> tuple[str, bytes] | None:
        return (path, models.read_bytes()) if path == str(models) else None

    return {a.name: (a.value.text, a.value.expression)
            for a in model_snippet(program, read_text, {}, Location("server_vllm.sh", 127))}


def _bash_reads(program: str) -> dict[str, str]:
    """What bash holds after ``eval "$(python3 -c PROGRAM)"`` (the program really run)."""
    script = 'eval "$("$PY" -c "$PROGRAM")" && printf "%s\\0" ' + " ".join(f'"${n}"' for n in NAMES)
    done = subprocess.run(["bash", "-c", script], env={"PY": sys.executable, "PROGRAM": program, "HOME": "/root"},
                          capture_output=True, check=True)
    return dict(zip(NAMES, done.stdout.decode().split("\0")))


def test_values_escaped_for_double_quotes_are_what_bash_reads_back(tmp_path: Path) -> None:
    program, models = _program(tmp_path)
    bash = _bash_reads(program)
    assert "$HOME`id`" in bash["MODEL_ENVS"] and '"kv_role"' in bash["PREFILL_SERVER_CONFIG"]  # nothing expanded
    assert {name: text for name, (text, _) in _modelled(program, models).items()} == bash


@pytest.mark.parametrize("body, quote, why", [
    (ESCAPE, "'", "is escaped for \"-quoting but printed inside '"),
    # The backslash escaped last doubles the backslashes the other escapes put: not the value any more.
    ("s.replace('\"', '\\\\\"').replace('$', '\\\\$').replace('\\\\', '\\\\\\\\')", '"', "is not known"),
])
def test_a_helper_whose_output_bash_reads_otherwise_leaves_the_value_unknown(tmp_path: Path, body: str, quote: str,
                                                                               why: str) -> None:
    program, models = _program(tmp_path, body, quote)
    bash = _bash_reads(program)
    modelled = _modelled(program, models)
    assert bash["MODEL_ENVS"] != MODELS.split('env: "')[1]  # bash does read something else
    text, expression = modelled["MODEL_ENVS"]
    assert text is None and why in expression
