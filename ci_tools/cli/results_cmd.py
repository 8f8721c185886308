"""``ci-tools results``: compare a sweep with its baseline, write the PR comment, keep the results store."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import click

from ..errors import UsageError
from ..results import baseline as _baseline
from ..results import export, pareto, verdict
from ..results.comment import CommentContext, render
from ..results.point import Observation, PointKey
from ..results.record import RECORD_FILE
from ..results.store import BRANCH, Store, StoreError, check_writable, manifest_for
from .common import handle_errors

EXIT_REGRESSION = 1


@click.group("results")
def results_group() -> None:
    """Benchmark results against their baseline: verdicts, the PR comment, the results store."""


def _settings_options(func: Any) -> Any:
    defaults = verdict.Settings()
    func = click.option("--floor", type=click.FloatRange(min=0), default=defaults.floor, show_default=True,
                        help="Smallest relative change ever flagged.")(func)
    func = click.option("--k", "k", type=click.FloatRange(min=0), default=defaults.k, show_default=True,
                        help="Flag beyond k x the point's relative noise.")(func)
    func = click.option("--history", type=click.IntRange(min=1), default=defaults.history, show_default=True,
                        help="Baseline measurements per point the median and the noise are taken over.")(func)
    func = click.option("--metric", "metrics", multiple=True, default=defaults.metrics, show_default=True,
                        help="A canonical metric to judge (repeatable).")(func)
    return func


def _settings(floor: float, k: float, history: int, metrics: tuple[str, ...]) -> verdict.Settings:
    from ..results.metrics import BY_NAME

    unknown = [m for m in metrics if m not in BY_NAME or BY_NAME[m].higher_is_better is None]
    if unknown:
        judged = ", ".join(n for n, m in BY_NAME.items() if m.higher_is_better is not None)
        raise UsageError(f"--metric {unknown[0]!r} is not a judged metric; expected one of {judged}")
    return verdict.Settings(metrics=tuple(metrics), floor=floor, k=k, history=history)


def _records(directory: str, what: str) -> tuple[dict[PointKey, list[Observation]], list[str]]:
    path = Path(directory)
    if not path.is_dir():
        raise UsageError(f"{what} {directory!r} is not a directory of sweep results")
    points, problems = _baseline.collect([path])
    for p in problems:
        click.echo(f"ci-tools: {p}", err=True)
    return points, problems


def _emit(text: str, output: str | None) -> None:
    if output:
        Path(output).write_text(text, encoding="utf-8")
    else:
        click.echo(text, nl=False)


def _report(verdicts: list[verdict.PointVerdict], frontiers: list[pareto.FrontierComparison], ctx: CommentContext,
            fmt: str, output: str | None, json_output: str | None, step_summary: bool, max_chars: int) -> int:
    if fmt == "json":
        _emit(json.dumps(export.to_json(verdicts, frontiers, ctx), indent=2) + "\n", output)
    else:
        _emit(render(verdicts, frontiers, ctx, max_chars=max_chars), output)
    if json_output:
        Path(json_output).write_text(json.dumps(export.to_json(verdicts, frontiers, ctx), indent=2) + "\n",
                                     encoding="utf-8")
    if step_summary and os.environ.get("GITHUB_STEP_SUMMARY"):
        with open(os.environ["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as f:
            f.write(export.summary(verdicts, frontiers, ctx))
    return EXIT_REGRESSION if any(v.label == verdict.REGRESSION for v in verdicts) else 0


def _output_options(func: Any) -> Any:
    func = click.option("--format", "fmt", type=click.Choice(["markdown", "json"]), default="markdown",
                        show_default=True)(func)
    func = click.option("--output", type=click.Path(dir_okay=False), default=None, help="Write here, not stdout.")(func)
    func = click.option("--json-output", type=click.Path(dir_okay=False), default=None,
                        help="Also write the whole comparison as JSON (the artifact).")(func)
    func = click.option("--step-summary", is_flag=True, help="Append the unabridged report to $GITHUB_STEP_SUMMARY.")(func)
    func = click.option("--max-chars", type=click.IntRange(min=1000), default=65_000, show_default=True,
                        help="Longest comment to write (GitHub refuses over 65,536).")(func)
    return func


@results_group.command("compare")
@click.argument("base_dir", metavar="BASE")
@click.argument("pr_dir", metavar="PR")
@_settings_options
@_output_options
@handle_errors
def compare_command(base_dir: str, pr_dir: str, floor: float, k: float, history: int, metrics: tuple[str, ...],
                    fmt: str, output: str | None, json_output: str | None, step_summary: bool, max_chars: int) -> None:
    """Judge the sweep results under PR against those under BASE (directories of record.json files).

    Exit 0 when no point regressed, 1 when one did (confirmed by two or more measurements).
    """
    settings = _settings(floor, k, history, metrics)
    base_points, _ = _records(base_dir, "BASE")
    pr_points, _ = _records(pr_dir, "PR")
    if not pr_points:
        raise UsageError(f"PR {pr_dir!r} holds no record.json")
    base = _baseline.from_points(base_points, f"the records under {base_dir}")
    verdicts = verdict.judge(base.points, pr_points, settings)
    frontiers = pareto.compare_all(base.points, pr_points)
    newest = _baseline.newest(pr_points)
    ctx = CommentContext(key="local", sha=newest.sha if newest else "", baseline=base)
    sys.exit(_report(verdicts, frontiers, ctx, fmt, output, json_output, step_summary, max_chars))


@results_group.group("store")
def store_group() -> None:
    """The results store: an orphan branch of append-only JSON Lines per point."""


def _repo(repo: str) -> Path:
    root = Path(repo)
    if not (root / ".git").exists() and not (root / "objects").is_dir():
        raise UsageError(f"--repo {repo!r} is not a git repository")
    return root


def _push(root: Path, remote: str, branch: str) -> None:
    done = subprocess.run(["git", "-C", str(root), "push", remote, f"refs/heads/{branch}:refs/heads/{branch}"],
                          capture_output=True, text=True, check=False)
    if done.returncode:
        raise UsageError(f"git push {remote} {branch}: {done.stderr.strip()}")


@store_group.command("append")
@click.argument("records", metavar="DIR")
@click.option("--repo", default=".", show_default=True, help="The repository whose results branch is written.")
@click.option("--branch", default=BRANCH, show_default=True)
@click.option("--sweep", "sweep_id", required=True, help="The sweep's id (the workflow run id).")
@click.option("--sha", required=True, help="The commit the sweep ran (must be on the default branch).")
@click.option("--default-ref", default="origin/main", show_default=True,
              help="The default branch as this clone knows it.")
@click.option("--run-url", default="", help="The run's URL, kept in the manifest.")
@click.option("--push", "remote", default=None, metavar="REMOTE", help="Push the branch to REMOTE afterwards.")
@handle_errors
def store_append_command(records: str, repo: str, branch: str, sweep_id: str, sha: str, default_ref: str, run_url: str,
                         remote: str | None) -> None:
    """Add a default-branch sweep's records to the store (one commit; a sweep already there adds nothing)."""
    root = _repo(repo)
    try:
        check_writable(root, sha, default_ref)
    except StoreError as exc:
        raise UsageError(str(exc)) from None
    points, problems = _records(records, "DIR")
    obs = [o for group in points.values() for o in group if o.sha == sha]
    if not obs:
        raise UsageError(f"no record under {records!r} is of commit {sha[:12]}")
    date = max(o.date for o in obs)
    store = Store(root, branch=branch)
    try:
        commit = store.append(obs, manifest_for(obs, sweep_id, sha, date, run_url))
    except StoreError as exc:
        raise UsageError(str(exc)) from None
    if commit is None:
        click.echo(f"ci-tools: sweep {sweep_id} is already in {branch}; nothing written", err=True)
        return
    click.echo(f"ci-tools: {len(obs)} measurement(s) of {len({o.key for o in obs})} point(s) -> {branch} {commit[:12]}",
               err=True)
    if remote:
        _push(root, remote, branch)


@store_group.command("read")
@click.option("--repo", default=".", show_default=True)
@click.option("--ref", default=None, help=f"The branch or ref to read (default: refs/heads/{BRANCH}).")
@click.option("--config-key", "config_keys", multiple=True, help="Only these config keys.")
@handle_errors
def store_read_command(repo: str, ref: str | None, config_keys: tuple[str, ...]) -> None:
    """Print every stored measurement as JSON Lines (key and observation)."""
    store = Store(_repo(repo), ref=ref)
    if store.head() is None:
        raise UsageError(f"{store.ref} does not exist in {repo}")
    try:
        points = store.read()
    except StoreError as exc:
        raise UsageError(str(exc)) from None
    for key in sorted(points):
        if config_keys and key.config_key not in config_keys:
            continue
        for o in points[key]:
            click.echo(json.dumps({"key": key.to_json(), **o.to_json()}, sort_keys=True))


def _store_baseline(repo: str, ref: str | None, keys: list[PointKey], exclude_sha: str) -> _baseline.Baseline | None:
    root = _repo(repo)
    for candidate in ([ref] if ref else [f"refs/remotes/origin/{BRANCH}", f"refs/heads/{BRANCH}"]):
        store = Store(root, ref=candidate)
        head = store.head()
        if head is None:
            continue
        try:
            points = store.read(keys)
            manifests = store.manifests()
        except StoreError as exc:
            raise UsageError(str(exc)) from None
        points = {k: [o for o in obs if o.sha != exclude_sha] for k, obs in points.items()}
        points = {k: obs for k, obs in points.items() if obs}
        if not points:
            continue
        last = manifests[-1] if manifests else None
        where = f"results store {candidate.rsplit('/', 1)[-1]} at {head[:12]}"
        if last:
            where += f", {len(manifests)} sweeps, last {last.date[:10]} on {', '.join(last.runners) or 'unknown runners'}"
        return _baseline.from_points(points, where, url=last.run_url if last else "")
    return None


def _plot_links(frontiers: list[pareto.FrontierComparison], sha: str, repository: str,
                commit: str | None) -> dict[tuple[str, str, int, int], str]:
    if not commit or not repository:
        return {}
    from ..results import plots

    return dict(plots.urls(plots.figures(frontiers), sha, repository=repository, commit=commit))


def _find_baseline(keys: list[PointKey], sha: str, repo: str, store_ref: str | None,
                   fallback: Callable[[], _baseline.Baseline | None] | None) -> _baseline.Baseline:
    """The store's measurements of these points (not of ``sha`` itself), else ``fallback``'s (the last
    default-branch sweep's artifact), else an empty baseline that says so."""
    base = _store_baseline(repo, store_ref, keys, sha)
    if base is None and fallback is not None:
        base = fallback()
    if base is None:
        base = _baseline.Baseline({}, "none: neither the results store nor a default-branch sweep's artifact "
                                      "holds a measurement of these points")
    return base


def _artifact_fallback(github_fallback: bool, repository: str, workflow: str,
                       default_branch: str) -> Callable[[], _baseline.Baseline | None] | None:
    """Reading the last default-branch sweep's baseline artifact (once, however often it is asked for)."""
    if not github_fallback:
        return None
    if not repository:
        raise UsageError("--github-fallback needs --repository OWNER/NAME (or $GITHUB_REPOSITORY)")
    read: list[_baseline.Baseline | None] = []

    def fallback() -> _baseline.Baseline | None:
        if not read:
            from ..github.client import GitHubClient
            from ..github.results import baseline_from_artifacts

            with GitHubClient.from_env(repository) as client:
                read.append(baseline_from_artifacts(client, workflow=workflow, branch=default_branch))
        return read[0]

    return fallback


def _commit(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None and not re.fullmatch(r"[0-9a-f]{40}", value):
        raise click.BadParameter(f"expected a full commit id (40 lowercase hex digits), found {value!r}")
    return value


_BASELINE_SHA = click.option(
    "--baseline-sha", default=None, callback=_commit, metavar="SHA",
    help="The sweep also ran this commit's recipes (the merge-base) beside the pull request's: its records are the "
         "baseline (same nodes, same day); the store is not read.")


def _baseline_options(func: Any) -> Any:
    func = _BASELINE_SHA(func)
    func = click.option("--repo", default=".", show_default=True, help="A clone holding the results branch.")(func)
    func = click.option("--store-ref", default=None,
                        help=f"The results branch to read (default: origin/{BRANCH}, else the local branch).")(func)
    func = click.option("--github-fallback", is_flag=True,
                        help="When the store has no measurement of these points, read the last default-branch "
                             "sweep's baseline artifact through the REST API.")(func)
    func = click.option("--repository", default=lambda: os.environ.get("GITHUB_REPOSITORY", ""), metavar="OWNER/NAME",
                        help="The GitHub repository (default: $GITHUB_REPOSITORY).")(func)
    func = click.option("--workflow", default="sweep.yml", show_default=True)(func)
    func = click.option("--default-branch", default="main", show_default=True)(func)
    func = click.option("--bot-login", default="github-actions[bot]", show_default=True,
                        help="Only this account's comment with the marker is updated.")(func)
    func = click.option("--run-url", default="")(func)
    func = click.option("--artifact-url", default="")(func)
    return func


def _sweep_points(records: str, baseline_sha: str | None) -> tuple[_baseline.Points, _baseline.Baseline | None]:
    """The sweep's measurements; with ``baseline_sha``, the pull request's and the merge-base's as its baseline."""
    points, _ = _records(records, "--records")
    return _baseline.same_node(points, baseline_sha) if baseline_sha else (points, None)


def _reported(records: Path) -> int:
    """Jobs that reported: one record.json each."""
    return sum(1 for _ in records.rglob(RECORD_FILE))


def _post(repository: str, pr_number: int, body: str, key: str, bot_login: str) -> str:
    """Post the comment, or update the one with this key's marker; its URL."""
    from ..github.client import GitHubClient
    from ..github.results import post_or_update
    from ..results.comment import marker

    if not repository:
        raise UsageError("--pr needs --repository OWNER/NAME (or $GITHUB_REPOSITORY)")
    with GitHubClient.from_env(repository) as client:
        return str(post_or_update(client, pr_number, body, marker(key), bot_login).get("html_url", ""))


@results_group.command("comment")
@click.option("--records", required=True, help="The sweep's results: a directory of record.json files.")
@click.option("--key", required=True, help="The dispatch key: one comment per key, updated in place.")
@click.option("--sha", default=None, help="The commit the sweep ran (default: the records' newest).")
@_baseline_options
@click.option("--pr", "pr_number", type=click.IntRange(min=1), default=None, help="Post on this pull request.")
@click.option("--jobs-total", type=click.IntRange(min=0), default=None, help="Jobs the sweep has (for progress).")
@click.option("--final", is_flag=True, help="The sweep has ended: jobs without a record will not report.")
@click.option("--plots-commit", default=None, help="The results-branch commit holding this sweep's plots.")
@_settings_options
@_output_options
@handle_errors
def comment_command(records: str, key: str, sha: str | None, baseline_sha: str | None, repo: str,
                    store_ref: str | None, github_fallback: bool, repository: str, workflow: str, default_branch: str, pr_number: int | None, bot_login: str,
                    run_url: str, artifact_url: str, jobs_total: int | None, final: bool, plots_commit: str | None,
                    floor: float, k: float, history: int, metrics: tuple[str, ...], fmt: str, output: str | None,
                    json_output: str | None, step_summary: bool, max_chars: int) -> None:
    """Judge a sweep against its baseline and write (and with --pr, post or update) the results comment."""
    settings = _settings(floor, k, history, metrics)
    pr_points, same_node = _sweep_points(records, baseline_sha)
    newest = _baseline.newest(pr_points)
    sha = sha or (newest.sha if newest else "")
    base = same_node or _find_baseline(sorted(pr_points), sha, repo, store_ref,
                                       _artifact_fallback(github_fallback, repository, workflow, default_branch))
    verdicts = verdict.judge(base.points, pr_points, settings)
    frontiers = pareto.compare_all(base.points, pr_points)
    done = _reported(Path(records)) if jobs_total is not None else None
    ctx = CommentContext(key=key, sha=sha, baseline=base, run_url=run_url, artifact_url=artifact_url,
                         plots=_plot_links(frontiers, sha, repository, plots_commit), jobs_done=done,
                         jobs_total=jobs_total, final=final)
    code = _report(verdicts, frontiers, ctx, fmt, output, json_output, step_summary, max_chars)
    if pr_number is not None:
        url = _post(repository, pr_number, render(verdicts, frontiers, ctx, max_chars=max_chars), key, bot_login)
        click.echo(f"ci-tools: results comment {url}", err=True)
    sys.exit(code)


@results_group.command("watch")
@click.option("--run-id", type=click.IntRange(min=1), required=True, help="The sweep's workflow run.")
@click.option("--matrix", "matrix_json", required=True, metavar="JSON",
              help="The run job's matrix as the plan job wrote it ({\"include\": [...]}): one run job per entry.")
@click.option("--key", required=True, help="The dispatch key: one comment per key, updated in place.")
@click.option("--sha", required=True, help="The commit the sweep runs.")
@click.option("--pr", "pr_number", type=click.IntRange(min=1), required=True, help="The pull request to comment on.")
@click.option("--jobs-total", type=click.IntRange(min=0), required=True, help="Benchmark jobs the sweep has.")
@_baseline_options
# The defaults are WatchSettings' (not imported here: the HTTP client loads only for commands that talk to GitHub).
@click.option("--interval", type=click.FloatRange(min=1), default=None, help="Seconds between polls (default: 180).")
@click.option("--max-polls", type=click.IntRange(min=1), default=None, help="At most this many polls (default: 120).")
@click.option("--timeout-minutes", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Stop watching after this long (default: 345, within a hosted job's 6 h; the report job writes "
                   "the final comment anyway).")
@click.option("--work-dir", type=click.Path(file_okay=False), default=None,
              help="Where the jobs' records are unpacked (default: a temporary directory).")
@click.option("--max-chars", type=click.IntRange(min=1000), default=65_000, show_default=True)
@_settings_options
@handle_errors
def watch_command(run_id: int, matrix_json: str, key: str, sha: str, pr_number: int, jobs_total: int,
                  baseline_sha: str | None, repo: str,
                  store_ref: str | None, github_fallback: bool, repository: str, workflow: str, default_branch: str,
                  bot_login: str, run_url: str, artifact_url: str, interval: float | None, max_polls: int | None,
                  timeout_minutes: float | None, work_dir: str | None, max_chars: int, floor: float, k: float,
                  history: int, metrics: tuple[str, ...]) -> None:
    """Keep the results comment up to date while the sweep's run jobs finish (run beside them, not after)."""
    import tempfile

    from ..github.client import GitHubClient, RetryPolicy
    from ..github.progress import WatchSettings, watch

    settings = _settings(floor, k, history, metrics)
    run_jobs = _matrix_entries(matrix_json)
    if not repository:
        raise UsageError("--repository OWNER/NAME (or $GITHUB_REPOSITORY) is needed to watch a run")
    fallback = _artifact_fallback(github_fallback, repository, workflow, default_branch)

    def publish(records: Path) -> None:
        points, _ = _baseline.collect([records])
        same_node = None
        if baseline_sha:
            points, same_node = _baseline.same_node(points, baseline_sha)
        pr_points = {p: obs for p, obs in ((p, [o for o in obs if o.sha == sha]) for p, obs in points.items()) if obs}
        base = same_node or (_find_baseline(sorted(pr_points), sha, repo, store_ref, fallback) if pr_points
                             else _baseline.Baseline({}, "read when the first job reports"))
        verdicts = verdict.judge(base.points, pr_points, settings)
        frontiers = pareto.compare_all(base.points, pr_points)
        ctx = CommentContext(key=key, sha=sha, baseline=base, run_url=run_url, artifact_url=artifact_url,
                             jobs_done=_reported(records), jobs_total=jobs_total)
        _post(repository, pr_number, render(verdicts, frontiers, ctx, max_chars=max_chars), key, bot_login)

    defaults = WatchSettings()
    limits = WatchSettings(interval=interval or defaults.interval, max_polls=max_polls or defaults.max_polls,
                           deadline=timeout_minutes * 60 if timeout_minutes else defaults.deadline)
    with tempfile.TemporaryDirectory(prefix="ci-tools-watch-") as tmp:
        records = Path(work_dir) if work_dir else Path(tmp)
        # GitHub's longer rate-limit waits come back to the watch, which waits them between polls.
        with GitHubClient.from_env(repository, retry=RetryPolicy(attempts=3, max_wait=60.0)) as client:
            outcome = watch(client, run_id, run_jobs, records, lambda _: publish(records), limits,
                            log=lambda line: click.echo(f"ci-tools: {line}", err=True))
    click.echo(f"ci-tools: watched run {run_id}: {outcome.polls} poll(s), {outcome.updates} comment update(s); "
               f"{outcome.reason}", err=True)


def _matrix_entries(text: str) -> int:
    """How many run jobs the plan's matrix makes (one per `include` entry)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--matrix is not JSON: {exc.msg} at character {exc.pos}") from None
    include = data.get("include") if isinstance(data, dict) else None
    if not isinstance(include, list) or not include:
        raise UsageError('--matrix must be the plan\'s matrix: {"include": [{"runner": ..., "indices": ..., '
                         '"jobs": ...}, ...]} with at least one entry')
    return len(include)


@results_group.command("plot")
@click.option("--records", required=True, help="The sweep's results: a directory of record.json files.")
@click.option("--repo", default=".", show_default=True, help="A clone holding the results branch.")
@click.option("--store-ref", default=None, help=f"The results branch to read the baseline from (default: origin/{BRANCH}).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None, help="Write the PNGs here.")
@click.option("--commit-to-store", is_flag=True, help=f"Add the PNGs to the local {BRANCH} branch (plots/<sha>/).")
@click.option("--push", "remote", default=None, metavar="REMOTE", help="Push the branch to REMOTE afterwards.")
@_BASELINE_SHA
@handle_errors
def plot_command(records: str, repo: str, store_ref: str | None, out_dir: str | None, commit_to_store: bool,
                 remote: str | None, baseline_sha: str | None) -> None:
    """Draw one frontier figure per model x hardware x ISL/OSL (base and PR); prints the store commit if any."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise UsageError("plots need matplotlib: pip install 'ci-tools[plots]'") from None
    from ..results import plots

    pr_points, same_node = _sweep_points(records, baseline_sha)
    newest = _baseline.newest(pr_points)
    sha = newest.sha if newest else "unknown"
    base = same_node or _store_baseline(repo, store_ref, sorted(pr_points), sha)
    frontiers = pareto.compare_all(base.points if base else {}, pr_points)
    figs = plots.figures(frontiers)
    images = {path: plots.render(fig) for path, fig in plots.store_paths(figs, sha).items()}
    if out_dir:
        for path, data in images.items():
            target = Path(out_dir) / Path(path).name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    if commit_to_store:
        store = Store(_repo(repo))
        existing = store.git.blobs(store.head() or "HEAD") if store.head() else {}
        new = {p: d for p, d in images.items() if p not in existing}
        if new:
            try:
                commit = store.add_files(new, f"results: {len(new)} frontier plot(s) of {sha[:12]}")
            except StoreError as exc:
                raise UsageError(str(exc)) from None
        else:
            commit = store.head() or ""
        click.echo(commit)
        if remote:
            _push(Path(repo), remote, BRANCH)
    click.echo(f"ci-tools: {len(images)} figure(s) of {len(frontiers)} configuration(s)", err=True)
