"""``ci-tools matrix``: the jobs to run, as sharded GitHub matrix JSON, or explained per job."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .common import get_config, handle_errors, repo_options

if TYPE_CHECKING:  # imported lazily at run time: `ci-tools --help` should not pay for them
    from ..config import ProjectConfig
    from ..jobs.job import Job
    from ..jobs.selection import ChangelogScope, Selection
    from ..jobs.shard import Shard
    from ..model.repository import RepoData
    from ..revision.snapshot import Snapshot

SCENARIO_CHOICES = ("fixed-seq-len", "agentic-coding")


@click.command("matrix")
@repo_options
@click.argument("key_globs", nargs=-1, metavar="[KEY-GLOB]...")
@click.option("--scenario", "scenarios", multiple=True, type=click.Choice(SCENARIO_CHOICES),
              help="Keep only jobs of this scenario type (repeatable).")
@click.option("--conc", "concs", multiple=True, type=click.IntRange(min=1), metavar="N",
              help="Keep only this concurrency (repeatable); multinode jobs keep the listed ones.")
@click.option("--tp", "tps", multiple=True, type=click.IntRange(min=1), metavar="N",
              help="Keep only jobs with this tp (either role for multinode; repeatable).")
@click.option("--ep", "eps", multiple=True, type=click.IntRange(min=1), metavar="N",
              help="Keep only jobs with this ep (either role for multinode; repeatable).")
@click.option("--base", "base_rev", default=None, metavar="REV",
              help="Keep only what the changelog entries appended since REV ask for.")
@click.option("--rev", default=None, metavar="REV", help="Read the files of this revision instead of the work tree.")
@click.option("--shard-size", type=click.IntRange(1, 256), default=256, show_default=True,
              help="At most this many jobs per shard (GitHub's matrix limit is 256).")
@click.option("--output-dir", type=click.Path(file_okay=False), default=None,
              help="Write shard-NNN.json files and index.json here.")
@click.option("--github-output", is_flag=True, help="Write the shards as step outputs to $GITHUB_OUTPUT.")
@click.option("--shard", "only_shard", type=click.IntRange(min=0), default=None, metavar="I",
              help="With --github-output: write only shard I, as output `matrix`.")
@click.option("--explain", "explain_key", default=None, metavar="KEY",
              help="Print, per job of KEY (a key or glob), the recipe path with the candidates tried and the env.")
@click.option("--env", "with_env", is_flag=True,
              help='Add each job\'s environment: "env": {NAME: value, or null when only known at run time}.')
@handle_errors
def matrix_command(repo_dir: str | None, config_file: str | None, key_globs: tuple[str, ...], scenarios: tuple[str, ...],
                   concs: tuple[int, ...], tps: tuple[int, ...], eps: tuple[int, ...], base_rev: str | None,
                   rev: str | None, shard_size: int, output_dir: str | None, github_output: bool,
                   only_shard: int | None, explain_key: str | None, with_env: bool) -> None:
    """Expand the master configs into jobs and emit them as sharded GitHub matrix JSON.

    Jobs are InferenceX's matrix entries (its generator's fields, order and
    eval marks) with an `id` and the `config-key` added.  Without
    --output-dir or --github-output, one JSON document goes to standard
    output: {"index": {...}, "shards": [{"include": [...]}, ...]}.
    """
    import gc

    # Building the matrix makes many acyclic objects: cyclic collection only costs time here.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        _matrix(repo_dir, config_file, key_globs, scenarios, concs, tps, eps, base_rev, rev, shard_size, output_dir,
                github_output, only_shard, explain_key, with_env)
    finally:
        if was_enabled:
            gc.enable()


def _matrix(repo_dir: str | None, config_file: str | None, key_globs: tuple[str, ...], scenarios: tuple[str, ...],
            concs: tuple[int, ...], tps: tuple[int, ...], eps: tuple[int, ...], base_rev: str | None,
            rev: str | None, shard_size: int, output_dir: str | None, github_output: bool,
            only_shard: int | None, explain_key: str | None, with_env: bool) -> None:
    from ..errors import UsageError
    from ..jobs.matrix import expand
    from ..jobs.selection import Selection, select, unmatched_globs
    from ..model.repository import load_repo
    from ..revision.snapshot import open_snapshot

    if output_dir and github_output:
        raise UsageError("--output-dir and --github-output are alternatives; give one of them")
    if only_shard is not None and not github_output:
        raise UsageError("--shard selects the shard written to $GITHUB_OUTPUT; it needs --github-output")
    config = get_config(repo_dir, config_file)
    snapshot = open_snapshot(config.root, rev)
    repo = load_repo(snapshot, config, with_changelog=False)
    _fail_on_load_errors(repo)
    keys = list(repo.configs)
    missing = unmatched_globs([*key_globs, *([explain_key] if explain_key else [])], keys)
    if missing:
        raise UsageError(f"no config key matches `{missing[0]}`; expected one of the {len(keys)} keys "
                         f"defined in {', '.join(f.path for f in repo.master_files) or 'the master configs'}")
    scopes, base_ids = _changelog_scopes(config, snapshot, base_rev, keys) if base_rev else (None, frozenset[str]())
    selection = Selection(key_globs=key_globs, scenarios=scenarios, concs=concs, tps=tps, eps=eps,
                          changelog=scopes, base_ids=base_ids)
    every = expand(repo)
    jobs = select(every, selection)
    if not jobs and (concs or tps or eps or scenarios):
        _refuse_empty_filters(every, selection)
    if explain_key:
        click.echo(_explain(select(jobs, Selection(key_globs=(explain_key,))), config, snapshot), nl=False)
        return
    texts = [j.json_text() for j in jobs]
    if with_env:
        texts = _with_env(jobs, texts, config, snapshot)
    _emit(jobs, texts, selection, shard_size, output_dir, github_output, only_shard)


def _refuse_empty_filters(every: list[Job], selection: Selection) -> None:
    """Filters that keep none of the jobs the keys (and the changelog) select are a usage error saying what
    those jobs offer, as ``dispatch`` answers ``conc=3``; an empty matrix would read as "nothing to run"."""
    from dataclasses import replace

    from ..errors import UsageError
    from ..jobs.selection import nothing_left, select

    unfiltered = select(every, replace(selection, scenarios=(), concs=(), tps=(), eps=()))
    if not unfiltered:
        return  # the keys or the changelog select nothing: not the filters' doing
    asked = " ".join(f"--{name} {value}" for name, values in (("scenario", selection.scenarios), ("conc", selection.concs),
                                                              ("tp", selection.tps), ("ep", selection.eps))
                     for value in values)
    what = f"{', '.join(selection.key_globs)}" if selection.key_globs else "the selected configs"
    raise UsageError(nothing_left(asked, unfiltered, what))


def _fail_on_load_errors(repo: RepoData) -> None:
    """A master file that does not load, or a config that fails its schema, would silently drop its jobs (or
    build them from values of the wrong type): refuse instead."""
    from .common import refuse_unreadable

    refuse_unreadable(repo, doing="the matrix cannot be built")


def _changelog_scopes(config: ProjectConfig, head: Snapshot, base_rev: str,
                      keys: list[str]) -> tuple[tuple[ChangelogScope, ...], frozenset[str]]:
    """The appended entries' scopes, and the base's job ids when an append-only entry needs them."""
    from ..jobs.matrix import expand
    from ..jobs.selection import unmatched_globs
    from ..model.keys import match_key_glob
    from ..model.repository import load_repo
    from ..revision.snapshot import GitSnapshot

    base = GitSnapshot(config.root, base_rev)
    scopes = _appended(config, base, head)
    for scope in scopes:
        for glob in unmatched_globs(scope.config_keys, keys, match_key_glob):
            click.echo(f"ci-tools: warning: {config.changelog}:{scope.line}: config key `{glob}` matches no config; "
                       "it selects nothing", err=True)
    base_ids: frozenset[str] = frozenset()
    if any(s.append_only for s in scopes):
        base_ids = frozenset(j.id for j in expand(load_repo(base, config, with_changelog=False)))
    return scopes, base_ids


def _appended(config: ProjectConfig, base: Snapshot, head: Snapshot) -> tuple[ChangelogScope, ...]:
    from ..changelog.scopes import appended_scopes

    return appended_scopes(base.read(config.changelog), head.read(config.changelog), config.changelog,
                           base_label=base.label, head_label=head.label)


def _contract_problems(config: ProjectConfig, snapshot: Snapshot) -> None:
    from ..jobs.env.contract import contract_for

    for problem in contract_for(config, snapshot).problems:
        click.echo(f"ci-tools: warning: {problem}", err=True)


def _with_env(jobs: list[Job], texts: list[str], config: ProjectConfig, snapshot: Snapshot) -> list[str]:
    """Each entry's JSON with its environment appended as `env`."""
    from ..jobs.contract import recipe_env
    from ..jobs.shard import encode

    _contract_problems(config, snapshot)
    return [f'{text[:-1]},"env":{encode(recipe_env(job, config, snapshot))}}}' for job, text in zip(jobs, texts)]


def _emit(jobs: list[Job], texts: list[str], selection: Selection, shard_size: int, output_dir: str | None,
          github_output: bool, only_shard: int | None) -> None:
    from ..errors import UsageError
    from ..jobs.shard import MAX_SHARD_BYTES, ShardError, encode, index_of, shard_texts

    try:
        shards = shard_texts(texts, [j.id for j in jobs], max_jobs=shard_size)
    except ShardError as exc:
        raise UsageError(str(exc)) from None
    index = index_of(shards, shard_size, extra={"selection": selection.to_json()})
    if output_dir:
        out = Path(output_dir)
        out.mkdir(parents=True, exist_ok=True)
        for stale in out.glob("shard-*.json"):
            stale.unlink()  # a smaller matrix must not leave shards of a previous run behind
        for s in shards:
            (out / s.file_name()).write_text(s.text + "\n", encoding="utf-8")
        (out / "index.json").write_text(encode(index) + "\n", encoding="utf-8")
        click.echo(f"{index['total-jobs']} jobs in {len(shards)} shard(s) written to {out}")
        return
    if github_output:
        _write_github_output(shards, index, only_shard, MAX_SHARD_BYTES)
        return
    # The shards' texts are already JSON: splice them rather than encoding every job again.
    click.echo(f'{{"index":{encode(index)},"shards":[{",".join(s.text for s in shards)}]}}')


def _write_github_output(shards: list[Shard], index: dict[str, Any], only_shard: int | None, limit: int) -> None:
    from ..errors import UsageError
    from ..jobs.shard import encode

    target = os.environ.get("GITHUB_OUTPUT")
    if not target:
        raise UsageError("--github-output needs the GITHUB_OUTPUT environment variable (set inside GitHub Actions)")
    lines = [f"shard-count={len(shards)}", f"total-jobs={index['total-jobs']}",
             f"shards={encode(list(range(len(shards))))}"]
    if only_shard is not None:
        if only_shard >= len(shards):
            raise UsageError(f"--shard {only_shard} does not exist; the matrix has {len(shards)} shard(s)")
        lines.append(f"matrix={shards[only_shard].text}")
    else:
        total = sum(s.size for s in shards)
        if total > limit:
            raise UsageError(f"the {len(shards)} shards are {total} bytes together, over GitHub's {limit}-byte "
                             "limit for a job's outputs; write one shard per job with --shard I, "
                             "or use --output-dir and an artifact")
        lines.extend(f"matrix-{s.index}={s.text}" for s in shards)
    with open(target, "a", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    click.echo(f"{index['total-jobs']} jobs in {len(shards)} shard(s) written to $GITHUB_OUTPUT")


def _explain(jobs: list[Job], config: ProjectConfig, snapshot: Snapshot) -> str:
    from ..jobs.contract import resolve_recipe
    from ..jobs.env.contract import contract_for

    files = frozenset(snapshot.files())
    contract = contract_for(config, snapshot)
    _contract_problems(config, snapshot)
    out: list[str] = []
    for job in jobs:
        res = resolve_recipe(job, config, snapshot, files)
        out.append(f"{job.label()}  [id {job.id}]")
        out.append(f"  row: {job.row.path}:{job.row.line}")
        out.append(f"  recipe: {res.path or 'NONE (no candidate exists)'}")
        found = False
        for cand in res.candidates:
            status = "not tried" if found else ("found" if cand == res.path else "missing")
            found = found or cand == res.path
            out.append(f"    {status:<9}  {cand}")
        caller = contract.caller_for(job)
        via = (f" via {caller.job} of {contract.source}" if caller is not None
               else f" (no job of {contract.source} runs it)")
        out.append(f"  env{via} (? = set at run time, value unknown):")
        env = contract.recipe_env(job)
        width = max((len(n) + len((v.value or "?").replace(chr(10), "  ")) for n, v in env.items()), default=0) + 1
        for name, var in env.items():
            # A JSON value spans lines; one line per variable keeps the listing readable.
            shown = f"{name}={var.value.replace(chr(10), chr(92) + 'n') if var.value is not None else '?'}"
            out.append(f"    {shown:<{width}}  {var.origin.path}:{var.origin.line}" if var.origin.line
                       else f"    {shown:<{width}}  {var.origin.path}")
        out.append("")
    if not jobs:
        out.append("no job matches the selection")
    return "\n".join(out) + "\n"
