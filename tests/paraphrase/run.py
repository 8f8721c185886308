"""The claims checker on generated sentences, and what became of each.

A lie is *caught* when a finding of a disagreement (``claim-contradicted``,
``claim-arm-missing``, ``claim-setting-missing`` or ``claim-partly-contradicted``) names the setting the sentence lies about; *caught-other* when a
finding names another setting (the lie was misread); *trace* when the checker
says it could not verify a phrase of the sentence (``claim-unverified``);
*silent* when nothing at all is said.  A truth is *flagged* when any claim
finding is made on it.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from ci_tools.claims.text.markdown import pr_body_source
from ci_tools.claims.text.sentences import plain_source
from ci_tools.claims.verdict.check import EntryInput, EvalCache, check_entries
from ci_tools.claims.verdict.rules import DISAGREEMENT_RULES
from ci_tools.config import ProjectConfig
from ci_tools.findings import Finding, Location
from ci_tools.model.repository import RepoData

from .forms import Sentence
from .settings import OverlaySnapshot, Setting

FINDINGS = DISAGREEMENT_RULES


def held_out_setting(s: Setting) -> bool:
    """One setting name in five is never tuned on (whatever its family or location); one image in five."""
    name = s.old if s.kind == "image" else s.name
    return int(hashlib.sha1(f"{s.kind} {name}".encode()).hexdigest()[:8], 16) % 5 == 0


@dataclass(frozen=True)
class Outcome:
    sentence: Sentence
    verdict: str  # lie: caught | caught-other | trace | silent; truth: clean | flagged | trace
    said: tuple[str, ...]  # the checker's findings and notes on the sentence

    @property
    def lie(self) -> bool:
        return not self.sentence.truth


def _names_setting(finding: Finding, subject: str) -> bool:
    said = str(finding.data.get("subject", ""))
    if said == subject:
        return True
    # A key of a structured value may be named by its address on the flag the evaluation wrote.
    return said.rsplit(".", 1)[-1] == subject.rsplit(".", 1)[-1] and "." in said + subject


def classify(sentence: Sentence, findings: Sequence[Finding]) -> Outcome:
    claims = [f for f in findings if f.rule in FINDINGS]
    notes = [f for f in findings if f.rule not in FINDINGS]
    said = tuple(f"{f.rule}: {f.message}" for f in findings)
    if sentence.truth:
        verdict = "flagged" if claims else ("trace" if notes else "clean")
    elif any(_names_setting(f, sentence.subject) for f in claims):
        verdict = "caught"
    elif claims:
        verdict = "caught-other"
    else:
        verdict = "trace" if notes else "silent"
    return Outcome(sentence, verdict, said)


def check_sentences(config: ProjectConfig, repo: RepoData, setting: Setting, overlay: OverlaySnapshot,
                    cache: EvalCache, said: Sequence[Sentence], head: RepoData | None = None) -> list[Outcome]:
    """Every sentence of one edited setting checked against the edited copy of the tree (``head``: its configs,
    where the edit is one of them; ``repo``'s otherwise)."""
    head = head or repo
    scenarios = (setting.scenario,) if setting.scenario else ()
    entries: list[EntryInput] = []
    paths: dict[str, Sentence] = {}
    bodies: list[Sentence] = []
    for n, sentence in enumerate(said):
        if sentence.form.where == "pr-body":
            bodies.append(sentence)
            continue
        path = f"generated/{n}"
        paths[path] = sentence
        entries.append(EntryInput([setting.config_key], scenarios, [plain_source(path, sentence.text)],
                                  Location(path, 1, 1)))
    by_path: dict[str, list[Finding]] = defaultdict(list)
    # As the PR job checks a change: against its head (the edited copy), with the base (the tree as it was).
    base = {"base_repo": repo, "base_snapshot": overlay.base}
    if entries:
        report = check_entries(config, head, overlay, entries, cache=cache, verbose=True, **base)  # type: ignore
        for f in report.findings:
            by_path[f.location.path].append(f)
    neutral = EntryInput([setting.config_key], scenarios, [plain_source("entry", "Retune the recipe.")],
                         Location("entry", 1, 1))
    for n, sentence in enumerate(bodies):
        path = f"pr-body/{n}"
        paths[path] = sentence
        report = check_entries(config, head, overlay, [neutral], cache=cache, verbose=True,  # type: ignore
                               pr_body=pr_body_source(path, sentence.text), **base)
        for f in report.findings:
            by_path[f.location.path].append(f)
    return [classify(sentence, by_path.get(path, [])) for path, sentence in paths.items()]


# --------------------------------------------------------------------------- the report


@dataclass
class Tally:
    lies: Counter[str] = field(default_factory=Counter)
    truths: Counter[str] = field(default_factory=Counter)

    def add(self, o: Outcome) -> None:
        (self.lies if o.lie else self.truths)[o.verdict] += 1

    @property
    def n_lies(self) -> int:
        return sum(self.lies.values())

    @property
    def n_truths(self) -> int:
        return sum(self.truths.values())

    def caught(self) -> float:
        return self.lies["caught"] / self.n_lies if self.n_lies else 1.0

    def flagged(self) -> float:
        return self.truths["flagged"] / self.n_truths if self.n_truths else 0.0

    def line(self) -> str:
        return (f"lies {self.n_lies:5}: caught {self.lies['caught']:5} ({100 * self.caught():5.1f} %), "
                f"misread {self.lies['caught-other']:3}, trace {self.lies['trace']:4}, silent {self.lies['silent']:3}; "
                f"truths {self.n_truths:5}: flagged {self.truths['flagged']:3} ({100 * self.flagged():4.1f} %)")


def tallies(outcomes: Iterable[Outcome], key: str) -> dict[str, Tally]:
    out: dict[str, Tally] = defaultdict(Tally)
    for o in outcomes:
        s = o.sentence
        k = {"form": s.form.id, "family": s.setting.family, "subject": s.subject_spelling,
             "value": f"{s.setting.vkind if s.setting.kind != 'switch' else 'present'} {s.value_spelling}",
             "kind": s.setting.kind, "all": "all"}[key]
        out[k].add(o)
    return dict(sorted(out.items()))
