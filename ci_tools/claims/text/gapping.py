"""One setting said once for several arms: "--mem-fraction-static 0.85 on decode workers and 0.7 on prefill".

After the value of a claim, a bare number that stands with an arm of its own (the arm right after it,
"0.7 on prefill workers", or right before it, "and prefill workers 0.7") is the same setting's value
for that arm.  Anything else between (another word, a flag) ends the reading: an elided subject is
read only where nothing else could be meant.
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import dataclass

from .arms import BAND_NOUNS, ROLE_NOUNS
from .tokens import Reading
from .values import Number, parse_number

_GLUE = {"and", "or", "for", "on", "in", "with", "at", "the", "its", "their", "vs", "versus", "while", ",", "/", "(",
         ")", ":"} | BAND_NOUNS | ROLE_NOUNS


@dataclass(frozen=True)
class GappedValue:
    index: int  # the value's token
    value: Number
    arm_start: int  # the first token of the arm group it belongs to


def gapped_values(r: Reading, arm_spans: Sequence[tuple[int, int]], after: int, own: Container[int]) -> list[GappedValue]:
    """The bare numbers after token ``after`` (the end of a claim and its value), each with its arm.

    ``own``: the first tokens of the arm groups the claim itself is about ("0.85 on decode workers").
    """
    starts = {a: b for a, b in arm_spans}
    owned = {a for a in starts if a in own}  # arm groups that already have a value
    out: list[GappedValue] = []
    pending: tuple[int, Number] | None = None  # a value waiting for the arm after it
    last_arm: int | None = None
    k = after
    while k < len(r.toks):
        if k in starts:
            if pending is not None:
                out.append(GappedValue(pending[0], pending[1], k))
                owned.add(k)
                pending = None
            last_arm, k = k, starts[k]
            continue
        t = r.toks[k]
        if t.low in _GLUE:
            k += 1
            continue
        number = parse_number(t.text) if r.live(k) and t.text[:1].isdigit() else None
        if number is None or pending is not None:
            break
        nxt = k + 1
        while nxt < len(r.toks) and nxt not in starts and r.toks[nxt].low in _GLUE:
            nxt += 1
        if nxt in starts:
            pending = (k, number)  # "and 0.7 on prefill workers"
        elif last_arm is not None and last_arm not in owned:
            out.append(GappedValue(k, number, last_arm))  # "and prefill workers 0.7"
            owned.add(last_arm)
        else:
            break
        k += 1
    return out
