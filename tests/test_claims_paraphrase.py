"""Generated paraphrases of true and false claims, on a fixed sample of the real tree's settings.

``tests/paraphrase`` edits a setting in a copy of the real InferenceX tree and states the new value (a truth)
and another (a lie) in the forms of ``tests/data/claims_paraphrase/forms.yaml``; every setting and form is run
by ``bench/bench_claims_paraphrase.py``.  Here: the sample of ``tests/data/claims_paraphrase/sample.json`` (one
or two settings of each recipe family, flags, keys of structured values, environment variables, on/off
flags, roles of multinode jobs), each with a share of the forms, so that every form is said of some setting.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ci_tools.claims.text.extract import extract
from ci_tools.claims.text.markdown import pr_body_source
from ci_tools.claims.text.sentences import plain_source
from paraphrase.drive import Tree, load_tree, plan_any, split_edit
from paraphrase.forms import FORMS, Form, load_forms, sentences
from paraphrase.run import Outcome, check_sentences, held_out_setting
from paraphrase.settings import Setting
from unread import silent_clauses, spellings

from conftest import full_corpus_dir

SAMPLE = FORMS.parent / "sample.json"
SHARE = 2  # each setting is said in every other applicable form (in turn)
# The module's tests share the sample's outcomes: on one worker, or each worker computes them.
pytestmark = pytest.mark.xdist_group("claims-paraphrase-sample")


@pytest.fixture(scope="module")
def tree() -> Tree:
    return load_tree(full_corpus_dir())


@pytest.fixture(scope="module")
def outcomes(tree: Tree) -> list[Outcome]:
    forms = load_forms()
    out: list[Outcome] = []
    for n, data in enumerate(json.loads(SAMPLE.read_text(encoding="utf-8"))):
        setting = Setting.from_json(data)
        planned = plan_any(tree, setting, [setting.config_key])
        assert not isinstance(planned, str), f"{setting.key}: {planned}"
        edited, overlay, cache, head = planned
        said = sentences(edited, forms, held_out_setting(edited))
        share = [s for k, s in enumerate(said) if (k // 2 + n) % SHARE == 0]  # truth and lie stay together
        out.extend(check_sentences(tree.config, tree.repo, edited, overlay, cache, share, head))
        split = split_edit(tree, edited, forms)  # a default and one arm's exception: every such form, each setting
        if split is not None:
            out.extend(check_sentences(tree.config, tree.repo, *split))
    return out


def test_the_sample_spans_families_kinds_and_every_form(outcomes: list[Outcome]) -> None:
    families = {o.sentence.setting.family.split()[0] for o in outcomes}
    kinds = {o.sentence.setting.kind for o in outcomes}
    assert families >= {"single-node", "srt-slurm", "multinode", "image"} and kinds == {"flag", "key", "env", "switch",
                                                                                       "image"}
    assert {o.sentence.setting.role for o in outcomes} >= {"", "prefill", "decode"}
    said = {o.sentence.form.id for o in outcomes}
    assert len(said) >= 0.8 * len(load_forms()), sorted({f.id for f in load_forms()} - said)
    assert sum(o.lie for o in outcomes) == sum(not o.lie for o in outcomes) > 120


def test_a_default_beside_one_arms_exception_is_said_of_words_and_numbers(outcomes: list[Outcome]) -> None:
    """Each form that states a default and an arm's exception ("Set X to 0.86, except 0.89 on TP8") is said of a
    setting edited on one TP arm only, whose other jobs keep the old value: the truth is that edit."""
    defaults = {f.id for f in load_forms() if "{R}" in f.text}
    said = [o for o in outcomes if o.sentence.form.id in defaults]
    assert {o.sentence.form.id for o in said} == defaults
    assert {o.sentence.setting.vkind for o in said} >= {"word", "fraction"}
    assert all(o.sentence.setting.arm == "TP8" and o.sentence.setting.rest == o.sentence.setting.old for o in said)
    gpu = [o.sentence.text for o in said if o.sentence.form.id == "default-except" and o.sentence.truth
           and o.sentence.setting.name == "--gpu-memory-utilization"]
    assert gpu and any(v in gpu[0] for v in ("0.86,", "86%,", "86 %,")), gpu


def test_every_lie_of_the_sample_is_caught_and_no_truth_flagged(outcomes: list[Outcome]) -> None:
    def shown(o: Outcome) -> str:
        return f"{o.verdict}: {o.sentence.form.id} {o.sentence.setting.key}: {o.sentence.text!r} {list(o.said)}"

    # a lie of a held-out form may be missed with a trace (the bench measures those, and nothing is tuned on them);
    # never in silence
    assert [shown(o) for o in outcomes if o.lie and o.verdict != "caught"
            and not (o.sentence.form.held_out and o.verdict == "trace")] == []
    assert [shown(o) for o in outcomes if not o.lie and o.verdict == "flagged"] == []


def test_no_generated_sentence_names_a_setting_and_a_value_in_silence(tree: Tree, outcomes: list[Outcome]) -> None:
    """Every clause of every sentence of the sample that names a setting beside a value gives a claim or a note
    (with the catalog of the entry's jobs, as the checker builds it)."""
    from ci_tools.claims.text.subjects import catalog_from, ClaimsSettings
    from ci_tools.claims.verdict.check import EvalCache

    silent: list[str] = []
    checked = 0
    catalogs: dict[str, object] = {}
    for o in outcomes:
        s = o.sentence.setting
        if s.key not in catalogs:
            planned = plan_any(tree, s, [s.config_key])
            assert not isinstance(planned, str)
            _, overlay, cache, _ = planned
            evals = [cache.evaluate(j, overlay) for j in tree.jobs_of[s.config_key]]  # type: ignore[arg-type]
            catalogs[s.key] = catalog_from(evals, ClaimsSettings(), evals)
        cat = catalogs[s.key]
        # A PR description is read as the checker reads one (its Markdown tables as the sentences of their rows).
        text = o.sentence.text
        source = pr_body_source("generated.md", text) if o.sentence.form.where == "pr-body" else plain_source(
            "generated.md", text)
        found = extract(source, cat)  # type: ignore[arg-type]
        silent.extend(f"{s.key}: {c.text}" for c in silent_clauses(source, found, spellings(cat)))  # type: ignore
        checked += 1
    assert silent == [] and checked == len(outcomes)
