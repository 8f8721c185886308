"""What evaluating a recipe for one job yields.

These types are the contract between recipe evaluation and its consumers
(the claims checker, ``recipe show``, coverage): every value knows the file
and line that set it, whether it is known, and whether it depends on a branch
whose condition could not be decided.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..findings import Location


@dataclass(frozen=True)
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

    @property
    def known(self) -> bool:
        return self.text is not None


@dataclass(frozen=True)
class ServerFlag:
    """One flag on the server command line; ``value is None`` for a boolean flag."""

    name: str  # with leading dashes: "--max-num-seqs"
    value: Value | None
    location: Location
    # True when the flag is only given on one side of an undecidable branch.
    conditional: bool = False


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


@dataclass
class RecipeEval:
    recipe: str
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

    def flag_values(self, name: str) -> list[Value | None]:
        """Every value the flag is given across server command lines (None: boolean flag)."""
        return [f.value for server in self.servers for f in server if f.name == name]

    def has_flag(self, name: str) -> bool:
        return any(f.name == name for server in self.servers for f in server)
