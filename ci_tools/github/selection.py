"""From a parsed command to a validated, normalised selection of jobs.

The selection is what travels from the comment handler to the sweep workflow
(as the ``selection`` input of ``workflow_dispatch``): explicit config keys
with the scenarios of each, the filters, and a digest of the job ids it
selected at the pinned revision, so the planner can prove it planned the same
jobs.  It never carries comment text: every string in it is a config key or
scenario name read from the repository, or a fixed word.

:func:`select_jobs` is the one implementation of "which jobs does a selection
mean"; the dispatcher and the sweep planner both call it.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any, Iterable, Literal

from ..jobs import selection as core
from ..jobs.job import SCENARIOS, Job
from ..jobs.matrix import expand
from ..model.keys import match_key_glob
from ..model.repository import RepoData
from ..revision.yamlpos import PosSeq
from .command import Command, shown

SELECTION_VERSION = 1
_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}\Z")
_SHA = re.compile(r"^[0-9a-f]{40}\Z")


class SelectionError(Exception):
    """The command is well formed but selects nothing runnable; ``problems`` say why."""

    def __init__(self, problems: Iterable[str]) -> None:
        self.problems = tuple(problems)
        super().__init__("; ".join(self.problems))


@dataclass(frozen=True)
class Target:
    config_key: str
    scenarios: tuple[str, ...]


@dataclass(frozen=True)
class DispatchSelection:
    """A normalised selection: sorted, deduplicated, every value checked."""

    mode: Literal["keys", "changelog"]
    sha: str
    targets: tuple[Target, ...]
    conc: tuple[int, ...] = ()
    tp: tuple[int, ...] = ()
    ep: tuple[int, ...] = ()
    evals: bool = False
    jobs: int = 0
    jobs_digest: str = ""
    # With `baseline`: the merge-base whose recipes run the same points beside these jobs, and how many jobs
    # that makes there (planned again from that commit by the sweep, as the jobs are from ``sha``).
    baseline: str = ""
    baseline_jobs: int = 0

    def to_json(self) -> dict[str, Any]:
        same_node = {"baseline": {"sha": self.baseline, "jobs": self.baseline_jobs}} if self.baseline else {}
        return {**same_node,
            "version": SELECTION_VERSION,
            "mode": self.mode,
            "sha": self.sha,
            "targets": [{"config-key": t.config_key, "scenarios": list(t.scenarios)} for t in self.targets],
            "conc": list(self.conc),
            "tp": list(self.tp),
            "ep": list(self.ep),
            "evals": self.evals,
            "jobs": self.jobs,
            "jobs-digest": self.jobs_digest,
        }

    def to_filter(self) -> core.Selection:
        """The same selection in the matrix's filter terms (each target an exact key with its scenarios)."""
        scopes = tuple(core.ChangelogScope((t.config_key,), t.scenarios) for t in self.targets)
        return core.Selection(concs=self.conc, tps=self.tp, eps=self.ep, changelog=scopes)

    def dumps(self) -> str:
        """Compact canonical JSON (one line: it is safe in a workflow input and in $GITHUB_OUTPUT)."""
        return json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def _int_tuple(value: Any, name: str) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value):
        raise ValueError(f"`{name}` must be a list of positive integers")
    if value != sorted(set(value)):
        raise ValueError(f"`{name}` must be sorted and without repeats")
    return tuple(value)


def selection_from_json(text: str) -> DispatchSelection:
    """Parse and validate a selection produced by :meth:`DispatchSelection.dumps`.

    Raises ValueError saying which field is wrong; the sweep planner calls this
    on the workflow input before using any of it.
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the selection is not JSON: {exc.msg} at character {exc.pos}") from None
    if not isinstance(data, dict):
        raise ValueError("the selection must be a JSON object")
    expected = {"version", "mode", "sha", "targets", "conc", "tp", "ep", "evals", "jobs", "jobs-digest"}
    if set(data) - {"baseline"} != expected:
        extra, missing = sorted(set(data) - expected), sorted(expected - set(data))
        raise ValueError(f"the selection has unexpected keys {extra} or lacks {missing}")
    if data["version"] != SELECTION_VERSION:
        raise ValueError(f"selection version {data['version']!r} is not supported, expected {SELECTION_VERSION}")
    if data["mode"] not in ("keys", "changelog"):
        raise ValueError("`mode` must be `keys` or `changelog`")
    if not isinstance(data["sha"], str) or not _SHA.match(data["sha"]):
        raise ValueError("`sha` must be 40 lowercase hex digits")
    targets: list[Target] = []
    raw_targets = data["targets"]
    if not isinstance(raw_targets, list) or not raw_targets:
        raise ValueError("`targets` must be a non-empty list")
    for item in raw_targets:
        if not isinstance(item, dict) or set(item) != {"config-key", "scenarios"}:
            raise ValueError("each target must be {config-key, scenarios}")
        key, scen = item["config-key"], item["scenarios"]
        if not isinstance(key, str) or not _KEY.match(key):
            raise ValueError(f"target config key {key!r} is not a config key")
        if not isinstance(scen, list) or not scen or any(s not in SCENARIOS for s in scen) or len(set(scen)) != len(scen):
            raise ValueError(f"target {key}: `scenarios` must list distinct names out of {', '.join(SCENARIOS)}")
        targets.append(Target(key, tuple(scen)))
    if [t.config_key for t in targets] != sorted({t.config_key for t in targets}):
        raise ValueError("`targets` must be sorted by config key, without repeats")
    if not isinstance(data["evals"], bool):
        raise ValueError("`evals` must be true or false")
    jobs = data["jobs"]
    if not isinstance(jobs, int) or isinstance(jobs, bool) or jobs < 1:
        raise ValueError("`jobs` must be a positive integer")
    digest = data["jobs-digest"]
    if not isinstance(digest, str) or not re.match(r"^[0-9a-f]{64}$", digest):
        raise ValueError("`jobs-digest` must be 64 hex digits")
    same_node = data.get("baseline", {"sha": "", "jobs": 0})
    if "baseline" in data and (not isinstance(same_node, dict) or set(same_node) != {"sha", "jobs"}
                               or not isinstance(same_node["sha"], str) or not _SHA.match(same_node["sha"])
                               or not isinstance(same_node["jobs"], int) or isinstance(same_node["jobs"], bool)
                               or same_node["jobs"] < 0):
        raise ValueError("`baseline` must be {sha: 40 lowercase hex digits, jobs: a count}")
    return DispatchSelection(mode=data["mode"], sha=data["sha"], targets=tuple(targets), conc=_int_tuple(data["conc"], "conc"),
                     tp=_int_tuple(data["tp"], "tp"), ep=_int_tuple(data["ep"], "ep"), evals=data["evals"],
                     jobs=jobs, jobs_digest=digest, baseline=same_node["sha"], baseline_jobs=same_node["jobs"])


def jobs_digest(jobs: Iterable[Job]) -> str:
    return hashlib.sha256("\n".join(sorted(j.id for j in jobs)).encode()).hexdigest()


def select_jobs(repo: RepoData, selection: DispatchSelection) -> list[Job]:
    """The jobs a selection means in ``repo`` (which must be the pinned revision), in file order."""
    keys = [t.config_key for t in selection.targets]
    return core.select(expand(repo, keys), selection.to_filter())


def _load_problems(repo: RepoData) -> list[str]:
    """Files that do not load and configs that fail their schema (no job is built from them: a comment
    must not be answered with a sweep that silently leaves them out)."""
    from ..validation.validate import input_findings

    out = []
    for f in input_findings(repo)[:5]:
        where = f"{f.location.path}:{f.location.line}" if f.location.line else f.location.path
        out.append(f"{where}: {f.message}")
    return out


def _plain(keys: list[str], problems: list[str]) -> list[str]:
    """Keys safe to pass on; a key with other characters is refused rather than forwarded."""
    bad = [k for k in keys if not _KEY.match(k)]
    for k in bad:
        problems.append(f"config key `{shown(k)}` contains characters other than letters, digits, `.`, `_` "
                        "and `-`; it cannot be dispatched")
    return [k for k in keys if k not in bad]


def _glob_targets(command: Command, repo: RepoData, problems: list[str]) -> dict[str, set[str]]:
    keys = list(repo.configs)
    targets: dict[str, set[str]] = {}
    for pattern in command.globs:
        matched = [k for k in keys if match_key_glob(pattern, k)]
        if not matched:
            close = difflib.get_close_matches(pattern.replace("*", ""), keys, n=3, cutoff=0.85)
            hint = (" Closest config keys: " + ", ".join(f"`{k}`" for k in close) + ".") if close else ""
            problems.append(f"`{shown(pattern)}` matches none of the {len(keys)} config keys at the pinned "
                            f"revision (`*` is the only wildcard and the whole key must match).{hint}")
        for k in _plain(matched, problems):
            targets.setdefault(k, set()).update(SCENARIOS)
    return targets


def _defined_scenarios(repo: RepoData, key: str) -> set[str]:
    data = repo.configs[key].data
    scenarios = data.get("scenarios") if isinstance(data, dict) else None
    return {s for s in SCENARIOS if isinstance(scenarios, dict) and s in scenarios}


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def appended_entries(head: RepoData, base: RepoData) -> list[tuple[int, Any]]:
    """(index, entry) of the head changelog entries that the base changelog does not have.

    Compared by value (as a multiset), so it works whether or not the base
    branch moved on since the pull request branched off.
    """
    head_list = head.changelog.value if head.changelog else None
    base_list = base.changelog.value if base.changelog else None
    if not isinstance(head_list, list):
        return []
    remaining: dict[str, int] = {}
    for entry in base_list if isinstance(base_list, list) else []:
        c = _canonical(entry)
        remaining[c] = remaining.get(c, 0) + 1
    out: list[tuple[int, Any]] = []
    for index, entry in enumerate(head_list):
        c = _canonical(entry)
        if remaining.get(c, 0) > 0:
            remaining[c] -= 1
        else:
            out.append((index, entry))
    return out


def _changelog_targets(head: RepoData, base: RepoData, problems: list[str]) -> dict[str, set[str]]:
    path = head.config.changelog
    new = appended_entries(head, base)
    if not new:
        problems.append(f"this pull request appends no entry to {path}, so `changelog` selects nothing; "
                        "name config-key globs instead")
        return {}
    seq = head.changelog.value if head.changelog else None
    keys = list(head.configs)
    targets: dict[str, set[str]] = {}
    unmatched: list[str] = []
    for index, entry in new:
        line = seq.item_span(index)[0] if isinstance(seq, PosSeq) else 0
        where = f"{path}:{line}" if line else path
        scope = core.scope_of_entry(entry, line)
        if scope is None:
            problems.append(f"{where}: the appended entry has no list of `config-keys`")
            continue
        scenarios = {s for s in scope.scenario_types if s in SCENARIOS} or set(SCENARIOS)
        for pattern in scope.config_keys:
            matched = [k for k in keys if match_key_glob(pattern, k)]
            if not matched:
                unmatched.append(f"{where}: config-keys entry `{shown(pattern)}` matches no config key")
            for k in _plain(matched, problems):
                targets.setdefault(k, set()).update(scenarios)
    # An entry may name configs of other master files or fleets (the changelog linter reports
    # keys that match nothing at all); they only matter when nothing else is selected.
    if not targets:
        problems.extend(unmatched)
    return targets


def resolve_selection(command: Command, sha: str, head: RepoData, base: RepoData | None = None) -> DispatchSelection:
    """Check a run/changelog command against the pinned revision and normalise it.

    ``head`` is the repository at ``sha``; ``base`` (the pull request's base) is
    needed for ``changelog``.  Raises :class:`SelectionError` listing every problem.
    """
    problems = _load_problems(head)
    if problems:
        raise SelectionError(["the configs at the pinned revision do not load:", *problems])
    if command.action == "changelog":
        if base is None:
            raise SelectionError(["`changelog` needs the base revision of the pull request"])
        targets = _changelog_targets(head, base, problems)
    else:
        targets = _glob_targets(command, head, problems)
    if problems:
        raise SelectionError(problems)
    # Keep only the scenarios each config really defines, so filters and messages speak of what exists.
    targets = {k: s & _defined_scenarios(head, k) for k, s in targets.items()}
    targets = {k: s for k, s in targets.items() if s}
    if not targets:
        raise SelectionError(["the selected configs define none of the selected scenarios"])
    if command.scenario:
        unfiltered = targets
        targets = {k: s & {command.scenario} for k, s in targets.items() if command.scenario in s}
        if not targets:
            raise SelectionError([f"`scenario={command.scenario}` leaves no config: the selected configs define "
                                  + ", ".join(sorted(set().union(*unfiltered.values())))])
    target_tuple = tuple(Target(k, tuple(s for s in SCENARIOS if s in targets[k])) for k in sorted(targets))
    draft = DispatchSelection(mode="changelog" if command.action == "changelog" else "keys", sha=sha, targets=target_tuple,
                      conc=command.conc, tp=command.tp, ep=command.ep, evals=command.evals)
    jobs = select_jobs(head, draft)
    if not jobs:
        unfiltered_jobs = select_jobs(head, DispatchSelection(draft.mode, sha, target_tuple))
        if not unfiltered_jobs:
            raise SelectionError([f"the selected configs ({len(target_tuple)}) generate no job for the chosen scenarios"])
        asked = " ".join(f"{n}={','.join(map(str, v))}" for n, v in (("conc", command.conc), ("tp", command.tp),
                                                                       ("ep", command.ep)) if v)
        raise SelectionError([core.nothing_left(asked, unfiltered_jobs)])
    return DispatchSelection(draft.mode, sha, target_tuple, command.conc, command.tp, command.ep, command.evals,
                     jobs=len(jobs), jobs_digest=jobs_digest(jobs))
