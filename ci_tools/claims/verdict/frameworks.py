"""The serving framework a sentence speaks of, when the entry's configs run another.

An entry of an SGLang key may describe the vLLM sweep it follows: "This tracks the vLLM agentic lane on the same
runner, which sweeps DEP4 with a DRAM tier at 48/64".  The arms and points of that sentence are the vLLM key's;
"no job is DEP4 DRAM" would be said of the wrong config.  A part of the sweep or a list of points that no job of
the entry runs, in a sentence naming only frameworks none of the entry's configs is of, is left unverified naming
them.  (Settings stay checked: "vLLM-style chunked prefill" still says what this recipe passes.)
"""

from __future__ import annotations

from typing import Sequence

from ...jobs.job import Job
from ..text.claim import Claim


def other_framework(claim: Claim, jobs: Sequence[Job]) -> str | None:
    """The frameworks (joined by "/") the claim's sentence names when it names some and none of them is one the
    entry's ``jobs`` run; None otherwise, and for claims of a setting's value."""
    if claim.kind not in ("arm", "concurrency"):
        return None
    named = claim.frameworks
    if not named:
        return None
    own = {str(j.fields.get("framework") or "").lower() for j in jobs}
    if any(word in framework.split("-") for word in named for framework in own):
        return None
    return "/".join(sorted(named))
