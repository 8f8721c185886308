"""The ``ci-tools`` entry point."""

from __future__ import annotations

import importlib
import sys

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
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ci-tools")
def cli() -> None:
    """Govern a GPU benchmark repository: configs, changelog, claims, dispatch."""


for _module, _attr in COMMANDS:
    cli.add_command(getattr(importlib.import_module(f"{__package__}.{_module}"), _attr))


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code (0 clean, 1 findings, 2 usage, 3 internal)."""
    try:
        cli.main(args=argv, prog_name="ci-tools", standalone_mode=False)
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
