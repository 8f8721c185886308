"""Paraphrases of true and false claims about every setting the real tree's recipes pass.

For a setting (a server flag, a key of a structured flag value, an exported
environment variable, with its role on a multinode job), :mod:`.settings`
edits its value in a copy of the real InferenceX tree and checks, with the
evaluator, which jobs now run the new value (:mod:`.images`: the image a
config runs, edited in its master config); :mod:`.forms` writes changelog
sentences that state the new value (a truth) or another one (a lie) in the
ways real changelog sentences do (``tests/data/claims_paraphrase/forms.yaml``);
:mod:`.run` checks them with the claims checker and sorts each outcome:
a lie caught, missed with a trace (a ``claim-unverified`` record), or missed
silently; a truth flagged or not.

The test suite runs a fixed sample (``tests/test_claims_paraphrase.py``);
``bench/bench_claims_paraphrase.py`` runs every setting.
"""
