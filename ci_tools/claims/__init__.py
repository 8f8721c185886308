"""Claims in changelog entries and PR descriptions, checked against what each job runs.

Two questions, one sub-package each:

- :mod:`.text`: what the text claims. Sentences and clauses, what is masked,
  the arms and scopes they name, subjects and values: prose in, claims
  (subject, value, scope, span) and unverified phrases out.  It knows jobs only
  as the points an arm or scope selects, never what their recipes run.
- :mod:`.verdict`: what the jobs really do and how the two compare.  Each job's
  value for a claim's subject (recipe evaluation, settings read with defaults),
  per-job verdicts, findings worded from them, entries and the PR description
  checked, ``--history``, changes nobody wrote down.

``verdict`` imports ``text``; ``text`` never imports ``verdict``
(``tests/test_layers.py``).
"""
