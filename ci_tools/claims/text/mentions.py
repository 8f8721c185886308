"""Where a clause names a subject: identifiers, vocabulary terms, words derived from identifiers.

Identifiers first (``--flag``, ``--flag=v``, ``NAME=v``, ``NAME``,
``max-num-seqs``, ``--compilation-config.cudagraph_mode``), then vocabulary
terms (TBO, EPLB, "acceptance length"), then runs of at least two
consecutive words of one subject's identifier ("state checkpoint interval").
A phrase that fits several subjects equally well is kept with all of them;
the extractor reports it as unverified, never as a claim.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache

from .subjects import ABBREVIATIONS, Catalog, Subject, VocabularyEntry, stem
from .tokens import Reading
from .values import fragment_matches, parse_fragment


@dataclass
class Mention:
    start: int  # token index range [start, end)
    end: int
    subjects: list[Subject]
    phrase: str
    via: str  # "identifier" | "vocabulary" | "words"
    vocab: VocabularyEntry | None = None
    attached: str | None = None  # value written into the token (--flag=v, NAME=v)


@dataclass
class Found:
    """What :func:`find_mentions` saw besides mentions: every word (for undocumented changes) and names without a subject."""

    words: set[str]
    unknown_names: list[tuple[str, int]]  # (name, token index): a spelled identifier no recipe in scope has
    several: list[tuple[str, int, int, tuple[str, ...]]]  # (term, start, end, candidates): vocabulary without one subject


# Fields of a config's scenario block that prose names by their key: judged against the job's block.
BLOCK_FIELDS = frozenset({"dram-utilization"})
# Words that cannot name a subject on their own: a derived match needs one other word.
GENERIC_WORDS = {"no", "enable", "disable", "use", "set", "max", "min", "num", "size", "mode", "type", "config",
                 "path", "value", "default", "per", "total", "count", "is", "of"}
# An identifier: kebab-case, snake_case, UPPER_SNAKE, or a dotted key path (``moe_config.backend``).
_IDENTIFIER = re.compile(r"^[A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)+(?:\.[A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)*)*$"
                         r"|^[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)+)+$")


_OPERATED = re.compile(r"^([A-Za-z][\w.-]*?)[/*+](\d[\d.]*)$")
# The first word of a model's name as prose and config keys write it ("DeepSeek V4", "Kimi-K3", "GLM-5.2").
_MODEL_WORDS = ("kimi", "qwen", "glm", "minimax", "llama", "gpt", "deepseek")
# Hyphenated words that name things other than server flags: scenarios, configs, frameworks, hardware.
_NOT_FLAG_WORDS = re.compile(r"fp4|fp8|bf16|mxfp|nvfp|mi3\d\d|[bh][12]00|gb[23]00|b300|rtx|sglang|vllm|trt|atom|dynamo|"
                             r"seq-len|agentic|coding|dsv4|dsr1|" + "|".join(_MODEL_WORDS) + r"|srt-slurm|"
                             r"nvidia|amd|rocm|cuda\d|cu1\d|nightly|\.sh$|\.ya?ml$|\.py$", re.IGNORECASE)


def names_another_thing(word: str) -> bool:
    """A hyphenated word naming a model, hardware, a framework or a file (``MiniMax-M3-MXFP8``, ``gb300``), whose
    parts may still be words of a setting's name."""
    return bool(_NOT_FLAG_WORDS.search(word))


_OTHER_PROGRAMS = {"router", "sglang_router", "sglang-router", "vllm-router", "client", "aiperf", "eval", "evals",
                   "lm-eval", "lm_eval", "frontend", "srtctl", "proxy", "harness", "run_benchmark_serving",
                   "benchmark_serving", "bench_serving", "pip", "pip3", "apt", "apt-get", "salloc", "srun", "sbatch",
                   "huggingface-cli", "wget", "curl"}
_FLAG_LIST_WORDS = {"args", "arguments", "flags", "flag", "options", "knobs", "switches", "serve", "server"}
# Words of installing, building, downloading or starting containers: a flag no recipe's server has, named in such a
# clause ("The wheel is installed with --no-deps", "Containers start with --privileged"), is that tool's.
_TOOL_WORDS = {"install", "installs", "installed", "installing", "reinstall", "reinstalls", "reinstalled",
               "reinstalling", "uninstall", "uninstalled", "wheel", "wheels", "build", "builds", "built", "building",
               "rebuild", "rebuilt", "compile", "compiled", "compiling", "download", "downloads", "downloaded",
               "downloading", "container", "containers", "docker", "requirements", "requirements.txt", "hf"}
# Flags of package installers and container runtimes: not a server's, unless a recipe in scope passes them to one
# or the clause says the server takes it ("Serve with --no-build-isolation").
_SERVING_WORDS = {"serve", "serves", "served", "serving", "server", "servers"}
_TOOL_FLAGS = {"--no-deps", "--pre", "--upgrade", "--force-reinstall", "--no-build-isolation", "--no-cache-dir",
               "--extra-index-url", "--index-url", "--find-links", "--user", "--break-system-packages", "--no-binary",
               "--only-binary", "--editable", "--ignore-installed", "--no-install-recommends", "--privileged",
               "--network", "--ipc", "--shm-size", "--gpus", "--cap-add", "--security-opt", "--group-add",
               "--ulimit", "--entrypoint", "--local-dir"}


def _unset_subject(name: str, kind: str, r: Reading, cat: Catalog) -> Subject | None:
    """A subject for an identifier no recipe in scope sets: a spelled ``--flag``, an environment variable
    (``NAME_WITH_PARTS``), or a bare flag name in a list of server arguments (``disable-radix-cache``).

    Not in a clause about another program (``sglang_router (--pd-disaggregation)``, the benchmark client, an
    installer or a container), not a flag of such a tool, and not a vocabulary term written with hyphens
    (``two-batch-overlap``).
    """
    if any(t.low in _OTHER_PROGRAMS for t in r.toks):
        return None
    if kind == "flag":
        said = {t.low for t in r.toks}
        if not said.isdisjoint(_TOOL_WORDS) or (name in _TOOL_FLAGS and said.isdisjoint(_SERVING_WORDS)):
            return None  # an installer's, a downloader's or a container's flag
    if any(name in values for values in cat.values.values()):
        return None  # "FULL_DECODE_ONLY": a value of a setting, which names that setting (find_value_mentions)
    if kind == "flag":
        return Subject("flag", name)
    if re.fullmatch(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+", name):
        return Subject("env", name)
    if kind == "word" and re.fullmatch(r"[a-z][a-z0-9]*(?:-[a-z0-9]+){2,}", name) and not _NOT_FLAG_WORDS.search(name) \
            and any(t.low in _FLAG_LIST_WORDS for t in r.toks):
        words = tuple(stem(w) for w in name.split("-"))
        if any(e.term_words == words for e in cat.settings.vocabulary):
            return None
        return Subject("flag", f"--{name}")
    return None


def _single_dash_flag(r: Reading, i: int, cat: Catalog) -> tuple[str, str | None] | None:
    """``-tp 16``, ``-tp=16``: a dash written against a name, after a space or an opening mark, that together
    spell a flag the recipes pass with one dash (name and the value attached to it); None otherwise (a dash
    between words, a minus sign, a flag no recipe in scope has)."""
    toks = r.toks
    t = toks[i]
    if t.text != "-" or i + 1 >= len(toks) or toks[i + 1].start != t.end or toks[i + 1].kind not in ("word", "assign"):
        return None
    before = r.source.text[t.start - 1] if t.start > 0 else " "
    if before.isalnum() or before in "-_.":
        return None
    name, _, attached = toks[i + 1].text.partition("=")
    name = "-" + name
    if name not in cat.subjects or r.used[i + 1]:
        return None
    return name, attached or None


def _index_keys(word: str) -> list[str]:
    """The subject words a text word can stand for (see :func:`slot_has`)."""
    keys = [word]
    for suffix in ("s", "es", "ed", "ing", "er"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            keys.append(word[: -len(suffix)])
    return keys


# The endings a slot's word may have beyond the word it stands for ("caches" for "cache").
_ENDINGS = ("s", "es", "ed", "ing", "er")


def slot_has(slot: frozenset[str], word: str) -> bool:
    return word in slot or any(s.startswith(word) and len(word) >= 4 and word.isascii() and len(s) - len(word) <= 3
                               and s[len(word):] in _ENDINGS for s in slot)


def _comma_joined(r: Reading, i: int, attached: str) -> tuple[str, int]:
    """``UCX_TLS=cuda_copy,rc``: a value of words written into its token goes on through commas that no space
    follows (the tokens split it there); the value and the end of the mention."""
    toks, k = r.toks, i + 1
    if not attached[:1].isalpha():
        return attached, k  # numbers: "sizes=4,8,16" is a list the readings of numbers take (or leave) whole
    while (k + 1 < len(toks) and toks[k].text == "," and toks[k].start == toks[k - 1].end
           and toks[k + 1].start == toks[k].end and toks[k + 1].kind == "word" and toks[k + 1].text[:1].isalpha()
           and not r.used[k + 1]):
        attached += "," + toks[k + 1].text
        k += 2
    return attached, k


def find_mentions(r: Reading, cat: Catalog) -> tuple[list[Mention], Found]:
    mentions: list[Mention] = []
    found = Found(set(), [], [])
    toks = r.toks
    taken = [False] * len(toks)
    # "the max num tokens=16K": a word of prose glued to its value, the last word of a setting named in words.
    prose_assigned: dict[int, tuple[str, str]] = {}
    # Identifiers first: --flag, --flag=v, NAME=v, NAME, max-num-seqs.
    for i, t in enumerate(toks):
        if r.used[i]:
            continue
        name, attached = t.text, None
        if t.kind in ("flag", "assign") and "=" in t.text:
            name, _, attached = t.text.partition("=")
        if t.kind == "assign" and is_prose_word(name) and i > 0 and toks[i - 1].kind == "word" and \
                not cat.by_identifier(name) and name.lower() not in BLOCK_FIELDS:
            prose_assigned[i] = (name, attached or "")
            continue
        operated = _OPERATED.match(t.text) if t.kind == "word" else None
        if operated and (_IDENTIFIER.match(operated.group(1)) or operated.group(1) in cat.subjects):
            # "MAX_NUM_SEQS/3", "max-num-seqs*2": the setting in an expression of its value
            subjects = cat.by_identifier(operated.group(1))
            if subjects:
                mentions.append(Mention(i, i + 1, subjects, operated.group(1), "identifier"))
                taken[i] = True
                continue
        dashed = _single_dash_flag(r, i, cat)
        if dashed is not None:
            # "-tp 16", "-tp=16": a flag the recipes spell with one dash (ATOM's -tp), two tokens in the text.
            name, attached = dashed
            mentions.append(Mention(i, i + 2, [cat.subjects[name]], name, "identifier", attached=attached))
            taken[i] = taken[i + 1] = True
            found.words.add(name)
            continue
        if i > 0 and taken[i - 1] and toks[i - 1].text == "-" and toks[i - 1].end == t.start:
            continue  # the name of a one-dash flag read with its dash
        one_word_env = t.kind == "word" and t.text.isupper() and len(t.text) > 3 and t.text in cat.subjects  # PYTHONHASHSEED
        if t.kind == "flag" or t.kind == "assign" or (t.kind == "word" and _IDENTIFIER.match(t.text)) or one_word_env:
            subjects = [Subject("field", name.lower())] if name.lower() in BLOCK_FIELDS else cat.by_identifier(name)
            found.words.add(name)
            unset = _unset_subject(name, t.kind, r, cat)
            end = i + 1
            if attached:
                attached, end = _comma_joined(r, i, attached)
            if subjects:
                mentions.append(Mention(i, end, subjects, name, "identifier", attached=attached))
                taken[i:end] = [True] * (end - i)
            elif unset is not None:
                # Spelled out, but no recipe in scope sets it: a claim about it is judged (nothing sets it).
                mentions.append(Mention(i, end, [unset], name, "identifier", attached=attached))
                taken[i:end] = [True] * (end - i)
            elif t.kind in ("flag", "assign") or name.isupper() or ("." in name and "_" in name):
                # ... or a key path no structured value in scope has ("cuda_graph_config.max_batch_size"): its
                # words are no other setting's
                found.unknown_names.append((name, i))
                taken[i] = True
    # Word slots (sub-words of hyphenated tokens; "KV/index" offers alternatives).
    slots: list[tuple[int, frozenset[str]]] = []
    for i, t in enumerate(toks):
        if i in prose_assigned:
            word = prose_assigned[i][0]
            slots.append((i, frozenset({stem(word)})))
            found.words.add(stem(word))
            continue
        if taken[i] or r.used[i] or t.kind not in ("word", "cjk"):
            continue
        if t.kind == "cjk":
            slots.append((i, frozenset({t.text})))
            found.words.add(t.text)
            continue
        if "/" in t.text and all(p.isalpha() for p in t.text.split("/")):
            slots.append((i, frozenset(stem(p) for p in t.text.split("/"))))
            continue
        for part in re.split(r"[-_+]", t.text):
            if part:
                # "symm mem" as the catalog spells --enable-symm-mem's words (symm, memory); a word of a
                # compound keeps its spelling ("dp-attn" names an arm)
                spelled = ABBREVIATIONS.get(part.lower(), ()) if part == t.text else ()
                slots.append((i, frozenset({stem(part), *spelled}) if len(spelled) == 1 else frozenset({stem(part)})))
                found.words.add(stem(part))
    vocab_taken = _vocabulary(r, cat, slots, taken, mentions, found)
    _derived(r, cat, slots, vocab_taken, taken, mentions)
    _switched_word(r, cat, taken, mentions)
    for i, (name, value) in prose_assigned.items():
        named = [n for n, m in enumerate(mentions) if m.end == i + 1 and m.via != "identifier" and m.attached is None]
        if named:
            m = mentions[named[0]]
            mentions[named[0]] = replace(m, attached=value, phrase=m.phrase.partition("=")[0])
        elif not any(m.start <= i < m.end for m in mentions):
            found.unknown_names.append((name, i))  # no setting's words end in it: a name no recipe in scope has
    mentions.sort(key=lambda m: m.start)
    return mentions, found


def is_prose_word(text: str) -> bool:
    """A plain lower-case word of letters (not an identifier: no "_", no capitals, no digits)."""
    return text.isalpha() and text.islower()


_SWITCH_BEFORE = {"enable", "enables", "enabled", "enabling", "disable", "disables", "disabled", "disabling", "turn",
                  "turns", "turned"}
_SWITCH_AFTER = {"enabled", "disabled", "on", "off"}


def _switched_word(r: Reading, cat: Catalog, taken: list[bool], mentions: list[Mention]) -> None:
    """An on/off flag whose name has one word of its own (``--enable-metrics``: metrics) is named by that word
    where an on/off verb governs it: "Disable the metrics", "the metrics disabled", "Turn the metrics off", "Turn off
    the metrics"."""
    toks = r.toks
    covered = {k for m in mentions for k in range(m.start, m.end)}
    by_word = cat.one_word_switches()
    for i, t in enumerate(toks):
        if t.kind != "word" or taken[i] or i in covered or r.used[i]:
            continue
        word = stem(t.text)
        if word in GENERIC_WORDS or len(word) < 4 or len(by_word.get(word, ())) != 1:
            continue
        k = i - 1
        while k >= 0 and toks[k].low in ("the", "a"):
            k -= 1
        before = toks[k].low if k >= 0 else ""
        after = toks[i + 1].low if i + 1 < len(toks) else ""
        turned = before in ("on", "off") and k > 0 and toks[k - 1].low in _SWITCH_BEFORE  # "Turn off the metrics"
        if before in _SWITCH_BEFORE or after in _SWITCH_AFTER or turned:
            mentions.append(Mention(i, i + 1, by_word[word], t.text, "words"))


def _vocabulary(r: Reading, cat: Catalog, slots: list[tuple[int, frozenset[str]]], taken: list[bool],
                mentions: list[Mention], found: Found) -> set[int]:
    vocab_taken: set[int] = set()
    longer: list[Mention] | None = None  # the words of identifiers, read only when a term is found
    present = _matchable(slots)
    for entry in _longest_first(cat.settings.vocabulary):
        tw = entry.term_words
        if not tw or not all(w in present for w in tw):
            continue  # a word of the term no slot can stand for: no match anywhere
        for si in range(len(slots) - len(tw) + 1):
            if any(si + k in vocab_taken for k in range(len(tw))):
                continue
            if all(slot_has(slots[si + k][1], tw[k]) for k in range(len(tw))):
                a, b = slots[si][0], slots[si + len(tw) - 1][0] + 1
                if longer is None:
                    longer = []
                    _derived(r, cat, slots, set(), list(taken), longer)
                if any(d.start <= a and b <= d.end and d.end - d.start > b - a for d in longer):
                    continue  # "the dyn tool call parser": a setting's own words say more than the term
                subjects = cat.resolve_vocabulary(entry)
                for k in range(len(tw)):
                    vocab_taken.add(si + k)
                if len(subjects) == 1:
                    mentions.append(Mention(a, b, subjects, entry.term, "vocabulary", vocab=entry))
                else:
                    found.several.append((entry.term, a, b, tuple(sorted(s.name for s in subjects))))
                for k in range(a, b):
                    taken[k] = True
    return vocab_taken


@lru_cache(maxsize=16)
def _longest_first(vocabulary: tuple[VocabularyEntry, ...]) -> tuple[VocabularyEntry, ...]:
    """The vocabulary, longer terms first (a settings' vocabulary is the same tuple for every text)."""
    return tuple(sorted(vocabulary, key=lambda e: -len(e.term_words)))


def _matchable(slots: list[tuple[int, frozenset[str]]]) -> set[str]:
    """Every word :func:`slot_has` can find in one of ``slots``: a slot's words and those words without
    one of the endings it allows."""
    out: set[str] = set()
    for _, slot in slots:
        for s in slot:
            out.add(s)
            for suffix in _ENDINGS:
                if s.endswith(suffix) and len(s) - len(suffix) >= 4:
                    out.add(s[:-len(suffix)])
    return out


def _derived(r: Reading, cat: Catalog, slots: list[tuple[int, frozenset[str]]], vocab_taken: set[int],
             taken: list[bool], mentions: list[Mention]) -> None:
    """Runs of >= 2 consecutive words of one subject's identifier."""
    toks = r.toks
    free = [(si, s) for si, s in enumerate(slots) if si not in vocab_taken and not taken[s[0]]]
    index = cat.word_index()
    order = {name: n for n, name in enumerate(cat.subjects)}
    pos = 0
    while pos < len(free):
        best_len = 0
        best: dict[str, tuple[Subject, tuple[str, ...]]] = {}
        starts: set[tuple[str, int]] = set()
        for word in free[pos][1][1]:
            for key in _index_keys(word):
                for subject, j in index.get(key, ()):
                    starts.add((subject.name, j))
        for name, j in sorted(starts, key=lambda s: (order[s[0]], s[1])):
            subject = cat.subjects[name]
            words = cat.words_of(subject)
            k = 0
            while (pos + k < len(free) and j + k < len(words)
                   and slot_has(free[pos + k][1][1], words[j + k])
                   and (k == 0 or free[pos + k][0] == free[pos + k - 1][0] + 1)):
                k += 1
            if k >= 2 and k >= best_len and not set(words[j:j + k]) <= GENERIC_WORDS:
                used_words = words[j:j + k]
                if k > best_len:
                    best = {}
                    best_len = k
                best[subject.name] = (subject, used_words)
        if best_len >= 2:
            whole = _whole_names(cat, free[pos:pos + best_len])
            if whole and not any(len(cat.words_of(s)) == best_len for s, _ in best.values()):
                # "the enable attention dp": enable_attention_dp spelled whole, not the end of
                # DYN_TRTLLM_ENABLE_ATTENTION_DP
                best = {s.name: (s, words) for s, words in whole}
            a, b = free[pos][1][0], free[pos + best_len - 1][1][0] + 1
            phrase = r.source.text[toks[a].start:toks[b - 1].end]
            whole_names = {s.name for s, _ in whole}
            groups: dict[tuple[str, ...], list[Subject]] = {}
            for subject, used_words in best.values():
                groups.setdefault(used_words, []).append(subject)
            for used_words, subjects in groups.items():
                full = [s for s in subjects if len(cat.words_of(s)) == best_len or s.name in whole_names]
                if len(subjects) > 1 and len(full) == 1:
                    subjects = full
                served = [s for s in subjects if s.kind in ("flag", "key")]
                if len(subjects) > 1 and len(served) == 1 and \
                        all(cat.words_of(s) == cat.words_of(served[0]) for s in subjects):
                    # KV_CACHE_DTYPE and --kv_cache_dtype: a variable spelled as the server's flag it feeds
                    subjects = served
                mentions.append(Mention(a, b, subjects, phrase, "words"))
            pos += best_len
        else:
            pos += 1


def _whole_names(cat: Catalog, run: list[tuple[int, tuple[int, frozenset[str]]]]) -> list[tuple[Subject, tuple[str, ...]]]:
    """The subjects whose every word, the prefix their derived words leave out included, is this run of
    consecutive word slots."""
    out: list[tuple[Subject, tuple[str, ...]]] = []
    for word in run[0][1][1]:
        for subject, whole in cat.prefixed().get(word, ()):
            if len(whole) == len(run) and all(slot_has(slot, w) for (_, (_, slot)), w in zip(run, whole)) and \
                    all(run[k][1][0] == run[k - 1][1][0] + 1 for k in range(1, len(run))):
                out.append((subject, whole))
    return out


@dataclass(frozen=True)
class ValueMention:
    """Words that name a setting by (part of) its value: "mega-MoE", "TRT-LLM ragged", "FULL_DECODE_ONLY"."""

    start: int
    end: int
    subject: Subject
    text: str


def find_value_mentions(r: Reading, cat: Catalog, taken: set[int]) -> list[ValueMention]:
    """Spans of one or two words whose parts appear together in the values of exactly one setting.

    Only values of several words qualify (see :attr:`Catalog.values`), and a span must have at least two
    parts, so a plain word ("aiter", "fp8") never names a setting this way.
    """
    out: list[ValueMention] = []
    toks = r.toks
    i = 0
    while i < len(toks):
        found: ValueMention | None = None
        for width in (2, 1):
            span = range(i, i + width)
            if i + width > len(toks) or any(k in taken or not r.live(k) or toks[k].kind != "word" for k in span):
                continue
            text = r.source.text[toks[i].start:toks[i + width - 1].end]
            fragment = parse_fragment(text)
            if len(fragment.parts) < 2 or all(p.isdigit() for p in fragment.parts) or not _identifier_like(text):
                continue
            if all(len(p) == 1 for p in fragment.parts):
                continue  # "K/V", "P/D": letters of an abbreviation, no words of a value ("int-32 K/V offset fixes")
            if fragment.parts[0] in _MODEL_FAMILIES and "_" not in text and not text.islower():
                # "using DeepSeek V4 FP4", "Kimi-K3 recipes": the model as prose names it, not --tokenizer-mode
                # deepseek_v4 (written as the value is, "deepseek-v4 reasoning parser" names the setting)
                continue
            named = sorted({name for name, values in cat.values.items()
                            if any(fragment_matches(fragment, v) for v in values)})
            if len(named) == 1 and named[0] in cat.subjects:
                found = ValueMention(i, i + width, cat.subjects[named[0]], text)
                break
        if found is not None:
            out.append(found)
            i = found.end
        else:
            i += 1
    return out


# The first words of a value that make it a model's name rather than a setting's value: those above, a family's
# versioned word ("Qwen3.5 ...") and families no config names yet.
_MODEL_FAMILIES = frozenset(_MODEL_WORDS) | {"qwen3", "qwen3.5", "mistral", "nemotron", "gemma"}


def _identifier_like(text: str) -> bool:
    """Written as a name, not as plain words: ``FULL_DECODE_ONLY``, ``mega-MoE``, ``TRT-LLM`` (not ``low-latency``,
    nor ``Low-latency`` capitalised as the first word of a sentence or a heading)."""
    return "_" in text or any(ch.isdigit() for ch in text) or any(ch.isupper() for ch in text[1:])
