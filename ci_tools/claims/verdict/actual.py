"""What one job really has for a claim's recipe subject: a server flag, a key of a structured flag value,
an exported environment variable or a recipe variable.

The value is read from the servers of the role the claim is about (``decode mem-fraction-static``), or
from every server.  A value that is unknown, or given on one side of an undecidable branch, is unknown:
it never counts against a claim.  Absence is a fact only where the evaluation saw everything that could
set the subject: a flag is absent from a server command line that was reached and read in full; an
environment variable the text names by its identifier is never set when the recipe was evaluated to its
server with no error and no command whose program is known only at run time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Callable, Sequence

from ...evaluation.multinode.srt_backend import PLACEMENT_FLAGS
from ...findings import Location
from ...jobs.job import Job
from ...shell.model import RecipeEval, ServerFlag, Value, split_address
from ...shell.server import UNKNOWN_FLAG
from ...words import has_word
from ..text.arms import ROLES
from ..text.claim import Claim
from ..text.values import (
    Absent,
    Bool,
    Fragment,
    Items,
    Member,
    Multiples,
    Number,
    PerConc,
    Present,
    Word,
    dtype_matches,
    fragment_matches,
    integer_list,
    number_matches,
    parse_bool,
    word_matches,
)
from .reads import RecipeReads

# Values a program takes when a flag is not passed at all: "--kv-cache-dtype auto" with no flag is no contradiction.
_DEFAULT_WORDS = frozenset({"auto", "default", "none", "off", "false", "0"})


@dataclass(frozen=True)
class Actual:
    """What one job really has for a claim's subject."""

    verdict: bool | None
    text: str  # for messages: "passes --state-checkpoint-interval-tokens 8192"
    value: str  # the bare value, for data
    location: Location | None
    # A false verdict that is still partly right (some of the points claimed are run): never an error.
    partial: bool = False
    label: str = ""  # the arm (and sequence lengths) a unit of an arm or concurrency claim is about
    no_such_arm: bool = False  # the unit's arm matches no job at all (not: its jobs differ)


UNKNOWN = Actual(None, "", "", None)
# The values of an Actual that say the job sets the subject not at all (no flag passed, no variable set).
NOT_GIVEN = ("absent", "unset")


def recipe_actual(claim: Claim, job: Job, ev: RecipeEval | None, known_keys: Sequence[str] = (),
                  reads: RecipeReads | None = None, served: frozenset[str] = frozenset(),
                  written: Callable[[Location | None], bool] | None = None,
                  elsewhere: frozenset[str] = frozenset()) -> Actual:
    """``known_keys``: the ``--flag.key`` addresses the recipes of every job in the claim's scope give (a job
    without one that others have does not have that setting).  ``reads``: what the job's recipe files read
    with a default (a variable they never assign keeps it).  ``served``: every flag a server of a job in the
    claim's scope is given.  ``written``: whether the change being checked wrote a line (None: no change).
    ``elsewhere``: flags the recipes of jobs in the claim's scope give another program (see
    :func:`held_for_another_program`): a job that runs no such program does not contradict them either."""
    found = _subject_actual(claim, job, ev, known_keys, reads, served, elsewhere)
    if (found.verdict is False and not claim.explicit and isinstance(claim.value, Word) and ev is not None
            and written is not None):
        return _named_alike(claim, ev, written) or found
    if found.verdict is False and found.value == "absent" and ev is not None:
        return _spelled_alike(claim, job, ev) or found
    return found


def _spelled_alike(claim: Claim, job: Job, ev: RecipeEval) -> Actual | None:
    """A flag no server is given, spelled with one word more inside its name than a flag a server is given with
    the value claimed (--fp8-gemm-runner-backend cutlass, the server argument fp8_gemm_runner_backend that SGLang's
    --fp8-gemm-backend cutlass sets): the text names that flag by its argument's name."""
    subject = claim.subject
    if subject is None or subject.kind != "flag" or isinstance(claim.value, (Absent, Present, Bool)):
        return None
    words = _setting_words(subject.name)
    for server in ev.servers:
        for f in server:
            passed = _setting_words(f.name)
            inner = len(passed) == len(words) - 1 and any(words[:k] + words[k + 1:] == passed
                                                           for k in range(1, len(words) - 1))
            if inner and f.value is not None and f.value.known and not f.value.conditional:
                found = compare_text(claim.value, f.value.text or "", job, f"the recipe passes {f.name} {f.value.text}",
                                     f.value.location)
                if found.verdict:
                    return found
    return None


def _named_alike(claim: Claim, ev: RecipeEval, written: Callable[[Location | None], bool]) -> Actual | None:
    """A setting named in words ("Triton attention backend") that another setting of the job, whose name has the
    words' last noun, has as its value (SGLANG_HACK_FLASHMLA_BACKEND=triton) on a line the change wrote: the
    words may name that one.  A setting the change left alone is not what its sentence reports: the job's
    --attention-backend flashinfer does not make "Use the flashinfer moe runner backend" hold where the change
    set --moe-runner-backend to triton."""
    words = re.findall(r"[a-z0-9]+", claim.phrase.lower())
    if not words or not isinstance(claim.value, Word):
        return None
    noun = words[-1]
    envs = [*ev.server_env, ev.env]
    settings = [(name, v) for env in envs for name, v in env.items()]
    settings += [(f.name, f.value) for server in ev.servers for f in server if f.value is not None]
    for name, v in settings:
        if (noun in _setting_words(name) and v.known and not v.conditional and written(v.location)
                and word_matches(claim.value, v.text or "")):
            return Actual(True, f"the recipe sets {name}={v.text}", v.text or "", v.location)
    return None


def _subject_actual(claim: Claim, job: Job, ev: RecipeEval | None, known_keys: Sequence[str],
                    reads: RecipeReads | None, served: frozenset[str], elsewhere: frozenset[str]) -> Actual:
    subject = claim.subject
    assert subject is not None
    if subject.kind == "list":
        return _list_actual(claim, reads)
    if subject.kind == "env":
        setting = _worker_setting(job, subject.name, claim.scope.role)
        if setting is not None:
            return setting.judge(claim, job)
    if ev is None or ev.errors:
        return UNKNOWN
    servers = _servers(ev, claim.scope.role)
    if subject.kind == "flag":
        routed = _router_actual(claim, job, ev, servers)
        if routed is not None:
            return routed
        other = ((reads.client_flags if reads is not None else frozenset()) | elsewhere) - served
        return _flag_actual(claim, job, ev, servers, other)
    if subject.kind == "key":
        return _key_actual(claim, job, ev, servers)
    if subject.kind == "env":
        envs = [ev.env_of(i) for i in servers] if ev.server_env and servers else [ev.env]
        values = [env.get(subject.name) for env in envs]
        if all(v is None for v in values):
            same = _same_setting_as_key(claim, job, ev, servers, known_keys)
            if same is not None:
                return same
            default = reads.default_of(subject.name) if reads is not None else None
            if default is not None:
                shown = f"the recipe leaves {subject.name} at its default {default.default}"
                return _value_actual(claim, job, Value(default.default, default.location), shown, separator="!")
            if reads is not None and (subject.name in reads.assigned
                                      or any(a.endswith("_" + subject.name) for a in reads.assigned)):
                # assigned where the evaluation did not follow (after the server starts, a branch), itself or the
                # variable the text names by its last words (NUM_MAX_TOKENS_PER_RANK of SGLANG_..._PER_RANK)
                return UNKNOWN
            return _never_set(claim, ev, f"the recipe never sets {subject.name}")
        found = [v for v in values if v is not None]
        return _value_actual(claim, job, found[-1], f"the recipe exports {subject.name}=")
    v = ev.variables.get(subject.name)
    if v is None:
        return UNKNOWN
    return _value_actual(claim, job, v, f"the recipe sets {subject.name}=")


def _router_actual(claim: Claim, job: Job, ev: RecipeEval, servers: Sequence[int]) -> Actual | None:
    """A flag no server of the claim is given and a router in front of them is (``--dp-aware``,
    ``--policy``): judged on the router's command line, as a server's flag is.  None when it is not the router's."""
    name = claim.subject.name if claim.subject is not None else ""
    if not ev.routers or _flags(ev, servers, name) or not any(f.name == name for r in ev.routers for f in r.flags):
        return None
    view = RecipeEval(recipe=ev.recipe, servers=[list(r.flags) for r in ev.routers],
                      server_command=[r.location for r in ev.routers])
    found = _flag_actual(claim, job, view, range(len(view.servers)))
    return replace(found, text=found.text.replace("the recipe passes", "the recipe's router is given", 1))


def _list_actual(claim: Claim, reads: RecipeReads | None) -> Actual:
    setting = reads.lists.get(claim.subject.name) if reads is not None and claim.subject is not None else None
    value = claim.value
    if setting is None or not isinstance(value, Member):
        return UNKNOWN
    shown = f"the recipe's {setting.name} is {','.join(setting.items)}"
    return Actual(all(x in setting.items for x in value.items), shown, ",".join(setting.items), setting.location)


@dataclass(frozen=True)
class _Setting:
    text: str
    where: Location

    def judge(self, claim: Claim, job: Job) -> Actual:
        shown = f"the config sets {claim.subject.name if claim.subject else ''}={self.text}"
        if isinstance(claim.value, Present):
            return Actual(True, shown, self.text, self.where)
        if isinstance(claim.value, Absent):
            return Actual(False, shown, self.text, self.where)
        return compare_text(claim.value, self.text, job, shown, self.where)


def _worker_setting(job: Job, name: str, role: str) -> _Setting | None:
    """``NAME=value`` of a worker's ``additional-settings`` (``DECODE_MTP_SIZE=1``): a config field the job's
    environment carries to the recipe, known whether or not the recipe could be evaluated."""
    if not job.multinode:
        return None
    found: list[str] = []
    for worker in (role,) if role else ROLES:
        settings = (job.fields.get(worker) or {}).get("additional-settings") or []
        for item in settings:
            if isinstance(item, str) and item.startswith(f"{name}="):
                found.append(item.partition("=")[2])
    if not found or len(set(found)) > 1:
        return None
    return _Setting(found[-1], job.row)


def _servers(ev: RecipeEval, role: str) -> list[int]:
    """Indexes of the server command lines a claim about ``role`` reads (every one for no role)."""
    indexes = list(range(len(ev.servers)))
    if role and ev.roles:
        chosen = [i for i in indexes if ev.role_of(i) in (role, "aggregated")]
        return chosen or indexes
    return indexes


def _flags(ev: RecipeEval, servers: Sequence[int], name: str) -> list[ServerFlag]:
    return [f for i in servers for f in ev.servers[i] if f.name == name]


def held_for_another_program(ev: RecipeEval, flag: str) -> bool:
    """A flag no server is given that a shell variable holds as a word of its value when the servers start
    (``LMCACHE_CMD=(lmcache server ... --separate-object-groups)``): the recipe passes it to that program."""
    for value in ev.variables.values():
        text = value.text or ""
        if has_word(text, flag, joiners="-"):
            return True
    return False


def _flag_actual(claim: Claim, job: Job, ev: RecipeEval, servers: Sequence[int],
                 spelled: frozenset[str] = frozenset()) -> Actual:
    """``spelled``: flags the recipe's files pass to another program (``--use-chat-template`` to the benchmark
    client) and no server of the claim's jobs is given: the text may speak of that program's."""
    subject = claim.subject
    assert subject is not None
    value = claim.value
    flags = _flags(ev, servers, subject.name)
    if any(f.conditional for f in flags):
        return UNKNOWN
    if not flags:
        said_on = not isinstance(value, Absent) and not (isinstance(value, Bool) and not value.on)
        if not absence_known(ev, servers) or (subject.name in spelled and said_on):
            return UNKNOWN
        if job.multinode and subject.name in PLACEMENT_FLAGS:
            return UNKNOWN  # "--master-addr/--nnodes/--node-rank serve": the launcher places the ranks at run time
        shown = f"the recipe does not pass {subject.name}"
        if isinstance(value, Number) and (value.at_most or value.at_least):
            return UNKNOWN  # "capped to 1088", "up to 1088": a bound says nothing of the setting being given
        if isinstance(value, Bool):
            return Actual(not value.on, shown, "absent", None)
        if isinstance(value, Absent):
            return Actual(True, shown, "absent", None)
        if isinstance(value, Present) or (claim.explicit and _names_a_setting(value)):
            return Actual(False, shown, "absent", None)
        return UNKNOWN
    flag = flags[-1]
    if isinstance(value, Absent) and flag.value is not None and (flag.value.text or "").lower() in _DEFAULT_WORDS:
        return Actual(True, f"the recipe passes {subject.name} {flag.value.text}", flag.value.text or "",
                      flag.value.location)  # "default KV-cache dtype" and --kv-cache-dtype auto
    if flag.value is None:
        if isinstance(value, (Bool, Present)):
            on = value.on if isinstance(value, Bool) else True
            return Actual(on, f"the recipe passes {subject.name}", "present", flag.location)
        if isinstance(value, Absent):
            return Actual(False, f"the recipe passes {subject.name}", "present", flag.location)
        return UNKNOWN
    if not flag.value.known or flag.value.conditional:
        return UNKNOWN
    text = flag.value.text or ""
    if isinstance(value, (Absent, Present)):
        # Given a value: set (and not left at the default, which the auto-like words were handled as above).
        return Actual(isinstance(value, Present), f"the recipe passes {subject.name} {text}", text,
                      flag.value.location)
    if isinstance(value, Bool):
        b = parse_bool(text)
        on = b.on if b is not None else True  # a flag given a value is on
        return Actual(on == value.on, f"the recipe passes {subject.name} {text}", text, flag.value.location)
    structured = [(a, v) for i in servers for a in key_addresses(ev.servers[i]) if split_address(a)[0] == subject.name
                  for _, v in key_values(ev.servers[i], a)]
    if (structured or text.lstrip().startswith(("{", "["))) and not isinstance(value, (Present, Absent)):
        # "--speculative-config eagle3": the text names one key's value of a JSON/YAML value.
        for address, v in structured:
            if v.known and compare_text(value, v.text or "", job, "", v.location).verdict:
                return Actual(True, f"the recipe passes {address} {v.text}", v.text or "", v.location)
        return UNKNOWN
    return compare_text(value, text, job, f"the recipe passes {subject.name} {text}", flag.value.location)


def key_values(server: Sequence[ServerFlag], address: str) -> list[tuple[ServerFlag, Value]]:
    """Values of ``--flag.key.path`` on one server command line, whichever way the evaluation wrote them:
    a key of the flag's structured value (:attr:`ServerFlag.keys`) or a flag named by the whole address."""
    flag_name, path = split_address(address)
    out = [(f, f.value) for f in server if f.name == address and f.value is not None]
    out += [(f, k.value) for f in server if f.name == flag_name for k in f.keys if k.path == path]
    return out


def _key_actual(claim: Claim, job: Job, ev: RecipeEval, servers: Sequence[int]) -> Actual:
    subject = claim.subject
    assert subject is not None
    flag_name, path = split_address(subject.name)
    found = [fv for i in servers for fv in key_values(ev.servers[i], subject.name)]
    if any(f.conditional for f, _ in found):
        return UNKNOWN
    if found:
        return _value_actual(claim, job, found[-1][1], f"the recipe passes {subject.name} ")
    flags = _flags(ev, servers, flag_name)
    # The flag is there with every key known, or not there at all: the key is not set.
    complete = all(f.value is not None and f.value.known and f.keys for f in flags)
    if (flags and complete) or (not flags and absence_known(ev, servers)):
        return _never_set(claim, ev, f"the recipe sets no {subject.name}", known=True)
    return UNKNOWN


def _same_setting_as_key(claim: Claim, job: Job, ev: RecipeEval, servers: Sequence[int],
                         known_keys: Sequence[str]) -> Actual | None:
    """An environment variable no recipe sets, given instead as the key of a structured flag value with the same
    words (``VLLM_MINIMAX_M3_MSA_DECODE_BACKEND`` and ``--attention-config minimax_m3_msa_decode_backend``):
    judged by that key, on each server the claim is about; None when no server has such a key."""
    subject = claim.subject
    assert subject is not None
    words = _setting_words(subject.name)
    addresses = {a for a in [*known_keys, *(a for server in ev.servers for a in key_addresses(server))]
                 if _setting_words(a.rsplit(".", 1)[-1]) == words}
    if not addresses or not words:
        return None
    carriers = {split_address(a)[0] for a in addresses}
    found: list[Actual] = []
    for i in servers:
        keys = [(a, v) for a in sorted(addresses) for _, v in key_values(ev.servers[i], a)]
        if keys:
            address, value = keys[-1]
            found.append(_value_actual(claim, job, value, f"the recipe passes {address} "))
        elif absence_known(ev, [i]):
            role = ev.role_of(i)
            where = f" to the {role} server" if role else ""
            found.append(Actual(False, f"the recipe sets neither {subject.name} nor any {next(iter(carriers))} key "
                                       f"for it{where}", "unset", None))
    if not found:
        return UNKNOWN
    false = [a for a in found if a.verdict is False]
    if false and any(a.verdict for a in found):
        # Given to some servers of the job and not to others (decode, not prefill): partly right.
        return replace(false[0], partial=True, value="partly")
    return false[0] if false else found[0]


def key_addresses(server: Sequence[ServerFlag]) -> list[str]:
    """Every ``--flag.key.path`` of a server command line."""
    out = [f.name for f in server if "." in f.name]
    out += [f"{f.name}.{k.path}" for f in server for k in f.keys]
    return out


def _setting_words(name: str) -> tuple[str, ...]:
    """The words of a setting's name without the program prefix: VLLM_X_Y and x_y are the same words."""
    words = [w for w in re.split(r"[-_.]+", name.lower()) if w]
    while words and words[0] in ("vllm", "sglang", "atom", "trtllm", "sgl"):
        words.pop(0)
    return tuple(words)


def _value_actual(claim: Claim, job: Job, v: Value, shown: str, separator: str = "") -> Actual:
    if not v.known or v.conditional:
        return UNKNOWN
    text = v.text or ""
    value = claim.value
    message = shown if separator == "!" else f"{shown}{separator}{_brief(text)}"
    if isinstance(value, Present):
        return Actual(True, message, text, v.location)
    if isinstance(value, Absent):
        return Actual(False, message, text, v.location)
    return compare_text(value, text, job, message, v.location)


def _brief(text: str) -> str:
    """A long list of sizes as its ends and its length: ``[1,2,3,...,60] (60 sizes)``."""
    sizes = integer_list(text)
    if sizes is None or len(text) <= 48:
        return text
    return f"[{','.join(map(str, sizes[:3]))},...,{sizes[-1]}] ({len(sizes)} sizes)"


def _never_set(claim: Claim, ev: RecipeEval, shown: str, known: bool = False) -> Actual:
    """A subject nothing sets: a contradiction of a value the text names by the subject's identifier."""
    if not (known or env_complete(ev)):
        return UNKNOWN
    value = claim.value
    if isinstance(value, Absent):
        return Actual(True, shown, "unset", None)
    if isinstance(value, Present) or (claim.explicit and (_names_a_setting(value) or _switched_on(value))):
        return Actual(False, shown, "unset", None)
    return UNKNOWN


def _switched_on(value: Any) -> bool:
    """``NAME=true`` / ``NAME=1`` of a variable: the text says the recipe sets it (an unset variable reads as
    off to the shell scripts that test it, so the claim cannot mean a default)."""
    return isinstance(value, Bool) and value.on


def _names_a_setting(value: Any) -> bool:
    """A value the program would not have by default (so naming it says the recipe sets it)."""
    if isinstance(value, (Number, Fragment)):
        return True
    if isinstance(value, Word):
        return value.norm not in _DEFAULT_WORDS
    return False


def absence_known(ev: RecipeEval, servers: Sequence[int] | None = None) -> bool:
    """A flag is known to be absent only from a server command line that was reached and read in full.

    When the evaluation never reached a server, or a word of it could not be read (an unknown array
    spliced in, a flag name from an unknown variable), "not passed" is not a fact but a gap of the
    evaluation: unknown.  The AMD disaggregated script chain is no exception: the model tables its
    scripts read are evaluated (multinode.py_snippet), and what they could not give is an unknown word.
    """
    chosen = [ev.servers[i] for i in servers] if servers is not None else ev.servers
    return bool(chosen) and not any(f.name == UNKNOWN_FLAG and not _positional(f) for server in chosen for f in server)


def _positional(flag: ServerFlag) -> bool:
    """An unknown word that is one variable of the job's environment (``vllm serve $MODEL_PATH``): the model
    argument, not a flag the evaluation could not read."""
    expression = flag.value.expression if flag.value is not None else ""
    return bool(re.fullmatch(r'"?\$\{?[A-Za-z_][A-Za-z0-9_]*\}?"? \(job environment[^)]*\)', expression))


def env_complete(ev: RecipeEval) -> bool:
    """Every command that could export a variable before the server starts was evaluated.

    A models-table program that is not modelled, or ``export "$pair"`` of an unknown word, is an error of
    the evaluation, so a job of the AMD script chain is complete only when its tables were read in full.
    """
    return bool(ev.servers) and not ev.errors and not ev.opaque_commands


def compare_text(value: Any, text: str, job: Job, shown: str, where: Location) -> Actual:
    verdict: bool | None
    if isinstance(value, Bool):
        b = parse_bool(text) if text not in ("0", "1") else Bool(text, text == "1")
        verdict = None if b is None else b.on == value.on
    elif isinstance(value, Number):
        verdict = number_matches(value, text)
    elif isinstance(value, PerConc):
        tp = job.fields.get("tp")
        base = job.conc if value.per == "conc" else tp if isinstance(tp, int) and not job.multinode else None
        n = number_matches_float(text)
        verdict = None if base is None or n is None else abs(n - value.factor * base) < 1e-9
    elif isinstance(value, Word):
        if not value.dtype and number_matches_float(text) is not None:
            verdict = None  # a word against a number: not a value of this setting ("lower it to collect ...")
        else:
            verdict = dtype_matches(value, text) if value.dtype else word_matches(value, text)
    elif isinstance(value, Fragment):
        verdict = fragment_matches(value, text)
    elif isinstance(value, Multiples):
        sizes = integer_list(text)
        verdict = None if sizes is None else all(n % value.step == 0 for n in sizes)
    elif isinstance(value, Items):
        sizes = integer_list(text)
        verdict = None if sizes is None else sizes == list(value.items)
    else:
        verdict = None
    return Actual(verdict, shown, text, where)


def number_matches_float(text: str) -> float | None:
    try:
        return float(text.strip().strip("'\""))
    except ValueError:
        return None
