"""A judgement in words: what the text says, what the files say instead, for which jobs."""

from __future__ import annotations

from typing import Any, Iterable

from ...findings import PR_DESCRIPTION, Finding, Location, Severity, first_few, make_finding, with_article
from ...jobs.job import Job
from ..text.arms import Arm
from ..text.claim import Claim
from ..text.valueread import inverted
from ..text.values import Bool, Concurrency, FamilyArm, Member, NoArm, Number
from .actual import NOT_GIVEN, Actual
from .compare import Judgement
from .rules import CLAIM_ARM_MISSING, CLAIM_CONTRADICTED, CLAIM_PARTLY_CONTRADICTED, CLAIM_SETTING_MISSING


def phrase(claim: Claim) -> str:
    """How the text named the subject, as a noun phrase (``the state checkpoint``)."""
    if claim.subject is None:
        return claim.value.describe()
    p = claim.phrase
    if p.startswith("--") or "_" in p or p == claim.subject.name or p.isupper():
        return p
    if " " not in p and "-" in p and claim.subject.name.replace("_", "-").lower().endswith("-" + p.lower()) and \
            claim.subject.name.lstrip("-").replace("_", "-").lower() != p.lower():
        return claim.subject.name  # "draft-tokens=6": the end of --speculative-num-draft-tokens, named whole
    words = p.split()
    if len(words) > 1 and words[-1].endswith("s") and not words[-1].endswith("ss"):
        words[-1] = words[-1][:-1]  # "32K state checkpoints": the state checkpoint is 32K
    p = " ".join(words)
    return p if words[0].isupper() else f"the {p.lower()}"


def claimed(claim: Claim) -> str:
    v = claim.value
    if isinstance(v, Number):
        shown = v.text
        if len(v.candidates) == 1 and not any(ch.isdigit() for ch in v.text):
            n = next(iter(v.candidates))
            shown = str(int(n)) if n == int(n) else str(n)
        unit = v.unit if v.unit and not v.text.lower().endswith(v.unit) else ""
        bound = "at most " if v.at_most else "at least " if v.at_least else ""  # "X is at least 8": a floor
        return f"{bound}{shown} {unit}".strip()
    if isinstance(v, Bool):
        return "on" if v.on != speaks_of_the_feature(claim) else "off"
    return v.describe()


def speaks_of_the_feature(claim: Claim) -> bool:
    """The text names what an inverted flag turns off ("Enable the radix cache" of ``--disable-radix-cache``):
    the claim's value says whether the flag is passed, the message says what the text said of the feature."""
    subject = claim.subject
    if subject is None or not inverted(subject):
        return False
    spelled = claim.phrase.lstrip("-").replace("_", "-").lower()
    return spelled != subject.name.lstrip("-").lower()


def _concurrency(v: Concurrency) -> str:
    shown = f"{v.values[0]}-{v.values[-1]}" if v.is_range else ", ".join(str(c) for c in v.values)
    return f"concurrency {shown}{' and above' if v.at_least is not None else ''}"


def statement(claim: Claim, unit: Actual | None = None) -> str:
    """What the text says, in a sentence of this tool's own (for one arm when ``unit`` names it)."""
    if claim.kind == "recipe":
        verb = "" if isinstance(claim.value, Member) else "is "
        return f"{phrase(claim)} {verb}{claimed(claim)}"
    if claim.kind == "image":
        return f"the image is {claim.value.describe()}"
    label = unit.label if unit is not None and unit.label else claim.scope.label()
    if claim.kind == "concurrency" and isinstance(claim.value, Concurrency):
        if label:
            return f"{label} runs {_concurrency(claim.value)}"
        return f"{_concurrency(claim.value)} is run"
    if claim.kind == "count":
        return f"the {label + ' ' if label else ''}sweep has {claim.value.describe()}"
    if isinstance(claim.value, NoArm):
        return f"no {label or claim.value.text} job runs"
    if isinstance(claim.value, FamilyArm):
        return f"the {claim.value.name} recipes run {claim.scope.label() or claim.value.text}"
    return f"{with_article(label or claim.value.describe())} job runs"


def _at(loc: Location | None) -> str:
    if loc is None or not loc.path:
        return ""
    return f" ({loc.path}:{loc.line})" if loc.line else f" ({loc.path})"


def _keys(jobs: Iterable[Job]) -> str:
    keys = sorted({j.config_key for j in jobs})
    if len(keys) <= 2:
        return " and ".join(keys)
    return f"{len(keys)} configs ({', '.join(keys[:3])}{', ...' if len(keys) > 3 else ''})"


def arm_fields(arm: Arm) -> list[str]:
    """The config fields an arm constrains, as the matrix names them."""
    out: list[str] = []
    for role, par in (("", arm.parallel), ("prefill.", arm.prefill), ("decode.", arm.decode)):
        for attr, name in (("tp", "tp"), ("ep", "ep"), ("dp_attn", "dp-attn"), ("dcp", "dcp-size"), ("pp", "pp")):
            if getattr(par, attr) is not None or (attr == "dp_attn" and par.bare_tp):
                out.append(role + name)
    if arm.offload is not None:
        out.append("kv-offload-backend" if arm.offload not in ("none", "dram") else "kv-offloading")
    if arm.spec is not None:
        out.append("spec-decoding")
    if arm.seq is not None:
        out.append("isl/osl")
    if arm.workers is not None:
        out.extend(("prefill.num-worker", "decode.num-worker"))
    return out


def _subject(claim: Claim, false: list[tuple[Job, Actual]]) -> str:
    if claim.subject is not None:
        return claim.subject.name
    if claim.kind == "image":
        return "image"
    missing_arms = [a.label for _, a in false if a.value in ("no such arm",) or claim.kind == "arm"]
    fields: list[str] = []
    for arm in claim.scope.arms:
        # The arms the claim is about: the one missing, or (points that differ) every arm of the list.
        if arm.label in missing_arms or not missing_arms:
            fields.extend(f for f in arm_fields(arm) if f not in fields)
    if claim.kind == "concurrency":
        fields.insert(0, "concurrency")
    if claim.kind == "count":
        return "/".join(["points", *fields])
    return "/".join(fields) or "tp/ep/dp-attn"


def _instead(false: list[tuple[Job, Actual]]) -> str:
    """What the files say instead, for every job that disagrees: the first one's words, and how many of them do
    something else ("does not pass --max-num-seqs on 12 of them and passes --max-num-seqs 64 (other values: 16,
    32, ...) on 12"), so that one job's words are never said of all."""
    first = false[0][1]
    said = f"{first.text}{_at(first.location)}"
    if all(a.text == first.text for _, a in false):
        return said
    not_given = [a for _, a in false if a.value in NOT_GIVEN]
    given = [a for _, a in false if a.value not in NOT_GIVEN]
    lead = given[0] if given else first
    values = list(dict.fromkeys(a.value for a in given if a.value))
    others = [v for v in values if v != lead.value]
    shown = first_few(others)
    also = f" (other values: {shown})" if others else ""
    if not_given and given:
        return f"{not_given[0].text} on {len(not_given)} of them and {lead.text}{_at(lead.location)}{also} on {len(given)}"
    return f"{said}{also}"


def finding(j: Judgement, origin: str) -> Finding:
    claim = j.claim
    false = j.false
    first_job, first = false[0]
    if claim.kind in ("concurrency", "arm", "count"):
        message = _arm_message(j, origin)
        if j.outcome != "false":
            rule = CLAIM_PARTLY_CONTRADICTED
        else:  # (arms no job runs have a rule of their own; a count's units never are such)
            rule = CLAIM_ARM_MISSING if all(a.no_such_arm for _, a in false) else CLAIM_CONTRADICTED
    else:
        label = claim.scope.label()
        label = f"{label} " if label else ""
        if j.outcome == "false":
            n = len(j.jobs)
            who = f"the only {label}job of {_keys(j.jobs)}" if n == 1 else f"all {n} {label}jobs of {_keys(j.jobs)}"
            message = f"{origin} says {statement(claim)}{_at(claim.location)}, but {_instead(false)} for {who}"
            # (a setting no job sets at all has a rule of its own)
            rule = CLAIM_SETTING_MISSING if j.sets_nothing else CLAIM_CONTRADICTED
        else:
            shown = first_few([job.label() for job, _ in false])
            message = (f"{origin} says {statement(claim)}{_at(claim.location)}, but {_instead(false)} "
                       f"for {len(false)} of {len(j.jobs)} {label}jobs of {_keys(j.jobs)}: {shown}")
            rule = CLAIM_PARTLY_CONTRADICTED
    related: list[Location] = []
    for _, a in false:
        if a.location is not None and a.location.path and a.location not in related:
            related.append(a.location)
        if len(related) >= 3:
            break
    keys = sorted({job.config_key for job, _ in false})
    data: dict[str, Any] = {
        "config_key": keys[0] if len(keys) == 1 else keys,
        "subject": _subject(claim, false),
        "claimed": claimed(claim),
        "actual": first.value,
        "jobs": [job.label() for job, _ in false] if claim.kind not in ("concurrency", "arm", "count") else [],
        "origin": origin,
    }
    # A PR description is told as the change was made: the claims read there were true of its head about one
    # time in ten (commit messages read as descriptions, README "Claims"), so they warn; `severity:` in
    # .ci-tools.yaml makes them errors again.
    severity = Severity.WARNING if origin == PR_DESCRIPTION else None
    return make_finding(rule, message, claim.location, related=related, data=data, severity=severity)


def _arm_message(j: Judgement, origin: str) -> str:
    """One arm (or sequence length) that differs, and how many others do."""
    claim = j.claim
    false = j.false
    first_job, first = false[0]
    whose = f"the {first.label} jobs of" if first.label and "no job is" not in first.text else "the jobs of"
    message = (f"{origin} says {statement(claim, first)}{_at(claim.location)}, but {first.text}{_at(first.location)} "
               f"for {whose} {_keys(j.jobs)}")
    others = len(false) - 1
    if others:
        message += f"; {others} other {'arm differs' if others == 1 else 'arms differ'} too"
    holds = len(j.known) - len(false)
    if holds:
        message += f" ({holds} of {len(j.known)} hold{'s' if holds == 1 else ''})"
    return message
