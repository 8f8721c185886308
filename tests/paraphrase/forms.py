"""Sentences that state a setting's value, from the forms of ``tests/data/claims_paraphrase/forms.yaml``.

Each form gives, for one edited setting, a truth (the value after the edit)
and a lie (another value), spelled alike: the same spelling of the setting's
name and of the value, in turn across settings (so that over every setting
each spelling of a form is said).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import yaml

from .images import engine_of, image_spellings
from .settings import Setting

FORMS = Path(__file__).resolve().parent.parent / "data" / "claims_paraphrase" / "forms.yaml"

# Names a changelog gives settings in plain words (each seen in the history; see forms.yaml's header).
NATURAL = {
    "--kv-cache-dtype": "KV cache",                       # b4cec7f53cf1: "fp8 KV cache (--kv-cache-dtype fp8)"
    "--index-cache-dtype": "indexer cache",               # c2b58030be3d: "FP8 KV/index caches"
    "--max-num-batched-tokens": "batched-token budget",
    "--chunked-prefill-size": "chunked prefill size",     # the report: "chunked prefill size of 16K tokens"
    "--gpu-memory-utilization": "GPU memory utilization",  # f749f444318e: "decode GPU memory utilization to 0.85"
    "--max-cudagraph-capture-size": "max cudagraph capture size",
    "--block-size": "block size",                         # 6f3c1c07e5da: "block size 256"
    "--max-model-len": "max model length",                # be676700e228: "a scenario-specific max model length"
    "--state-checkpoint-interval-tokens": "state checkpoint interval",
    "--mem-fraction-static": "static memory fraction",
}
_FEATURE_PREFIX = re.compile(r"^(?:no-enable|no-disable|enable|disable|no|use)[-_]")
_GENERIC = {"size", "mode", "type", "config", "path", "value", "port", "host", "model", "name", "level", "dir"}


@dataclass(frozen=True)
class Form:
    id: str
    text: str
    values: tuple[str, ...]
    subjects: tuple[str, ...]  # () = every spelling the setting has
    direction: str
    where: str
    held_out: bool
    seen: str


def load_forms(path: Path = FORMS) -> list[Form]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    out = []
    for f in data["forms"]:
        out.append(Form(f["id"], f["text"], tuple(f["values"]), tuple(f.get("subjects", ())), f.get("direction", ""),
                        f.get("where", "changelog"), bool(f.get("held-out", False)), f.get("seen") or f.get("why", "")))
    ids = [f.id for f in out]
    assert len(ids) == len(set(ids)), "form ids repeat"
    return out


def _pick(options: Sequence[Any], *salt: str) -> Any:
    digest = hashlib.sha1("\0".join(salt).encode()).hexdigest()
    return options[int(digest[:8], 16) % len(options)]


# --------------------------------------------------------------------------- the setting's name


def _words(name: str) -> list[str]:
    return [w for w in re.split(r"[-_.]+", name.lstrip("-")) if w]


def subject_spellings(s: Setting) -> dict[str, str]:
    """Every way a sentence may name the setting."""
    out: dict[str, str] = {}
    if s.kind == "env":
        out["env"] = s.name
        return out
    if s.kind == "image":
        out["image"] = "the image"
        engine = engine_of(s.old)
        if engine:
            out["engine"] = f"the {engine} image"  # "Update SGLang image from v0.5.8 to v0.5.9"
        return out
    if s.kind == "key":
        flag, _, path = s.name.partition(".")
        parts = path.split(".")
        out["full"] = s.name
        if len(parts) >= 2:
            out["path"] = ".".join(parts[-2:])
        leaf = parts[-1]
        if "_" in leaf or "-" in leaf:
            out["leaf"] = leaf
        words = _words(leaf)
        if len(words) >= 2 and not set(words) <= _GENERIC:
            out["natural"] = "the " + " ".join(words)
    else:
        bare = s.name.lstrip("-")
        out["dashed"] = s.name
        words = _words(bare)
        if len(words) >= 2:  # one word ("quantization") names no setting unless spelled as a flag
            out["bare"] = bare
            out["snake"] = bare.replace("-", "_")
        natural = NATURAL.get(s.name) or (" ".join(words) if len(words) >= 2 and not set(words) <= _GENERIC else "")
        if natural and s.kind != "switch":
            out["natural"] = natural if natural[0].isupper() else "the " + natural
        if s.kind == "switch":
            feature = _FEATURE_PREFIX.sub("", bare)
            fwords = _words(feature)
            if len(fwords) >= 2 or (fwords and feature != bare):
                out["feature"] = "the " + " ".join(fwords)
    if s.table_key:
        out["table"] = s.table_key
    return out


def feature_inverted(s: Setting) -> bool:
    """Passing the flag turns its feature off (``--disable-radix-cache``, ``--no-enable-prefix-caching``)."""
    return bool(re.match(r"^--?(?:disable|no)[-_]", s.name)) and not s.name.startswith("--no-disable")


# --------------------------------------------------------------------------- the value


def value_spellings(text: str, vkind: str, s: Setting) -> dict[str, str]:
    t = text.strip()
    out = {"plain": t}
    words = {w.lower() for w in _words(s.name)}
    tokenish = bool(words & {"token", "tokens", "len", "prefill", "batched", "chunked", "chunk"})
    if vkind == "number":
        n = int(t)
        k = n // 1024 if n >= 1024 and n % 1024 == 0 else (n // 1000 if n >= 1000 and n % 1000 == 0 else 0)
        if k:
            out["K"] = f"{k}K"
            out["k"] = f"{k}k"
            if tokenish:
                out["K tokens"] = f"{k} K tokens"
        if n >= 1000:
            out["comma"] = f"{n:,}"
        if tokenish:
            out["tokens"] = f"{n} tokens"
    elif vkind == "fraction":
        pct = float(t) * 100
        if abs(pct - round(pct)) < 1e-6:
            out["percent"] = f"{round(pct)}%"
            out["percent spaced"] = f"{round(pct)} %"
    elif vkind == "dtype":
        out["upper"] = t.upper()
        out["lower"] = t.lower()
        alias = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32"}.get(t.lower())
        if alias:
            out["float name"] = alias
    elif vkind == "bool":
        out["capital"] = t.capitalize()
    elif vkind == "word":
        out["lower"] = t.lower()
    elif vkind == "image":
        out = image_spellings(t)
    elif vkind == "list":
        items = re.findall(r"\d+", t)
        out["bracketed"] = "[" + ", ".join(items) + "]"
        out["commas"] = ",".join(items)
    return out


def is_on(text: str, vkind: str) -> bool:
    return text.strip().lower() in ("1", "true", "on")


# --------------------------------------------------------------------------- sentences


@dataclass(frozen=True)
class Sentence:
    id: str
    form: Form
    setting: Setting
    truth: bool
    text: str
    subject: str  # the setting a finding on this sentence should name
    subject_spelling: str
    value_spelling: str
    held_out: bool


_POLAR = {"{Enable}": ("Enable", "Disable"), "{Enabled}": ("Enabled", "Disabled"), "{enabled}": ("enabled", "disabled"),
          "{on}": ("on", "off"), "{Add}": ("Add", "Drop"), "{Pass}": ("Pass", "Remove"),
          "{Start}": ("Start passing", "Stop passing")}
# The slots that say on/off of a feature (not of a flag passed or not): said of a feature's or a variable's name.
_FEATURE_POLAR = ("{Enable}", "{Enabled}", "{enabled}", "{on}")


def _scope_phrases(s: Setting, spelling: str) -> list[tuple[str, str]]:
    """(prefix before the name, suffix after the value) pairs that name the jobs the edit reaches."""
    arm = f" on {s.arm}" if s.arm else ""
    if s.role_named:
        prefixed = [(f"{s.role} ", arm)] if spelling not in ("natural", "feature") else []
        return [("", f" on the {s.role} workers{arm}"), ("", f" for {s.role}{arm}"), *prefixed]
    if s.arm:
        return [("", f" on {s.arm}"), ("", f" for {s.arm}")]
    return [("", "")]


def _reached(s: Setting) -> list[str]:
    """The words naming the jobs the edit reaches, when not all: its role (when the sentence names it), its arm."""
    return [p for p in (s.role if s.role_named else "", s.arm or "") if p]


def _qualifier(s: Setting) -> str:
    """The jobs the edit reaches as a table cell qualifies its setting: " (decode, TP8)", " (TP8)", ""."""
    return f" ({', '.join(_reached(s))})" if _reached(s) else ""


def _arm_cell(s: Setting) -> str:
    """The jobs the edit reaches as the first cell of a table's row of arms: "decode TP8", "TP8" ("": all jobs)."""
    return " ".join(_reached(s))


def applies(form: Form, s: Setting) -> bool:
    kind = "present" if s.kind == "switch" else s.vkind
    if kind not in form.values:
        return False
    if "{A}" in form.text and (s.kind == "switch" or not s.old):
        return False
    if "{S2}" in form.text and not s.others:
        return False
    if "{Xa}" in form.text and not _arm_cell(s):
        return False  # a row of arms needs an arm to name
    if "{R}" in form.text and (not s.rest or s.role_named or s.kind == "switch"
                               or not set(value_spellings(s.rest, s.vkind, s)) & set(value_spellings(s.truth, s.vkind, s))):
        return False  # a default beside an exception: the other jobs of the config share one value
    if form.direction:
        up = _direction(s)
        if up is None or (form.direction == "up") != up:
            return False
    names = subject_spellings(s)
    allowed = [k for k in names if not form.subjects or k in form.subjects]
    if s.kind == "switch" and any(p in form.text for p in _FEATURE_POLAR):
        allowed = [k for k in allowed if k in ("feature", "env")]
    return bool(allowed)


def _direction(s: Setting) -> bool | None:
    try:
        return float(s.truth) > float(s.old)
    except ValueError:
        return None


def sentences(s: Setting, forms: Sequence[Form], held_setting: bool) -> list[Sentence]:
    out: list[Sentence] = []
    names = subject_spellings(s)
    for form in forms:
        if not applies(form, s):
            continue
        allowed = [k for k in names if not form.subjects or k in form.subjects]
        polar = any(p in form.text for p in _POLAR)
        if s.kind == "switch" and polar and any(p in form.text for p in _FEATURE_POLAR):
            allowed = [k for k in allowed if k in ("feature", "env")]
        spelling = _pick(sorted(allowed), s.key, form.id, "subject")
        name = names[spelling]
        scopes = _scope_phrases(s, spelling)
        if "{S2}" in form.text or "{R}" in form.text:
            # the second setting's value, or the first one's beside its default, is the one it has on the jobs the
            # scope names: a scope written before {S} alone ("prefill X=1") would leave it unscoped
            scopes = [p for p in scopes if not p[0]] or scopes
        prefix, suffix = _pick(scopes, s.key, form.id, "scope")
        if "{Xq}" in form.text or "{Xa}" in form.text:
            prefix = ""  # a table names the jobs in a cell of its own
        # (an image's old value spelled as its new one is: "from v0.5.12 to v0.5.13", not "from repo:tag to ...")
        olds = image_spellings(s.old) if s.kind == "image" else {}
        if s.kind == "switch":
            vspell = "flag"
            truth_text = lie_text = rest_text = ""
        else:
            truths = value_spellings(s.truth, s.vkind, s)
            lies = value_spellings(s.lie, s.vkind, s)
            rests = value_spellings(s.rest, s.vkind, s) if "{R}" in form.text else truths
            # (a spelling that leaves out the words the edit changed says the truth and the lie alike)
            common = sorted(k for k in set(truths) & set(lies) & set(rests) if truths[k] != lies[k])
            if "{A}" in form.text and s.kind == "image":
                common = [k for k in common if k in olds]
            vspell = _pick(common, s.key, form.id, "value")
            truth_text, lie_text, rest_text = truths[vspell], lies[vspell], rests[vspell]
        for truth in (True, False):
            text = form.text
            second_lies = "{S2}" in text and not truth and _pick([0, 1], s.key, form.id, "pair") == 1
            stated = truth_text if truth or second_lies else lie_text
            if s.kind == "switch":
                passed = (not s.removed) == truth
                on = passed != feature_inverted(s) if spelling in ("feature",) else passed
            else:
                on = is_on(s.truth if truth or second_lies else s.lie, s.vkind)
            for slot, (yes, no) in _POLAR.items():
                text = text.replace(slot, yes if on else no)
            subject_name = s.name
            if "{S2}" in text:
                name2, value2 = next(iter(s.others.items()))
                shown2 = value2 if truth or not second_lies else str(int(value2) * 2)
                text = text.replace("{S2}", name2).replace("{V2}", shown2)
                if second_lies:
                    subject_name = name2
            shown = name[4:] if name.startswith("the ") and "{V} {S}" in text else name  # "Use 16K chunked prefill"
            old = olds[vspell] if olds else s.old.strip()
            text = text.replace("{S}", prefix + shown).replace("{V}", stated).replace("{A}", old).replace("{R}", rest_text)
            lead = suffix.strip()[:1].upper() + suffix.strip()[1:]  # "On TP8" at a sentence's start
            text = text.replace("{X}", suffix).replace("{Xq}", _qualifier(s)).replace("{Xa}", _arm_cell(s))
            text = text.replace("{X-lead}", lead)
            out.append(Sentence(f"{form.id}:{'truth' if truth else 'lie'}", form, s, truth, text, subject_name,
                                spelling, vspell, held_setting or form.held_out))
    return out
