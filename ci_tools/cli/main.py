"""The ``ci-tools`` entry point."""

from __future__ import annotations

import gc
import importlib
import sys
from typing import Any

import click

from .. import __version__

# (module under ci_tools.cli, attribute): one line per command or group.
COMMANDS = (
    ("validate_cmd", "validate_command"),
    ("rules_cmd", "rules_command"),
    ("rules_cmd", "explain_command"),
    ("check_cmd", "check_command"),
    ("changelog_cmd", "changelog_group"),
    ("sweep_cmd", "sweep_group"),
    ("matrix_cmd", "matrix_command"),
    ("claims_cmd", "claims_command"),
    ("dispatch_cmd", "dispatch_group"),
    ("recipe_cmd", "recipe_group"),
    ("results_cmd", "results_group"),
)


class _LazyGroup(click.Group):
    """Imports a command's module only when that command is run.

    Startup then pays only for the command invoked (``ci-tools matrix`` runs in
    every PR's setup job); listing or help imports every module.  A command
    named ``foo-bar`` is looked for first in ``foo_bar_cmd``.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._loaded: set[str] = set()
        super().__init__(*args, **kwargs)

    @property  # type: ignore[override]
    def commands(self) -> dict[str, click.Command]:
        for module, _ in COMMANDS:
            self._load(module)
        return self._commands

    @commands.setter
    def commands(self, value: dict[str, click.Command]) -> None:
        self._commands = dict(value)

    def _load(self, module: str) -> None:
        if module in self._loaded:
            return
        self._loaded.add(module)
        loaded = importlib.import_module(f"{__package__}.{module}")
        for name, attr in COMMANDS:
            if name == module:
                command = getattr(loaded, attr)
                self._commands[command.name or attr] = command

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        self._commands[name or cmd.name or ""] = cmd

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        guess = f"{cmd_name.replace('-', '_')}_cmd"
        if any(module == guess for module, _ in COMMANDS):
            self._load(guess)
        return self._commands.get(cmd_name) or self.commands.get(cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(self.commands)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ci-tools")
def cli() -> None:
    """Govern a GPU benchmark repository: configs, changelog, claims, dispatch."""


# The cyclic collector's first generation runs after 700 new containers by default: thousands of times over
# the data a command loads (tens of thousands of mappings and lists, none in a cycle).  Cycles are still
# collected, a few times less often.
_COLLECT_AFTER = (10_000, 10, 10)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code (0 clean, 1 findings, 2 usage, 3 internal, 141 output closed early)."""
    thresholds = gc.get_threshold()
    gc.set_threshold(*_COLLECT_AFTER)
    try:
        return _run(argv)
    finally:
        gc.set_threshold(*thresholds)


def _run(argv: list[str] | None) -> int:
    try:
        cli.main(args=argv, prog_name="ci-tools", standalone_mode=False)
        sys.stdout.flush()  # here, where a reader that left early can still be told apart from a failure
    except BrokenPipeError:
        from .common import EXIT_PIPE_CLOSED, silence_closed_stdout

        silence_closed_stdout()
        return EXIT_PIPE_CLOSED
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("ci-tools: aborted", err=True)
        return 2
    except click.ClickException as exc:
        exc.show()
        return 2
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())


def entry() -> None:
    """Console-script entry point."""
    sys.exit(main())
