"""What evaluating a recipe for one job yields.

These types are the contract between recipe evaluation and its consumers
(the claims checker, ``recipe show``, coverage): every value knows the file
and line that set it, whether it is known, and whether it depends on a branch
whose condition could not be decided.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..findings import Location
from ..frozen import record

# RecipeEval.kind of a job whose recipe does not exist.
MISSING = "missing"


@record
class Value:
    """One effective value.  ``text is None`` means unknown (never guessed)."""

    text: str | None
    location: Location
    # True when the value only holds on one side of an undecidable branch.
    conditional: bool = False
    # How the value was written, for messages ("$((2 * CONC))").
    expression: str = ""
    # When two sides of an undecidable branch set different values: each
    # possibility (``text`` is then None and ``conditional`` True).
    alternatives: tuple["Value", ...] = ()
    # For an unknown value: its leading text that is known (``--port=`` of ``--port=$PORT``).
    known_prefix: str = ""
    # For an unknown value made of several pieces: the pieces in order, known or not
    # ("{\"model\": \"" + $DRAFT_MODEL_PATH + "\", ...}"), so the keys of a JSON value with one
    # unknown string are still known.
    parts: tuple["Value", ...] = ()
    # For a text of several lines (a heredoc, a multi-line string, a command's output): where each
    # line was written, so that a key of a YAML or JSON value points at its own line.
    lines: tuple[Location, ...] = ()
    # For a text built from other values (a command string of the AMD script chain): its parts in
    # order, each its length in bytes and where it was written (a location, or the value it was
    # copied from, whose own spans say more), so that words run from it point there (multinode.provenance).
    spans: tuple[tuple[int, "Location | Value"], ...] = ()

    def line_location(self, index: int) -> Location:
        """Where line ``index`` (0-based) of the text was written."""
        return self.lines[index] if 0 <= index < len(self.lines) else self.location

    @property
    def known(self) -> bool:
        return self.text is not None


@record
class ServerFlag:
    """One flag on the server command line; ``value is None`` for a boolean flag."""

    name: str  # with leading dashes: "--max-num-seqs"
    value: Value | None
    location: Location
    # True when the flag is only given on one side of an undecidable branch.
    conditional: bool = False
    # A JSON or YAML mapping given inline (--compilation-config '{...}') or as a file the recipe
    # wrote (--config cfg.yml): its keys, addressed as "<flag>.<key>" (see RecipeEval.key_values).
    keys: tuple["FlagKey", ...] = ()
    # Where the keys come from: "" inline, else the path of the file (as the recipe names it).
    keys_file: str = ""


@record
class FlagKey:
    """One key of a structured flag value.

    ``path`` joins nested mapping keys with ``.`` and list positions as ``[i]``
    (``kv_cache_config.free_gpu_memory_fraction``, ``speculative.models[0].name``).
    A list of scalars is one key whose text is compact JSON (``[1,2,4]``).
    Scalars read as written: ``true``, ``0.90``, ``FULL_DECODE_ONLY``.
    ``value.location`` is the line that writes the key (inside a heredoc, the
    heredoc's line).
    """

    path: str
    value: Value


def split_address(address: str) -> tuple[str, str]:
    """``--compilation-config.cudagraph_mode`` -> (``--compilation-config``, ``cudagraph_mode``)."""
    dashes = len(address) - len(address.lstrip("-"))
    flag, _, path = address[dashes:].partition(".")
    return address[:dashes] + flag, path


@dataclass(frozen=True)
class EarlyExit:
    """A guard that ends the recipe for this job (``exit 1`` on a taken branch)."""

    location: Location
    condition: str
    code: str
    # True when the exit sits on one side of an undecidable branch (not a finding).
    conditional: bool = False


@dataclass(frozen=True)
class MissingEnv:
    """An env var the recipe requires (``check_env_vars``, ``${X:?}``) that the job lacks."""

    name: str
    location: Location


@dataclass(frozen=True)
class RouterCommand:
    """A router's command line: the flags after its launch words, and where the command is."""

    flags: tuple[ServerFlag, ...]
    location: Location


@dataclass
class RecipeEval:
    recipe: str
    # What the recipe is, as the job's launcher picks it (ci_tools.jobs.contract.RecipeResolution.kind):
    # "script" (bash), "srt-slurm" (a recipe YAML) or "external" (outside the repository, not
    # evaluated); MISSING when the recipe the launcher would run does not exist.
    kind: str = "script"
    # Exported environment at the point the server starts (or at the end).
    env: dict[str, Value] = field(default_factory=dict)
    # Every shell variable, exported or not, at that point.
    variables: dict[str, Value] = field(default_factory=dict)
    # Server command lines found; usually one.  Each is the ordered flag list.
    servers: list[list[ServerFlag]] = field(default_factory=list)
    server_command: list[Location] = field(default_factory=list)
    early_exits: list[EarlyExit] = field(default_factory=list)
    missing_env: list[MissingEnv] = field(default_factory=list)
    # Problems the evaluator could not get past (parse errors, unreadable source).
    errors: list[str] = field(default_factory=list)
    # Multinode jobs: the role of each entry of ``servers`` ("prefill", "decode",
    # "aggregated") and the environment that server starts with, parallel to
    # ``servers``.  Empty for single-node recipes (see :meth:`role_of`).
    roles: list[str] = field(default_factory=list)
    server_env: list[dict[str, Value]] = field(default_factory=list)
    # Commands whose program is known only at run time: one of them may be the server.
    opaque_commands: list[Location] = field(default_factory=list)
    # Variables the recipe was started with whose values are known only at run time (MODEL_PATH, PORT).
    unknown_inputs: frozenset[str] = frozenset()
    # The routers started in front of the servers (sglang-router, vllm-router), in the order they start.
    routers: list[RouterCommand] = field(default_factory=list)
    # The functions a command of the evaluation named (see Interpreter.dispatched): a function reached only
    # from inside one of them is not listed when that call's evaluation was reused or skipped.
    called: frozenset[str] = frozenset()
    # Those of them a command named after the first server started (Interpreter.dispatched_late).
    called_late: frozenset[str] = frozenset()
    # The repository paths a multinode job's chain read, present or absent (the scripts it runs and sources,
    # the data files it reads): what it depends on beyond its recipe's own sources.  Empty for other jobs.
    read_files: frozenset[str] = frozenset()
    # Paths it only tested for existence (`[[ -f PATH ]]`), never read.
    tested_files: frozenset[str] = frozenset()
    # Scripts a command of the chain names and the evaluation does not run (the client, `eval "$BENCH_CMD"` of a
    # string known only up to `bash .../bench.sh`; a script in a string handed to `docker run`): what they call
    # is read from their text.
    named_files: frozenset[str] = frozenset()
    # Multinode jobs' chains: the values the variables each ``if`` statement's conditions read held when the chain
    # reached it, by its file and line (ReadLog.branches): which branch of a chain file may run for the job.
    branches: dict[tuple[str, int], dict[str, str]] = field(default_factory=dict)
    # Whether ``called`` (with what ``named_files`` call) is every function a multinode job's chain may call: no
    # command of it runs a program or a string known only at run time.  False for single-node recipes, whose
    # ``opaque_commands`` say it.
    called_complete: bool = False

    def role_of(self, index: int) -> str:
        """The role of ``servers[index]``; "" for a single-node server."""
        return self.roles[index] if index < len(self.roles) else ""

    def env_of(self, index: int) -> dict[str, Value]:
        """The environment ``servers[index]`` starts with (``env`` when no per-server env is known)."""
        return self.server_env[index] if index < len(self.server_env) else self.env

    def flag_values(self, name: str) -> list[Value | None]:
        """Every value the flag is given across server command lines (None: boolean flag).

        ``name`` may address a key of a JSON/YAML flag value: ``--compilation-config.cudagraph_mode``,
        ``--config.moe_config.backend`` (see :meth:`key_values`).
        """
        found: list[Value | None] = [f.value for server in self.servers for f in server if f.name == name]
        if "." in name:
            found.extend(self.key_values(name))
        return found

    def key_values(self, address: str) -> list[Value]:
        """Values of ``<flag>.<key path>`` across server command lines (a key set twice counts twice)."""
        flag, path = split_address(address)
        return [k.value for server in self.servers for f in server if f.name == flag and f.keys
                for k in f.keys if k.path == path]

    def flag_keys(self, name: str) -> dict[str, Value]:
        """Every key of the flag's JSON/YAML value, by path (the last server command line wins)."""
        return {k.path: k.value for server in self.servers for f in server if f.name == name for k in f.keys}

    def has_flag(self, name: str) -> bool:
        return (any(f.name == name for server in self.servers for f in server)
                or ("." in name and bool(self.key_values(name))))
