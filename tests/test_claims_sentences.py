"""Claim extraction on a table of real-style sentences, clause by clause."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from ci_tools.claims.text.extract import Claim, extract
from ci_tools.claims.text.sentences import plain_source, split_clauses
from ci_tools.claims.text.subjects import Catalog, ClaimsSettings
from ci_tools.claims.text.arms import Arm, Parallel
from ci_tools.claims.text.scope import Scope
from ci_tools.claims.text.values import (Absent, ArmName, Bool, Concurrency, Count, FamilyArm, Fragment, Image, Items, Member,
                                    Multiples, NoArm, Number, PerConc, Present, Word)

DATA = Path(__file__).parent / "data"
TABLE = yaml.safe_load((DATA / "claims_sentences.yaml").read_text(encoding="utf-8"))
# Sentences by mechanism (arms, context, subjects), with a catalog of their own.
MECHANISMS = yaml.safe_load((DATA / "claims_sentences_mechanisms.yaml").read_text(encoding="utf-8"))


def catalog(spec: dict[str, Any] | None = None) -> Catalog:
    cat = Catalog(settings=ClaimsSettings())
    spec = spec or TABLE["catalog"]
    for name in spec.get("flags", []):
        cat.add("flag", name)
    for name in spec.get("boolean-flags", []):
        cat.add("flag", name, boolean=True)
    for name in spec.get("env", []):
        cat.add("env", name)
    for name in spec.get("vars", []):
        cat.add("var", name)
    for name in spec.get("keys", []):
        cat.add("key", name)
    for name, values in (spec.get("values") or {}).items():
        cat.values[name] = set(values)
    cat.spelled_flags = frozenset(spec.get("spelled-flags", ()))
    cat.lists = {name: tuple(items) for name, items in (spec.get("lists") or {}).items()}
    return cat


def _num(n: float) -> str:
    return str(int(n)) if n == int(n) else str(n)


def _parallel(p: Parallel, prefix: str = "") -> list[str]:
    p = p.finished()
    out = [f"tp{p.tp}" if p.tp is not None else "", f"ep{p.ep}" if p.ep is not None else "",
           {True: "dpa", False: "nodpa", None: ""}[p.dp_attn], f"dcp{p.dcp}" if p.dcp is not None else "",
           f"pp{p.pp}" if p.pp is not None else ""]
    return [prefix + x for x in out if x]


def arm_text(arm: Arm) -> str:
    """An arm as the table writes it: ``tp8 ep8 dpa``, ``off:none tp4 nodpa``, ``decode:tp8 nodpa``, ``1P4D``."""
    parts = _parallel(arm.parallel) + _parallel(arm.prefill, "prefill:") + _parallel(arm.decode, "decode:")
    if arm.offload is not None:
        parts.append(f"off:{arm.offload}")
    if arm.spec is not None:
        parts.append("mtp" if arm.spec else "nomtp")
    if arm.seq is not None:
        isl, osl = arm.seq
        parts.append(f"{isl // 1024}k{osl // 1024}k" if isl is not None and osl is not None
                     else f"isl{isl}" if isl is not None else f"osl{osl}")
    if arm.workers is not None:
        parts.append(f"{arm.workers[0]}P{arm.workers[1]}D")
    if arm.disagg is not None:
        parts.append("disagg" if arm.disagg else "agg")
    if arm.eval_only is not None:
        parts.append("eval" if arm.eval_only else "throughput")
    if arm.role:
        parts.append(f"role:{arm.role}")
    return " ".join(parts)


def scope_text(scope: Scope) -> str:
    parts = [" | ".join(arm_text(a) for a in scope.arms)] if scope.arms else []
    conc = Scope(concs=scope.concs, conc_min=scope.conc_min).label()
    return " ".join(p for p in parts + [conc] if p)


def normalise(claim: Claim) -> list[Any]:
    v = claim.value
    if isinstance(v, Number):
        value = ",".join(_num(n) for n in sorted(v.candidates))
    elif isinstance(v, Bool):
        value = "on" if v.on else "off"
    elif isinstance(v, Word):
        value = v.norm
    elif isinstance(v, PerConc):
        value = f"x{_num(v.factor)}"
    elif isinstance(v, Image):
        value = v.ref
    elif isinstance(v, Concurrency):
        if v.at_least is not None:
            value = f"{v.at_least}+"
        elif v.is_range:
            value = f"{v.values[0]}-{v.values[-1]}"
        else:
            value = ",".join(str(c) for c in v.values)
        if claim.exhaustive:
            value += " (all)"
    elif isinstance(v, (ArmName, NoArm)):
        value = v.describe()
    elif isinstance(v, FamilyArm):
        value = f"{v.name} runs {v.text}"
    elif isinstance(v, (Present, Absent)):
        value = v.describe()
    elif isinstance(v, Fragment):
        value = "~" + " ".join(v.parts)
    elif isinstance(v, Multiples):
        value = f"multiples of {v.step}"
    elif isinstance(v, (Count, Member)):
        value = v.describe()
    elif isinstance(v, Items):
        value = "[" + ",".join(map(str, v.items)) + "]"
    else:  # pragma: no cover - every value type is listed above
        raise AssertionError(v)
    return [claim.kind, claim.subject.name if claim.subject else None, value, scope_text(claim.scope)]


CASES = TABLE["sentences"]


def test_the_table_has_at_least_100_sentences() -> None:
    assert len(CASES) >= 100
    assert sum(1 for c in CASES if not c["claims"]) >= 25, "the table must test silence too"


@pytest.mark.parametrize("case", CASES, ids=[c["text"][:60] for c in CASES])
def test_sentence(case: dict[str, Any]) -> None:
    source = plain_source("x.md", case["text"])
    if "clauses" in case:
        assert [c.text for c in split_clauses(source)] == case["clauses"]
    found = extract(source, catalog())
    assert [normalise(c) for c in found.claims] == case["claims"]


@pytest.mark.parametrize("case", MECHANISMS["sentences"], ids=[c["text"][:60] for c in MECHANISMS["sentences"]])
def test_sentence_by_mechanism(case: dict[str, Any]) -> None:
    found = extract(plain_source("x.md", case["text"]), catalog(MECHANISMS["catalog"]))
    assert [normalise(c) for c in found.claims] == case["claims"]


def test_claim_spans_point_at_the_words() -> None:
    text = "Match the validated DEP run: set the state checkpoint interval to 32768 tokens."
    claim = extract(plain_source("x.md", text), catalog()).claims[0]
    loc = claim.location
    assert (loc.line, loc.column) == (1, 38)
    assert text[loc.column - 1:loc.end_column - 1] == "state checkpoint interval to 32768 tokens"


def test_ambiguous_phrase_is_unverified_not_a_claim() -> None:
    cat = catalog()
    cat.add("flag", "--spec-decode-acceptance-length")  # a second acceptance-length flag
    found = extract(plain_source("x.md", "Use the golden MTP acceptance length 2.49."), cat)
    assert found.claims == []
    assert [(u.phrase, u.reason, sorted(u.candidates)) for u in found.unverified] == [
        ("MTP acceptance length", "the term names several subjects",
         ["--spec-decode-acceptance-length", "--synthetic-acceptance-length"]),
    ]


def test_a_term_naming_a_flag_and_the_env_var_feeding_it_is_the_flag() -> None:
    cat = catalog()
    cat.add("env", "SYNTHETIC_ACCEPT_LEN")  # the recipe's variable behind the flag's value
    found = extract(plain_source("x.md", "Use the golden MTP acceptance length 2.49."), cat)
    assert [(c.subject.name if c.subject else None, c.value.describe()) for c in found.claims] == [
        ("--synthetic-acceptance-length", "2.49")]


def test_configured_vocabulary_and_abbreviations() -> None:
    from ci_tools.claims.text.subjects import parse_settings

    settings = parse_settings({
        "vocabulary": {"balancer": {"subject": "--dp-load-balance"}, "TBO": "--two-batch"},
        "abbreviations": {"CKPT": "checkpoint"},
    })
    cat = Catalog(settings=settings)
    cat.add("flag", "--dp-load-balance")
    cat.add("flag", "--ckpt-every")
    cat.add("flag", "--two-batch", boolean=True)
    found = extract(plain_source("x.md", "Set the balancer to least_tokens, checkpoint every 4096, and disable TBO."), cat)
    assert [normalise(c) for c in found.claims] == [
        ["recipe", "--dp-load-balance", "least_tokens", ""],
        ["recipe", "--ckpt-every", "4096", ""],
        ["recipe", "--two-batch", "off", ""],
    ]


def test_a_value_named_again_after_the_change_left_it_is_the_old_state() -> None:
    # Pull request 2299's bullet: the agg arm moves off write_back, the next sentence tells why ("write_back
    # defers the host copy ..."); that is no claim that the jobs use write_back.  A value the text did not move
    # away from, or one said to be kept, still is one.
    cat = catalog({"flags": ["--hicache-write-policy", "--hicache-io-backend"],
                   "values": {"--hicache-write-policy": ["write_back", "write_through"],
                              "--hicache-io-backend": ["direct", "kernel"]}})

    def read(text: str) -> tuple[list[list[str]], list[str]]:
        found = extract(plain_source("x.md", text), cat)
        return [normalise(c) for c in found.claims], [u.reason for u in found.unverified]

    moved = "Agg arm hicache write_back/direct -> write_through/kernel, matching the reference agg arm. "
    claims, notes = read(moved + "write_back defers the host copy on the critical path.")
    assert not any(c[2] == "~write back" for c in claims)
    assert "a value an earlier clause names as the state the change leaves" in notes
    claims, _ = read("Move hicache from write_back to write_through. write_back is kept for the disagg arms.")
    assert any(c[2] == "~write back" for c in claims)
    claims, _ = read("Agg arm hicache direct -> kernel. write_back defers the host copy on the critical path.")
    assert any(c[2] == "~write back" for c in claims)


@pytest.mark.parametrize("section, message", [
    ({"vocabulary": ["TBO"]}, "`claims.vocabulary` must map terms to subjects"),
    ({"vocabulary": {"TBO": {"subjects": "--enable-tbo"}}}, "takes `subject` (required)"),
    ({"vocabulary": {"TBO": 3}}, "must be a string or a non-empty list of strings"),
    ({"abbreviations": {"REQ": 1}}, "`claims.abbreviations.REQ` must be a string of words"),
    ({"vocab": {}}, "unknown key `claims.vocab`"),
])
def test_bad_claims_section_is_a_usage_error(section: dict[str, Any], message: str) -> None:
    from ci_tools.claims.text.subjects import parse_settings
    from ci_tools.errors import UsageError

    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_settings(section, ".ci-tools.yaml")


def test_a_flag_named_by_the_last_words_of_its_name_is_that_flag_when_no_other_ends_so() -> None:
    # Pull request 2299: "write_back/direct/page_first_direct -> write_through/kernel with mem-layout unset", where
    # the recipes pass --hicache-mem-layout.  A tail two flags end in names neither; a flag the recipes' files spell
    # whole is itself, not a longer flag that ends in its name.
    def subjects(cat: Catalog, text: str) -> list[str | None]:
        return [c.subject.name if c.subject else None for c in extract(plain_source("x.md", text), cat).claims]

    cat = catalog({"flags": ["--hicache-mem-layout", "--hicache-io-backend", "--speculative-moe-runner-backend",
                             "--speculative-num-steps", "--max-seq-len", "--max-num-seqs"],
                   "spelled-flags": ["--moe-runner-backend"]})
    assert subjects(cat, "Agg arm: mem-layout unset.") == ["--hicache-mem-layout"]
    assert subjects(cat, "Agg arm: io-backend kernel.") == ["--hicache-io-backend"]
    # A message names such a flag whole: "changelog says --hicache-io-backend is kernel", not "the io-backend".
    from ci_tools.claims.verdict.messages import phrase
    (io,) = extract(plain_source("x.md", "Agg arm: io-backend kernel."), cat).claims
    assert phrase(io) == "--hicache-io-backend"
    assert "--speculative-moe-runner-backend" not in subjects(cat, "Decode: moe-runner-backend triton.")
    assert subjects(cat, "Decode: speculative-moe-runner-backend triton.") == ["--speculative-moe-runner-backend"]
    # The words left out are a bound, or no family of the recipes' flags: no name of it.
    assert subjects(cat, "Run every seq-len 8192.") == []
    assert subjects(catalog({"flags": ["--hicache-mem-layout"]}), "Agg arm: mem-layout unset.") == []
    two = catalog({"flags": ["--hicache-mem-layout", "--kv-mem-layout"]})
    assert subjects(two, "Agg arm: mem-layout unset.") == []
    # The end of a switch's name is the feature it turns off: "custom all-reduce disabled" is the switch, on.
    switch = catalog({"boolean-flags": ["--disable-custom-all-reduce"]})
    (read,) = extract(plain_source("x.md", "Use NCCL collectives (custom all-reduce disabled explicitly)."), switch).claims
    assert read.subject is not None and read.subject.name == "--disable-custom-all-reduce"
    assert read.value == Bool("disabled", True)


def test_an_aside_between_the_old_value_and_its_arrow_leaves_that_value_the_old_state() -> None:
    # Pull request 1255: "Bump ... image rocm/sgl-dev:deepseek-v4-mi35x (PR #23608 day-0) -> rocm/sgl-dev:rocm720-..."
    def images(text: str) -> list[str]:
        return [c.value.ref for c in extract(plain_source("x.md", text), catalog({})).claims
                if isinstance(c.value, Image)]

    new = "rocm/sgl-dev:rocm720-mi35x-a8410de-20260502-DSv4"
    for text in (f"Bump the image rocm/sgl-dev:deepseek-v4-mi35x (PR #23608 day-0) -> {new} (cuda graph).",
                 f"Bump the image rocm/sgl-dev:deepseek-v4-mi35x (day-0 (first)) -> {new}.",
                 f"Bump the image rocm/sgl-dev:deepseek-v4-mi35x -> {new}."):
        assert images(text) == [new]
    # 4e8bd8e14cc2's message: an aside after a word names the arm the change moves, read as such.
    found = extract(plain_source("x.md", "The one 2xDEP8 decode (3p2d, conc 512) -> 1xDEP16."), catalog({})).claims
    assert [c.value.values for c in found if isinstance(c.value, Concurrency)] == [(512,)]


def test_an_arm_a_later_bullet_replaces_is_a_step_of_the_entry_s_story() -> None:
    # Pull request 2196's draft: "One TP8/PP2/EP8 topology per seq-len (1k1k + 8k1k), conc 1-512", then, in a later
    # bullet, "Replace PP2 with DP2 ...": the arm so named is not what the entry ends with.
    from ci_tools.claims.verdict.superseded import replaced_later

    first = extract(plain_source("x.md", "One TP8/PP2/EP8 topology per seq-len, conc 1-512."), catalog({}))
    later = extract(plain_source("x.md", "Replace PP2 with DP2 (data-parallel + expert-parallel): the prefill hung."),
                    catalog({}))
    assert "pp2" in later.left and "dp2" not in later.left
    (conc,) = [c for c in first.claims if c.kind == "concurrency"]
    assert replaced_later(conc, 0, [first.left, later.left]) == ("pp2", 1)
    assert replaced_later(conc, 1, [later.left, first.left]) is None  # an earlier bullet says nothing of it
    kept = extract(plain_source("x.md", "Replace DP4 with DP2 on the decode workers."), catalog({}))
    assert replaced_later(conc, 0, [first.left, kept.left]) is None
    # Pull request 2605: a part the new state names too is not left ("from two arms (TP2/EP2 + TP4/EP1) to a
    # single TP4/EP4 arm" leaves no TP4, and "TP4/EP4, HiCache" of the bullet before stands).
    arm = extract(plain_source("x.md", "Add EAGLE MTP, TP4/EP4, at conc 1-16."), catalog({}))
    moved = extract(plain_source("x.md", "Consolidate the -mtp key from two arms (TP2/EP2 + TP4/EP1, no KV "
                                         "offloading) to a single TP4/EP4 arm, conc 1-16."), catalog({}))
    assert {"tp2", "ep2", "ep1"} <= moved.left and "tp4" not in moved.left
    (four,) = [c for c in arm.claims if c.kind == "concurrency"]
    assert replaced_later(four, 0, [arm.left, moved.left]) is None
