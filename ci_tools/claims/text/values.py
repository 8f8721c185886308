"""Asserted values as prose writes them, normalised for comparison.

A claimed value keeps the text it was written as (for messages) and a
normalised form.  Numbers with a ``K``/``M`` suffix are ambiguous between
decimal and binary multiples (``32K state checkpoints`` means 32768, ``16K
batching`` 16384, ``3K requests`` 3000), so a number carries every value it
can stand for and matches any of them.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Union

NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "sixteen": 16, "twenty": 20, "thirty-two": 32, "sixty-four": 64,
    "single": 1, "double": 2, "twice": 2, "half": 0.5,
}
# Chinese numerals that appear in PR descriptions (零 = zero).
CJK_NUMBERS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "八": 8, "十": 10}
DTYPES = frozenset({
    "fp4", "fp6", "fp8", "bf16", "fp16", "fp32", "int4", "int8", "mxfp4", "mxfp6", "mxfp8",
    "nvfp4", "fp8_e4m3", "fp8_e5m2", "e4m3", "e5m2", "ptpc_fp8",
    # The names PyTorch and the servers' own flags give the same types (--mamba-ssm-dtype bfloat16).
    "bfloat16", "float16", "float32", "float8_e4m3fn",
})
TRUE_WORDS = frozenset({"on", "true", "enabled", "enable", "yes"})
FALSE_WORDS = frozenset({"off", "false", "disabled", "disable", "no", "none"})
# Words written after a number that only name its unit.
UNIT_WORDS = frozenset({
    "token", "tokens", "second", "seconds", "s", "sec", "ms", "gb", "gib", "mb", "mib",
    "request", "requests", "step", "steps", "slot", "slots", "chunk", "chunks", "%",
    "checkpoint", "checkpoints", "minute", "minutes",
})

_NUM = re.compile(r"^(?P<n>\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?P<suffix>[kKmM])?(?:-?(?P<unit>[a-zA-Z]+|%))?$")
_REL = re.compile(r"^(?P<n>\d+(?:\.\d+)?)x$", re.IGNORECASE)
IMAGE_RE = re.compile(
    # (a registry host may be written as enroot writes it: "nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc14")
    r"(?<![\w./:#-])(?P<ref>(?:[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)+#)?[a-z0-9][a-z0-9._-]*(?:/[a-z0-9][a-z0-9._-]*)+"
    r":[A-Za-z0-9][A-Za-z0-9._-]*(?:@sha256:[0-9a-f]{64})?)"
)


@dataclass(frozen=True)
class Number:
    text: str
    candidates: frozenset[float]
    unit: str = ""
    # "Cap X at 1024", "limit X to 512": the most the setting may be, not its value.
    at_most: bool = False
    # "Floor X at 8", "at least 0.8", "0.82 or higher": the least it may be.
    at_least: bool = False

    def describe(self) -> str:
        shown = self.text if self.text.lower().endswith(self.unit) else f"{self.text} {self.unit}".strip()
        return f"at most {shown}" if self.at_most else f"at least {shown}" if self.at_least else shown


@dataclass(frozen=True)
class Bool:
    text: str
    on: bool

    def describe(self) -> str:
        return "on" if self.on else "off"


@dataclass(frozen=True)
class Word:
    """An enum-like value (``least_tokens``, ``rccl``) or a dtype."""

    text: str
    norm: str
    dtype: bool = False

    def describe(self) -> str:
        return self.text


@dataclass(frozen=True)
class PerConc:
    """A value relative to the job's concurrency (``2x concurrency``) or, with ``per="tp"``, to its tensor
    parallelism (``8192*TP``)."""

    text: str
    factor: float
    per: str = "conc"

    def describe(self) -> str:
        return self.text


@dataclass(frozen=True)
class Image:
    text: str
    ref: str

    def describe(self) -> str:
        return self.text


@dataclass(frozen=True)
class Concurrency:
    """Concurrency values a config is said to generate.

    ``values`` are the points named; for a range only its endpoints are
    asserted (``conc 4-64`` says 4 and 64 are generated, not how it steps).
    ``at_least`` is set for open bands (``c48 and above``).
    """

    text: str
    values: tuple[int, ...]
    is_range: bool = False
    at_least: int | None = None

    def describe(self) -> str:
        return self.text


@dataclass(frozen=True)
class Present:
    """The setting is given at all (``GB-based --hicache-size``, a bare ``disable-radix-cache`` in a list)."""

    text: str

    def describe(self) -> str:
        return "set"


@dataclass(frozen=True)
class Absent:
    """The setting is left to the program's default (``keeps the default eval concurrency``)."""

    text: str

    def describe(self) -> str:
        return "left at its default"


@dataclass(frozen=True)
class NotPassed(Absent):
    """The setting is dropped (``Drop --enforce-eager``, ``Remove the X=1 override``): no job passes it."""

    def describe(self) -> str:
        return "not passed"


@dataclass(frozen=True)
class Fragment:
    """Part of a value, as prose shortens it: ``mega-MoE`` of ``deep_gemm_amxf4_mega_moe``, ``TRT-LLM ragged``
    of ``TRTLLM_RAGGED``, ``20260709`` or ``nightly`` of an image tag."""

    text: str
    parts: tuple[str, ...]  # the words, lower-case, without separators: ("mega", "moe")

    def describe(self) -> str:
        return self.text


@dataclass(frozen=True)
class Multiples:
    """Every size of a list setting is a multiple of ``step``: ``enumerates multiples of (1+2)=3``, an
    ``even-step`` capture list."""

    text: str
    step: int

    def describe(self) -> str:
        return f"a list of multiples of {self.step}"


@dataclass(frozen=True)
class Count:
    """How many points the sweep has: ``9 MTP configs``, ``6 topologies``, ``from 18 configs to 13``.

    ``noun`` is ``configs`` (a config is one search-space row: one job, whatever concurrencies a multinode job
    runs), ``topologies`` (a layout of workers and parallelism, whatever sequence lengths and concurrencies run
    on it: "5 topologies" of ten jobs at two sequence lengths) or ``points`` (one concurrency of a job: ``12 total
    concurrency points``)."""

    text: str
    n: int
    noun: str

    def describe(self) -> str:
        return f"{self.n} {self.noun}"


@dataclass(frozen=True)
class Member:
    """Items the text says a list setting holds: ``add mia1-p01-g09 to submit.sh``, ``exclude ...-g09,g14``."""

    text: str
    items: tuple[str, ...]

    def describe(self) -> str:
        return f"includes {', '.join(self.items)}"


@dataclass(frozen=True)
class FamilyArm:
    """What a recipe family runs (``per-node TP8 low-latency``): every job whose recipe file names the family
    (``..._lowlat_0.yaml``) is of the arm in the claim's scope."""

    text: str
    name: str  # as written ("low-latency")

    @property
    def family(self) -> str:
        """The name in lower-case letters only ("lowlatency"), to match recipe file names by."""
        return re.sub(r"[^a-z]", "", self.name.lower())

    def describe(self) -> str:
        return self.text


@dataclass(frozen=True)
class NoArm:
    """A part of the sweep the text says no job runs (``drop TP8 and TP4/EP4``, ``the LMCache/SimpleCPU
    backends are wired but off this sweep's ladder``); its arms are in the claim's scope."""

    text: str

    def describe(self) -> str:
        return f"no {self.text}"


@dataclass(frozen=True)
class ArmName:
    """A part of the sweep the text says exists (``TP4/EP1``, ``1P4D``); its arms are in the claim's scope."""

    text: str

    def describe(self) -> str:
        return self.text


@dataclass(frozen=True)
class Items:
    """A list value as prose writes it (``[1, 2, 4]``, ``1,2,4``, ``1/2/4``): the list a recipe passes."""

    text: str
    items: tuple[int, ...]

    def describe(self) -> str:
        return self.text


ClaimValue = Union[Number, Bool, Word, PerConc, Image, Concurrency, ArmName, NoArm, FamilyArm, Present, Absent,
                   Fragment, Multiples, Count, Member, Items]


def _num(text: str) -> float:
    return float(text.replace(",", ""))


def parse_number(token: str) -> Number | None:
    """``32K``, ``16k``, ``1M``, ``8192``, ``0.85``, ``3,920``, ``8192-token``, number words."""
    low = token.lower()
    if low in NUMBER_WORDS and low not in {"single", "double", "twice", "half"}:
        return Number(token, frozenset({float(NUMBER_WORDS[low])}))
    base, _, unit = low.partition("-")
    if base in NUMBER_WORDS and unit and base not in {"single", "double", "twice", "half"}:
        return Number(token, frozenset({float(NUMBER_WORDS[base])}), unit)
    if token in CJK_NUMBERS:
        return Number(token, frozenset({float(CJK_NUMBERS[token])}))
    m = _NUM.match(token)
    if not m:
        return None
    n = _num(m.group("n"))
    suffix = (m.group("suffix") or "").lower()
    unit = (m.group("unit") or "").lower()
    if unit and unit not in UNIT_WORDS and unit.rstrip("s") not in UNIT_WORDS:
        return None  # "8k1k", "4x", "20260706" with a word: not a plain number
    if unit == "%":
        return percent(token, n)
    if suffix == "k":
        return Number(token, frozenset({n * 1000, n * 1024}), unit)
    if suffix == "m" and unit == "s" and token[m.start("suffix")] == "m":
        # "1500ms": milliseconds, not mega-seconds; a recipe may keep them as such (a *_MS or TCP timeout) or
        # as seconds
        return Number(token, frozenset({n, n / 1000}), "ms")
    if suffix == "m":
        return Number(token, frozenset({n * 1_000_000, n * 1024 * 1024}), unit)
    return Number(token, frozenset({n}), unit)


def percent(text: str, n: float) -> Number:
    """``88%``: a fraction a recipe writes as 0.88 (--mem-fraction-static), or a number of percent."""
    return Number(text, frozenset({n / 100, n}), "%")


def scaled(number: Number, suffix: str, text: str) -> Number | None:
    """``16 K``, ``8 K tokens``: a number and its multiple written apart."""
    factors = {"k": (1000, 1024), "m": (1_000_000, 1024 * 1024)}.get(suffix.lower())
    if factors is None or number.unit or len(number.candidates) != 1:
        return None
    n = next(iter(number.candidates))
    return Number(text, frozenset({n * factors[0], n * factors[1]}))


def _per(word: str) -> str:
    """What a relative value is per: ``tp`` or the concurrency (``conc``, ``concurrency``)."""
    return "tp" if word == "tp" else "conc"


def parse_relative(tokens: list[str]) -> PerConc | None:
    """``2x concurrency``, ``twice the concurrency``, ``2xCONC``, ``2 * CONC``."""
    words = [t.lower() for t in tokens]
    if not words:
        return None
    joined = " ".join(words)
    m = re.match(r"^(\d+(?:\.\d+)?)\s*(?:x|\*|times)\s*(?:the\s+)?(conc|concurrency|tp)\b", joined)
    if m:
        return PerConc(" ".join(tokens[: len(joined[: m.end()].split())]), float(m.group(1)), _per(m.group(2)))
    m = re.match(r"^(\d+(?:\.\d+)?)x(conc|concurrency|tp)\b", joined)
    if m:
        return PerConc(tokens[0], float(m.group(1)), _per(m.group(2)))
    m = re.match(r"^(twice|double|half)\s+(?:the\s+)?(?:conc|concurrency)\b", joined)
    if m:
        return PerConc(" ".join(tokens[: len(joined[: m.end()].split())]), float(NUMBER_WORDS[m.group(1)]))
    if re.match(r"^(?:the\s+)?(?:conc|concurrency)\b", joined) and words[0] in {"conc", "concurrency", "the"}:
        n = 2 if words[0] == "the" else 1
        return PerConc(" ".join(tokens[:n]), 1.0)
    return None


def parse_bool(token: str) -> Bool | None:
    low = token.lower()
    if low in TRUE_WORDS:
        return Bool(token, True)
    if low in FALSE_WORDS:
        return Bool(token, False)
    return None


def parse_dtype(token: str) -> Word | None:
    low = token.lower().replace("-", "_")
    if low in DTYPES:
        return Word(token, low, dtype=True)
    return None


def parse_word(token: str) -> Word | None:
    """An identifier-like value: ``least_tokens``, ``rccl``, ``FULL_AND_PIECEWISE``, a list of them written with
    commas and no spaces (``cuda_copy,rc``, as an environment variable takes it)."""
    if not re.match(r"^[A-Za-z][A-Za-z0-9_.-]*(?:,[A-Za-z][A-Za-z0-9_.-]*)*$", token):
        return None
    return Word(token, normalise_word(token))


def normalise_word(text: str) -> str:
    return text.strip("'\"`").lower().replace("-", "_")


def parse_image(text: str) -> Image | None:
    m = IMAGE_RE.fullmatch(text)
    if not m or "..." in text:
        return None
    return Image(text, normalise_image(text))


def normalise_image(ref: str) -> str:
    ref = ref.strip().strip("'\"`")
    host, hash_, path = ref.partition("#")
    if hash_ and "." in host and "/" not in host:
        ref = f"{host}/{path}"  # enroot's "nvcr.io#nvidia/..." is the registry's nvcr.io/nvidia/...
    for prefix in ("docker.io/library/", "docker.io/"):
        if ref.startswith(prefix):
            ref = ref[len(prefix):]
    return ref


def number_matches(claim: Number, actual: str) -> bool | None:
    """True/False when ``actual`` is a number, None when it is not (cannot compare)."""
    parsed = parse_number(actual.strip().strip("'\""))
    if parsed is None:
        return None
    if claim.at_most:
        return all(a <= _bound_for(a, claim.candidates) + 1e-9 for a in parsed.candidates)
    if claim.at_least:
        return all(a >= _bound_for(a, claim.candidates) - 1e-9 for a in parsed.candidates)
    return any(abs(a - c) < 1e-9 for a in parsed.candidates for c in claim.candidates)


def _bound_for(actual: float, candidates: frozenset[float]) -> float:
    """The reading of a bound in the actual value's scale: "70%" is 0.7 beside 0.75 (not 70), "16K" 16384
    beside 16384 (not 16000)."""
    if actual <= 0 or any(c <= 0 for c in candidates):
        return min(candidates, key=lambda c: abs(c - actual))
    return min(candidates, key=lambda c: abs(math.log(c / actual)))


_DTYPE_ALIASES = {"bfloat16": "bf16", "float16": "fp16", "half": "fp16", "float32": "fp32", "float": "fp32",
                  "float8": "fp8", "fp8_e4m3fn": "fp8_e4m3"}


def dtype_matches(claim: Word, actual: str) -> bool | None:
    a = normalise_word(actual)
    if a in {"auto", ""}:
        return None
    a = _DTYPE_ALIASES.get(a, a)
    c = _DTYPE_ALIASES.get(claim.norm, claim.norm)
    if a == c or a.startswith(c + "_") or c.startswith(a + "_"):
        return True
    return False


def word_matches(claim: Word, actual: str) -> bool:
    """The word the recipe passes; a list of words (``custom_ops: ["all"]`` of a JSON config) is its items joined
    as the text writes them (``custom_ops=all``, ``UCX_TLS=cuda_copy,rc``)."""
    if normalise_word(actual) == claim.norm:
        return True
    items = _word_list(actual)
    if items is not None and normalise_word(",".join(items)) == claim.norm:
        return True
    return _names_the_model(claim.norm, normalise_word(actual)) or _names_the_kernel(claim.norm, normalise_word(actual))


# What an enum value of a backend adds to the kernel's name (``TRITON_ATTN``, ``FLASH_ATTN``, ``aiter_moe``).
_KIND_SUFFIXES = {"attn", "attention", "backend", "kernel", "kernels", "impl", "moe", "mla"}


def _names_the_kernel(claimed: str, actual: str) -> bool:
    """A backend named by its kernel alone, as prose does ("force the Triton attention backend" of
    ``TRITON_ATTN``): the value is the claimed word and a word of what kind of backend it is."""
    name, _, kind = actual.rpartition("_")
    return bool(name) and claimed == name and kind in _KIND_SUFFIXES


# A model named as the config keys name it (``dsv4`` of DeepSeek-V4), as parsers and tokenizer modes spell it.
_MODEL_SHORT = {"dsv4": "deepseek_v4", "dsv3": "deepseek_v3", "dsr1": "deepseek_r1"}
_MODEL_VERSION = re.compile(r"^[a-z]?\d+(?:\.\d+)?$")


def _names_the_model(claimed: str, actual: str) -> bool:
    """A value that names a model, written as the model's name without its version ("the MiniMax reasoning
    parser" of ``minimax_m3``) or by the short name config keys give it ("the DSv4 parser" of ``deepseek_v4``)."""
    if _MODEL_SHORT.get(claimed) == actual:
        return True
    name, _, version = actual.rpartition("_")
    return bool(name) and claimed == name and bool(_MODEL_VERSION.match(version))


def _word_list(text: str) -> list[str] | None:
    """The items of a JSON list of words or numbers (``["all"]``), None for anything else."""
    if not text.startswith("["):
        return None
    try:
        items = json.loads(text)
    except ValueError:
        return None
    if not isinstance(items, list) or not items or not all(isinstance(i, (str, int, float)) for i in items):
        return None
    return [str(i) for i in items]


def image_matches(claim: Image, actual: str) -> bool | None:
    """True/False; None when the claim names another repository (likely another program's image)."""
    a = normalise_image(actual)
    c = claim.ref
    if a == c:
        return True
    if a.split(":", 1)[0] != c.split(":", 1)[0]:
        return None
    claimed_tag, actual_tag = c.partition(":")[2], a.partition(":")[2].split("@", 1)[0]
    if _on_channel(claimed_tag, actual_tag) or _abbreviated_commit(claimed_tag.split("@", 1)[0], actual_tag) or \
            _cut_short(claimed_tag, actual_tag):
        return True
    # A digest on one side only: compare the tags.
    return a.split("@", 1)[0] == c.split("@", 1)[0] and ("@" not in a or "@" not in c)


# Tags that name a line of builds rather than one build: ``:nightly`` is every ``nightly-<commit>`` of the line.
_CHANNELS = frozenset({"nightly", "latest", "dev"})


# A commit id that ends a tag (``nightly-09663abde0f5...``): prose writes its first seven or more hex digits.
_COMMIT_TAIL = re.compile(r"[0-9a-f]{7,64}$")


def _abbreviated_commit(claimed: str, actual: str) -> bool:
    """The claimed tag is the actual one with the commit id it ends in shortened (``nightly-09663ab``).  A run of
    digits only is a date or a build number, whose prefix is another date (``2026051`` of ``20260511``)."""
    short, full = _COMMIT_TAIL.search(claimed), _COMMIT_TAIL.search(actual)
    if short is None or full is None or full.group().isdigit():
        return False
    return (claimed[:short.start()] == actual[:full.start()] and len(short.group()) < len(full.group())
            and full.group().startswith(short.group()))


# A version in a tag's first word: ``rocm7.2.2``, ``v0.5.8``, ``1.3.0rc14``.
_VERSION_IN_WORD = re.compile(r"\d+\.\d+")


def _cut_short(claimed: str, actual: str) -> bool:
    """The claimed tag is the actual one's first words, cut where a word of its "_"-joined build description
    ends, and names a version (``rocm/atom:rocm7.2.2`` of ``rocm7.2.2_ubuntu24.04_py3.12_..._atom0.1.2.post``).
    Not a cut at a "-": a variant's suffix makes another published image (``vllm/vllm-openai:v0.17.0`` is not
    ``v0.17.0-cu130``), nor at a version's own next part (``v0.5.8.post1`` is another release)."""
    return (len(claimed) < len(actual) and actual.startswith(claimed) and actual[len(claimed)] == "_"
            and _VERSION_IN_WORD.search(claimed) is not None)


def tag_shorthand_matches(claim: Fragment, tag: str) -> bool:
    """An image tag written short: its words are words of the actual tag, in order, with the words between left out
    and a commit id shortened (``nightly-20260519`` of ``nightly-dev-cu13-20260519-dbac4647``, ``nightly-0ba2aa35a8``
    of ``nightly-0ba2aa35a81dcc...``).  Only a tag that names one build (a date or a commit id among its words)."""
    parts = claim.parts
    if len(parts) < 2 or not any(len(p) >= 6 and any(ch.isdigit() for ch in p) for p in parts):
        return False
    words = iter(value_words(tag))
    return all(any(w == p or (len(p) >= 7 and _COMMIT_TAIL.fullmatch(p) is not None and w.startswith(p))
                   for w in words) for p in parts)


def _on_channel(claimed: str, actual: str) -> bool:
    """The claimed tag is a channel and the actual tag one pinned build of it (``nightly-bf610c2f...``)."""
    return claimed.lower() in _CHANNELS and bool(re.match(re.escape(claimed) + r"[-_.]\w", actual, re.IGNORECASE))


def value_words(text: str) -> tuple[str, ...]:
    """The words of a value, lower-case: ``deep_gemm_amxf4_mega_moe`` -> (deep, gemm, amxf4, mega, moe); an
    ellipsis is no word (``rocm7.2.3_..._atom20260511``: the words between left out)."""
    return tuple(w for w in re.split(r"[^a-z0-9.]+", text.lower()) if w.strip("."))


def parse_fragment(text: str) -> Fragment:
    return Fragment(text, value_words(text))


def fragment_matches(claim: Fragment, actual: str) -> bool:
    """The fragment's words appear together in the value: ``mega-MoE`` in ``deep_gemm_amxf4_mega_moe``, and
    ``TRT-LLM ragged`` (trt, llm, ragged) in ``TRTLLM_RAGGED`` (glued words count as one)."""
    words = tuple(_unversioned(w) for w in value_words(actual))
    want = "".join(_unversioned(p) for p in claim.parts)
    if not want:
        return False
    for i in range(len(words)):
        joined = ""
        for w in words[i:]:
            joined += w
            if joined == want:
                return True
            if not want.startswith(joined):
                break
    return False


def _unversioned(word: str) -> str:
    """``v1.3.0rc14`` and ``1.3.0rc14`` are one version (a release tag is written with or without the v), and
    ``0.5.10.post1`` is ``0.5.10post1`` (a post, rc or dev release is written with or without its dot)."""
    word = word[1:] if word[:1] == "v" and word[1:2].isdecimal() else word  # re.match(r"v\d", word)
    return re.sub(r"(?<=\d)\.(?=(?:post|rc|dev)\d)", "", word)


def integer_list(text: str) -> list[int] | None:
    """The sizes of a list value as recipes spell it (``[3,6,9]``, ``1,2,4``, ``1 2 4``), or None."""
    words = [w for w in re.split(r"[\s,\[\]]+", text.strip().strip("'\"")) if w]
    if len(words) < 2 or not all(w.isdigit() for w in words):
        return None
    return [int(w) for w in words]


def item_shape(item: str) -> str:
    """``mia1-p01-g09`` -> ``mia#-p#-g#``: items of one list share it."""
    return re.sub(r"\d+", "#", item.lower())
