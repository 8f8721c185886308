"""Claims in prose: (subject, asserted value, scope, span).

Each clause is tokenised once (:mod:`.tokens`).  History, reports and
somebody else's words are masked before anything is read (:mod:`.context`).
The clause is cut into segments by the arms it names (:mod:`.arms`: "TP4 at
c1-c32 and DEP8 at c8-c72" is two segments; "for both TP4 and TEP4" and
"with both SimpleCPU and Mooncake" qualify the segment they follow; a
parenthetical right after an arm defines it, "DEP8 (TP8/EP8 +
dp-attention)"); every claim takes the scope of the segment it stands in.
What remains is read for config-field claims (arms that exist, concurrencies
they run, image references) and for recipe subjects (:mod:`.mentions`) with
the value written next to them (:mod:`.valueread`).

The extractor prefers silence: a subject without a value, a value without a
subject, or a phrase that fits two subjects yields an :class:`Unverified`
record, never a claim.
"""

from __future__ import annotations

import functools
import re
from dataclasses import replace
from typing import Sequence

from ...findings import Location
from .arms import (
    Arm,
    Group,
    atoms,
    either_way,
    groups,
    share_unnamed,
    without_ep_if_contrasted,
)
from .claim import Claim, Extraction, Unverified
from .frameworks import frameworks_named
from .concs import ConcSpec, conc_specs, doubling
from .excepted import excepted_part, excepts_the_clause_before, is_only_an_exception
from .context import (
    PLAN_AHEAD,
    default_beside_exception,
    drops_settings,
    ends_with_semicolon,
    explains_previous,
    introduces_list,
    leaves_from_open,
    left_behind,
    mask_history,
    rejects,
    reports,
    skip_clause,
)
from .gapping import gapped_values
from .mentions import Mention, find_mentions, find_value_mentions
from .scope import Scope
from .segments import PART_NOUNS, Segment, competes, merge_where_compatible
from .sentences import LIST_ITEM, Clause, SourceText, split_clauses, split_sentences
from .subjects import Catalog, Subject
from .sweep_readers import NOT_SWEPT, SweepReaders
from .tokens import Reading, Tok, tokenize
from .valueread import STOPWORDS, boolish, negation_before, read_value, value_at, value_slots, values_not_names
from .values import (
    Absent,
    ArmName,
    Bool,
    ClaimValue,
    NoArm,
    Number,
    Present,
    Word,
    parse_dtype,
    parse_fragment,
    parse_image,
    parse_number,
)



# Words that point back to the arm of the clause before ("... and retain its golden MTP acceptance").
_BACK_REFERENCE = re.compile(r"\b(?:its|their|it|them|these|those|the same|both)\b", re.IGNORECASE)
# Clauses that contrast with the one before ("..., while preserving the TP band") name their own jobs.
# ("while retaining X" goes on about the same jobs; a contrast that names its own arm has its arm anyway.)
_CONTRAST = re.compile(r"^(?:whereas|but|except|although|though|unlike)\b", re.I)
# A designator introduced by one of these qualifies the segment before it ("... for both TP4 and TEP4").
# Designator words that can also be words of a subject's name ("DP-attention" of --enable-dp-attention).
_SUBJECT_WORDS = ("dp-att", "dp_att", "dp", "attention", "mtp", "speculative", "eagle", "prefill", "decode", "hicache",
                  "offload", "no", "non", "without", "pure", "with")
_ELSEWHERE = re.compile(r"\b(?:legacy|sibling|siblings|counterpart|non-MTP entry|STP entry|MTP entry|base entry|"
                        r"other config|another config|other entry|upstream)\b", re.IGNORECASE)
# A signed percentage and at most three words before a concurrency ("+28% output throughput at", "+34..69% (",
# "-5% at"): a gain or loss measured there.
_GAIN_BEFORE = re.compile(r"(?<![\w.])[-+−]\s?\d[\d.,]*(?:\s*(?:\.\.|-|–|to)\s*[-+−]?\d[\d.,]*)?\s*%"
                          r"(?:\s+[\w/-]+){0,3}\s*(?:\(|\bat|\bon|\bacross)?\s*$")
# What an entry before this one added, named by where it stands ("complements the DEP8/DPA c128 eval above"): its
# layout and points are that entry's.
# ("The fixed-seq-len H200 MTP entry already sweeps conc 4-128": an entry the changelog has, named as what it runs)
_EARLIER_ENTRY = re.compile(r"\b(?:evals?|entry|entries|bullet)\s+above\b|\b(?:previous|preceding|earlier)\s+"
                            r"(?:entry|bullet)\b|\bthe\s+(?!new\b|current\b|same\b)(?:[\w.-]+\s+){1,4}entry\s+"
                            r"(?:already\s+|also\s+|still\s+)?(?:sweeps|runs|covers|uses|has)\b", re.IGNORECASE)
# A clause that likens the change to other recipes ("matching the conc-1 start used on the non-MTP day-zero
# recipes"): what it names is theirs.
_LIKE_OTHERS = re.compile(r"(?:matching|like|as (?:on|in|for)|same as|mirroring)\b.*\b(?:recipes|configs|entries|keys|"
                          r"siblings|counterparts)\b", re.IGNORECASE)
# Words before an arm that make it the thing compared with ("identical to the non-MTP sibling"), and the
# nouns after it that say it is another config, not an arm of this one.
_COMPARED_TO = re.compile(r"\b(?:identical to|same as|mirror(?:s|ing)?|unlike|copied from|matching|interleav(?:ing|es)|"
                          r"matches|as used|used on|used by|as on|as in|like)\b(?:\s+the)?")
_OTHER_THING = frozenset({"sibling", "siblings", "counterpart", "counterparts", "entry", "entries", "recipe", "recipes",
                          "config", "configs", "key", "keys", "variant", "variants", "ladder", "ladders"})
# A clause that gives the subject of the one before its value ("...; set to 1 for Kimi-K2.5").
_SET_TO = re.compile(r"^(?:and\s+)?(?:set|sets|setting)\s+(?:it\s+)?to\b")
# A condition in words: "in the high-conc fast path", "when the cache is full", "only for long prompts".
_CONDITION = re.compile(r"\b(?:when|whenever|where|only|unless|if|otherwise)\b|"
                        # a band named by what it is for ("the high-concurrency band", "at low latency")
                        r"\b(?:low|high|mid|medium|higher|lower|max|min)[- ](?:conc\w*|latency|throughput|batch\w*)\b|\b(?:in|on|for|at)\s+(?:the\s+)?(?:[\w/-]+\s+){0,3}"
                        r"(?:path|paths|branch|case|cases|regime|tail|mode)\b"
                        # "Remove X from the five refreshed prefill and decode environments": some of the recipes
                        r"|\bfrom\s+(?:the\s+)?(?:[\w/-]+\s+){0,6}(?:recipes|environments|configs|scripts|files)\b"
                        # jobs named by what they are not or by a comparison the reader does not resolve: "on the
                        # remaining rows", "for TP>4", "on the smaller TP", "on all non-TP4 rows"
                        r"|\b(?:remaining|rest\s+of\s+the|other)\s+(?:[\w/-]+\s+)?(?:rows|configs|arms|jobs|points|"
                        r"cases|ones|runs|bands)\b|\b(?:tp|ep|dp|pp)\s*(?:>=|<=|!=|>|<|≥|≤|≠)\s*\d|"
                        r"\b(?:smaller|larger|bigger|lower|higher|small|large|big)\s+(?:tp|ep|dp)\b|"
                        r"\bnon-(?:tp|ep|dp|dep|tep|dpa|mtp)\w*"
                        # another value for other jobs: "65536, or 8192 / 16384 on the low and mid bands"
                        r"|,\s*or\s+\d"
                        # a setting given behind a gate ("Concurrency-gate --linear-backend emulation for 8k1k")
                        r"|\bgat(?:e|es|ed|ing)\b"
                        # what the jobs had before ("Restore the image, deepep moe-a2a-backend, and previous env vars
                        # for all non-MTP disagg configs"): a job that never had the setting has nothing to restore
                        r"|\brestor(?:e|es|ed|ing)\b|\brevert(?:s|ed|ing)?\s+to\b",
                        re.IGNORECASE)
# A list labelled as the default ("Default path: block-size=32, async scheduling enabled"): what holds where no
# other setting is said to, which the reader does not know (other bullets may name the exceptions).
_DEFAULT_LABEL = re.compile(r"^\W*(?:the\s+)?defaults?\b", re.IGNORECASE)
# A condition that holds for every clause of its sentence: "appending A=1 and B=1 wherever C is set".
_SENTENCE_CONDITION = re.compile(r"\b(?:wherever|whenever)\b", re.IGNORECASE)
# A GPU as config keys name it (h100, gb300, mi355x), and a word of GPUs joined by "/" ("H100/H200").
GPU_NAME = re.compile(r"[a-z]{1,2}\d{3}|mi\d{3}x", re.IGNORECASE)
_GPU_WORD = re.compile(rf"^(?:(?:{GPU_NAME.pattern})(?:/|$))+$", re.IGNORECASE)
# A first clause that is a condition of the clause after it: "If DP_ATTENTION=true and CONC>=64, pass --enable-tbo",
# or that names its jobs by pointing back at those a sentence before named ("At these two concurrencies only, the
# script switches ..."): jobs the reader of one sentence does not know.
_CONDITION_LEAD = re.compile(r"^(?:if|when|whenever|once|where|unless)\b|^(?:at|for|on|in|with)\s+(?:these|those)\s+"
                             r"(?:\w+\s+)?(?:concurrenc\w*|points|rows|arms|jobs|bands|topologies|cases|runs)\b",
                             re.IGNORECASE)
# The draft model of speculative decoding, whose settings are keys of the speculative config, not server flags.
_DRAFTER = re.compile(r"\b(?:on|for|of|in)\s+the\s+(?:drafter|draft(?:\s+model|\s+head|\s+worker)?|speculator|"
                      r"eagle3?\s+head|mtp\s+head)\b|\bdrafter'?s\b|\bdraft(?:\s+model)?'s\b|"
                      # "The drafter is pinned to attention_backend FLASH_ATTN"
                      r"\bdrafter\s+(?:is|was|runs|uses|stays|keeps|pinned|set)\b", re.IGNORECASE)
_SPECULATIVE_CONFIG = re.compile(r"^--speculative[-_]config$")
# ... a setting named for speculative decoding is the server's own ("--num-speculative-tokens ... for the drafter").
_OF_SPECULATION = re.compile(r"spec|draft|eagle|mtp|medusa", re.IGNORECASE)
# A fleet's launcher, which runs before the recipe: runners/launch_gb300-nv.sh, "the three H100 launchers".
_LAUNCHER = re.compile(r"\blaunch_[\w.-]+\.sh\b|\blaunchers?\b", re.IGNORECASE)
# Another program than the server: its flags are not the server's ("pip install --no-deps --pre vllm": pip's;
# "generate_sweep_configs.py ... --evals-only": the sweep generator's).
# (Whole words: "runner" of --moe-runner-backend is a word of a server flag.)
_OTHER_PROGRAM = re.compile(r"(?<![\w-])(?:to|for|in|on|of|via|into)\s+(?:the\s+)?(?:benchmark|client|router|aiperf|"
                            r"frontend|lm-eval|proxy|harness|load\s+generator)(?![\w-])|(?<![\w-])(?:sglang[_-]router|"
                            r"vllm-router|benchmark client|aiperf|run_benchmark\w*|bench(?:mark)?_serving\w*|runner|"
                            r"launch_[\w.-]+\.sh|srtctl|pip3?\s+install|uv\s+pip|apt(?:-get)?\s+install|salloc|srun|sbatch|"
                            r"docker\s+(?:run|pull|build)|git\s+(?:clone|checkout|fetch|apply)|huggingface-cli|wget|"
                            r"curl|enroot|apptainer|singularity|podman|[\w/-]+\.py)(?![\w-])", re.IGNORECASE)
# ... unless the clause says it speaks of the server's arguments.
_SERVER_WORDS = re.compile(r"\bserver\s+(?:args|arguments|flags|options|command)|\bserve\s+(?:flags|args)\b",
                           re.IGNORECASE)
_ABOUT_CODE = re.compile(r"\b(?:kept|left|retained|preserved|remains?|stays?)\s+in\s+the\s+(?:script|recipe|file|code)\b",
                         re.IGNORECASE)
# A part of an image tag: a version (v0.25.0, 0.5.14), a build date (20260709), a channel (nightly).  Not
# "latest": "the image to latest nightly" says the newest build, whichever tag it has.
_TAG_LIKE = re.compile(r"v?\d+(?:\.\d+)+[\w.-]*|\d{8}|nightly|dev|nightly-[\w.-]+", re.IGNORECASE)
# A label that names the image the text after it gives ("Image: v0.5.18", "- **Image tag**: ...").
_IMAGE_LABEL = re.compile(r"\bimage(?:\s+tag)?\W*:\s*$", re.IGNORECASE)
_LABEL_REACH = 40  # how far before a clause such a label is looked for (its words and their Markdown emphasis)
# ... or, where the words say a tag stands ("image to X", "Image: X", "use the X image"), any word of a build: a digit
# among letters, dots, dashes or underscores ("rocm7.2.5_ubuntu24.04_..._atom20260511", "kimi-k5", "nightly_2026061014").
_BUILD = re.compile(r"(?=[\w.-]*\d)(?=[\w.-]*[A-Za-z_.-])[A-Za-z0-9][\w.-]{3,}")
# ... but not a config key ("the kimik2.5-fp4-mi355x-vllm image": that config's image), a commit id (what an image
# was built from), a dtype ("image to nvfp4") or a name in capitals (a kernel the image picks: FLASHINFER_TRTLLM_...)
_CONFIG_KEY_LIKE = re.compile(r"[\w.]+-(?:fp4|fp8|fp16|bf16|int4|int8|nvfp4|mxfp4|mxfp8)-[\w.-]+", re.IGNORECASE)
_COMMIT_ID = re.compile(r"[0-9a-f]{7,40}")
# Verbs before "the X image" that say which image is used ("Use the v0.5.18 image", "to the v0.23.0 image"); not
# "on the v0.21.0 image", which tells where something was seen.
_USING_AN_IMAGE = frozenset({"use", "uses", "using", "to", "onto"})


def _leads_to(t: Tok) -> bool:
    """``to``, ``->`` or an arrow: what follows is the new state."""
    return t.low in ("to", "->", "→") or t.kind == "arrow"


def _a_build(word: str) -> bool:
    """``word`` is written as an image's tag (see ``_BUILD``)."""
    return bool(_TAG_LIKE.fullmatch(word) or _BUILD.fullmatch(word)) and not _CONFIG_KEY_LIKE.fullmatch(word) and \
        not _COMMIT_ID.fullmatch(word) and parse_dtype(word) is None and not word.isupper()


# Verbs whose object, when it is a concurrency list, names the recipe's branches a setting changes for.
_CHANGE_VERBS_OF_BRANCHES = frozenset({"switch", "switches", "switched", "move", "moves", "moved", "change", "changes",
                                       "changed", "route", "routes", "routed", "flip", "flips", "flipped"})
# What a recipe's code is cut into ("the CONC 2048/4096 launch profiles", "the conc-64 branch").
_BRANCH_NOUNS = frozenset({"branch", "branches", "case", "cases"})
# A participle saying an image moved, between the image and where it moved from or to.
_MOVED = frozenset({"bumped", "updated", "upgraded", "moved", "changed", "switched", "pinned", "refreshed"})
# Parts of a sweep a text may name in words no arm stands for ("the low-latency recipe", "the five configs").
_SUBSET_NOUNS = {"recipe", "recipes", "config", "configs", "configuration", "configurations", "variant", "variants",
                 "topology", "topologies", "layout", "layouts", "profile", "profiles", "point", "points", "row", "rows",
                 "tier", "tiers"}
_PART_VERBS = {"add", "adds", "added", "adding", "run", "runs", "use", "uses", "using", "keep", "keeps", "retain",
               "retains", "sweep", "sweeps", "sweeping", "serve", "serves", "select", "selects", "include", "includes",
               "switch", "switches", "move", "moves", "now", "is", "are", "to", "into", "becomes", "collapse", "at",
               "on", "as", "pure", "plain", "aggregated", "disaggregated"}
_ATTACH = {"for", "on", "in", "across", "with", "without", "w/", "at", "to", "into", "under", "via", "using", "over", "of",
           "behind", "plus", "is", "are", "stays", "remains", "runs", "run", "being"}


def _rival_lists(specs: Sequence[ConcSpec]) -> set[ConcSpec]:
    """Lists of points that each say they are all the points of the same jobs, and differ ("concurrency 1-8 for
    latency, 4-32 for balanced, and 16-128 for throughput", its labels no arm the reader knows): they cannot all be
    true of those jobs, so each is of an arm the reading lost."""
    whole = [s for s in specs if s.exhaustive and not s.condition]
    return set(whole) if len({s.value.values for s in whole}) > 1 else set()


# A wildcard glued to a tag ("v0.5.11-rocm700-mi3*x"): the rest of the pattern after the word before it.
_GLOB_TAIL = re.compile(r"\*[\w.*-]*")


# What may stand between points and the label after them ("16-128 for DEP16"), and what may follow such a label.
_POSTFIX_GLUE = frozenset({"for", "on", "with"})
_LIST_ENDS = frozenset({",", ";", "+", "and", "plus", ")", "."})


def _plus_before(toks: Sequence[Tok], g: Group) -> bool:
    """``TP8 c1-c3 plus TEP8 c3``, ``TP-only conc 1-32 + DP-attn/EP8 conc 64-2048``: "plus" between two arms, each
    with its own points, lists them (it attaches a word of another kind, "TP8 plus MTP", where no points stand
    between)."""
    return g.start > 0 and toks[g.start - 1].low in ("plus", "+")


class ClauseReader(SweepReaders):
    def __init__(self, clause: Clause, catalog: Catalog | None, inherited: Scope, out: Extraction,
                 previous_rejects: bool = False, *, silenced: bool = False, open_from: bool = False,
                 new_predicate: bool = False) -> None:
        self.clause = clause
        self.new_predicate = new_predicate  # the clause follows "and <verb>": a predicate of its own
        self.source: SourceText = clause.source
        self.catalog = catalog
        self.inherited = inherited
        self.out = out
        toks = tokenize(clause)
        self.toks: list[Tok] = toks
        # The arms every word of the clause names, masked or not (what a dropped arm is, too).
        self.all_atoms = atoms(toks, [True] * len(toks))
        designated = {k for a in self.all_atoms for k in range(a.start, a.end)}
        value_like = [k in designated or _value_word(t) for k, t in enumerate(toks)]
        masked = mask_history(toks, clause, value_like, open_from, [k in designated for k in range(len(toks))])
        # "X is 256 by default and 128 on TP8": the clause's claim is the named jobs' value (128); the default is
        # the other jobs' value, which exceptions.elsewhere_claims reads from the whole clause.
        default = default_beside_exception(clause.text)
        passed: frozenset[int] = frozenset()
        if default is not None:
            first, last = clause.start + default[0], clause.start + default[1]
            passed = frozenset(k for k, t in enumerate(toks) if first <= t.start and t.end <= last)
            masked = [m or k in passed for k, m in enumerate(masked)]
        # Every concurrency spec of the clause, masked or not (each reader filters them as it needs).
        self.concs = conc_specs(clause)
        # Set by the sentence: the clause before it is a condition ("If X=1 and CONC>=64, ..."), which this one's
        # settings hold under.
        self.under_condition = False
        # "... for all configs except ep=8": the excepted arms are where the claims do not hold, not their scope.
        self.excepted_words = excepted_part(toks, masked, self.all_atoms, self.concs)
        self.excepted: Scope | None = None
        self.unmasked = list(masked)  # before the exception's words are masked (see excepts_the_clause_before)
        if self.excepted_words is not None:
            start, end, self.excepted = self.excepted_words
            masked = [m or start <= k < end for k, m in enumerate(masked)]
        self.leaves_from_open = leaves_from_open(toks)
        # The values this clause leaves ("A -> B", "from A to B"), and (set by the text) those its earlier clauses left.
        self.leaves = left_behind(toks, masked)
        self.left_before: frozenset[str] = frozenset()
        # What the clause says of the new state, without what it says of the old one ("instead of the default 8").
        said = " ".join(t.text for t, m in zip(toks, masked) if not m)
        live_toks = [t for t, m in zip(toks, masked) if not m]
        self.rejects = rejects(said)
        self.reports = reports(live_toks)
        # "Drop --enforce-eager and X=1": an order that drops settings; the rest of it (the parts of the sweep
        # it names, its concurrencies) is read no more than in any other clause that drops something.
        self.drop_order = drops_settings(live_toks, self._spelled_setting)
        self.skip = silenced or skip_clause(said, live_toks, self._spelled_setting) or \
            (previous_rejects and explains_previous(clause))
        if self.skip and not silenced and catalog is not None and not (previous_rejects and explains_previous(clause)):
            self.skip = self._skipped_for_own_words(toks, masked)
        # Somebody else's layout ("the legacy 4P2D point", "the sibling's TP8 arm"): no claim that it is here.
        self.earlier_entry = bool(_EARLIER_ENTRY.search(said))
        self.elsewhere = bool(_ELSEWHERE.search(said)) or bool(_LIKE_OTHERS.match(said)) or self.earlier_entry
        # Set by the sentence: it reports a run, so the concurrencies and layouts it names are what was run.
        self.in_report = False
        # Set by the sentence: the on/off verb of a list the clause before began (this clause an item of it).
        self.list_verb: Bool | None = None
        # Set by the sentence: it speaks of another program than the server (the router, the benchmark client,
        # the runner's launcher), so the flags it names are that program's.
        self.other_program = bool(_OTHER_PROGRAM.search(clause.text))
        # Set by the sentence: another of its clauses names another program ("Pass --no-preflight ... so srtctl
        # can submit"): a flag no recipe of the jobs knows is that program's.
        self.program_in_sentence = False
        # The sentence speaks of a fleet's launcher (set by the sentence): its variables are the launcher's.
        self.about_launcher = False
        # The clause speaks of the draft model's settings ("No attention_backend override on the drafter").
        self.on_drafter = bool(_DRAFTER.search(clause.text))
        # The subjects this clause names without a value (with their notes), and the one the sentence
        # before left without a value: "Add X support to ...; set to 1 for Kimi" gives X its value.
        self.valueless: list[tuple[Mention, Unverified]] = []
        self.carried: tuple[Mention, Unverified] | None = None
        # "..., but off this sweep's ladder": the clause says the arms of the one before it do not run.
        self.mentions: list[Mention] = []  # the subjects the clause names (set when it is read)
        self.says_unswept = bool(NOT_SWEPT.match(clause.text))
        self.unswept = bool(NOT_SWEPT.search(clause.text)) and not self.says_unswept
        if self.skip:
            masked = [True] * len(toks)
        self.r = Reading(self.source, toks, masked, [False] * len(toks), passed)
        self.segments = self._segments()

    # -------------------------------------------------------- segments

    def _segments(self) -> list[Segment]:
        r = self.r
        live = [not m for m in r.masked]
        found = groups(self.toks, self.all_atoms if all(live) else atoms(self.toks, live))  # nothing masked: the same
        parens = _parentheses(self.toks)
        asides = _value_asides(self.toks, parens)
        specs = [spec for spec in self.concs if not r.masked_span(spec.start, spec.end)
                 and not any(a <= r.index_at(spec.start) < b for a, b in asides)]
        spec_at = [r.index_at(spec.start) for spec in specs]
        # (a list's text may end in the space after it)
        spec_ends = {r.index_at(spec.start + len(self.source.text[spec.start:spec.end].rstrip()) - 1) + 1: k
                     for spec, k in zip(specs, spec_at)}
        segments = [Segment(0, len(self.toks))]
        anchor: Group | None = None  # the last group a parenthetical after it may define
        found = [g for n, g in enumerate(found) if not self._names_a_comparison(g, after_an_arm=n > 0)]
        for n, g in enumerate(found):
            cur = segments[-1]
            after = found[n + 1].start if n + 1 < len(found) else len(self.toks)
            # Points named before and after this group: it starts an arm of its own ("TP8 at c1-c8 and
            # SimpleCPU at c8-c16"), not a qualifier of the one before ("TP band at c1-c16 ... MTP acceptance").
            own_points = (any(cur.start <= k < g.start for k in spec_at)
                          and any(g.end <= k < after for k in spec_at))
            if anchor is not None and _defines(anchor, g, parens):
                cur.arms = merge_where_compatible(cur.arms, g.arms, keep=True)
            elif not cur.arms:
                cur.arms, cur.loose = list(g.arms), list(g.loose)
                anchor = g
            elif not competes(cur.arms, g.arms) and (self._attaches(g) and not (own_points and _plus_before(self.toks, g))
                                                     or not own_points):
                # "... for both TP4 and TEP4", or a word of another kind or a narrower one ("TP8 ... MTP
                # acceptance", "LMCache ... DRAM offload"): the same arm.
                attached = self._attaches(g)
                cur.arms = merge_where_compatible(cur.arms, g.arms, keep=False)
                cur.loose = (merge_where_compatible(cur.loose, g.loose, keep=False) if attached
                             else cur.loose + list(g.loose))
                anchor = g
            else:
                # "conc [4,8] non-DPA + conc [16,32] DPA": a label right after its points starts its arm there
                start = self._labelled_points_before(g, spec_ends, cur)
                if start < g.start and not any(cur.start <= k < start for k in spec_at) and \
                        not competes(cur.arms, g.arms):
                    # "TP8 conc 1-64 non-DPA + ...": the first label narrows the arm before its points
                    cur.arms = merge_where_compatible(cur.arms, g.arms, keep=False)
                else:
                    cur.end = start
                    segments.append(Segment(start, len(self.toks), list(g.arms), list(g.loose)))
                anchor = g
            segments[-1].groups.append(g)
        # A parallel construction shares what its later arms leave unsaid (once each has all its words).
        for before, seg in zip(segments, segments[1:]):
            if len(before.arms) == 1:
                seg.arms = [share_unnamed(a, before.arms[0]) for a in seg.arms]
        # Next to another arm with expert parallelism ("TP16 (conc 1-8), TEP16 (conc 8-32)"), a bare TPn is
        # the arm without it.
        for seg in segments:
            seg.arms = [without_ep_if_contrasted(a, [b for other in segments for b in other.arms if b is not a])
                        for a in seg.arms]
        for spec, k in zip(specs, spec_at):
            seg = next((s for s in segments if s.start <= k < s.end), segments[-1])
            seg.concs.append(spec)
        for seg in segments:
            own = _own_scope(seg)
            # A new predicate ("..., and update the resident recipes with X") that names its own arm speaks of
            # that arm; one that names none, or points back ("its", "the same"), goes on about the one before.
            fresh = self.new_predicate and bool(seg.arms) and not _BACK_REFERENCE.search(self.clause.text)
            seg.scope = own if fresh else own.merged_over(self.inherited)
        return segments

    def _labelled_points_before(self, g: Group, spec_ends: dict[int, int], cur: Segment) -> int:
        """Where the arm of group ``g`` starts: at the points right before it when it labels them ("conc [4,8]
        non-DPA + conc [16,32] DPA", "... and 32-64 for DEP8") and a list's separator or the clause's end
        follows it, so they are not points of its own ahead; else at ``g`` itself."""
        toks = self.toks
        k = g.start
        while k > 0 and toks[k - 1].low in _POSTFIX_GLUE:
            k -= 1
        at = spec_ends.get(k)
        last_group_end = max((x.end for x in cur.groups), default=cur.start)
        if at is None or at < last_group_end:
            return g.start
        if g.end < len(toks) and toks[g.end].low not in _LIST_ENDS:
            return g.start
        return at

    def _names_a_comparison(self, g: Group, after_an_arm: bool) -> bool:
        """``identical to the non-MTP agentic sibling (...)``, ``same as the STP recipe``, ``matching the conc-1 start
        used on the non-MTP day-zero recipes``, ``TP4 mirrors TP8 except for ...``: the arm words name what this
        entry, or the arm named before them, is compared with, not which of its jobs the clause speaks of."""
        before = " ".join(t.low for t in self.toks[max(0, g.start - 4):g.start])
        after = [t.low for t in self.toks[g.end:g.end + 3]]
        return bool(_COMPARED_TO.search(before)) and (after_an_arm or any(w in _OTHER_THING for w in after))

    def _attaches(self, g: Group) -> bool:
        """``for both TP4 and TEP4``, ``with SimpleCPU``, ``to native RCCL DEP``: qualifies the segment before."""
        k = g.start - 1
        skipped = 0
        while k >= 0 and skipped <= 3:
            t = self.toks[k]
            if t.low in _ATTACH:
                return True
            if t.kind != "word" or not t.text.isalpha() and t.low not in ("both", "either"):
                return False
            k -= 1
            skipped += 1
        return False

    def _names_a_part(self, g: Group) -> bool:
        """The arm is named as a part of the sweep ("add the TP4 arm", "TP8/EP1 rows", a bare list item),
        not as a modifier of something else ("2P1D eval 503s", "the TP8 throughput")."""
        toks = self.toks
        after = [t.low for t in toks[g.end:g.end + 2]]
        if any(w in PART_NOUNS for w in after) or (after[:1] == ["("]):
            return True
        before = [t.low for t in toks[max(0, g.start - 4):g.start]]
        if any(w in _PART_VERBS for w in before):
            return True
        rest = [t for k, t in enumerate(toks) if not (g.start <= k < g.end) and t.kind in ("word", "flag", "image")]
        return not rest or all(t.low in ("and", "or", "only", "both") for t in rest)

    def silence(self) -> None:
        """The clause belongs to a silent one: nothing in it is a claim."""
        self.skip = True
        self.r.masked = [True] * len(self.toks)

    def _only_names(self, m: Mention) -> bool:
        """The clause is the mention and at most a word or two around it: a bare item of a list."""
        rest = [t for k, t in enumerate(self.toks) if not (m.start <= k < m.end) and t.kind == "word"
                and t.low not in ("and", "or", "the", "a", "an")]
        return len(rest) <= 2

    def list_verb_after(self) -> Bool | None:
        """The on/off verb a list this clause starts applies to its later items ("with X, Y, and Z")."""
        for t, masked in zip(reversed(self.toks), reversed(self.r.masked)):
            if masked:
                continue
            if t.low in ("with", "enable", "enables", "enabling", "add", "adds", "use", "uses", "using"):
                return Bool(t.text, True)
            if t.low in ("without", "disable", "disables", "disabling"):
                return Bool(t.text, False)
        return None

    def _stands_alone(self, k: int) -> bool:
        """Nothing that could be a value follows token ``k - 1`` (the end, a comma, ``and``, a parenthesis)."""
        return k >= len(self.toks) or self.toks[k].text in (",", ")", ";", "and", "(", "/", "+")

    @functools.cached_property
    def either_way(self) -> set[int]:
        """The tokens the clause says both ways ("with and without X")."""
        return either_way(self.toks)

    @functools.cached_property
    def _frameworks(self) -> frozenset[str]:
        """The serving frameworks the clause's sentence names (read once for all its claims)."""
        return frameworks_named(self.sentence_text())

    @functools.cached_property
    def _sentence_spans(self) -> list[tuple[int, int]]:
        # (split once for the clause's sentence and the one after it)
        return split_sentences(self.source)

    @functools.cached_property
    def _sentence(self) -> str:
        spans = self._sentence_spans
        if self.clause.sentence < len(spans):
            a, b = spans[self.clause.sentence]
            return self.source.text[a:b]
        return self.clause.text

    @functools.cached_property
    def sentence_after(self) -> str:
        """The sentence after this clause's in the same text ("" at its end)."""
        spans = self._sentence_spans
        if self.clause.sentence + 1 < len(spans):
            a, b = spans[self.clause.sentence + 1]
            return self.source.text[a:b]
        return ""

    @functools.cached_property
    def conditioned(self) -> bool:
        """The clause names its jobs by a condition the reader does not resolve ("only", "when", "non-EP"), the
        sentence's lead before a colon does for the list after it ("for non-EP configs: export A=1, B=1, pass X";
        "Default path: X=0, Y on": the jobs no other value is said of), or the sentence sets its list
        "wherever"/"whenever" something holds."""
        if _CONDITION.search(self.clause.text):
            return True
        sentence = self.sentence_text()
        if _SENTENCE_CONDITION.search(sentence):
            return True
        at = sentence.find(self.clause.text)
        lead = sentence[:at] if at > 0 else ""
        label = lead[:lead.index(":")] if ":" in lead else None
        return label is not None and bool(_CONDITION.search(label) or _DEFAULT_LABEL.match(label))

    def _gpus_after(self, end: int) -> str:
        """The GPUs "on"/"for" names right after a value ("VLLM_MXFP4_USE_MARLIN=1 on H100/H200"), "" for none."""
        toks = self.toks
        if end >= len(toks) or toks[end].low not in ("on", "for"):
            return ""
        named: list[str] = []
        k = end + 1
        while k < len(toks) and (_GPU_WORD.match(toks[k].text) or (named and toks[k].low in ("and", "/", "or"))):
            named.append(toks[k].text)
            k += 1
        return " ".join(named) if any(_GPU_WORD.match(w) for w in named) else ""

    def sentence_text(self) -> str:
        """The whole sentence this clause is part of (read once per clause: every claim of it carries it)."""
        return self._sentence

    def _programs_named(self, m: Mention) -> tuple[bool, list[str]]:
        """Whether the clause names another program at all, and the names it gives outside the mention's words."""
        text = self.clause.source.text
        a, b = self.toks[m.start].start, self.toks[m.end - 1].end
        found = list(_OTHER_PROGRAM.finditer(text, self.clause.start, self.clause.end))
        return bool(found), [f.group() for f in found if not (a <= f.start() and f.end() <= b)]

    def _program_named_beside(self, m: Mention) -> bool:
        """The other program the clause speaks of is not only a word of the setting's own name ("the moe runner
        backend" names no runner); a program carried from the clause before counts."""
        named, beside = self._programs_named(m)
        return not named or bool(beside)

    def _routers_setting(self, m: Mention) -> bool:
        """The programs the clause names beside the setting are routers, and the setting is a flag a router of
        the jobs is given ("through vllm-router with --policy round_robin"): the claim is judged on the router."""
        if self.catalog is None or not all(s.kind == "flag" and s.name in self.catalog.router_flags
                                           for s in m.subjects):
            return False
        beside = self._programs_named(m)[1]
        return bool(beside) and all("router" in word.lower() for word in beside)

    def scope_at(self, i: int) -> Scope:
        for seg in self.segments:
            if seg.start <= i < seg.end:
                return seg.scope
        return self.segments[-1].scope

    def _skipped_for_own_words(self, toks: list[Tok], masked: list[bool]) -> bool:
        """The clause is still skipped when the words of the settings it names are left out: "Set the kv load
        failure policy to recompute" reports no failure (the words are --kv_load_failure_policy's)."""
        assert self.catalog is not None
        named = {k for m in find_mentions(Reading(self.source, toks, list(masked), [False] * len(toks)),
                                          self.catalog)[0] for k in range(m.start, m.end)}
        if not named:
            return True
        kept = [t for k, t in enumerate(toks) if not masked[k] and k not in named]
        return skip_clause(" ".join(t.text for t in kept), kept, self._spelled_setting)

    def _spelled_setting(self, word: str) -> bool:
        """The word is the identifier of a setting of the recipes in scope (``async-scheduling``)."""
        return self.catalog is not None and bool(re.search(r"\w[-_]\w", word)) and \
            bool(self.catalog.by_identifier(word))

    def next_inherited(self) -> Scope:
        """What the next clause of the sentence inherits: the last segment, or every arm this clause named."""
        with_arms = [s for s in self.segments if s.arms and not all(a.local for a in s.arms)]
        if not with_arms and any(s.arms for s in self.segments):
            return self.inherited  # "Increase prefill X ...": the role was the setting's, not the sentence's
        if len(with_arms) <= 1:
            return self.segments[-1].scope
        arms = tuple(a for s in with_arms for a in s.arms)
        loose = tuple(a for s in with_arms for a in (s.loose or s.arms))
        return Scope(arms, readings=(Scope(loose),) if loose != arms else ()).merged_over(self.inherited)

    # -------------------------------------------------------- config fields

    def read(self) -> None:
        """Every claim of the clause: config fields first (their words are no subject's values), then subjects."""
        first = len(self.out.claims)
        if not self.drop_order:
            self._read_absent_arms()
            self.read_config_fields()
            if self.catalog is not None:
                self._read_memberships()
        self.read_subjects()
        # A concurrency next to a setting qualifies it ("3600 seconds at concurrency 32 and 48"): the
        # points named are where the setting applies, not every point the sweep runs.
        said = " ".join(t.text for t, m in zip(self.toks, self.r.masked) if not m)
        for n in range(first, len(self.out.claims)):
            claim = replace(self.out.claims[n], said=said)
            if claim.kind == "recipe" and claim.subject is not None and claim.subject.kind == "flag":
                claim = replace(claim, sentence_after=self.sentence_after)
            if self.excepted is not None and claim.kind in ("recipe", "image") and claim.outside is None:
                claim = replace(claim, outside=self.excepted)
            if self.under_condition and claim.kind == "recipe":
                claim = replace(claim, conditioned=True)
            if claim.kind in ("arm", "concurrency"):
                claim = replace(claim, frameworks=self._frameworks)
            if claim.kind == "concurrency" and claim.exhaustive and self._qualifies_a_setting(claim):
                claim = replace(claim, exhaustive=False)
            self.out.claims[n] = claim

    def _qualifies_a_setting(self, claim: Claim) -> bool:
        seg = next(s for s in self.segments if any(self.source.location(c.start, c.end) == claim.location
                                                   for c in s.concs))
        spec = next(c for c in seg.concs if self.source.location(c.start, c.end) == claim.location)
        k = self.r.index_at(spec.start)
        before = [t.low for t in self.toks[max(0, k - 3):k]]
        if any(w in PART_NOUNS for w in before) or any(g.end in (k, k - 1, k - 2) for g in seg.groups):
            return False  # "points (conc 32/64)", "DEP8 at conc [...]": the points of the arm, whatever follows
        a, b = self.toks[seg.start].start if seg.start < len(self.toks) else 0, (
            self.toks[seg.end - 1].end if seg.end > 0 else 0)
        for c in self.out.claims:
            if c.kind == "recipe" and c.location.path == claim.location.path and a <= self._offset(c.location) < b:
                return True
        for k in range(seg.start, seg.end):
            t = self.toks[k]
            if self.r.live(k) and t.kind == "word" and any(ch.isdigit() for ch in t.text) and parse_number(t.text):
                return True  # another number: "at the default 1800 seconds"
        if not seg.arms and any(t.low in _SUBSET_NOUNS for t in self.toks):
            return True  # "the low-latency recipe runs at c1 only": the points of a part the checker cannot name
        return False

    def _offset(self, loc: Location) -> int:
        positions = self.source.positions
        key = (loc.line, loc.column)
        for i, pos in enumerate(positions):
            if pos == key:
                return i
        return -1

    def _branches_of_a_setting(self, k: int) -> bool:
        """``Switch CONC 2048/4096/8192 from --moe-a2a-backend deepep to megamoe``: the concurrencies a setting
        changes for name the recipe's branches, which the sweep need not run."""
        return 0 < k < len(self.toks) and self.toks[k - 1].low in _CHANGE_VERBS_OF_BRANCHES and any(
            t.kind == "flag" for t in self.toks)

    def _qualifies_a_gain(self, spec: ConcSpec) -> bool:
        """``+28% output throughput at conc 128``, ``a gap of +34..69% (conc 1..32)``: the concurrencies right after
        a signed percentage are where a gain was measured, not points the sweep is said to run."""
        before = self.source.text[self.clause.start:spec.start]
        return bool(_GAIN_BEFORE.search(before))

    def _names_profiles(self, spec: ConcSpec) -> bool:
        """``reusing the existing CONC 2048/4096 launch profiles``: concurrencies before a noun of the recipe's
        branches name those branches, not points the sweep runs."""
        after = [t.low for t in self.toks if t.start >= spec.end][:2]
        # (bare "profiles" may be the sweep's: "TP4 concurrency 8 profiles")
        return bool(after) and (after[0] in _BRANCH_NOUNS or after == ["launch", "profiles"]
                                or after == ["launch", "profile"])

    def _unverified_points(self, spec: ConcSpec, why: str) -> None:
        self.out.unverified.append(Unverified(self.source.text[spec.start:spec.end],
                                              self.source.location(spec.start, spec.end), why))

    def read_config_fields(self) -> None:
        r = self.r
        # The words of each segment that gives points, when the clause has several ("bands")
        bands = {id(s): self.source.text[self.toks[s.start].start:self.toks[s.end - 1].end]
                 for s in self.segments if s.concs}
        if len(bands) < 2:
            bands = {}
        for seg in self.segments:
            band = bands.get(id(seg), "")
            other_bands = tuple(words for key, words in bands.items() if key != id(seg))
            rivals = _rival_lists(seg.concs)
            for spec in seg.concs:
                r.use_span(spec.start, spec.end)
                if self.in_report or spec.condition:
                    continue
                if self.earlier_entry:
                    self._unverified_points(spec, "the clause speaks of an entry before this one")
                    continue
                if spec in rivals:
                    self._unverified_points(spec, "the clause gives the same jobs several lists of all their points: "
                                                  "which arm each is of is not read")
                    continue
                if self._branches_of_a_setting(r.index_at(spec.start)):
                    self._unverified_points(spec, "the concurrencies name the recipe's branches a setting is switched "
                                                  "for")
                    continue
                if self._qualifies_a_gain(spec):
                    self._unverified_points(spec, "the concurrencies a measured gain is given at")
                    continue
                if self._names_profiles(spec):
                    self._unverified_points(spec, "the concurrencies name branches of the recipe's code, not points "
                                                  "the sweep runs")
                    continue
                self.out.claims.append(Claim("concurrency", spec.value, seg.scope.without_concs(),
                                             self.source.location(spec.start, spec.end), self.clause.text,
                                             exhaustive=spec.exhaustive, band=band, other_bands=other_bands))
            parallel = [g for g in seg.groups if any(a.parallelism for a in g.arms) and self._names_a_part(g)]
            if parallel and not seg.concs and not self.skip and not self.in_report and not self.elsewhere \
                    and not self.unswept:  # ("... and TP4 LMCache arms are commented out": a NoArm claim of them)
                first, last = parallel[0], parallel[-1]
                text = self.source.text[self.toks[first.start].start:self.toks[last.end - 1].end]
                # "no tp2 (the draft head leaves too little KV headroom at TP2)": no job of the arm runs
                # ("no EP (TP8, ...)" is the arm without expert parallelism: a size must follow "no")
                absent = first.start > 0 and self.toks[first.start - 1].low == "no" and r.live(first.start - 1) \
                    and any(ch.isdigit() for ch in self.toks[first.start].text)
                self.out.claims.append(Claim("arm", NoArm(text) if absent else ArmName(text), seg.scope,
                                             r.loc(first.start, last.end), self.clause.text))
            for g in seg.groups:
                # A parallelism is never a subject's word or value; "MTP", "DP-attention" or "HiCache" may be.
                if any(a.parallelism or a.seq is not None for a in g.arms):
                    for k in range(g.start, g.end):
                        if not any(self.toks[k].low.startswith(w) for w in _SUBJECT_WORDS):
                            r.used[k] = True
        if not (self.in_report or self.elsewhere or self.reports):
            self._read_counts()
            self._read_families()
        self._read_kept_image()
        for i, t in enumerate(self.toks):
            if not r.live(i) or t.kind != "image":
                continue
            img = parse_image(t.text)
            if img is not None:
                r.used[i] = True
                self.out.claims.append(Claim("image", img, self.scope_at(i), r.loc(i, i + 1), self.clause.text,
                                             sentence=self.sentence_text(), was=self._moved_from(i)))
        self._image_tag_fragment()

    def _moved_from(self, to_value: int) -> tuple[ClaimValue, ...]:
        """The images or tags between "from" and the "to" (or arrow) right before token ``to_value``: "Update the
        images from v0.5.9/v0.5.10 to v0.5.11" (none when the clause names no old state that way)."""
        toks = self.toks
        to = to_value - 1
        if to < 1 or not (toks[to].low in ("to", "->", "→") or toks[to].kind == "arrow"):
            return ()
        start = next((k for k in range(to - 1, -1, -1) if toks[k].low == "from"), None)
        if start is None or to - start > 12:
            return ()
        was: list[ClaimValue] = []
        for k in range(start + 1, to):
            t = toks[k]
            if t.kind == "image":
                image = parse_image(t.text)
                was.extend([image] if image is not None else [])
            elif t.kind == "word":  # "v0.5.9/v0.5.10": one word of several tags
                was.extend(parse_fragment(part) for part in t.text.split("/") if _TAG_LIKE.fullmatch(part))
        return tuple(was)

    def _image_tag_fragment(self) -> None:
        """``Bump the image from 20260706 to 20260709``, ``Update image tag to nightly``, ``Image: v0.5.18``,
        ``Use the v0.5.18-cu130 image``: part of the new tag."""
        r = self.r
        toks = self.toks
        if any(t.kind == "image" for t in toks) or self.skip:
            return
        noun = next((i for i, t in enumerate(toks) if r.live(i) and t.low in ("image", "images", "tag")), None)
        if noun is not None:
            k, shaped = self._tag_at(noun)
        elif _IMAGE_LABEL.search(self.source.text, max(0, self.clause.start - _LABEL_REACH), self.clause.start):
            k, shaped = 0, True  # "Image: v0.5.18": the label is a clause of its own, the tag begins this one
        else:
            return
        floating = k + 1 < len(toks) and toks[k].low in ("latest", "nightly", "dev") and toks[k + 1].kind == "word"
        if 0 <= k < len(toks) and r.live(k) and toks[k].kind == "word" and \
                (_TAG_LIKE.fullmatch(toks[k].text) or (shaped and _a_build(toks[k].text))) and \
                not floating:  # "to latest nightly: lmsysorg/...": an adjective of the tag the text goes on to name
            r.used[k] = True
            glob = _GLOB_TAIL.match(self.source.text, toks[k].end)
            if glob:  # "to v0.5.11-rocm700-mi3*x": a pattern of the configs' tags, not one tag
                self.out.unverified.append(Unverified(toks[k].text + glob.group(), r.loc(k, k + 1),
                                                      "the tag is a pattern of several configs' tags"))
                return
            self.out.claims.append(Claim("image", parse_fragment(toks[k].text), self.scope_at(k), r.loc(k, k + 1),
                                         self.clause.text, sentence=self.sentence_text(), was=self._moved_from(k)))

    def _tag_at(self, noun: int) -> tuple[int, bool]:
        """Where the tag of the image named at ``noun`` is written (-1: nowhere), and whether the words say a tag
        stands there, so that a build of any shape is one: right after "image to" ("Bump the image to kimi-k5",
        "... to upstream v0.5.6.post2"), between a verb of using and the noun ("Use the nightly-dev-cu13-20260815-
        a5ba081f image", "Update the benchmark to the v0.5.18 image"); else after a later "to" ("Update the SGLang
        image for both keys to v0.5.18"), where only a version, a date or a channel is a tag."""
        toks = self.toks
        if noun >= 3 and toks[noun - 2].low == "the" and toks[noun - 3].low in _USING_AN_IMAGE and \
                toks[noun - 1].kind == "word" and _a_build(toks[noun - 1].text):
            return noun - 1, True
        at = noun + 2 if noun + 1 < len(toks) and toks[noun + 1].low == "tag" else noun + 1
        if noun + 2 < len(toks) and toks[noun + 1].text == ":":
            return noun + 2, True
        if at < len(toks) and toks[at].low in _MOVED:  # "Image bumped from A to B", "the image updated to B"
            at += 1
        if at < len(toks) and toks[at].low == "from":  # "image from A to B", "image from A (34d old) to B"
            at = self._next_to(at + 2, at + 9) or at
        if at < len(toks) and _leads_to(toks[at]):
            # ("to upstream v0.5.6.post2", "to stable atom0.1.3": a word of which build it is, before the tag)
            return (at + 2 if at + 2 < len(toks) and toks[at + 1].low in ("upstream", "stable") else at + 1), True
        to = self._next_to(noun + 1, len(toks))
        return (-1, False) if to is None else (to + 1, False)

    def _describes_a_left_value(self, start: int, end: int, text: str) -> bool:
        """``write_back defers the host copy ...`` after "hicache write_back/direct -> write_through/kernel": the
        value the text moved away from, as the subject of a verb that tells what it does (why it was left), not a
        value the jobs use ("write_back is kept for disagg" still is one)."""
        toks = self.toks
        at = start - 1 if start > 0 and toks[start - 1].low in ("the", "a") else start
        # (the subject of its sentence: the clause's first word, or the first after a "." the splitter kept, as
        # in "... agg arm. write_back defers ...")
        opens = at == 0 or re.search(r"[.;]\s*$", self.source.text[toks[at - 1].end:toks[at].start]) is not None or \
            toks[at - 1].text in (".", ";")
        return text.lower() in self.left_before and opens and end < len(toks) and toks[end].kind == "word" and \
            toks[end].low.endswith("s") and toks[end].low not in ("is", "was", "has")

    def _next_to(self, start: int, stop: int) -> int | None:
        """The first "to" (or arrow) among the tokens from ``start`` up to ``stop``."""
        return next((k for k in range(start, min(len(self.toks), stop)) if _leads_to(self.toks[k])), None)

    # -------------------------------------------------------- subjects

    def read_subjects(self) -> None:
        if self.catalog is None:
            return
        r = self.r
        mentions, found = find_mentions(r, self.catalog)
        mentions, found.unknown_names = values_not_names(r, mentions, found.unknown_names)
        self.mentions = mentions
        self.out.words |= found.words
        for m in mentions:
            for s in m.subjects:
                self.out.mentioned.add(s.name)
        if self.skip:
            return
        for name, i in found.unknown_names:
            self.out.unverified.append(Unverified(name, r.loc(i, i + 1), "no recipe in scope sets this name"))
        for term, a, b, candidates in found.several:
            self.out.unverified.append(Unverified(
                term, r.loc(a, b), "the term names several subjects" if candidates else "no subject for this term",
                candidates))
        shared: dict[tuple[int, int], tuple[ClaimValue, int, int]] = {}
        numeric: list[tuple[Claim, int]] = []  # number-valued claims and where their text ends
        other_program = self.other_program
        # Settings named by their value first: their words are then no value of another subject.
        # (The value of a setting the clause names is no other setting's name: "Set --fp4-gemm-backend to
        # flashinfer_trtllm", where flashinfer_trtllm is also a value of --moe-runner-backend.)
        taken = {k for m in mentions for k in range(m.start, m.end)} | value_slots(r, mentions, self.catalog.subjects)
        for vm in find_value_mentions(r, self.catalog, taken):
            for k in range(vm.start, vm.end):
                r.used[k] = True
            if self._describes_a_left_value(vm.start, vm.end, vm.text):
                self.out.unverified.append(Unverified(vm.text, r.loc(vm.start, vm.end), "a value an earlier clause "
                                                      "names as the state the change leaves"))
                continue
            # Named by its value: the text says the jobs use it, so a job without the setting contradicts it.
            self.out.claims.append(Claim("recipe", parse_fragment(vm.text), self.scope_at(vm.start),
                                         r.loc(vm.start, vm.end), self.clause.text, subject=vm.subject,
                                         phrase=vm.subject.name, explicit=True, sentence=self.sentence_text(),
                                         conditioned=self.conditioned, configs=self._gpus_after(vm.end)))
        for m in mentions:
            if any(r.masked[k] for k in range(m.start, m.end)):
                continue
            if self.about_launcher and all(s.kind in ("env", "var") for s in m.subjects):
                # "Wire ... into runners/launch_gb300-nv.sh with SLURM_PARTITION=batch_1": the launcher's variable,
                # set before the recipe runs (the check reads recipes, not launchers)
                self.out.unverified.append(Unverified(m.phrase, r.loc(m.start, m.end), "a variable of the launcher"))
                continue
            if other_program and all(s.kind in ("flag", "key", "env") for s in m.subjects) and \
                    self._program_named_beside(m) and not self._routers_setting(m):
                # "Pass --use-chat-template to the benchmark": a setting of another program
                self.out.unverified.append(Unverified(m.phrase, r.loc(m.start, m.end),
                                                      "the clause speaks of another program than the server"))
                continue
            if self.program_in_sentence and all(s.kind == "flag" and s.name not in self.catalog.spelled_flags
                                                and s.name not in self.catalog.subjects for s in m.subjects):
                self.out.unverified.append(Unverified(m.phrase, r.loc(m.start, m.end),
                                                      "the sentence speaks of another program than the server, "
                                                      "whose flag this is: no recipe of the jobs knows it"))
                continue
            if self.on_drafter and all(s.kind in ("flag", "env") and not _OF_SPECULATION.search(s.name)
                                       for s in m.subjects):
                drafter = self._drafter_key(m)
                if drafter is None:
                    self.out.unverified.append(Unverified(m.phrase, r.loc(m.start, m.end),
                                                          "a setting of the draft model, not the server's"))
                    continue
                m = replace(m, subjects=[drafter])
            if len(m.subjects) != 1:
                self.out.unverified.append(Unverified(m.phrase, r.loc(m.start, m.end), "the phrase fits several subjects",
                                                      tuple(sorted(s.name for s in m.subjects))))
                continue
            negative = self.catalog.negative_of(m.subjects[0]) if m.via != "identifier" else None
            if negative is not None:
                m = replace(m, subjects=[negative])  # "Disable the prefix caching": --no-enable-prefix-caching
            value = shared.get((m.start, m.end)) or read_value(r, self.catalog, m, mentions)
            negation = negation_before(self.toks, m.start, r.live)
            if m.start in self.either_way and (value is None or isinstance(value[0], Bool)):
                # "swept at c1-16 both without KV offload and with native CPU KV offload": two arms, one each way
                self.out.unverified.append(Unverified(m.phrase, r.loc(m.start, m.end),
                                                      "the text names the setting both on and off (two arms)"))
                continue
            negated = negation is not None or (m.start > 0 and self.toks[m.start - 1].low == "not")
            if negation is not None and negation < m.start - 1 and m.via == "identifier" and value is not None and \
                    not isinstance(value[0], Absent) and not (isinstance(value[0], Bool) and not value[0].on):
                # "WITHOUT setting VLLM_USE_BREAKABLE_CUDAGRAPH=0": the text says what the recipe does not do.
                self.out.unverified.append(Unverified(m.phrase, r.loc(negation, m.end),
                                                      "the text says the setting is not given so"))
                continue
            if negation is not None and value is None and m.via == "identifier" and \
                    boolish(self.catalog, m.subjects[0], m) and self._stands_alone(m.end):
                value = (Bool(self.toks[negation].text, False), negation, m.end)  # "without setting --enable-x"
            if value is None and m.via == "identifier" and _spelled_flag(self.toks[m.start]) and \
                    self._stands_alone(m.end) and not negated:
                value = (Present(m.phrase), m.start, m.end)  # "GB-based --hicache-size": the flag is given
            if value is None and self.list_verb is not None and boolish(self.catalog, m.subjects[0], m) and \
                    self._only_names(m):
                # "... with extra_buffer_lazy, ReplaySSM speculative verification, and ...": an item of the list
                # the clause before started with its verb.
                value = (self.list_verb, m.start, m.end)
            if value is None:
                note = Unverified(m.phrase, r.loc(m.start, m.end), "no value next to the subject")
                self.out.unverified.append(note)
                self.valueless.append((m, note))
                continue
            shared[(m.start, m.end)] = value
            v, v_start, v_end = value
            start, end = min(v_start, m.start), max(v_end, m.end)
            for k in range(v_start, v_end):
                r.used[k] = True
            self.out.claims.append(Claim("recipe", v, self.scope_at(m.start), r.loc(start, end), self.clause.text,
                                         subject=m.subjects[0], phrase=m.phrase, explicit=_explicit(m, v),
                                         conditioned=self.conditioned, configs=self._gpus_after(end),
                                         sentence=self.sentence_text(),
                                         unnamed_scope=self._scope_without_own_words(m)))
            if isinstance(v, Number):
                numeric.append((self.out.claims[-1], end))
        if len(numeric) == 1:
            self._read_gapped(*numeric[0])
        if not mentions and self.carried is not None:
            self._read_carried(*self.carried)

    # -------------------------------------------------------- no silent drop

    def unread_values(self) -> list[tuple[Mention, str]]:
        """The settings the clause names (ones the recipes in scope know) in a clause with a value, that the
        reading gave no claim or note of: each with why it was not read (see :func:`_no_silent_drop`)."""
        if self.catalog is None:
            return []
        known = [m for m in self.mentions if m.vocab is not None or any(s.name in self.catalog.subjects
                                                                       for s in m.subjects)]
        if not known or not self._has_a_value():
            return []
        return [(m, self._why_unread(m)) for m in known]

    def _has_a_value(self) -> bool:
        """A word of the clause reads as a value: one written into a setting's name (``NAME=1``), a number, a
        dtype, on/off, or a word after a link that gives a value (``to least_tokens``, ``-> triton``)."""
        names = {k for m in self.mentions for k in range(m.start, m.end)}
        if any(m.attached or self.toks[m.start].text != m.phrase and any(ch.isdigit() for ch in self.toks[m.start].text)
               for m in self.mentions):
            return True
        for k, t in enumerate(self.toks):
            if k in names or t.kind != "word":
                continue
            if _value_word(t) or t.low in _ON_OFF_WORDS:
                return True
            before = self.toks[k - 1] if k > 0 else None
            if before is not None and (before.low in ("to", "=", ":", "now", "becomes") or before.kind == "arrow") \
                    and t.low not in STOPWORDS:
                return True
        return False

    def _why_unread(self, m: Mention) -> str:
        masked = all(self.r.masked[k] for k in range(m.start, m.end))
        if self.skip:
            return "the clause speaks of the past, a failure, a condition or another's words"
        if self.reports or self.in_report:
            return "the sentence reports a run, not what the recipe is set to"
        if self.other_program:
            return "the clause speaks of another program than the server"
        if self.elsewhere:
            return "the clause speaks of another config"
        if masked:
            return "the setting is named as the old state or in quoted words"
        if len(m.subjects) != 1:
            return "the phrase fits several subjects"
        return "no value is tied to the setting by the words of the clause"

    def _scope_without_own_words(self, m: Mention) -> Scope | None:
        """The scope of the setting named at ``m`` when the arms its own words spell are left out (None when its
        words spell no arm)."""
        seg = next((s for s in self.segments if s.start <= m.start < s.end), self.segments[-1])
        own = [g for g in seg.groups if g.start < m.end and m.start < g.end]
        if not own:
            return None
        arms: list[Arm] = []
        for g in seg.groups:
            if g not in own:
                arms = merge_where_compatible(arms, g.arms, keep=False) if arms else list(g.arms)
        rest = Segment(seg.start, seg.end, arms, [], [g for g in seg.groups if g not in own], seg.concs)
        return _own_scope(rest).merged_over(self.inherited)

    def _drafter_key(self, m: Mention) -> Subject | None:
        """``attention_backend`` "on the drafter": the key of the speculative config the recipes pass (None when
        they pass none, or several)."""
        assert self.catalog is not None
        carriers = {s.name.partition(".")[0] for s in self.catalog.subjects.values()
                    if _SPECULATIVE_CONFIG.search(s.name.partition(".")[0])}
        if len(carriers) != 1:
            return None
        path = "_".join(re.findall(r"[a-z0-9]+", m.phrase.lower()))
        return Subject("key", f"{carriers.pop()}.{path}")

    def _read_carried(self, m: Mention, note: Unverified) -> None:
        """``set to 1 for Kimi-K2.5`` after ``Add scheduler_delay_factor support ...;``: the value of the one
        subject the sentence before named without one."""
        assert self.catalog is not None
        r = self.r
        k = next((i for i, t in enumerate(self.toks) if r.live(i)), None)
        if k is None or not _SET_TO.match(" ".join(t.low for t in self.toks[k:k + 4])):
            return
        to = next(i for i in range(k, len(self.toks)) if self.toks[i].low == "to")
        found = value_at(r, to + 1, allow_word=True, allow_bool=True, names=self.catalog.subjects) \
            if to + 1 < len(self.toks) and r.live(to + 1) else None
        if found is None:
            return
        v, start, end = found
        for i in range(start, end):
            r.used[i] = True
        if note in self.out.unverified:
            self.out.unverified.remove(note)
        self.out.claims.append(Claim("recipe", v, self.scope_at(start), r.loc(start, end), self.clause.text,
                                     subject=m.subjects[0], phrase=m.phrase, explicit=_explicit(m, v),
                                     conditioned=self.conditioned,
                                     sentence=self.sentence_text()))

    def _read_gapped(self, claim: Claim, end: int) -> None:
        """The same setting's values for the other arms the clause names ("0.85 on decode and 0.7 on prefill")."""
        spans = [(g.start, g.end) for seg in self.segments for g in seg.groups]
        own = {a for a, _ in spans if self.scope_at(a) == claim.scope}
        for gap in gapped_values(self.r, spans, end, own):
            scope = self.scope_at(gap.arm_start)
            if scope == claim.scope:
                continue
            self.r.used[gap.index] = True
            self.out.claims.append(replace(claim, value=gap.value, scope=scope, location=self.r.loc(gap.index, gap.index + 1)))


# Words that give a setting a value of their own: on or off, passed or not.
_ON_OFF_WORDS = frozenset({"enable", "enables", "enabled", "disable", "disables", "disabled", "on", "off", "true",
                           "false"})


def _explicit(m: Mention, v: ClaimValue) -> bool:
    """The text names the setting itself: by its identifier, or by a vocabulary term with a name as its value
    ("qwen3_coder tool-call parsing" says the recipe passes --tool-call-parser qwen3_coder)."""
    return m.via == "identifier" or (m.via == "vocabulary" and isinstance(v, Word) and not v.dtype)


def _silence_asides_and_items(readers: list[ClauseReader]) -> None:
    """What a silent clause says goes on in the clauses that belong to it.

    An aside between dashes is part of the clause around it ("Adopting the upstream block -- X 0.95,
    Y 32 -- killed the engine"); a bare list item after a comma continues the list of the clause before
    it ("ahead of re-attempting X 0.95, Y 32, Z"); a "with X=A" before a failure is its condition.
    """
    def between(a: int, b: int) -> str:
        return readers[a].clause.source.text[readers[a].clause.end:readers[b].clause.start]

    opened: int | None = None  # the first clause after an opening dash
    for n in range(1, len(readers)):
        if _DASH.search(between(n - 1, n)):
            if opened is None:
                opened = n
                continue
            # readers[opened:n] is an aside: silent when a clause around it is.
            if readers[opened - 1].skip or readers[n].skip:
                for reader in readers[opened:n]:
                    reader.silence()
            opened = None
    for n in range(1, len(readers)):
        reader, before = readers[n], readers[n - 1]
        if not reader.skip and before.skip and "," in between(n - 1, n) and reader.toks and _item_start(reader.toks[0]):
            reader.silence()
    for n in range(len(readers) - 1):
        # "with moe_backend=auto, EP fell back to ...": the setting a failure happened with, not the new state
        reader, after = readers[n], readers[n + 1]
        if not reader.skip and reader.toks and reader.toks[0].low == "with" and after.rejects \
                and "," in between(n, n + 1):
            reader.silence()


def _item_start(t: Tok) -> bool:
    """A clause that starts with a setting's name is an item of a list (``max-num-seqs 32``)."""
    return t.kind in ("flag", "assign") or (t.kind == "word" and bool(re.fullmatch(
        r"[A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)+", t.text)))


_DASH = re.compile(r"\s(?:—|--|–)\s")


def _spelled_flag(t: Tok) -> bool:
    """``--hicache-size`` or a bare ``disable-radix-cache``: a flag named as such."""
    return t.kind == "flag" or (t.kind == "word" and t.text.count("-") >= 2 and t.text.islower())


def _value_word(t: Tok) -> bool:
    """A token that reads as a value (for ``<verb> X to Y``: a number, a dtype, an image, a flag with its value).

    A flag without a value is the setting itself, not its old state: in "Raise --mem-fraction-static to 0.88"
    the object of "raise" is the setting whose new value follows "to"."""
    if t.kind in ("image", "assign") or (t.kind == "flag" and "=" in t.text):
        return True
    return t.kind == "word" and (parse_number(t.text) is not None or parse_dtype(t.text) is not None)


# "(8192 for conc<=32, 16384 for conc 512)": a value for a concurrency, inside a parenthesis.
_VALUE_FOR_CONC = re.compile(r"\d[\w.]*\s+(?:for|at|on|in)\s+(?:conc|c\d)", re.IGNORECASE)


def _value_asides(toks: list[Tok], parens: dict[int, int]) -> list[tuple[int, int]]:
    """The token ranges of parentheses that give values for concurrencies ("65536 (8192 for conc<=32, 16384 for
    conc 512)"): exceptions to the clause's value, whose concurrencies are no part of the sweep the clause speaks
    of (the exceptions themselves are read by :mod:`..verdict.exceptions`)."""
    out: list[tuple[int, int]] = []
    for start, end in parens.items():
        inside = " ".join(t.text for t in toks[start + 1:end])
        if _VALUE_FOR_CONC.search(inside):
            out.append((start, end))
    return out


def _parentheses(toks: list[Tok]) -> dict[int, int]:
    """Token index of each ``(`` -> index of its ``)`` (or the end)."""
    out: dict[int, int] = {}
    stack: list[int] = []
    for i, t in enumerate(toks):
        if t.text in ("(", "（"):
            stack.append(i)
        elif t.text in (")", "）") and stack:
            out[stack.pop()] = i
    for i in stack:
        out[i] = len(toks)
    return out


def _defines(previous: Group, g: Group, parens: dict[int, int]) -> bool:
    """``g`` stands in a parenthetical opened right after ``previous``: it says what ``previous`` is."""
    close = parens.get(previous.end)
    return close is not None and previous.end < g.start < close


def _own_scope(seg: Segment) -> Scope:
    concs: set[int] = set()
    at_least: int | None = None
    for spec in seg.concs:
        v = spec.value
        if v.at_least is not None:
            at_least = v.at_least
        elif v.is_range:
            concs.update(doubling(v.values[0], v.values[-1]))
        else:
            concs.update(v.values)
    loose = tuple(seg.loose)
    own = frozenset(concs) if concs else None
    readings = (Scope(loose, own, at_least),) if loose and loose != tuple(seg.arms) else ()
    return Scope(tuple(seg.arms), own, at_least, readings)


# A clause that only says when: before the change ("Previously, ...", "Before this change, the recipe passed ...",
# "In the old recipe, ..."): the clause after it is the old state.
_HISTORY_LEAD = re.compile(r"(?:previously|formerly|originally|initially|earlier|at first|until now|so far|in the past|"
                           r"before|old|was|"  # a label: "Before: `--mem-fraction-static 0.9`. After: ..."
                           r"(?:before|prior to|until)\s+(?:this|the|that|these)(?:\s+[\w#-]+){0,3}|"
                           r"in the (?:old|previous|original|former|earlier)(?:\s+[\w#-]+){0,3})",
                           re.IGNORECASE)


# A bullet headed by a program's file ("generate_sweep_configs.py: ... matching the --evals-only behavior"): every
# sentence of it speaks of that program.
_PROGRAM_HEADING = re.compile(r"[\W_]*`?[\w/.-]+\.py`?\s*:\s")


# One case of a table of what each value of a setting does ("true -> --async-scheduling, false ->
# --no-async-scheduling, auto -> omit"): the recipe's mechanism, which no job's state is.
_CASE = re.compile(r"(?<![\w-])(true|false|auto|on|off|yes|no|unset|none|0|1)\s*(?:->|→|=>)", re.IGNORECASE)


def _case_table_clauses(clauses: Sequence[Clause]) -> set[int]:
    """Where the clauses of a sentence that are cases of such a table start (two cases of different values at
    least: one "true -> X" is a change of the value)."""
    cases = {c.start: {m.group(1).lower() for m in _CASE.finditer(c.source.text, c.start, c.end)} for c in clauses}
    values = set().union(*cases.values())
    if len(values) < 2:
        return set()
    out = {start for start, found in cases.items() if found}
    # The head the table's ":" follows ("ASYNC_SCHEDULING toggle (additional-settings / env): true -> ...") names
    # the setting the cases are of, not a value of it.
    out |= {c.start for c, after in zip(clauses, clauses[1:]) if after.start in out and introduces_list(c)}
    return out


# A lead clause that only names the jobs the sentence is about ("For 8k/1k", "On MI355X DEP8").
_LEAD = re.compile(r"(?:for|on|at|in)\s", re.IGNORECASE)


def _leads_the_sentence(reader: ClauseReader) -> bool:
    """The clause is such a lead: a few words after "for", "on", "at" or "in" that name arms, and nothing else."""
    return bool(_LEAD.match(reader.clause.text)) and len(reader.toks) <= 4 and not reader.skip \
        and any(s.arms for s in reader.segments)


def extract(source: SourceText, catalog: Catalog | None, base_scope: Scope | None = None) -> Extraction:
    """Every claim of one text (a description bullet, a PR body)."""
    out = Extraction()
    of_a_program = bool(_PROGRAM_HEADING.match(source.text))
    by_sentence: dict[int, list[Clause]] = {}
    for c in split_clauses(source):
        by_sentence.setdefault(c.sentence, []).append(c)
    listed_silence = False  # a ":" list after a silent clause, continued through ";" into this sentence
    listed_scope: Scope | None = None  # the scope of the clause a ":" list continued through ";" elaborates
    listed_program = False  # that clause speaks of another program than the server ("Runner: launch_x.sh ...")
    carried: tuple[Mention, Unverified] | None = None  # see ClauseReader.carried
    every: list[ClauseReader] = []
    heading: Scope | None = None  # "DEP8 arm: ...": a bullet headed by an arm speaks of it in every sentence
    heading_end: int | None = None  # where the list under a heading line of a longer text ends (a blank line)
    previous_claims = (0, 0)  # the range of out.claims the sentence before gave
    left: set[str] = set()  # the values the clauses read so far name as the state the change leaves
    for sentence_clauses in by_sentence.values():
        if heading_end is not None and sentence_clauses[0].start >= heading_end:
            heading, heading_end = None, None
        first_claim = len(out.claims)
        inherited = listed_scope or heading or base_scope or Scope()
        list_head: Scope | None = listed_scope
        list_program = carried_program = listed_program or of_a_program
        previous_rejects = False
        silenced = listed_silence
        open_from = False
        readers: list[ClauseReader] = []
        cases = _case_table_clauses(sentence_clauses)
        for clause in sentence_clauses:
            if _CONTRAST.match(clause.text):
                inherited = base_scope or Scope()
            lead = clause.source.text[readers[-1].clause.end:clause.start] if readers else ""
            # (a label's Markdown emphasis aside: "**Before**: ...")
            after_history = bool(readers) and bool(_HISTORY_LEAD.fullmatch(readers[-1].clause.text.strip("*_-• ")))
            reader = ClauseReader(clause, catalog, inherited, out, previous_rejects,
                                  silenced=silenced or after_history or clause.start in cases, open_from=open_from,
                                  new_predicate=bool(re.search(r"\band\s*$", lead)))
            previous_rejects = reader.rejects or (reader.skip and previous_rejects)
            # "Measured uplift (tok/s): a, b, c; d": what the ":" introduces is part of the report.
            if (reader.reports or reader.rejects) and introduces_list(clause):
                silenced = True
            if PLAN_AHEAD.search(clause.text):
                silenced = True  # "... before expanding to the full 1k1k+8k1k, conc 8-512 sweep": a plan
            if introduces_list(clause):
                # "LMCache ladders offset the official arms: TP4 ...; DEP4 ...": the items are LMCache's.
                list_head = reader.next_inherited()
                list_program = bool(_OTHER_PROGRAM.search(clause.text))
            open_from = reader.leaves_from_open or (open_from and reader.r.masked[-1:] == [True])
            inherited = reader.next_inherited()
            readers.append(reader)
        if len(readers) == 1 and (end := _heads_a_list(readers[0])) is not None:
            # A PR description's "8k1k STP:" or "conc-4096 recipe parameters:" line over a list: the items are
            # said of what it names, up to the list's end.
            heading, heading_end = readers[0].next_inherited(), end
        elif not every and introduces_list(readers[0].clause) and len(readers[0].toks) <= 6 and \
                readers[0].segments[0].arms and not readers[0].skip:
            heading = readers[0].next_inherited()
        _silence_asides_and_items(readers)
        for before, reader in zip(readers, readers[1:]):
            # "..., with the exception of ep=8", "... everywhere but the ep=8 rows": a clause that is only an
            # exception says where the clause before does not hold.
            excepted = excepts_the_clause_before(source.text[before.clause.end:reader.clause.start], reader.toks,
                                                 reader.unmasked, reader.all_atoms, reader.excepted_words)
            if before is readers[0] and _CONDITION_LEAD.match(before.clause.text):
                reader.under_condition = True  # "If DP_ATTENTION=true and CONC>=64, pass --enable-tbo"
            if excepted is not None and before.excepted is None:
                before.excepted = excepted
            elif before is readers[0] and is_only_an_exception(before.toks, before.excepted_words) and \
                    reader.excepted is None:
                reader.excepted = before.excepted  # "Except for ep=8, use ...": of the clause after it
        for before, reader in zip(readers, readers[1:]):
            if "," in before.clause.source.text[before.clause.end:reader.clause.start]:
                reader.list_verb = before.list_verb or before.list_verb_after()
        # A sentence that reports a run names the concurrencies and layouts that were run, not the sweep.
        in_report = any(r.reports for r in readers)
        # A sentence about what the script's text keeps ("the branch ... is kept in the script") says nothing
        # of what the jobs run.
        about_code = any(_ABOUT_CODE.search(r.clause.text) for r in readers)
        readers[0].carried = carried
        for before, reader in zip(readers, readers[1:]):
            if reader.says_unswept and not any(seg.groups for seg in reader.segments):
                before.unswept = True
        about_launcher = any(_LAUNCHER.search(r.clause.text) for r in readers)
        program_in_sentence = any(r.other_program for r in readers)
        for reader in readers:
            reader.in_report = in_report
            reader.about_launcher = about_launcher
            reader.program_in_sentence = program_in_sentence
            reader.other_program = (carried_program or reader.other_program) and not _SERVER_WORDS.search(
                reader.clause.text)
            if about_code:
                reader.silence()
            reader.left_before = frozenset(left)
            reader.read()
            left |= reader.leaves
        continued = ends_with_semicolon(sentence_clauses[-1])
        if list_head is None and len(readers) > 1 and _leads_the_sentence(readers[0]):
            # "For 8k/1k, use TP4/EP1 c1-c8 and TP2/EP1 c8-c256; drop TP8.": the lead names the jobs of every
            # part of the sentence, past its ";"
            list_head = readers[0].next_inherited()
        carried = readers[-1].valueless[0] if continued and len(readers[-1].valueless) == 1 else None
        listed_silence = silenced and continued
        listed_scope = list_head if continued else None
        listed_program = list_program and continued
        every.extend(readers)
        overriding = _overrides_the_sentence_before(readers)
        if overriding is not None:
            # "Default X is V; the ep=8 configs override it": those arms are where the sentence before does not hold
            for n in range(*previous_claims):
                claim = out.claims[n]
                if claim.kind in ("recipe", "image") and claim.outside is None:
                    out.claims[n] = replace(claim, outside=overriding)
        previous_claims = (first_claim, len(out.claims))
    _no_silent_drop(every, out)
    out.left = frozenset(left)
    return out


_LIST_ITEM_LINE = re.compile(LIST_ITEM)
_BLANK_LINE = re.compile(r"\n[ \t]*\n")


def _heads_a_list(reader: ClauseReader) -> int | None:
    """Where the list ends that a short line naming arms or points heads with its closing ":" (a blank line, or
    the text's end); None when the clause is no such line."""
    clause = reader.clause
    text = clause.source.text
    # (the line's ":" ends the sentence, so it may be the clause's last character)
    ends_with_colon = clause.text.rstrip().endswith((":", "："))
    if not (ends_with_colon or introduces_list(clause)) or len(reader.toks) > 6 or reader.skip or \
            not (reader.segments[0].arms or reader.concs):
        return None
    # (the line's own colon is its last character; after a clause that introduces a list it comes later, and a
    # Chinese line writes it full-width)
    colon = clause.start + len(clause.text.rstrip()) - 1 if ends_with_colon else _next_colon(text, clause.end)
    line_end = text.find("\n", colon)
    if colon < 0 or line_end < 0 or text[colon + 1:line_end].strip() or not _LIST_ITEM_LINE.match(text, line_end + 1):
        return None
    blank = _BLANK_LINE.search(text, line_end)
    return blank.start() if blank else len(text)


def _next_colon(text: str, start: int) -> int:
    """Where the first ":" or "：" at or after start is; -1 when there is none."""
    found = [at for at in (text.find(":", start), text.find("：", start)) if at >= 0]
    return min(found, default=-1)


def _overrides_the_sentence_before(readers: list[ClauseReader]) -> Scope | None:
    """The arms a sentence of one clause names as keeping their own value ("the ep=8 configs override it")."""
    if len(readers) != 1:
        return None
    r = readers[0]
    return excepts_the_clause_before("", r.toks, r.unmasked, r.all_atoms, r.excepted_words)


def _no_silent_drop(readers: list[ClauseReader], out: Extraction) -> None:
    """Every setting a clause names beside a value gave a claim or a note: one the readings left without
    either gets a ``claim-unverified`` note saying why (never silence)."""
    def span(p: Location) -> tuple[tuple[int, int], tuple[int, int]]:
        return (p.line, p.column), (p.end_line, p.end_column)

    said = [span(c.location) for c in out.claims] + [span(u.location) for u in out.unverified]
    sentences: dict[int, tuple[tuple[int, int], tuple[int, int]]] = {}
    for reader in readers:
        where = span(reader.source.location(reader.clause.start, reader.clause.end))
        first, last = sentences.get(reader.clause.sentence, where)
        sentences[reader.clause.sentence] = (min(first, where[0]), max(last, where[1]))
    for reader in readers:
        sentence_start, sentence_end = sentences[reader.clause.sentence]
        read = {c.subject.name for c in out.claims if c.subject is not None
                and sentence_start <= span(c.location)[0] < sentence_end}
        clause_start, clause_end = span(reader.source.location(reader.clause.start, reader.clause.end))
        recorded = any(a < clause_end and clause_start < b for a, b in said)
        for m, why in reader.unread_values():
            start, end = span(reader.r.loc(m.start, m.end))
            if any(a < end and start < b for a, b in said) or any(s.name in read for s in m.subjects):
                continue  # a claim or a note covers the name, or the sentence gave the setting a claim elsewhere
            if recorded and (reader.skip or any(reader.r.masked[k] for k in range(m.start, m.end))):
                continue  # the old state or quoted words beside what the clause did read
            out.unverified.append(Unverified(m.phrase, reader.r.loc(m.start, m.end), why,
                                             tuple(sorted(s.name for s in m.subjects))))
            said.append((start, end))
