"""Options shared by every command and the one way commands finish."""

from __future__ import annotations

import functools
import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, TypeVar

import click

from ..config import ProjectConfig, load_config
from ..errors import UsageError
from ..findings import Baseline, Finding, Severity, filter_findings, matches, sort_findings
from ..report import RENDERERS

if TYPE_CHECKING:
    from ..config.suppressions import Suppression
    from ..model.repository import RepoData

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3

F = TypeVar("F", bound=Callable[..., Any])


def repo_options(func: F) -> F:
    """``--repo`` and ``--config``, on every command."""
    func = click.option("--config", "config_file", type=click.Path(dir_okay=False), default=None,
                        help="Project configuration file (default: DIR/.ci-tools.yaml).")(func)
    func = click.option("--repo", "repo_dir", type=click.Path(file_okay=False), default=None,
                        help="Repository root (default: the nearest directory upwards holding .git, "
                             "else .ci-tools.yaml).")(func)
    return func


def _known_rule_ids(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    """Refuse a ``--select``/``--ignore`` value that names no rule: a typo must not pass as a clean run."""
    if not value:
        return value
    from ..findings import all_rules, unknown_patterns

    unknown = unknown_patterns(value)
    if unknown:
        shown = ", ".join(repr(u) for u in unknown)
        raise click.BadParameter(
            f"{shown} match{'es' if len(unknown) == 1 else ''} no rule; expected a rule id, or a prefix of ids "
            f"ending where a word ends (`changelog-` or `changelog`). Rule ids: {', '.join(sorted(r.id for r in all_rules()))}",
            ctx=ctx, param=param,
        )
    return value


class OptionError(click.ClickException):
    """A bad option value found while parsing the command line: one line, ``ci-tools: error: ...``, exit 2
    (click's own usage errors print the usage first; this one says what to change)."""

    exit_code = EXIT_USAGE

    def show(self, file: Any = None) -> None:
        click.echo(f"ci-tools: error: {self.format_message()}", err=True)


def writable_output(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Refuse an ``--output`` path that cannot be written before any work is done (a user's mistake,
    not an internal error): its directory must exist, and the path must not be a directory."""
    if value is None:
        return value
    path = Path(value)
    directory = path.parent
    if path.is_dir():
        raise OptionError(f"--output {value} is a directory; expected a file path")
    if not directory.is_dir():
        what = "is not a directory" if directory.exists() else "does not exist"
        raise OptionError(f"cannot write --output {value}: the directory {directory} {what}; create it first "
                          "or name a file in an existing directory")
    return value


def write_output(path: str, text: str) -> None:
    """Write a report to ``--output``; a file that cannot be written is a usage error naming it."""
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write --output {path}: {exc.strerror or exc}") from None


def report_options(func: F) -> F:
    """``--format``, ``--select``, ``--ignore``, ``--output`` for commands that report findings."""
    func = click.option("--output", "-o", type=click.Path(), default=None, callback=writable_output,
                        help="Write the report to this file instead of standard output.")(func)
    func = click.option("--ignore", multiple=True, metavar="ID", callback=_known_rule_ids,
                        help="Drop findings of this rule id or prefix (repeatable).")(func)
    func = click.option("--select", multiple=True, metavar="ID", callback=_known_rule_ids,
                        help="Keep only findings of this rule id or prefix (repeatable).")(func)
    func = click.option("--format", "fmt", type=click.Choice(sorted(RENDERERS)), default=None,
                        help="Report format (default: github inside GitHub Actions, else text).")(func)
    return func


def get_config(repo_dir: str | None, config_file: str | None) -> ProjectConfig:
    return load_config(None if repo_dir is None else Path(repo_dir), config_file)


def default_format(fmt: str | None) -> str:
    if fmt:
        return fmt
    return "github" if os.environ.get("GITHUB_ACTIONS") == "true" and "github" in RENDERERS else "text"


@dataclass(frozen=True)
class Reported:
    """What a command reported: ``kept`` (sorted), how many ``--select``/``--ignore`` left out, and how many
    ``ignore:`` in .ci-tools.yaml suppressed."""

    kept: list[Finding]
    hidden: int
    suppressed: int


def _colour(name: str, output: str | None) -> bool:
    """Colour only for text on a terminal: never in a pipe, a file, or a CI log (NO_COLOR honoured)."""
    env = os.environ
    return (name == "text" and output is None and sys.stdout.isatty() and "NO_COLOR" not in env
            and env.get("GITHUB_ACTIONS") != "true" and env.get("CI") is None and env.get("TERM") != "dumb")


def finish(findings: list[Finding], fmt: str | None, select: tuple[str, ...], ignore: tuple[str, ...],
           output: str | None = None, summary: Callable[[Reported], str] | None = None, *,
           config: ProjectConfig | None = None, fail_on: str = "all", check_suppressions: bool = False,
           head_sha: str | None = None, base_sha: str | None = None) -> int:
    """Suppress, filter, sort, render and return the exit code (1 when an error that fails the run remains).

    ``config``: its ``ignore:`` entries suppress findings (``check_suppressions``: an entry that suppressed
    nothing is a ``config-ignore-unused`` warning).  ``fail_on``: ``new`` fails only on errors the change
    brings (those marked unchanged were on the base already), ``all`` on every error; a finding the change
    fixed never fails.  ``summary`` makes the closing line; it goes to stderr, where it cannot corrupt a JSON
    or SARIF report on stdout.  ``head_sha``/``base_sha``: the commits locations link to inside Actions
    (default: ``$GITHUB_SHA``, the commit checked out).
    """
    from ..report.context import ReportContext, actions_links

    pool, suppressed = _suppress(with_severities(findings, config), config, check_suppressions)
    kept = sort_findings(filter_findings(pool, select, ignore))
    name = default_format(fmt)
    links = actions_links(head_sha or os.environ.get("GITHUB_SHA"), base_sha)
    context = ReportContext(links, tuple(suppressed), _colour(name, output))
    rendered = RENDERERS[name](kept, context)
    if output:
        write_output(output, rendered)
    elif rendered:
        click.echo(rendered, nl=False)
    if name == "github":
        from ..report import summary_file

        written = summary_file.write_step_summary(kept, context)
        if written is not None and written.truncated:
            click.echo(f"ci-tools: note: the job summary lists {written.rows:,} of {written.total:,} findings "
                       f"(GitHub allows {summary_file.SUMMARY_LIMIT // 1024} KiB per step); run with --format json "
                       "or sarif for all of them", err=True)
    if summary is not None:
        click.echo(summary(Reported(kept, len(pool) - len(kept), sum(1 for f, _ in suppressed if f.counts))), err=True)
    fails = any(f.severity is Severity.ERROR and f.counts and (fail_on == "all" or f.baseline is not Baseline.UNCHANGED)
                for f in kept)
    return EXIT_FINDINGS if fails else EXIT_CLEAN


def with_severities(findings: list[Finding], config: ProjectConfig | None) -> list[Finding]:
    """The findings with the severity `severity:` gives their rule (the most specific entry: a whole id before a
    prefix, a longer prefix before a shorter one)."""
    if config is None or not config.severities:
        return findings
    ordered = sorted(config.severities, key=lambda pair: -len(pair[0]))
    out: list[Finding] = []
    for f in findings:
        chosen = next((Severity(sev) for rule, sev in ordered if matches(f.rule, [rule])), None)
        out.append(f if chosen is None or chosen is f.severity else replace(f, severity=chosen))
    return out


def _suppress(findings: list[Finding], config: ProjectConfig | None,
              check_suppressions: bool) -> tuple[list[Finding], list[tuple[Finding, Suppression]]]:
    """The findings ``ignore:`` leaves, plus a warning per entry that suppressed nothing; what it suppressed."""
    if config is None or not config.suppressions:
        return findings, []
    from ..config.suppressions import apply_suppressions, unused_finding

    result = apply_suppressions(findings, config.suppressions)
    pool = list(result.kept)
    if check_suppressions and result.unused:
        marked = Baseline.NEW if any(f.baseline is not None for f in findings) else None
        pool += [replace(unused_finding(s, config.shown_source), baseline=marked) for s in result.unused]
    return pool, result.suppressed


def refuse_unreadable(repo: RepoData, keys: Iterable[str] | None = None, doing: str = "jobs cannot be built") -> None:
    """Exit 1 with the findings when an input the jobs of ``keys`` (every config's when None) are built from
    cannot be read: a file that does not load, a runners file or one of those configs that fails its schema."""
    from ..validation.validate import input_findings

    wanted = None if keys is None else set(keys)
    errors = [f for f in input_findings(repo)
              if f.severity is Severity.ERROR and (wanted is None or f.data.get("config_key", "") in wanted
                                                   or "config_key" not in f.data)]
    if errors:
        click.echo(RENDERERS["text"](sort_findings(errors)), err=True, nl=False)
        click.echo(f"ci-tools: error: {doing} while {len(errors)} input problem(s) remain", err=True)
        raise SystemExit(EXIT_FINDINGS)


# What a shell reports for a program stopped by SIGPIPE (128 + 13): the reader of the output left early.
EXIT_PIPE_CLOSED = 141


def silence_closed_stdout() -> None:
    """The reader of stdout closed it (``ci-tools recipe show '*' | head``): not an internal error, the
    output was wanted only in part.  What is still buffered goes to /dev/null, so the interpreter's final
    flush cannot fail a second time; the caller ends with :data:`EXIT_PIPE_CLOSED`."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def handle_errors(func: F) -> F:
    """Turn UsageError into exit 2 and unexpected exceptions into exit 3, without a traceback."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except UsageError as exc:
            click.echo(f"ci-tools: error: {exc}", err=True)
            sys.exit(EXIT_USAGE)
        except (click.exceptions.Exit, click.ClickException, SystemExit):
            raise
        except BrokenPipeError:
            silence_closed_stdout()
            sys.exit(EXIT_PIPE_CLOSED)
        except Exception as exc:  # noqa: BLE001 - the last line of defence
            if os.environ.get("CI_TOOLS_DEBUG"):
                raise
            click.echo(f"ci-tools: internal error: {type(exc).__name__}: {exc} "
                       "(set CI_TOOLS_DEBUG=1 for a traceback; please report this)", err=True)
            sys.exit(EXIT_INTERNAL)

    return wrapper  # type: ignore[return-value]
