"""A flag the server is never given that the recipe gives another program it runs.

A recipe starts more than its server: an LMCache server (``lmcache server ... --shm-name ""``), a benchmark
client (``aiperf profile ... --allow-empty-content``), an installer.  "Run one LMCache MP server per node with
--shm-name ''" is true of the recipe, whose server command line has no such flag.  The evaluation follows the
server's command line only, so where no job's server is given a flag the text names and the recipe's own text
passes it to some other command, the claim is about that command: it is left unverified, with where the recipe
writes it, rather than reported as a setting no job sets.  The file's words do not tell that command from a
branch of the server's arguments no job of the entry takes (``PARALLEL_ARGS+=(--ep-size ...)`` under
``EP_SIZE > 1``): such a claim is left unverified too, a true omission among them (none on the history, the pull
requests' heads and drafts, or the commit messages replayed).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ...findings import Location
from ...shell.model import RecipeEval
from ...revision.snapshot import Snapshot
from .compare import Judgement

_NOT_GIVEN = ("absent", "unset")


def passed_to_another_program(judgement: Judgement, snapshot: Snapshot,
                              evals: Mapping[str, RecipeEval | None]) -> Location | None:
    """Where a recipe of the claim's jobs writes the flag no server is given (outside a comment); None when some
    server of the entry's jobs is given it (a branch these jobs do not take), or the flag is written nowhere else."""
    claim = judgement.claim
    name = claim.subject.name if claim.subject is not None else ""
    if claim.kind != "recipe" or not name.startswith("--") or "." in name or judgement.outcome != "false":
        return None
    if not all(actual.value in _NOT_GIVEN for _, actual in judgement.false):
        return None
    if any(ev is not None and ev.flag_values(name) for ev in evals.values()):
        return None  # a server flag, written in a branch of the recipe these jobs do not take
    written = re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])")
    for path in dict.fromkeys(ev.recipe for job, _ in judgement.false
                              if (ev := evals.get(job.id)) is not None and ev.recipe):
        data = snapshot.read(path)
        if data is None:
            continue
        for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
            m = written.search(line)
            if m is not None and not line.lstrip().startswith("#"):
                return Location(path, number, m.start() + 1)
    return None
