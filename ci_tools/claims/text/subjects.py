"""What a phrase is about: recipe env vars, server flags, recipe variables.

A subject is named in prose either by its identifier (``ATOM_DP_LB_REQ_EQUIV=0``,
``--state-checkpoint-interval-tokens``, ``max-num-seqs``) or by words derived
from it (``state checkpoint interval``; ``request equivalence`` through the
abbreviation table REQ -> request, EQUIV -> equivalence).  Domain terms that
no identifier spells (TBO, EPLB, "MTP acceptance") come from the vocabulary:
defaults below, extended or overridden by the ``claims:`` section of
``.ci-tools.yaml``.

Matching is deliberately conservative: derived words must cover at least two
consecutive words of one subject, and a phrase that fits two subjects equally
well names neither (it is reported as unverified, never as a finding).
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable, Mapping

from ...config import ProjectConfig
from ...errors import UsageError

ABBREVIATIONS: dict[str, tuple[str, ...]] = {
    "req": ("request",), "reqs": ("request",), "equiv": ("equivalence",), "lb": ("load", "balance"),
    "attn": ("attention",), "mem": ("memory",), "frac": ("fraction",), "ckpt": ("checkpoint",),
    "chkpt": ("checkpoint",), "bs": ("batch", "size"), "spec": ("speculative",), "conc": ("concurrency",),
    "len": ("length",), "acc": ("acceptance",), "cfg": ("config",), "util": ("utilization",),
    "toks": ("token",), "seqs": ("seq",), "seq": ("seq",), "num": ("num",), "tbo": ("tbo",),
    "a2a": ("all2all",), "alltoall": ("all2all",), "moe": ("moe",), "prefill": ("prefill",),
    "max": ("max",), "tp": ("tp",), "ep": ("ep",), "dp": ("dp",), "kv": ("kv",),
}
# Identifier parts that only say which program reads the setting.
_NOISE_PREFIX = {"atom", "sglang", "vllm", "rocm", "enable", "disable", "use", "set", "hip", "nccl", "rccl"}
# Recipe inputs from the job's environment: named by config fields, not subjects.
CONTRACT_NAMES = frozenset({
    "MODEL", "MODEL_PREFIX", "IMAGE", "FRAMEWORK", "PRECISION", "ISL", "OSL", "MAX_MODEL_LEN", "TP",
    "PP_SIZE", "DCP_SIZE", "PCP_SIZE", "EP_SIZE", "DP_ATTENTION", "CONC", "SPEC_DECODING", "DISAGG",
    "RUN_EVAL", "EVAL_ONLY", "SCENARIO_TYPE", "IS_AGENTIC", "KV_OFFLOADING", "KV_OFFLOAD_BACKEND",
    "KV_OFFLOAD_BACKEND_VERSION",
    "TOTAL_CPU_DRAM_GB", "DURATION", "EXP_NAME", "RESULT_DIR", "PORT", "RUNNER_NAME", "GPU_COUNT",
    "CONC_LIST", "HOME", "PATH", "PWD",
})


# stem and identifier_words are asked the same few thousand words hundreds of thousands of times in a replay
# of the history: pure functions of their text, kept (bounded) rather than recomputed.
@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    w = word.lower()
    if len(w) > 6 and w.endswith("ency"):
        return w[:-2] + "t"  # "concurrency" names what CONCURRENT_REQUESTS counts
    if len(w) > 3 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        return w[:-1]
    return w


@lru_cache(maxsize=1 << 16)
def identifier_words(name: str) -> tuple[str, ...]:
    """``--state-checkpoint-interval-tokens`` -> (state, checkpoint, interval, token)."""
    parts = [p for p in re.split(r"[-_.]+", name.strip("-")) if p]
    out: list[str] = []
    for p in parts:
        low = p.lower()
        out.extend(stem(w) for w in ABBREVIATIONS.get(low, (low,)))
    return tuple(out)


@dataclass(frozen=True)
class Subject:
    kind: str  # "flag" | "env" | "var" | "key" (of a JSON/YAML flag value: --compilation-config.cudagraph_mode)
    name: str

    @property
    def key_path(self) -> str:
        """``cudagraph_mode`` of ``--compilation-config.cudagraph_mode`` ("" for other kinds)."""
        return self.name.partition(".")[2] if self.kind == "key" else ""

    @property
    def words(self) -> tuple[str, ...]:
        words = list(identifier_words(self.key_path or self.name))
        while len(words) > 1 and words[0] in _NOISE_PREFIX:
            words.pop(0)
        return tuple(words)

    def display(self) -> str:
        return self.name


@dataclass(frozen=True)
class VocabularyEntry:
    term: str
    patterns: tuple[str, ...]
    true_words: tuple[str, ...] = ()
    false_words: tuple[str, ...] = ()

    @property
    def term_words(self) -> tuple[str, ...]:
        return _term_words(self.term)


@lru_cache(maxsize=4096)
def _term_words(term: str) -> tuple[str, ...]:
    return tuple(stem(w) for w in re.findall(r"[A-Za-z0-9]+|[\u4e00-\u9fff]+", term))


_MTP_ACCEPTANCE = ("--*acceptance-length*", "--*acceptance-len*", "--*acceptance_length*", "*ACCEPTANCE_LENGTH*",
                   "*ACC_LEN*", "*ACCEPT_LEN*")
_DRAFT_TOKENS = ("--num-speculative-tokens", "--speculative-num-draft-tokens", "--*.num_speculative_tokens")
DEFAULT_VOCABULARY: tuple[VocabularyEntry, ...] = (
    VocabularyEntry("TBO", ("--enable-tbo", "--enable-two-batch-overlap")),
    VocabularyEntry("two batch overlap", ("--enable-tbo", "--enable-two-batch-overlap")),
    VocabularyEntry("two-batch overlap", ("--enable-tbo", "--enable-two-batch-overlap")),
    VocabularyEntry("EPLB", ("--enable-eplb", "--*eplb*", "*_EPLB")),
    VocabularyEntry("MTP acceptance", _MTP_ACCEPTANCE, ("golden", "synthetic", "simulated"), ("real", "真实")),
    VocabularyEntry("MTP 接受率", _MTP_ACCEPTANCE, ("golden", "synthetic", "simulated"), ("real", "真实")),
    VocabularyEntry("MTP acceptance length", _MTP_ACCEPTANCE, ("golden", "synthetic", "simulated"), ("real",)),
    VocabularyEntry("acceptance length", _MTP_ACCEPTANCE, ("golden", "synthetic", "simulated"), ("real",)),
    VocabularyEntry("prefix caching", ("--enable-prefix-caching",)),
    # c2b58030be3d: "16K batching/prefill chunks": the batched-token budget and the chunked-prefill size.
    VocabularyEntry("batching", ("--max-num-batched-tokens",)),
    VocabularyEntry("prefill chunk", ("--chunked-prefill-size",)),
    VocabularyEntry("draft tokens", _DRAFT_TOKENS),
    # Parsers are named in prose by what they parse ("qwen3_coder tool-call parsing").
    VocabularyEntry("tool call parser", ("--tool-call-parser",)),
    VocabularyEntry("tool call parsing", ("--tool-call-parser",)),
    VocabularyEntry("reasoning parser", ("--reasoning-parser",)),
    VocabularyEntry("reasoning parsing", ("--reasoning-parser",)),
)


@dataclass(frozen=True)
class ClaimsSettings:
    vocabulary: tuple[VocabularyEntry, ...] = DEFAULT_VOCABULARY
    abbreviations: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


def _strings(value: Any, where: str, source: str | None) -> tuple[str, ...]:
    if isinstance(value, str) and value:
        return (value,)
    if isinstance(value, list) and value and all(isinstance(v, str) and v for v in value):
        return tuple(value)
    raise UsageError(f"`{where}` must be a string or a non-empty list of strings, found {value!r}", path=source)


def load_claims_settings(config: ProjectConfig) -> ClaimsSettings:
    """The ``claims`` section of ``.ci-tools.yaml``, checked (read when the configuration loads)."""
    return parse_settings(config.section("claims"), config.source)


def parse_settings(section: Mapping[str, Any], source: str | None = None) -> ClaimsSettings:
    """The ``claims:`` section: ``vocabulary`` (term -> subject(s) or a mapping) and ``abbreviations``.

    Example::

        claims:
          vocabulary:
            TBO: --enable-tbo
            MTP acceptance:
              subject: ["--*acceptance-length*"]
              true-words: [golden, synthetic]
              false-words: [real]
          abbreviations:
            EQUIV: equivalence
    """
    unknown = set(section) - {"vocabulary", "abbreviations", "replace-default-vocabulary"}
    if unknown:
        raise UsageError(f"unknown key `claims.{sorted(unknown)[0]}`, expected `vocabulary`, `abbreviations` "
                         "or `replace-default-vocabulary`", path=source)
    replace = section.get("replace-default-vocabulary", False)
    if not isinstance(replace, bool):
        raise UsageError(f"`claims.replace-default-vocabulary` must be true or false, found {replace!r}", path=source)
    entries: list[VocabularyEntry] = []
    vocab = section.get("vocabulary", {})
    if not isinstance(vocab, Mapping):
        raise UsageError(f"`claims.vocabulary` must map terms to subjects, found {vocab!r}", path=source)
    for term, spec in vocab.items():
        where = f"claims.vocabulary.{term}"
        if not isinstance(term, str) or not term.strip():
            raise UsageError(f"`claims.vocabulary` terms must be non-empty strings, found {term!r}", path=source)
        if isinstance(spec, Mapping):
            extra = set(spec) - {"subject", "true-words", "false-words"}
            if extra or "subject" not in spec:
                raise UsageError(f"`{where}` takes `subject` (required), `true-words`, `false-words`; "
                                 f"found {sorted(spec)}", path=source)
            entries.append(VocabularyEntry(
                term, _strings(spec["subject"], f"{where}.subject", source),
                _strings(spec["true-words"], f"{where}.true-words", source) if "true-words" in spec else (),
                _strings(spec["false-words"], f"{where}.false-words", source) if "false-words" in spec else (),
            ))
        else:
            entries.append(VocabularyEntry(term, _strings(spec, where, source)))
    abbrevs: dict[str, tuple[str, ...]] = {}
    raw_abbrevs = section.get("abbreviations", {})
    if not isinstance(raw_abbrevs, Mapping):
        raise UsageError(f"`claims.abbreviations` must map abbreviations to words, found {raw_abbrevs!r}", path=source)
    for abbr, words in raw_abbrevs.items():
        if not isinstance(abbr, str) or not isinstance(words, str) or not words.strip():
            raise UsageError(f"`claims.abbreviations.{abbr}` must be a string of words, found {words!r}", path=source)
        abbrevs[abbr.lower()] = tuple(stem(w) for w in words.split())
    overridden = {e.term.lower() for e in entries}
    defaults = () if replace else tuple(e for e in DEFAULT_VOCABULARY if e.term.lower() not in overridden)
    return ClaimsSettings(vocabulary=(*entries, *defaults), abbreviations=abbrevs)


@dataclass
class Catalog:
    """Every subject the recipes in scope know, with what kind of value it takes."""

    subjects: dict[str, Subject] = field(default_factory=dict)
    boolean_flags: set[str] = field(default_factory=set)
    settings: ClaimsSettings = field(default_factory=ClaimsSettings)
    # Word-like values the recipes of the jobs in scope give each flag or key ("deep_gemm_amxf4_mega_moe",
    # "TRTLLM_RAGGED"): a text may name the setting by its value alone ("mega-MoE").
    values: dict[str, set[str]] = field(default_factory=dict)
    # Flags and keys the recipes give a number in some job, and those they give anything else in some job: a
    # setting only ever given numbers takes no word of prose as its value ("--max-num-seqs follows CONC").
    numbered: set[str] = field(default_factory=set)
    worded: set[str] = field(default_factory=set)
    # Flags the recipes' files spell (see RecipeReads.flags): named by identifier only.
    spelled_flags: frozenset[str] = frozenset()
    # Flags a router of the jobs in scope is given and no server is (a clause that names the router may set them).
    router_flags: set[str] = field(default_factory=set)
    # List settings of the recipes' scripts (RecipeReads.lists): name -> items, for items the text adds.
    lists: dict[str, tuple[str, ...]] = field(default_factory=dict)
    _words: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False)
    _index: dict[str, list[tuple[Subject, int]]] = field(default_factory=dict, repr=False)
    _prefixed: dict[str, list[tuple[Subject, tuple[str, ...]]]] = field(default_factory=dict, repr=False)
    _switches: dict[str, list[Subject]] | None = field(default=None, repr=False)
    _flag_spellings: dict[str, str] | None = field(default=None, repr=False)

    def add(self, kind: str, name: str, boolean: bool = False) -> None:
        if kind != "flag" and name in CONTRACT_NAMES:
            return
        self._words.clear()
        self._index.clear()
        self._prefixed.clear()
        self._switches = None
        self._flag_spellings = None
        existing = self.subjects.get(name)
        if existing is None or (existing.kind == "var" and kind == "env"):
            self.subjects[name] = Subject(kind, name)
        if boolean:
            self.boolean_flags.add(name)

    def words_of(self, subject: Subject) -> tuple[str, ...]:
        found = self._words.get(subject.name)
        if found is None:
            found = self._words[subject.name] = self._derive_words(subject)
        return found

    def word_index(self) -> dict[str, list[tuple[Subject, int]]]:
        """word -> (subject, position of the word in the subject's words), for derived-word matching."""
        if not self._index:
            for subject in self.subjects.values():
                if subject.kind == "var":
                    continue  # recipe variables are named by their identifier only
                for j, w in enumerate(self.words_of(subject)):
                    self._index.setdefault(w, []).append((subject, j))
        return self._index

    def one_word_switches(self) -> dict[str, list[Subject]]:
        """Word -> the on/off flags whose name has that one word of its own (``--enable-metrics``: metrics).
        Read once per catalog (after its subjects and ``boolean_flags`` are set), not once per clause."""
        if self._switches is None:
            self._switches = {}
            for name in self.boolean_flags:
                subject = self.subjects.get(name)
                words = self.words_of(subject) if subject is not None else ()
                if subject is not None and len(words) == 1:
                    self._switches.setdefault(words[0], []).append(subject)
        return self._switches

    def prefixed(self) -> dict[str, list[tuple[Subject, tuple[str, ...]]]]:
        """First word -> (subject, every word of its name) for the subjects whose words leave out a prefix that
        says which program reads them (``enable_attention_dp``: attention, dp), to tell which subject a phrase
        spells whole ("the enable attention dp")."""
        if not self._prefixed:
            for subject in self.subjects.values():
                whole = self._derive_words(subject, strip=False)
                if subject.kind != "var" and whole != self.words_of(subject):
                    self._prefixed.setdefault(whole[0], []).append((subject, whole))
            self._prefixed.setdefault("", [])
        return self._prefixed

    def _derive_words(self, subject: Subject, strip: bool = True) -> tuple[str, ...]:
        if not self.settings.abbreviations and strip:
            return subject.words
        out: list[str] = []
        for part in re.split(r"[-_.]+", (subject.key_path or subject.name).strip("-")):
            if part:
                low = part.lower()
                out.extend(self.settings.abbreviations.get(low) or ABBREVIATIONS.get(low, (stem(low),)))
        while strip and len(out) > 1 and out[0] in _NOISE_PREFIX:
            out.pop(0)
        return tuple(out)

    def by_identifier(self, token: str) -> list[Subject]:
        """Subjects an identifier-shaped token names (exactly, or by its canonical words).

        A key of a structured flag value is named by its path (``cudagraph_mode``,
        ``mla_prefill_backend``) or in full (``--compilation-config.cudagraph_mode``).
        """
        if token in self.subjects:
            return [self.subjects[token]]
        if token.startswith("--"):
            return []
        if token.lower() == token and "_" in token and "." not in token:
            # "attention_backend" where the recipes pass --attention-backend: that flag (its argument's name), not
            # a key of a structured flag that ends so (--speculative-config.attention_backend is named with its
            # path: "speculative_config.attention_backend").
            flag = "--" + token.replace("_", "-")
            flags = [s for s in self.subjects.values() if s.kind == "flag" and _flag_words(s.name) == flag]
            if flags:
                return flags
        if token.lower() == token and ("_" in token or "." in token):
            # A key named by its path, or by the end of its address: ``cudagraph_mode``,
            # ``moe_config.backend``, ``speculative_config.max_draft_len`` (the flag's name in snake case).
            wanted = token.replace("-", "_").split(".")
            keys = [s for s in self.subjects.values() if s.kind == "key"
                    and _address_parts(s.name)[-len(wanted):] == wanted]
            if keys:
                return keys
        canon = identifier_words(token)
        if token.isupper() or "_" in token and token.upper() == token:
            kinds: tuple[str, ...] = ("env", "var")
        elif "-" in token:
            kinds = ("flag",)
        else:
            kinds = ("flag", "env")
        for kind in kinds:
            found = [s for s in self.subjects.values() if s.kind == kind and identifier_words(s.name) == canon]
            if found:
                return found
        if kinds == ("flag",) and token.lower() == token and not token.startswith("-") and \
                "--" + token not in self.spelled_flags:
            # "mem-layout unset" of --hicache-mem-layout: a flag named by the last two or more words of its name,
            # when exactly one flag of the recipes ends so and no flag of the recipes' files is spelled so whole
            # ("moe-runner-backend" is that flag, not --speculative-moe-runner-backend).  The words left out are
            # the name of a family of the recipes' flags (hicache: --hicache-ratio, --hicache-io-backend ...), not
            # a bound ("seq-len" is no name of --max-seq-len), and the flag is no switch (the end of
            # --disable-custom-all-reduce, "all-reduce", names the feature it turns off).
            tail = "-" + token.replace("_", "-")
            ends = [s for s in self.subjects.values() if s.kind == "flag" and _flag_words(s.name).endswith(tail)
                    and s.name not in self.boolean_flags and not _SWITCH_PREFIX.match(s.name)]
            if len(ends) == 1 and self._family_head(_flag_words(ends[0].name)[:-len(tail)]):
                return ends
        if "env" in kinds and "_" in token:
            # "FAST_WARMUP=1" for SGLANG_JIT_DEEPGEMM_FAST_WARMUP: a variable named by the last words of its name
            # (several such variables: the phrase fits several subjects).
            tail = "_" + token.upper()
            found = [s for s in self.subjects.values() if s.kind == "env" and s.name.upper().endswith(tail)]
            if found:
                return found
        if "_" in token and token.lower() == token:
            # "scheduler_delay_factor": the models-table key that feeds --scheduler-delay-factor, a flag the
            # recipe's files spell whether or not a job passes it.
            return [Subject("flag", f) for f in sorted(self.spelled_flags) if identifier_words(f) == canon][:1]
        if re.fullmatch(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+", token):
            # "FAST_WARMUP=1" of SGLANG_JIT_DEEPGEMM_FAST_WARMUP: a variable named by the end of its name, when
            # exactly one variable of the recipes ends so.
            ends = [s for s in self.subjects.values() if s.kind in ("env", "var") and s.name.endswith("_" + token)]
            return ends if len(ends) == 1 else []
        return []

    def _family_head(self, head: str) -> bool:
        """``head`` ("--hicache") begins two or more flags of the recipes and is no bound ("--max")."""
        if head[2:].split("-")[0] in _BOUND_WORDS:
            return False
        return sum(_flag_words(s.name).startswith(head + "-") for s in self.subjects.values() if s.kind == "flag") > 1

    def resolve_vocabulary(self, entry: VocabularyEntry) -> list[Subject]:
        found: list[Subject] = []
        for pattern in entry.patterns:
            if any(ch in pattern for ch in "*?["):
                found.extend(s for s in self.subjects.values() if fnmatch.fnmatchcase(s.name, pattern) and s not in found)
            elif pattern in self.subjects and self.subjects[pattern] not in found:
                found.append(self.subjects[pattern])
            elif pattern.startswith("--"):
                # "--enable_prefix_caching" for the term's "--enable-prefix-caching": the server's parser takes a
                # flag's dashes and underscores alike, so the recipe's spelling is the setting the term names.
                found.extend(s for s in self._flags_spelled_as(pattern) if s not in found)
        if len(found) > 1:
            # An env var that feeds a flag (SYNTHETIC_ACCEPT_LEN -> --speculative-config): the server's setting.
            served = [s for s in found if s.kind in ("flag", "key")]
            found = served or found
        if found:
            return found
        concrete = [p for p in entry.patterns if not any(ch in p for ch in "*?[")]
        if concrete:
            # Named but passed by no recipe in scope: a flag whose absence is checkable (as the recipe's files
            # spell it, when they do).
            first = concrete[0]
            if not first.startswith("--"):
                return [Subject("env", first)]
            spelled = [f for f in sorted(self.spelled_flags) if _flag_words(f) == _flag_words(first)]
            return [Subject("flag", spelled[0] if spelled else first)]
        return []

    def _flags_spelled_as(self, flag: str) -> list[Subject]:
        """The flags of the recipes that are ``flag`` with dashes and underscores swapped."""
        words = _flag_words(flag)
        return [s for s in self.subjects.values() if s.kind == "flag" and _flag_words(s.name) == words]

    def is_boolean(self, subject: Subject) -> bool:
        return subject.name in self.boolean_flags

    def takes_numbers_only(self, subject: Subject) -> bool:
        """Every value the recipes in scope give the setting is a number."""
        return subject.name in self.numbered and subject.name not in self.worded

    def negative_of(self, subject: Subject) -> Subject | None:
        """The flag of the recipes that turns off what ``subject`` (``--enable-prefix-caching``) turns on
        (``--no-enable-prefix-caching``, ``--no-enable_prefix_caching``, ``--disable-prefix-caching``): a
        recipe spells it to leave a default that is on, so a feature named in words is that flag, negated."""
        if subject.kind != "flag" or re.match(r"^--(?:no|disable)[-_]", subject.name):
            return None
        base = subject.name[2:].replace("_", "-")
        own = base[len("enable-"):] if base.startswith("enable-") else base
        wanted = {f"--no-{base}", f"--disable-{own}", f"--no-{own}"}
        if self._flag_spellings is None:
            # Each flag as its parser reads it -> the first spelling of it in name order, once per catalog.
            self._flag_spellings = {}
            for f in sorted({*self.spelled_flags, *(s.name for s in self.subjects.values() if s.kind == "flag")}):
                self._flag_spellings.setdefault(f.replace("_", "-"), f)
        found = [self._flag_spellings[w] for w in wanted if w in self._flag_spellings]
        return Subject("flag", min(found)) if found else None


_SWITCH_PREFIX = re.compile(r"--(?:no|disable|enable)[-_]")
# Words that bound a setting rather than name what it sets: "seq-len" names no --max-seq-len.
_BOUND_WORDS = frozenset({"max", "min", "num", "total", "default", "target", "limit"})


def _flag_words(flag: str) -> str:
    """A flag's name as its parser reads it: ``--enable_prefix_caching`` is ``--enable-prefix-caching``."""
    return "--" + flag[2:].replace("_", "-")


def _address_parts(address: str) -> list[str]:
    """``--speculative-config.max_draft_len`` -> [speculative_config, max_draft_len]."""
    return [p.replace("-", "_") for p in address.lstrip("-").split(".")]


def catalog_from(evals: Iterable[Any], settings: ClaimsSettings, valued_by: Iterable[Any] = (),
                 read_with_default: Iterable[str] = (), spelled_flags: Iterable[str] = (),
                 lists: Mapping[str, tuple[str, ...]] | None = None, written: Iterable[str] = ()) -> Catalog:
    """Subjects of the given RecipeEval objects (None entries are skipped).

    ``valued_by``: the evaluations whose word-like flag and key values the catalog records (the jobs at
    the head revision; a value only the base had is not what the text can mean).
    """
    cat = Catalog(settings=settings, spelled_flags=frozenset(spelled_flags), lists=dict(lists or {}))
    for ev in valued_by:
        if ev is None:
            continue
        for server in ev.servers:
            for flag in server:
                if flag.value is not None and flag.value.text and not flag.keys and not flag.value.text.startswith("{"):
                    _add_value(cat, flag.name, flag.value.text)
                for k in flag.keys:
                    if k.value.text and "[" not in k.path:
                        _add_value(cat, f"{flag.name}.{k.path}", k.value.text)
    valued: set[str] = set()
    flags: set[str] = set()
    routed: set[str] = set()
    keys: set[str] = set()
    subjects = cat.subjects
    # Every job of an entry gives mostly the same names: a name already known as what it would be added as is
    # not added again (Catalog.add would change nothing), which keeps a replay from a million calls.
    for ev in evals:
        if ev is None:
            continue
        for server in ev.servers:
            for flag in server:
                flags.add(flag.name)
                if flag.value is not None:
                    valued.add(flag.name)
                keys.update(f"{flag.name}.{k.path}" for k in flag.keys if "[" not in k.path)
        for router in ev.routers:  # a router's flags are settings too
            for flag in router.flags:
                routed.add(flag.name)
                if flag.value is not None:
                    valued.add(flag.name)
        for env in (ev.env, *ev.server_env):  # a server_env: what each server of a multinode job is given
            for name in env:
                known = subjects.get(name)
                if known is None or known.kind == "var":
                    cat.add("env", name)
        for name in ev.variables:
            if name not in ev.env and name not in subjects:
                cat.add("var", name)
    for name in read_with_default:
        cat.add("env", name)  # read by the recipe's files with a default: ${NAME:-1800}
    for name in written:
        if name not in cat.subjects:
            cat.add("var", name)  # written by a recipe file, given to no server: named by its identifier only
    cat.router_flags = routed - flags
    for name in flags | routed:
        if "." in name:
            keys.add(name)  # a key of a structured value the evaluation wrote as a flag of its own
        else:
            cat.add("flag", name, boolean=name not in valued)
    for name in keys:
        cat.add("key", name)
    return cat


# A value that can name its setting: words joined by ``_`` or ``-`` (not a number, path or JSON).
_NAMING_VALUE = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)+")


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_NUMBER_STARTS = frozenset("-0123456789")


def _add_value(cat: Catalog, name: str, text: str) -> None:
    """Record whether a value is a number, and a value that can name its setting (see _NAMING_VALUE)."""
    known = cat.values.get(name)
    if known is not None and text in known:
        return  # every job of an entry passes mostly the same values
    (cat.numbered if text[:1] in _NUMBER_STARTS and _NUMBER.fullmatch(text) else cat.worded).add(name)
    if _NAMING_VALUE.fullmatch(text):
        cat.values.setdefault(name, set()).add(text)
