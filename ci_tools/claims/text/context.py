"""Which words of a clause speak of the new state, and which of history, reports or other programs.

Masked (never read as claims): the ``from`` side of ``from A to B``, the left
of ``A → B``, the ``X`` of ``replace X with Y``, of ``instead of X`` and of
``<verb> X to Y`` when X is a value or an arm ("scaling TP2 to TP4"),
parentheticals that give the old value ("(was 4)"), quoted text (somebody
else's words), and symbolic values (``--ep-size EP_SIZE``).

Silent clauses (every word masked): what was tried, failed, removed or was
the case before ("killed the engine", "to be re-attempted", "dropped rather
than ported"), counterfactuals and conditions ("if", "would"), what the text
says a program does by default ("defaults to 5s"), what was not adopted, and
reports of a run ("validated across ... in a past run", "measured",
"caught").  A clause introduced by ``:`` after a clause that drops or
rejects something explains it, and is silent too.
"""

from __future__ import annotations

import functools
import re
from typing import Callable, Container, Sequence

from .arms import ROLE_WORDS, names_an_arm
from .sentences import Clause, SourceText
from .subjects import CONTRACT_NAMES
from .tokens import Tok
from .values import parse_dtype, parse_number

# A clause reporting what failed, was tried, was removed, was the case before, or what would be.
_REJECT = (r"kill(?:s|ed)?|crash(?:es|ed)?|ooms?|oom-kills?|oomed|oom-killed|fail(?:s|ed|ing|ure|ures)?|hang(?:s|ing)?|"
           r"reject(?:s|ed)?|refus(?:e|es|ed|ing)|abort(?:s|ed|ing)?|segfault\w*|errors?\s+out|errored|fell\s+back|"
           r"cannot|can't|tried|no longer|regress\w*|remov(?:e|es|ed|ing)|drop(?:s|ped|ping)?|"
           r"delet(?:e|es|ed|ing)|exclud(?:e|es|ed|ing)|retir(?:e|es|ed|ing)|revert(?:s|ed|ing)?|not|never|"
           r"broke|broken|re-attempt\w*|reattempt\w*|attempt(?:s|ed|ing)?|ruled out|postponed|deferred|"
           r"deprecat\w*|neither|nor|die|dies|died|dying|gone|(?:is|was|are|were|gets|got)\s+replaced|out of|"
           # ("comment out X" drops X; "(old arms commented out)" is an aside about others, NOT_SWEPT's)
           r"comment(?:s|ing)?\s+out|assert(?:s|ed|ion|ions)?|root cause")
# A plan for after this change: "Starts at conc=1 as a smoke test before expanding to the full 1k1k+8k1k, conc 8-512
# sweep", "... conc=1 as an end-to-end smoke test before expanding the conc / DEP sweep" (the words from it to the end
# of the sentence are what comes later; the words before it are what the change runs now).
_RESOLVED_TO = re.compile(r"\bresolv(?:es|ed|ing)\s+(?:to\b|(?:its|the|their)\s+(?:(?!by\b)[\w-]+\s+){0,4}to\b)",
                         re.IGNORECASE)
PLAN_AHEAD = re.compile(r"\bbefore (?:expanding|scaling|extending|widening|growing|moving on)\b", re.IGNORECASE)
_SKIP_CLAUSE = re.compile(
    r"\b(?:" + _REJECT + r"|could|would|previously|formerly|used to|originally|initially|earlier|at first|"
    r"before (?:this|the|that|these|then|now)\b|before(?=\s*$)|prior to (?:this|the|that)\b|in the past|if|unless|was|were|"
    r"tbd|todo|maybe|"
    r"might|should|negative|claim(?:s|ed|ing)?|says|said|stating|contradict\w*|disagree\w*|"
    r"mismatch\w*|discrepanc\w*|defaults? to|by default|default(?:s|ed)? (?:of|is)|bisect\w*|gibberish|"
    r"garbled|garbage|pending|follow-up|followup|later PR|future|without (?:it|this|that|them|these)|"
    # what was undone or left, and until when ("Undoes X", "Switching away from X", "No more X", "TP8 had X until
    # this PR", "The X experiment is over", "Last week's run used X")
    r"undo(?:es|ne|ing)?|undid|away from|no more|had(?!\s+been\b)|(?:is|are) over|"
    r"until (?:this|the|that|now)\b|up to (?:this|the|that) (?:pr|change|commit)|last (?:week|night|sweep|run)|"
    r"yesterday|"
    # what was shown before the change ("After proving the 1P1D TP8 Mooncake path healthy through c8, widen ...")
    r"after (?:proving|validating|confirming|verifying|testing|measuring|profiling)|"
    # a plan: "Sweep will expand to TP=4/8 conc 4-256 once PR3 and PR4 land"
    r"will(?=[^.;]*\b(?:once|when|after|as soon as)\b)"
    r")\b|n't|(?<=\w)n t\b"
    r"|之前|此前|以前|原先|曾经|删除|移除|去掉|跳过|不|未|没有|若|如果",
    re.IGNORECASE,
)
# A clause labelled as the old state ("Prior --mem-fraction-static: 0.9", "Old value X 0.9", "Old topologies: ..."),
# or as another PR's ("In #1234 we set X 0.9").
_OLD_LABEL = re.compile(r"\s*(?:(?:prior|old|former|previous)(?:\s+(?:values?\b|settings?\b|defaults?\b|--)|\s*:|\s*$"
                        r"|\s+[a-z][\w-]*\s*(?::|$))|"
                        r"in\s+#\s*\d+\s*,?\s*(?:we|it|they|this|that|the)\b)", re.IGNORECASE)
# A clause that drops or rejects something: a clause after its ":" explains why, and is silent too.
# (A clause is matched as its tokens joined by spaces, where "wasn't" is "wasn t".)
_REJECTS = re.compile(r"\b(?:" + _REJECT + r")\b|n't|(?<=\w)n t\b", re.IGNORECASE)
# Reports of a run: what was measured or observed, not what the recipe is set to.  A word of this
# list silences its clause unless a determiner makes it an adjective ("the validated DEP run").
_REPORT_WORDS = frozenset({
    "validated", "verified", "measured", "tested", "observed", "reproduced", "caught", "showed", "shows",
    "returned", "returns", "peaked", "peaks", "reached", "completed", "benchmarked", "profiled", "confirmed",
    "achieved", "scored", "scores", "ran", "saw", "seen", "succeeded", "delivered", "yielded", "outperforms",
    "characterized", "characterised", "characterizes", "sustained",
    # the same reports in the present ("The second fast pass confirms TP8 weakly dominates TP4 at matched c4/c6",
    # "c56 reaches 89.22k input tok/s"; not "completes" or "achieves", which say what a program does: "the
    # non-MTP twin ... completes warmup", "whatever the draft achieves")
    "confirms", "reaches",
    "dominated", "tok/s", "tokens/s", "tps", "gsm8k", "exact-match", "run-to-run", "bring-up",
    # a measured change ("+47% to +116% improvement across conc 4-256") and a failure's reproduction
    # ("repros at 1088, e.g. tp8/ep8 dp-attn conc-2048"): what was seen, not what the sweep runs
    "improvement", "improvements", "uplift", "speedup", "speedups", "repro", "repros", "reproduces",
    # an experiment's log ("The first broad pass ... found ...", "Broad fast run 31540120459 identifies the TP8 knee
    # at c10-c14", "Run a second diagnostic at TP8 c8/c12", "run one isolated comparison: increase only X to V"):
    # the runs of the experiment, not what the sweep is set to ("an agentic experiment" names a config as often as
    # a run: not a word of this list)
    "found", "identifies", "identified", "diagnostic", "diagnostics", "ablation", "a/b", "trial", "trials",
    "comparison", "isolate", "isolates", "isolating",
    # a gain measured ("..., improving TP4 throughput at high concurrency (~+2-4% at 8k1k conc 256/512)")
    "improving", "improves", "improved",
})
_STATUS_WORDS = frozenset({"validated", "verified", "tested", "proven"})
_DETERMINERS = frozenset({"the", "a", "an", "this", "that", "these", "those", "our", "its", "their", "locally"})
_QUOTED = re.compile(r"(?<![\w])'[^'\n]*\s[^'\n]*'(?![\w])|\"[^\"\n]*\s[^\"\n]*\"|“[^”]*”|「[^」]*」|‘[^’]*\s[^’]*’")
FROM = {"from", "从"}
TO = {"to", "into", "为", "到", "改为", "切换为", "切换到", "换成", "变为"}
# Verbs whose direct object is the old state when a "to"/"into" follows: "scale TP2 to TP4".
CHANGE_VERBS = frozenset({
    "scale", "scales", "scaled", "scaling", "move", "moves", "moved", "moving", "switch", "switches", "switched",
    "switching", "change", "changes", "changed", "changing", "bump", "bumps", "bumped", "bumping", "raise",
    "raises", "raised", "raising", "lower", "lowers", "lowered", "lowering", "increase", "increases",
    "increased", "increasing", "decrease", "decreases", "decreased", "decreasing", "reduce", "reduces",
    "reduced", "reducing", "grow", "grows", "grew", "growing", "shrink", "shrinks", "shrank", "shrinking",
    "expand", "expands", "expanded", "expanding", "widen", "widens", "widened", "widening", "migrate",
    "migrates", "migrated", "migrating", "convert", "converts", "converted", "converting", "collapse", "collapses",
    "collapsed", "collapsing", "upgrade", "upgrades", "upgraded", "upgrading", "downgrade", "downgrades",
    "downgraded", "go", "goes", "went", "going", "rename", "renames", "renamed", "renaming",
})
# Nouns after a changed object, before its "to" ("widen TP4/DEP4 recipe points to TP8/DEP8").
_OBJECT_NOUNS = frozenset({"recipe", "recipes", "point", "points", "arm", "arms", "row", "rows", "band", "bands",
                           "layout", "layouts", "topology", "topologies", "cells"})
_FIX_VERBS = frozenset({"fix", "fixes", "fixed", "fixing", "avoid", "avoids", "prevent", "prevents", "work-around"})
_OBJECT_SKIP = frozenset({"the", "a", "an", "every", "each", "all", "both", "its", "their", "our", "this", "that"})


# An aside about what the model's own files hold ("(the canonical checkpoint ships no chat_template)"): the state of
# the checkpoint, which the entry works around, not of the recipe.
_MODEL_OWN_ASIDE = re.compile(r"\((?:the\s+)?(?:[\w.-]+\s+){0,3}(?:checkpoint|weights|model card|tokenizer|hf repo)\s+"
                              r"(?:ships|has|have|lacks?|includes?|contains?|provides?|does|doesn't|comes)\b[^)]*\)",
                              re.IGNORECASE)

# An aside about another config ("(the MTP key keeps TP8 conc 4-128)", "(the sibling entry runs TP4)"): its arms,
# points and values are that config's.
_OTHER_CONFIG_ASIDE = re.compile(r"\((?:the\s+|its\s+)?(?:[\w.-]+\s+){0,2}(?:key|sibling|counterpart|entry|config)"
                                 r"(?:'s)?\s+(?:keeps|has|uses|runs|stays|remains|is|sweeps|covers|passes|sets)\b[^)]*\)",
                                 re.IGNORECASE)

# A relative clause in the past about what the text just named ("#1240 (which set --attention-backend flashinfer)"):
# what that did, not what this change sets.
_PAST_RELATIVE_ASIDE = re.compile(r"\((?:which|that)\s+(?:set|used|had|was|were|passed|ran|added|introduced|switched|"
                                  r"changed|moved|pinned|enabled|disabled)\b[^()]*\)", re.IGNORECASE)


# The feature another project's change adds, named after it ("picks up sgl-project/sglang#35017
# (--prefill-decode-interval)"): what that change brings, not what the recipe passes.
_FEATURE_OF_A_CHANGE = re.compile(r"(?<=#\d)\d*\s*\((?:--?[\w.-]+(?:\s*[,/]\s*--?[\w.-]+)*)\)"
                                  # and what a parenthesis that opens with the change says it does ("fused compress
                                  # decode kernel (#24249, compressor c4/c128 decode fused)")
                                  r"|\((?:[\w.-]+/[\w.-]+)?#\d+\s*[,;:][^()]*\)")


def reports(toks: Sequence[Tok]) -> bool:
    """The clause reports a run (what was measured or seen), not what the recipe is set to."""
    for i, t in enumerate(toks):
        if _cites_a_run(toks, i):
            return True
        # "the validated DEP run" names a run by its status; "the measured frontier" reports one.
        adjective = t.low in _STATUS_WORDS and i > 0 and toks[i - 1].low in _DETERMINERS
        if (t.low in _REPORT_WORDS or _A_RATE.match(t.low)) and not adjective:
            return True
    return False


def _cites_a_run(toks: Sequence[Tok], i: int) -> bool:
    """Token ``i`` starts a workflow run named by its id ("(96 MiB short; run 30515793863, TP8/EP8 c9)"): the layout
    and concurrency beside it are that run's, a failure or a measurement the text quotes."""
    if toks[i].low not in ("run", "runs") or i + 1 >= len(toks):
        return False
    n = toks[i + 1] if toks[i + 1].text != "#" or i + 2 >= len(toks) else toks[i + 2]
    return n.text.isdigit() and len(n.text) >= _RUN_ID_DIGITS


# GitHub Actions run ids have had ten or eleven digits for years; a count of runs ("runs 3") has few.
_RUN_ID_DIGITS = 8


# A throughput's unit, however it is divided further ("80.24 tok/s/GPU", "tokens/s/user"): a measurement.
_A_RATE = re.compile(r"(?:tok|tokens|req|requests)/s(?:ec)?/")


DROP_VERBS = frozenset({"drop", "drops", "dropped", "remove", "removes", "removed", "delete", "deletes", "deleted",
                        "strip", "strips", "stripped"})
# Words between a drop verb and the settings it drops ("Remove the deprecated --async-scheduling flag").
DROP_OBJECT_GLUE = frozenset({"the", "a", "an", "deprecated", "obsolete", "unused", "redundant", "old", "stale",
                              "explicit", "hardcoded", "hard-coded", "leftover", "extra", "now-default", "default"})
# Words after a setting's name that make it the name of code around the setting, not the setting ("remove redundant
# SPEC_DECODING gating in favor of MODEL_MTP_FLAGS": the recipe still exports SPEC_DECODING, nothing tests it).
CODE_AROUND_A_SETTING = frozenset({"gating", "gate", "gates", "guard", "guards", "check", "checks", "logic",
                                   "handling", "branch", "branches", "conditional", "conditionals", "condition",
                                   "conditions", "plumbing", "wiring", "parsing", "validation", "lookup",
                                   "detection", "comment", "comments", "code"})
# What a drop order drops when it is a setting: a flag, NAME=value, an UPPER_SNAKE or snake_case name, a kebab-case
# name of three words or more (two words, "low-middle", name a part of the sweep as often as a flag).
_SETTING_TOKEN = re.compile(r"--[A-Za-z][\w.-]*(?:=\S*)?|[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+(?:\.\w+)*(?:=\S*)?|"
                            r"[a-z][a-z0-9]*(?:-[a-z0-9]+){2,}|[A-Za-z][\w.-]*=\S+")


# "Stop passing X", "stops setting X": the order of a drop verb in two words.
STOP_VERBS = frozenset({"stop", "stops", "stopped", "cease", "ceases", "ceased"})
STOPPED_GERUNDS = frozenset({"passing", "setting", "using", "exporting", "sending", "forwarding"})

_DROPPED_TO = re.compile(r"^\s*(?:and\s+)?drop(?:s|ped)?\b(?=.*\bto\s+\d)", re.IGNORECASE)


def drops_settings(toks: Sequence[Tok], known: Callable[[str], bool] = lambda word: False) -> bool:
    """The clause is an order to drop settings (``Drop --enforce-eager``, ``Remove VLLM_X=1``): what it drops is
    the new state (no job passes them), not history.  ``known``: a word the recipes in scope spell as a setting
    (``async-scheduling`` of --async-scheduling), whatever its shape."""
    k = 1 if toks[:1] and toks[0].low == "and" else 0
    if k + 1 < len(toks) and toks[k].low in STOP_VERBS and toks[k + 1].low in STOPPED_GERUNDS:
        k += 1  # "Stop passing --x on EP8": an order to drop it there
    elif k >= len(toks) or toks[k].low not in DROP_VERBS:
        return False
    k += 1
    # (a role before the setting: "Remove prefill --disable-radix-cache" drops the setting, not the role)
    while k < len(toks) and (toks[k].low in DROP_OBJECT_GLUE or toks[k].low in ROLE_WORDS):
        k += 1
    return k < len(toks) and bool(_SETTING_TOKEN.fullmatch(toks[k].text) or known(toks[k].text)) and \
        not names_an_arm(toks[k].text) and not (k + 1 < len(toks) and toks[k + 1].low in CODE_AROUND_A_SETTING)


# After a setting's name: "is NOT passed", "flag isn't set", "is no longer exported": the recipe does not give it
# (group 1: the negation).
NOT_GIVEN_AFTER = (r"[`'\"]?(?:\s+(?:flag|option|variable|env|setting)s?)?\s*((?:is|are)\s+(?:not|no\s+longer)|isn't|"
                   r"aren't)\s+(?:passed|set|given|exported|specified|used|added|applied|enabled)\b")
# A clause that is only such a statement ("--enable-prefix-caching is NOT passed"): read as a claim that the setting
# is absent, not as a report of what was removed.
_NOT_GIVEN = re.compile(r"^\W*(?:the\s+)?[`'\"]?(?:--[\w.-]+|[A-Z][A-Z0-9]*_[A-Z0-9_]+)" + NOT_GIVEN_AFTER,
                        re.IGNORECASE)


# "X is 256 by default and 128 on TP8", "X 128 for TP8 and 256 by default": "by default" is the value of the jobs
# the clause's exception leaves out (read as "256 elsewhere"), not the engine's own default ("enabled by default in
# vLLM v0.14.0"): a value stands before it and the clause gives another value to named jobs.
BY_DEFAULT = r"by default\b(?!\s+(?:in|since|with|on|upstream)\b)"
_VALUE_BY_DEFAULT = re.compile(r"(?<![\w.-])[\w.%,+-]+\s+" + BY_DEFAULT, re.IGNORECASE)
_NAMED_JOBS = r"(?:the\s+)?(?:TP|DEP|DPA|DP|EP|TEP|conc|CONC|c\d|\d+k\d*k|ISL|OSL|prefill|decode|MTP|STP)[\w=<>/.-]*"
_VALUE_ON_JOBS = r"[\w.%,+-]+\s+(?:on|for|at|with|in)\s+" + _NAMED_JOBS
# The other value, after the default ("... and 128 on TP8") or before it ("128 for DP attention and ...").
_VALUE_FOR_JOBS = re.compile(r"(?:\band\b|\bbut\b|,|;|\bexcept\b|\bwhile\b)\s*(?:it\s+is\s+|is\s+|use\s+)?"
                             + _VALUE_ON_JOBS + r"|" + _VALUE_ON_JOBS +
                             r"(?:\s+(?:attention|arm|arms|jobs|runs|rows|workers))?\s*(?:\band\b|\bbut\b|,)\s*",
                             re.IGNORECASE)


# The word joining a default to the other value goes with it: "and", "but", a comma.
_JOIN_AFTER = re.compile(r"\s*(?:,\s*)?(?:and|but|while)?\b|\s*[,;]")
_JOIN_BEFORE = re.compile(r"(?:,|;|\band|\bbut|\bwhile)\s*$")


def default_beside_exception(whole: str) -> tuple[int, int] | None:
    """Where ``whole`` says the default beside a value of named jobs: "256 by default and" of "X is 256 by default
    and 128 on TP8", "and 256 by default" of "X 128 for TP8 and 256 by default"; None when it says no such default."""
    if "by default" not in whole.lower():
        return None  # (asked of every clause: most have no default at all)
    m = _VALUE_BY_DEFAULT.search(whole)
    if m is None or _VALUE_FOR_JOBS.search(whole[:m.start()] + " " + whole[m.end():]) is None:
        return None
    before = _JOIN_BEFORE.search(whole[:m.start()])
    if before is not None:
        return before.start(), m.end()
    after = _JOIN_AFTER.match(whole, m.end())
    return m.start(), after.end() if after is not None else m.end()


def skip_clause(whole: str, toks: Sequence[Tok], known: Callable[[str], bool] = lambda word: False) -> bool:
    """The clause reports history, a failure, a condition or a run, so it claims nothing about the new state.

    An order to drop settings is no report of removal: its verb is not read as one; nor is a statement that a
    setting is not given ("--x is not passed")."""
    not_given = _NOT_GIVEN.match(whole)
    if not_given is not None:
        whole = whole[:not_given.start(1)] + whole[not_given.end(1):]
    if _DROPPED_TO.match(whole):
        whole = _DROPPED_TO.sub("", whole, 1)  # "Drop GPU memory utilization to 0.82": a value lowered
    if drops_settings(toks, known):
        # ... nor the words of the order ("Remove the deprecated --x flag"), nor a parenthesis saying why
        # ("(now enabled by default in vLLM v0.14.0)").
        k = next(i for i, t in enumerate(toks) if t.low in DROP_VERBS or t.low in STOPPED_GERUNDS) + 1
        while toks[k].low in DROP_OBJECT_GLUE:
            k += 1
        whole = re.sub(r"\([^)]*\)?", "", " ".join(t.text for t in toks[k:]))
    # A parenthesis says why or what else ("ATOM_USE_TRITON_MOE=1 (aiter fused_moe broken on gfx950)"): its
    # failure or history is its own (an old value in it is masked where it stands), not the clause's.
    said = _VALUE_ASIDE.sub(lambda m: m.group(1) + m.group(2) if _reports_aside(m.group(3)) else m.group(), whole)
    return bool(_SKIP_CLAUSE.search(said)) or bool(_OLD_LABEL.match(whole)) or reports(toks)


# A parenthesis right after a setting's value (and the part of the sweep it is for): a number ("0.85 (0.95 OOMs at
# init)"), a value given with "=" ("X=1 (aiter fused_moe broken on gfx950)") or written as an identifier
# ("page_first_direct (... OOMs ...)"), with its unit.  (After other words, such as an arm's name, it may still be
# the clause's own report: "1p1d-dep8-tep8 (mirrored ..., numa-bind dropped)", "no image carries M3 yet (...)".)
_VALUE_ASIDE = re.compile(r"(?<!\S)((?:\d[\d.,]*[kKmM%]?|\S*=\S+|\w*_\w+)(?:\s*[kKmM](?!\w))?"
                          r"(?:\s*%|\s+(?:tokens?|seconds?|ms|s|GiB|GB)(?!\w))?)"
                          r"((?:\s+(?:on|for|in|at)\s[^(),;]{1,40}?)?)(\s*\([^()]*\))")


def _reports_aside(aside: str) -> bool:
    """A parenthesis that reports a failure or history ("(aiter fused_moe broken on gfx950)"), not an order of its
    own ("(drop the TP8 and TP4/EP layouts)", which says what no job runs), a purpose or a contrast."""
    words = aside.strip("() ").split()
    return bool(_SKIP_CLAUSE.search(aside)) and not (words and words[0].lower() in DROP_VERBS | _PURPOSE_OR_CONTRAST)


# A parenthesis that says what a setting is for ("(avoid OOM on dp-on/conc>=64)") may name where it applies; one
# that sets it against another ("(not 1/4/8 as in the pure-TP row)") is no report either.
_PURPOSE_OR_CONTRAST = frozenset({"avoid", "avoids", "to", "so", "for", "prevent", "prevents", "keeps", "keep", "not",
                                  "no", "never", "instead", "vs", "vs.", "unlike"})


def rejects(whole: str) -> bool:
    """The clause drops, rejects or reports a failure of something (a clause after its ``:`` explains it)."""
    return bool(_REJECTS.search(whole)) or bool(_OLD_LABEL.match(whole))


def _next_char(text: str, i: int) -> str:
    while i < len(text) and text[i] in " \t\n\"'":
        i += 1
    return text[i] if i < len(text) else ""


def _previous_char(text: str, i: int) -> str:
    i -= 1
    while i >= 0 and text[i] in " \t\n\"'":
        i -= 1
    return text[i] if i >= 0 else ""


def explains_previous(clause: Clause) -> bool:
    """The clause follows a ``:`` (it elaborates on the one before it)."""
    return _previous_char(clause.source.text, clause.start) in (":", "：")


def introduces_list(clause: Clause) -> bool:
    """A ``:`` follows the clause: what comes after it, up to the end of the sentence, elaborates on it."""
    return _next_char(clause.source.text, clause.end) in (":", "：")


def ends_with_semicolon(clause: Clause) -> bool:
    """The sentence of this (last) clause ends with ``;``: the next one continues the same list."""
    return _next_char(clause.source.text, clause.end) in (";", "；")


def mask_history(toks: Sequence[Tok], clause: Clause, value_like: Sequence[bool], open_from: bool = False,
                 designated: Sequence[bool] = ()) -> list[bool]:
    """Per token: True when the token speaks of the old state or of somebody else's words.

    ``value_like[i]`` says whether token ``i`` is a value or a designator (for ``<verb> X to Y``).
    ``open_from``: a ``from`` of an earlier clause of the sentence has not met its ``to`` yet
    ("from key-a: image-1 / key-b: image-2 to image-3"): the clause is masked up to it.
    """
    lows = [t.low for t in toks]
    n = len(toks)
    masked = [False] * n
    designated = list(designated) or [False] * n
    if open_from:
        end = next((k for k, t in enumerate(toks) if lows[k] in TO or t.kind == "arrow"), n)
        for k in range(end):
            masked[k] = True
    if lows[:1] and lows[0] in _FIX_VERBS and not any(w in TO or w == "=" for w in lows):
        # "Fix the 8k1k conc-500 straggler tail": the problem fixed, not a setting.
        return [True] * n
    if lows[:1] == ["from"] and _previous_char(clause.source.text, clause.start) == "(":
        # "... to conc 1-32 (from conc 1-64)": a parenthesis cut off as a clause of its own, the state before
        return [True] * n
    for i, low in enumerate(lows):
        if low in ("replaces", "supersedes") and not any(w in ("with", "by") for w in lows[i + 1:]):
            # "TP4 conc 1-32 replaces the TP8 conc 1-64 band": what it replaces is the old state
            for k in range(i, n):
                if toks[k].text in {",", ";"}:
                    break
                masked[k] = True
        if _BECOMES.get(low) is not None and 0 < i and _names_new_part(lows, i + _BECOMES[low], designated) and \
                (low != "now" or lows[i - 1] in ("is", "are")):
            # "TP8 at conc 1-64 becomes TP4 at conc 1-32", "the old TP8 arm is now TP4": what it was
            end = i - 1 if low == "now" else i
            if _only_a_part(toks, lows, 0, end, designated):
                for k in range(i):
                    masked[k] = True
        if low in CHANGE_VERBS and any(w in TO for w in lows[i + 1:]):
            to = next(k for k in range(i + 1, n) if lows[k] in TO)
            if _names_new_part(lows, to + 1, designated) and _only_a_part(toks, lows, i + 1, to, designated):
                # "Change the TP8 sweep at conc 1-64 to TP4": the part it was, arm and points
                for k in range(i + 1, to):
                    masked[k] = True
        if low in ("replaced", "superseded") and i + 1 < n and lows[i + 1] == "by":
            for k in range(i):  # "TP8 is replaced by TP4"
                masked[k] = True
        j = _end_of_from(toks, lows, i)
        if j is not None:
            _mask_old_part(toks, i + 1, j, masked)
        if low in _OLD_WORDS and 0 < i and lows[i - 1] in _DETERMINERS:
            # "The old -tp 8 only sweep now also runs TP2 and TP4": what the phrase names is the old state
            head = _old_phrase_head(lows, i + 1)
            if head is not None:
                for k in range(i, head + 1):
                    masked[k] = True
            # "The prior mtp_flags used --speculative-algorithm NEXTN": what the old thing did, to the clause's end
            verb = next((k for k in range(i + 1, min(n, i + 6)) if lows[k] in _OLD_STATE_VERBS
                         or lows[k] in {",", ";", ":", "(", ")", "now"}), None)
            if verb is not None and lows[verb] in _OLD_STATE_VERBS:
                for k in range(i, n):
                    masked[k] = True
        if low == "or" and 0 < i < n - 1 and toks[i - 1].text == "," and toks[i + 1].text[:1].isdigit():
            # "8192, or 8192 * TP with DP attention": another value, for other jobs, said to the end of the clause
            for k in range(i, n):
                masked[k] = True
        if low == "off" and 0 < i and lows[i - 1] in _MOVE_VERBS:
            # "Moved off --attention-backend flashinfer to trtllm_mla": what it moved off is the state before
            j = next((k for k in range(i + 1, n) if lows[k] in TO or lows[k] == "onto"), None)
            if j is not None:
                _mask_old_part(toks, i + 1, j, masked)
        if toks[i].kind == "cjk" and toks[i].text.startswith(("替换为", "替换成", "换成")):
            # "将 TP8 c4 替换为 TP4 c4" (replace TP8 c4 with TP4 c4): what stands between 将 and the verb is the old
            start = next((k for k in range(i - 1, -1, -1) if toks[k].kind == "cjk" and toks[k].text.startswith("将")),
                         None)
            if start is not None:
                for k in range(start, i):
                    masked[k] = True
        if low in {"replace", "replaces", "replacing", "替换"}:
            j = next((k for k in range(i + 1, n) if lows[k] in {"with", "by", "为"}), None)
            if j is not None:
                for k in range(i + 1, j):
                    masked[k] = True
        if low in _BESIDE or (low == "addition" and 0 < i < n - 1 and lows[i - 1] == "in" and lows[i + 1] == "to"):
            _mask_beside(toks, lows, i, masked)
        if _contrast_at(lows, i):
            for k in range(i, n):
                if toks[k].text in {",", ";"} and not _list_goes_on(lows, k, value_like):
                    break
                masked[k] = True
        if low in FROM and _before_state_from(lows, i, value_like):
            # "Move 8k1k to DEP8 from TP8", "Bump it up from 0.85": the state before the change, no "to" after it.
            k = i + 1
            while k < n and lows[k] in _OBJECT_SKIP:
                k += 1
            while k < n and (value_like[k] or toks[k].text in {"/", ",", "and", "or"}):
                k += 1
            for x in range(i, k):
                masked[x] = True
        if toks[i].kind == "arrow" and i > 0 and not (designated[i - 1] and i + 1 < n and toks[i + 1].kind == "flag"):
            # (not "TP=4 → --mem-fraction-static 0.95": the arm a setting's value is given for)
            masked[i - 1] = True
            opened = _aside_opening(toks, i - 1)
            if opened is not None and opened > 0 and value_like[opened - 1]:
                # "image A (PR #23608 day-0) -> B": the old state is the value before its aside (not "the 2xDEP8
                # decode (3p2d, conc 512) -> 1xDEP16", where the aside names the arm the change moves).
                for k in range(opened - 1, i):
                    masked[k] = True
        if low in _VARIANTS and i > 0:
            # "tp1/tp2/tp4/tp8 with expert parallel and dp-attn variants": alternatives some jobs have beside the
            # arm, neither a narrowing of it nor settings every job runs
            j = next((k for k in range(i - 1, max(-1, i - 9), -1) if lows[k] in _OFFERED_WITH), None)
            if j is not None:
                for k in range(j + 1, i + 1):
                    masked[k] = True
        if low == "to" and old_value_before_to(toks, i):
            # "Switch block-size 64 to 1 gpu-memory-utilization 0.95 to 0.90": a from-to without its "from"
            masked[i - 1] = True
        if low in CHANGE_VERBS:
            _mask_changed_object(toks, lows, i, value_like, masked)
        if low in {"fix", "fixes", "fixing", "avoid", "avoids", "avoiding", "prevent", "prevents", "preventing",
                   "workaround", "work-around"} and i > 0 and lows[i - 1] in {"to", "that", "which", "for", "and"}:
            # "... to fix scheduler ValueError with hybrid KV cache manager": the problem, not the setting.
            for k in range(i, n):
                masked[k] = True
        if low in ("through", "thru", "till", "until") and 0 < i < n - 1 and designated[i - 1] and designated[i + 1]:
            # "1P1D through 3P2D": a range of layouts, neither end the only one.
            masked[i - 1] = masked[i + 1] = True
        if low == "up" and i + 1 < n and lows[i + 1] == "to" and any(w in FROM for w in lows[:i]):
            # "from 1P1D up to 8P1D": a range of layouts; neither end is the one the change sets.
            for k in range(i, min(n, i + 3)):
                masked[k] = True
    for m in [*re.finditer(r"\((?:was|previously|formerly|from|vs\.?|default|before|old)\b[^)]*\)", clause.text, re.I),
              # "(TP8 previously)", "(v0.5.9 before)", "(0.85 in the old recipe)": the old state said last
              *re.finditer(r"\([^()]*\b(?:previously|before|formerly|originally|earlier|in the (?:old|previous|original)"
                           r"(?:\s+[\w-]+)?|until (?:this|the|now)(?:\s+[\w-]+)?)\s*\)", clause.text, re.I),
              *_MODEL_OWN_ASIDE.finditer(clause.text), *_OTHER_CONFIG_ASIDE.finditer(clause.text),
              *_PAST_RELATIVE_ASIDE.finditer(clause.text), *_FEATURE_OF_A_CHANGE.finditer(clause.text)]:
        _mask_span(toks, masked, clause.start + m.start(), clause.start + m.end())
    # "X=1 (aiter fused_moe broken on gfx950)", "0.85 (0.9 crashed at conc 512)": a failure or history aside
    for m in _VALUE_ASIDE.finditer(clause.text):
        if _reports_aside(m.group(3)):
            _mask_span(toks, masked, clause.start + m.start(3), clause.start + m.end(3))
    # "... conc=1 as a smoke test before expanding the conc / DEP sweep": the plan, to the clause's end; and what a
    # program works a setting out to at run time ("the image resolves its MoE backend to FLASHINFER_TRTLLM_MXFP4",
    # "dram-utilization 0.63 resolves to total-cpu-dram-gb 1889"): derived, not given
    for tail in (PLAN_AHEAD.search(clause.text), _RESOLVED_TO.search(clause.text)):
        if tail is not None:
            _mask_span(toks, masked, clause.start + tail.start(), clause.end)
    # Quoted text is somebody else's words ('... zero request equivalence ...'), not a claim.
    for a, b in _quoted_spans(clause.source):
        _mask_span(toks, masked, a, b)
    return masked


def _aside_opening(toks: Sequence[Tok], close: int) -> int | None:
    """Where the parenthesis that token ``close`` (a ")") closes opens; None when it is no ")" or opens nowhere."""
    if toks[close].text != ")":
        return None
    depth = 0
    for k in range(close, -1, -1):
        depth += {")": 1, "(": -1}.get(toks[k].text, 0)
        if depth == 0:
            return k
    return None


def left_behind(toks: Sequence[Tok], masked: Sequence[bool]) -> frozenset[str]:
    """The values a clause names as the state its change leaves: the side before an arrow ("hicache
    write_back/direct -> write_through/kernel"), the words between "from" and "to" and those "replace" puts before
    "with" ("Replace PP2 with DP2"), lower-case, a slashed
    list split into its items.  A later sentence that names one of them alone by its value speaks of the old
    state ("write_back defers the host copy ..."), not of what the jobs now use."""
    out: set[str] = set()
    lows = [t.low for t in toks]
    for i, t in enumerate(toks):
        if t.kind == "arrow" and i > 0 and masked[i - 1]:
            out.update(set(_parts(lows[i - 1])) - set(_parts(lows[i + 1] if i + 1 < len(toks) else "")))
        to = _end_of_from(toks, lows, i)
        if to is None and lows[i] in _REPLACING:
            # "Replace PP2 with DP2": what is replaced is left
            to = next((k for k in range(i + 1, len(toks)) if lows[k] in ("with", "by")), None)
        if to is not None:
            # (not what the new state names too: "from two arms (TP2/EP2 + TP4/EP1) to a single TP4/EP4 arm")
            end = next((k for k in range(to + 1, len(toks)) if toks[k].text in _NEW_SIDE_ENDS), len(toks))
            kept = {part for k in range(to + 1, end) for part in _parts(lows[k])}
            out.update(part for k in range(i + 1, to) if masked[k] and toks[k].kind == "word"
                       for part in _parts(lows[k]) if part not in kept)
    return frozenset(out)


def _parts(low: str) -> list[str]:
    return [part for part in low.split("/") if part]


# Where the new side of "from A to B" or "replace A with B" ends.
_NEW_SIDE_ENDS = frozenset({",", ";", ":", "(", ".", "—"})


_REPLACING = frozenset({"replace", "replaces", "replaced", "replacing"})


def _end_of_from(toks: Sequence[Tok], lows: Sequence[str], i: int) -> int | None:
    """Where the old state that token ``i`` opens ("from", "从") ends: its "to" or arrow; None when the token opens
    none, or nothing ends it."""
    if not (lows[i] in FROM or (toks[i].kind == "cjk" and toks[i].text.startswith("从"))):
        return None
    return next((k for k in range(i + 1, len(toks)) if lows[k] in TO or toks[k].kind == "arrow"
                 or (toks[k].kind == "cjk" and any(toks[k].text.startswith(w) for w in TO))), None)


def _mask_span(toks: Sequence[Tok], masked: list[bool], a: int, b: int) -> None:
    """Mask the tokens that lie wholly within the source offsets [a, b)."""
    for k, t in enumerate(toks):
        if t.start >= a and t.end <= b:
            masked[k] = True


# "the old/previous/former ... sweep": a noun phrase that names the state before.
_OLD_WORDS = frozenset({"old", "previous", "former", "original", "prior", "earlier"})
# Past verbs after such a phrase that say what the old state did ("the previous recipe used X", "the old
# launcher passed X").
_OLD_STATE_VERBS = frozenset({"used", "had", "passed", "set", "ran", "shipped", "carried", "pinned", "exported",
                              "hard-coded", "hardcoded", "defaulted", "relied"})
_DETERMINERS = frozenset({"the", "its", "their", "this", "that", "these", "those"})
_OLD_HEADS = frozenset({"sweep", "sweeps", "arm", "arms", "band", "bands", "row", "rows", "config", "configs",
                        "layout", "topology", "recipe", "recipes", "setting", "settings", "value", "values", "image",
                        "flag", "flags", "default", "defaults", "grid", "ladder", "search-space", "path", "lane"})


def _old_phrase_head(lows: Sequence[str], k: int) -> int | None:
    """The last head noun of the phrase that starts at ``k`` ("-tp 8 only sweep"), within a few words and before
    any clause break; None when none closes it there (the phrase is not read as a noun phrase)."""
    head = None
    for j in range(k, min(len(lows), k + 7)):
        if lows[j] in {",", ";", ":", "(", ")", "is", "are", "was", "were", "now"}:
            break
        if lows[j] in _OLD_HEADS:
            head = j
        elif head is not None:
            break
    return head


# Verbs whose "off" names what was left ("move off X to Y", "migrated off X onto Y"), unlike "switch off X".
_MOVE_VERBS = frozenset({"move", "moves", "moved", "moving", "migrate", "migrates", "migrated", "migrating",
                         "switch", "switches", "switched", "switching", "port", "ports", "ported", "porting",
                         "transition", "transitions", "transitioned", "transitioning"})

# Words after which a list of designators or settings is offered as alternatives ("with EP and dp-attn variants").
_VARIANTS = frozenset({"variant", "variants", "options", "flavors", "flavours", "alternatives"})
_OFFERED_WITH = frozenset({"with", "w/", "plus", "including", "incl."})

# Words before "A to B" that make it a range of points ("conc 4 to 64", "between 1 to 8"), not a change of value.
_RANGE_LEADS = frozenset({"conc", "concurrency", "concurrencies", "c", "isl", "osl", "tp", "ep", "dp", "pp", "between",
                          "from", "at", "for", "in", "on", "of", "with", "over", "across", "and", "or", ",", "/",
                          "range", "ranges", "band", "bands", "nodes", "gpus", "workers", "x", "by", "up"})


def _value_kind(text: str) -> str | None:
    return "number" if parse_number(text) is not None else "dtype" if parse_dtype(text) is not None else None


def old_value_before_to(toks: Sequence[Tok], i: int) -> bool:
    """``<setting> A to B`` at the "to" ``i``: A and B values of one kind right around it, after a setting's
    spelled name (a flag, or a name joined by ``-``/``_``: "block-size 64 to 1", "MAX_NUM_SEQS 128 to 256"), or
    ``--flag A to --flag B`` (a flag's value before "to" and a flag)."""
    if not 1 < i < len(toks) - 1:
        return False
    if toks[i - 2].kind == "flag" and toks[i - 1].kind == "word" and toks[i + 1].kind == "flag":
        return True  # "switch --moe-runner-backend flashinfer_mxfp4 to --moe-a2a-backend megamoe"
    name = toks[i - 2]
    if toks[i - 1].kind == toks[i + 1].kind == "word" and _value_kind(toks[i - 1].text) is None \
            and not any(names_an_arm(t.text) or t.low in ROLE_WORDS for t in (toks[i - 1], toks[i + 1])) \
            and toks[i - 1].low not in _NOT_A_VALUE and name.low not in _NOT_A_NAME \
            and (toks[i - 1].low in _BOOL_WORDS) == (toks[i + 1].low in _BOOL_WORDS) \
            and (_spelled(name) or NAME_OF_A_VALUE.fullmatch(toks[i - 1].text) or name.low in _VALUE_NOUNS) \
            and _named_after_a_switch(toks, i - 2):
        # "Switch AITER_LOG_LEVEL WARNING to error", "Switch the moe backend auto to aiter": a word for a word
        # (not "Switch the attention backend to triton", whose word before "to" is the setting's own)
        return True
    kind = _value_kind(toks[i - 1].text)
    if kind is None or kind != _value_kind(toks[i + 1].text):
        return False
    if name.low in _RANGE_LEADS or _value_kind(name.text) is not None:
        return False
    return _spelled(name) or _named_after_a_switch(toks, i - 2)


def _named_after_a_switch(toks: Sequence[Tok], k: int) -> bool:
    """Token ``k`` ends a setting's name (a flag, or a few plain words) that a verb of replacing begins, a role
    between them ("Switch the num nextn predict layers 8 to 4", "Switch prefill --x A to B")."""
    for j in range(k, max(-1, k - 8), -1):
        if toks[j].low in _SWITCH_VERBS:
            return j < k
        if toks[j].kind not in ("word", "flag") or _value_kind(toks[j].text) is not None or \
                toks[j].low in ("to", "from"):
            return False
    return False


# A word that can only be a value ("FULL_DECODE_ONLY", "kv_both", "a2a", "EAGLE"), and nouns a value follows
# ("the moe backend auto").
NAME_OF_A_VALUE = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[_.-][A-Za-z0-9]+)+|[A-Z][A-Z0-9]+|[a-z]+[0-9][a-z0-9]*")
_VALUE_NOUNS = frozenset({"backend", "parser", "kernel", "algorithm", "method", "strategy", "policy", "scheduler",
                          "mode", "role", "format", "level", "type", "dtype", "layout"})


def _spelled(name: Tok) -> bool:
    """A setting's spelled name: a flag, or a word joined by ``-``/``_`` (``block-size``, ``MAX_NUM_SEQS``)."""
    return name.kind == "flag" or (name.kind == "word" and any(c in name.text for c in "-_"))


# Verbs of a value replaced by another ("Switch X A to B"), where the word after the setting is the old value.
_SWITCH_VERBS = frozenset({"switch", "switches", "switched", "change", "changes", "changed", "flip", "flips",
                           "flipped", "rename", "renames", "renamed"})
# Words before "to" that name what changes, never its old value ("Change the TensorRT-LLM image to 1.3.2"), and
# words before those that are not a setting's name ("Switch prefill X to 0": X is the setting).
_NOT_A_VALUE = _VALUE_NOUNS | {"image", "images", "tag", "version", "model", "recipe", "recipes", "config", "flag",
                               "setting", "value", "default"}
_NOT_A_NAME = ROLE_WORDS | _SWITCH_VERBS | {"the", "a", "an", "its", "their", "all", "every", "each"}
# An on/off value is replaced by another ("Switch X true to false"), never by a word of another kind ("Switch the
# use kv cache manager v2 to false": v2 ends the name).
_BOOL_WORDS = frozenset({"true", "false", "on", "off", "yes", "no", "enabled", "disabled", "0", "1"})


# Words after which a clause names what a part of the sweep is now, before them what it was (value: how many
# words the phrase has after the first).
_BECOMES = {"becomes": 1, "become": 1, "now": 1, "turns": 2}


def _names_new_part(lows: Sequence[str], k: int, designated: Sequence[bool]) -> bool:
    """What follows token ``k - 1`` is an arm ("... to TP4", "becomes TP4 at conc 1-32")."""
    while k < len(lows) and lows[k] in _OBJECT_SKIP | {"into", "to"}:
        k += 1
    return k < len(lows) and designated[k]


# Words of a phrase that names a part of the sweep and nothing else ("the old TP8 sweep at conc 1-64").
_PART_WORDS = frozenset({"the", "a", "an", "old", "previous", "former", "existing", "current", "at", "in", "on", "for",
                         "conc", "concurrency", "concurrencies", "and", "/", ",", "(", ")", "sweep", "sweeps", "arm",
                         "arms", "band", "bands", "row", "rows", "point", "points", "config", "configs", "layout",
                         "topology", "search-space", "search", "space", "lane", "tier", "path", "jobs", "job"})


def _only_a_part(toks: Sequence[Tok], lows: Sequence[str], a: int, b: int, designated: Sequence[bool]) -> bool:
    """Tokens [a, b) name a parallelism or layout of the sweep (with its points), and no setting: "the speculative
    algorithm" (a word of a setting's name) or "--method" is not what a part of the sweep was."""
    if a >= b or not any(designated[a:b]):
        return False
    return all(designated[k] or lows[k] in _PART_WORDS or re.fullmatch(r"c?\d+(?:[-/]c?\d+)*", lows[k])
               for k in range(a, b)) and not any(_SPEC_WORD.fullmatch(lows[k]) for k in range(a, b))


# Speculative decoding named as a value ("EAGLE", "mtp"): a setting's value as much as an arm.
_SPEC_WORD = re.compile(r"mtp\d*|eagle\d*|speculative|spec|dspark|medusa")


# A phrase that names what something is set against, not what it is: "instead of V", "rather than V", "vs V",
# "unlike V", "compared to V", "as opposed to V", "relative to V", "in contrast to V", "in place of V".
_CONTRAST_ONE = frozenset({"vs", "versus", "vs.", "v.", "unlike"})
_CONTRAST_TWO = frozenset({("instead", "of"), ("rather", "than"), ("compared", "to"), ("compared", "with"),
                           ("opposed", "to"), ("relative", "to"), ("contrast", "to"), ("contrast", "with"),
                           ("place", "of")})
# "prefer DEP8 over TP8": the arm not chosen.
_PREFER = frozenset({"prefer", "prefers", "preferred", "preferring", "favor", "favors", "favored", "favour",
                     "favours", "favoured", "choose", "chooses", "chose", "chosen", "pick", "picks", "picked"})


# "faster than TP8", "more throughput than DEP8": what a comparison is made against.
_COMPARATIVES = frozenset({"more", "less", "fewer", "higher", "lower", "better", "worse", "faster", "slower", "larger",
                           "smaller", "bigger", "greater", "longer", "shorter", "cheaper", "stronger", "weaker"})


def _list_goes_on(lows: Sequence[str], k: int, value_like: Sequence[bool]) -> bool:
    """The comma at ``k`` goes on with a list of values or arms ("instead of TP4, TP8 and TEP8")."""
    j = k + 1
    if j < len(lows) and lows[j] in ("and", "or"):
        j += 1
    return j < len(lows) and value_like[j] and (j + 1 >= len(lows) or lows[j + 1] in (",", "and", "or", ";", ")")
                                                 or value_like[j + 1])


# "Adds two layouts alongside the TP8+TP8 sweep: ...", "in addition to the existing DP+EP row": what stands
# beside what the clause adds, kept as it was; its arms are not the ones the clause speaks of.
_BESIDE = frozenset({"alongside", "besides"})
_BESIDE_ENDS = frozenset({"sweep", "sweeps", "row", "rows", "arm", "arms", "entry", "entries", "config", "configs",
                          "layout", "layouts", "recipe", "recipes", "variant", "variants", "one", "ones"})


def _mask_beside(toks: Sequence[Tok], lows: Sequence[str], i: int, masked: list[bool]) -> None:
    """Mask the phrase of "alongside"/"besides"/"in addition to" at ``i``: up to the noun of the thing it names
    ("sweep", "row", "arms"), else up to the clause's next comma, colon or parenthesis."""
    for k in range(i, len(toks)):
        if toks[k].text in {",", ";", ":", "(", ")"}:
            return
        masked[k] = True
        if lows[k] in _BESIDE_ENDS:
            return


def _contrast_at(lows: Sequence[str], i: int) -> bool:
    """A contrast phrase starts at token ``i``: what follows it (up to the next comma) is the other side."""
    if lows[i] in _CONTRAST_ONE:
        return True
    if lows[i] == "than" and any(w in _COMPARATIVES or (w.endswith("er") and len(w) > 4) for w in lows[max(0, i - 3):i]):
        return True  # "faster than TP8", "2x more requests than DEP8"
    if i + 1 < len(lows) and (lows[i], lows[i + 1]) in _CONTRAST_TWO:
        return lows[i] not in ("place", "contrast", "opposed") or (i > 0 and lows[i - 1] in ("in", "as"))
    if lows[i] == "from" and any(w in _SET_APART for w in lows[:i]):
        return True  # "distinguishes mega_moe from existing flashinfer_mxfp4 ep=4 entries": the other side
    return lows[i] == "over" and any(w in _PREFER for w in lows[:i])


# Verbs that set one thing apart from another: what follows their "from" is the other thing.
_SET_APART = frozenset({"distinguish", "distinguishes", "distinguished", "distinguishing", "differs", "differ",
                        "different", "differently", "separates", "separate", "apart", "distinct"})


# Words right before a "from" that make it the state left behind ("up from 0.85", "switched away from TP8").
_FROM_BEFORE = frozenset({"up", "down", "away", "back", "changed", "switched", "moved", "migrated", "bumped",
                          "raised", "lowered", "reduced", "increased", "decreased", "dropped", "cut", "grown"})


def _before_state_from(lows: Sequence[str], i: int, value_like: Sequence[bool]) -> bool:
    """The ``from`` at ``i`` gives the state before a change and no ``to`` follows it: after the change's ``to``
    ("to DEP8 from TP8"), after "up/down/switched ..." ("up from 0.85"), or in a clause whose verb changes
    something ("Move 8k1k from TP8"); a range it starts ("from conc=4-64", "from 64 up") is not one."""
    rest = lows[i + 1:]
    if any(w in TO for w in rest) or not rest:
        return False
    k = i + 1
    while k < len(lows) and lows[k] in _OBJECT_SKIP:
        k += 1
    if k >= len(lows) or not value_like[k] or _WHOLE_RANGE.match(" ".join(lows[k:k + 2])):
        return False
    if k + 1 < len(lows) and lows[k + 1] in {"up", "upward", "upwards", "onward", "onwards", "and", "+", "or"}:
        return False  # "from 64 up", "from c64 onward": where a band begins
    before = lows[:i]
    return (bool(before) and before[-1] in _FROM_BEFORE) or any(w in TO for w in before) or \
        any(w in CHANGE_VERBS for w in before)


def leaves_from_open(toks: Sequence[Tok]) -> bool:
    """A ``from`` with no ``to`` after it in the clause (its ``to`` is in a later clause, if anywhere)."""
    lows = [t.low for t in toks]
    last_from = max((k for k, w in enumerate(lows) if w in FROM), default=-1)
    if _WHOLE_RANGE.match(" ".join(lows[last_from + 1:last_from + 3])):
        return False  # "TP8-only from conc=4-64": the range it starts is written out, no "to" is to come
    return last_from >= 0 and not any(w in TO or toks[k].kind == "arrow" for k, w in enumerate(lows) if k > last_from)


_WHOLE_RANGE = re.compile(r"(?:conc\w*\s*[=:]?\s*|c)?\d+\s*(?:-|–|\.\.)\s*\d+(?:\s|$)")


def starts_old_part(toks: Sequence[Tok], k: int) -> bool:
    """Token ``k`` opens the old part of a change ("from --flag A to B", "moved off --flag A to B")."""
    if k < 1:
        return False
    before = toks[k - 1].low
    return toks[k].kind == "flag" and (before in FROM or (before == "off" and k > 1 and toks[k - 2].low in _MOVE_VERBS))


def _mask_old_part(toks: Sequence[Tok], start: int, to: int, masked: list[bool]) -> None:
    """Mask the old state between ``from``/``off`` and ``to``, except a flag a value follows there: in "from
    --attention-backend flashinfer to trtllm_mla" the flag is the setting the new value is of, while in "from
    --enable-foo to --enable-bar" the flag itself is the old state."""
    for k in range(start, to):
        if not (toks[k].kind == "flag" and k + 1 < to):
            masked[k] = True


def _mask_changed_object(toks: Sequence[Tok], lows: Sequence[str], verb: int, value_like: Sequence[bool],
                         masked: list[bool]) -> None:
    """``scaling TP2 to TP4``, ``bump 0.85 -> 0.9``: the verb's object before ``to`` is the old state."""
    k = verb + 1
    while k < len(toks) and lows[k] in _OBJECT_SKIP:
        k += 1
    start = k
    while k < len(toks) and (value_like[k] or toks[k].text in {"/", ","}):
        k += 1
    end = k
    while k > start and k < len(toks) and lows[k] in _OBJECT_NOUNS:
        k += 1  # "widen TP4/DEP4 recipe points to TP8/DEP8": what the old arms are
    # (after such nouns, only a value of their kind is a new state: "Move the TP4 band to conc 1-32" moves TP4)
    named_new = k == end or (k + 1 < len(toks) and value_like[k + 1])
    if end > start and named_new and k < len(toks) and (lows[k] in TO or toks[k].kind == "arrow"):
        for x in range(start, end):
            masked[x] = True
        # "scaling TP2 to TP4 and TP4 to TP8": each further "and A to B" pair is another transition.
        k += 1
        while k < len(toks) and value_like[k]:
            k += 1
        if k + 2 < len(toks) and lows[k] == "and" and value_like[k + 1]:
            _mask_changed_object(toks, lows, k, value_like, masked)


# A quoted value written with its unit or multiple ('2 K tokens', "88 %"): a value, not somebody's words.
_QUOTED_NUMBER = re.compile(r"\d[\d.,]*(?:\s*[KkM])?(?:\s*(?:%|tokens?|seconds?|s|ms))?")


@functools.lru_cache(maxsize=512)
def _quoted_in(text: str) -> tuple[tuple[int, int], ...]:
    return tuple((m.start(), m.end()) for m in _QUOTED.finditer(text)
                 if not _QUOTED_NUMBER.fullmatch(m.group()[1:-1].strip()))


def _quoted_spans(source: SourceText) -> tuple[tuple[int, int], ...]:
    """Spans of the quoted passages of a text (a quote may open in an earlier clause)."""
    return _quoted_in(source.text)


def symbolic(text: str, names: Container[str] = frozenset()) -> bool:
    """A placeholder written where a value would be: ``$CONC``, ``<n>``, or the name of a variable (``EP_SIZE``).

    ``names``: the variables the recipes know; an upper-case word that is none of them (``AITER``,
    ``FULL_DECODE_ONLY``) is a value.
    """
    if text.startswith("$") or re.fullmatch(r"<[^>]+>|\{[A-Z][A-Z0-9_]*\}", text):
        return True
    return bool(re.fullmatch(r"[A-Z][A-Z0-9_]*", text)) and (text in names or text in CONTRACT_NAMES)
