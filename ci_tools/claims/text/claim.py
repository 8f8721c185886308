"""What a text claims: a subject's value over a scope of jobs, and the phrases that could not be tied to one."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...findings import Location
from .scope import Scope
from .subjects import Subject
from .values import ClaimValue


@dataclass(frozen=True)
class Claim:
    kind: str  # "recipe" | "arm" | "image" | "concurrency" | "count"
    value: ClaimValue
    scope: Scope
    location: Location
    clause: str
    subject: Subject | None = None
    phrase: str = ""  # how the text named the subject
    # Concurrency: the text names every point its arms run (a list, a range, "only").
    exhaustive: bool = False
    # Recipe: the text spells the subject's identifier (--flag, NAME, a key), so a value nothing sets
    # contradicts it (rather than being left to a program default the text may mean).
    explicit: bool = False
    # The clause names a condition in words no arm stands for ("in the high-conc fast path", "when ..."):
    # jobs where the setting is missing may be outside it.
    conditioned: bool = False
    # The words of the clause that speak of the new state (without history, quotes and asides).
    said: str = ""
    # The whole sentence of the clause: its other clauses may say where the setting applies ("..., allowing DP
    # to batch more requests").
    sentence: str = ""
    # The sentence right after it in the same text, which may say where the setting applies ("Add
    # --prefill-decode-interval 20: +28% ... Under spec-decoding + DP attention SGLang synchronises decode ...").
    sentence_after: str = ""
    # Recipe: the scope without the arms the setting's own name spells ("Disable the dp attention for decode":
    # the words of --enable-dp-attention are also the dp-attention arm), judged when ``scope`` names no job.
    unnamed_scope: Scope | None = None
    # The claim is about the jobs this scope leaves out ("(default 0.85 elsewhere)" of a claim about some jobs).
    outside: Scope | None = None
    # Recipe: the GPUs named right after the value ("X=1 on H100/H200, Y=1 on B200"): the configs it is said of.
    configs: str = ""
    # Concurrency, in a clause of several bands ("aggregate TP8 at conc [16] and disaggregated 3P/1D DEP8/DEP16
    # at conc [1536]"): the words of its own band, and those of the others.
    band: str = ""
    other_bands: tuple[str, ...] = ()
    # Image: the images or tags the text says the configs move from ("from v0.5.9/v0.5.10 to v0.5.11"): the
    # configs that were on them are the ones it speaks of.
    was: tuple[ClaimValue, ...] = ()
    # Arm and concurrency: the serving frameworks the claim's sentence names ("This tracks the vLLM agentic lane,
    # which sweeps DEP4 ..."), as words of the configs' ``framework`` field.
    frameworks: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Unverified:
    phrase: str
    location: Location
    reason: str
    candidates: tuple[str, ...] = ()


@dataclass
class Extraction:
    claims: list[Claim] = field(default_factory=list)
    unverified: list[Unverified] = field(default_factory=list)
    # Subjects the text names at all (with or without a value): for undocumented changes.
    mentioned: set[str] = field(default_factory=set)
    words: set[str] = field(default_factory=set)
    # The values the text names as the state its change leaves ("Replace PP2 with DP2": pp2), lower-case.
    left: frozenset[str] = frozenset()
