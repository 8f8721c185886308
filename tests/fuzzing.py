"""A seeded fuzzer over the real InferenceX tree: broken, hostile and odd inputs, run by every command.

Each case copies nothing: the tree is one git repository (tag ``base``), a case
mutates its work tree (or makes a clone in an odd git state), runs the
commands that read what it changed, each as its own process under resource
limits, and resets the tree.  The promise held for every run:

- an exit code of 0, 1 or 2, never 3, a signal or a traceback;
- when the mutation breaks an input the command needs: exit non-zero and the
  broken file named (one finding at file:line, or one usage line), never
  silence;
- within the time and memory of a normal run (:data:`CPU_SECONDS`,
  :data:`MEMORY_MIB`);
- nothing executed (a recipe's ``touch``, ``eval``, ``$(...)`` leave no
  file) and nothing read outside the repository (a symbolic link to a file
  outside never shows its contents).

``tests/test_fuzz.py`` runs a fixed seed and a few cases on a trimmed copy of
the tree (CI); ``bench/bench_fuzz.py`` runs many on the whole tree.
"""

from __future__ import annotations

import json
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
TREE = TESTS / "data" / "inferencex-843c625"
MASTERS = ("configs/amd-master.yaml", "configs/nvidia-master.yaml")
RUNNERS = "configs/runners.yaml"
CHANGELOG = "perf-changelog.yaml"
# A normal run of the slowest command on the whole tree (`recipe lint`) takes ~4 s of CPU and ~150 MiB.
CPU_SECONDS = 60
MEMORY_MIB = 1024
WALL_SECONDS = 120
# Text that only a file outside the repository holds: it must never appear in any output.
SECRET = "fuzz-secret-4f1c9e"
GIT_ENV = {"GIT_AUTHOR_NAME": "fuzz", "GIT_AUTHOR_EMAIL": "fuzz@example.invalid", "GIT_COMMITTER_NAME": "fuzz",
           "GIT_COMMITTER_EMAIL": "fuzz@example.invalid", "GIT_CONFIG_NOSYSTEM": "1"}
_TOP_KEY = re.compile(r"^([A-Za-z0-9][^\s:#]*):[ \t]*$")


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV, "HOME": str(repo.parent)}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=env).stdout


def _trim(text: str, keep: int) -> str:
    """The first ``keep`` configs of a master file, as written."""
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if _TOP_KEY.match(line)]
    if len(starts) <= keep:
        return text
    return "\n".join(lines[: starts[keep]]).rstrip("\n") + "\n"


def make_tree(dest: Path, keep_configs: int | None = None) -> Path:
    """The real tree (without its oracles) as a git repository at ``dest`` with tag ``base``; with
    ``keep_configs``, each master file keeps only its first configs (a cheaper tree for CI)."""
    shutil.copytree(TREE, dest, ignore=shutil.ignore_patterns("expected"))
    for path in [dest, *dest.rglob("*")]:
        path.chmod(path.stat().st_mode | 0o200)
    if keep_configs is not None:
        for rel in MASTERS:
            target = dest / rel
            target.write_text(_trim(target.read_text(encoding="utf-8"), keep_configs), encoding="utf-8")
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "InferenceX at 843c6254f")
    git(dest, "tag", "base")
    return dest


def clone(origin: Path, dest: Path) -> Path:
    """A clone of a tree :func:`make_tree` made (objects shared, tag ``base`` included)."""
    git(dest.parent, "clone", "-q", "--shared", str(origin), str(dest))
    return dest


def reset(repo: Path) -> None:
    git(repo, "checkout", "-q", "-f", "main")
    git(repo, "reset", "-q", "--hard", "base")
    git(repo, "clean", "-q", "-fdx")


# --- the commands ---------------------------------------------------------------------------------------

COMMANDS = ("validate", "check", "matrix", "recipe-show", "recipe-lint", "claims", "changelog-lint",
            "changelog-new", "dispatch-parse", "sweep-plan")


def argv_of(command: str, case: Case) -> list[str]:
    key = case.key or "*"
    return {
        "validate": ["validate"],
        "check": ["check", "--base", "base"],
        "matrix": ["matrix", key],
        "recipe-show": ["recipe", "show", key],
        "recipe-lint": ["recipe", "lint"],
        "claims": ["claims", "--base", "base"],
        "changelog-lint": ["changelog", "lint", "--base", "base"],
        "changelog-new": ["changelog", "new", "--key", key, "-m", "fuzz entry"],
        "dispatch-parse": ["dispatch", "parse", case.comment or f"/run-benchmark {key}", "--rev", "HEAD"],
        "sweep-plan": ["sweep", "plan", "--selection", case.selection, "--rev", "HEAD", "--write-matrix",
                       str((case.repo or Path(".")).parent / "planned.json")],
    }[command]


@dataclass
class Case:
    """One mutation of the tree: what it did, which file, and which commands must report it."""

    name: str
    path: str = ""  # the file a finding or usage line must name ("" when nothing is broken)
    needs: tuple[str, ...] = ()  # commands that must exit non-zero naming ``path``
    runs: tuple[str, ...] = COMMANDS  # commands worth running on it
    key: str = ""  # a config key the mutation touches (for matrix, recipe show, changelog new)
    comment: str = ""  # a /run-benchmark comment, for dispatch parse
    repo: Path | None = None  # a clone in another git state, instead of the shared tree
    marker: Path | None = None  # a file that exists only if something was executed
    selection: str = ""  # for sweep plan: what a dispatch of ``key`` authorised, pinned to the mutated commit


@dataclass
class Run:
    command: str
    argv: list[str]
    code: int
    out: str
    err: str
    cpu: float
    peak_mib: float
    timed_out: bool = False


@dataclass
class Broken:
    case: str
    command: str
    promise: str
    detail: str = ""


def run(repo: Path, argv: list[str], command: str) -> Run:
    """One command as its own process, bounded in CPU time and address space, outside GitHub Actions."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "CI_TOOLS_"))}
    env.update(GIT_ENV, HOME=str(repo.parent), PYTHONDONTWRITEBYTECODE="1")

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS + 5))
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_MIB << 20 << 1, MEMORY_MIB << 20 << 1))
        os.setsid()

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen([sys.executable, "-m", "ci_tools", *argv], cwd=repo, env=env, stdout=out,
                                   stderr=err, stdin=subprocess.DEVNULL, preexec_fn=limit)
        deadline = time.monotonic() + WALL_SECONDS
        timed_out = False
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                os.killpg(process.pid, signal.SIGKILL)
                timed_out = True
            time.sleep(0.01)
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Run(command, argv, process.returncode, out.read().decode("utf-8", "replace"),
                   err.read().decode("utf-8", "replace"), usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024,
                   timed_out)


def broken_promises(case: Case, result: Run) -> list[Broken]:
    """What ``result`` breaks of the promise (empty when it holds)."""
    out: list[Broken] = []
    text = result.out + result.err

    def broke(promise: str, detail: str = "") -> None:
        out.append(Broken(case.name, result.command, promise, detail[:400]))

    if result.timed_out or result.code in (-signal.SIGXCPU, -signal.SIGKILL) or result.cpu >= CPU_SECONDS:
        broke("bounded time", f"{result.cpu:.1f} s CPU")
    elif result.code not in (0, 1, 2):
        broke("exit 0, 1 or 2", f"exit {result.code}: {result.err.strip()[-300:]}")
    if "Traceback (most recent call last)" in text or "internal error" in text:
        broke("no traceback", result.err.strip()[-300:])
    if result.peak_mib > MEMORY_MIB:
        broke("bounded memory", f"{result.peak_mib:.0f} MiB")
    if SECRET in text:
        broke("nothing read outside the repository", "the outside file's text is in the output")
    if case.marker is not None and case.marker.exists():
        broke("nothing executed", f"{case.marker} was created")
    if result.command in case.needs and case.path:
        if result.code == 0:
            broke("never silent", f"exit 0 while {case.path} is broken: {text.strip()[:200]!r}")
        elif case.path not in text:
            broke("names the broken file", f"{case.path} not named: {text.strip()[:300]!r}")
    if text.count("\n") > 400 and result.command not in ("matrix", "recipe-show", "dispatch-parse", "sweep-plan"):
        broke("one finding, not a flood", f"{text.count(chr(10))} lines")
    return out


# --- mutations --------------------------------------------------------------------------------------------

Mutation = Callable[[Path, random.Random], Case]
MASTER_NEEDS = ("validate", "check", "matrix", "recipe-show", "recipe-lint", "sweep-plan", "dispatch-parse")
CHANGELOG_NEEDS = ("validate", "check", "changelog-lint", "claims")


def _config_lines(repo: Path, rel: str) -> tuple[list[str], list[tuple[int, str]]]:
    lines = (repo / rel).read_text(encoding="utf-8").split("\n")
    keys = [(i, m.group(1)) for i, line in enumerate(lines) if (m := _TOP_KEY.match(line))]
    return lines, keys


def _write(repo: Path, rel: str, lines: list[str]) -> None:
    (repo / rel).write_text("\n".join(lines), encoding="utf-8")


def _pick_config(repo: Path, rng: random.Random) -> tuple[str, list[str], int, str]:
    rel = rng.choice(MASTERS)
    lines, keys = _config_lines(repo, rel)
    start, key = rng.choice(keys)
    return rel, lines, start, key


def syntax_error(repo: Path, rng: random.Random) -> Case:
    """An unterminated string (or a bad indent, an unclosed bracket) in a master config or runners.yaml."""
    if rng.random() < 0.8:
        rel, lines, start, key = _pick_config(repo, rng)
        at = start + 1
    else:
        rel, key = RUNNERS, ""
        lines = (repo / rel).read_text(encoding="utf-8").split("\n")
        at = rng.randrange(1, len(lines) - 1)
    broken = rng.choice(['{0}: "unterminated {1}', "{0}: [unclosed, {1}", "   {0}:  {1}\n bad: indent"])
    name, _, value = lines[at].strip().partition(":")
    lines[at] = " " * (len(lines[at]) - len(lines[at].lstrip())) + broken.format(name or "x", value.strip())
    _write(repo, rel, lines)
    return Case(f"syntax error in {rel}:{at + 1}", rel, MASTER_NEEDS if rel != RUNNERS else ("validate", "check", "recipe-lint"),
                key=key)


HUGE_INTEGER = "99999999999999999999999"
WRONG_VALUES = ('"x"', "[1]", "{a: 1}", "8.0", "true", "null", "!!set {a, b}", "-1", "0", "1e400", HUGE_INTEGER,
                ".nan", "2026-02-30", '""', "!!binary aGk=", "!!omap [a: 1]", "&a [*a]", "*undefined")
ROW_FIELDS = ("tp", "ep", "conc-start", "conc-end")
STRING_FIELDS = ("model-prefix", "precision", "framework", "runner", "image", "model")
STRING_VALUES = ('"x"', "1e400")


def wrong_type(repo: Path, rng: random.Random) -> Case:
    """A search-space field, or a top-level field of a config, given a value of the wrong type."""
    rel, lines, start, key = _pick_config(repo, rng)
    value = rng.choice(WRONG_VALUES)
    end = next((i for i in range(start + 1, len(lines)) if _TOP_KEY.match(lines[i])), len(lines))
    # A number of a row or a worker (`tp: 8`, `conc-list: [...]`, `num-worker: 1`, `isl: 1024`) ...
    numbers = [(i, m) for i in range(start + 1, end)
               for m in re.finditer(r"\b(tp|ep|conc-start|conc-end|conc-list|num-worker|isl|osl): "
                                    r"(\[[^\]]*\]|[^,}\s]+)", lines[i])]
    if numbers and rng.random() < 0.7:
        at, match = rng.choice(numbers)
        lines[at] = lines[at][: match.start(2)] + value + lines[at][match.end(2):]
    else:  # ... or a field of the config itself
        fields = [i for i in range(start + 1, end)
                  if re.match(r"  (model-prefix|precision|framework|runner|multinode|image|model):", lines[i])]
        at = rng.choice(fields)
        name = lines[at].split(":")[0]
        lines[at] = f"{name}: {value}"
    _write(repo, rel, lines)
    # A huge integer is of the right type: it must stay bounded, nothing more.  So is a value YAML reads as a
    # non-empty string, given to a field that takes one (`image: "x"`; `runner: 1e400`: YAML 1.1 has no float
    # without a dot, so it is the text "1e400", as InferenceX's own generator reads it too).
    right_type = value == HUGE_INTEGER or (value in STRING_VALUES and lines[at].lstrip().split(":")[0] in STRING_FIELDS)
    needs = () if right_type else MASTER_NEEDS
    return Case(f"`{lines[at].strip()[:60]}` in {rel}:{at + 1}", rel, needs, key=key)


def alias_bomb(repo: Path, rng: random.Random) -> Case:
    """Nested anchors ("billion laughs") in a master config, runners.yaml or an srt-slurm recipe."""
    levels = rng.randint(6, 12)
    bomb = ['lol0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    bomb += [f"lol{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, levels)]
    where = rng.random()
    if where < 0.5:
        rel, lines, start, key = _pick_config(repo, rng)
        # Inside the config: `model` holding the bomb's last level.
        lines[start + 1: start + 1] = ["  x-bomb:"] + ["    " + b for b in bomb]
        _write(repo, rel, lines)
        return Case(f"alias bomb ({levels} levels) in config `{key}` of {rel}", rel, MASTER_NEEDS, key=key)
    if where < 0.6:
        text = (repo / RUNNERS).read_text(encoding="utf-8")
        (repo / RUNNERS).write_text(text + "\n".join(bomb) + "\n", encoding="utf-8")
        return Case(f"alias bomb ({levels} levels) in {RUNNERS}", RUNNERS, ("validate", "check", "recipe-lint"))
    recipes = sorted((repo / "benchmarks/multi_node/srt-slurm-recipes").rglob("*.yaml"))
    recipe = rng.choice(recipes)
    rel = recipe.relative_to(repo).as_posix()
    recipe.write_text(recipe.read_text(encoding="utf-8") + "\n" + "\n".join(bomb) + "\n", encoding="utf-8")
    return Case(f"alias bomb ({levels} levels) in {rel}", rel, (), runs=("validate", "check", "matrix", "recipe-lint"))


def encoding(repo: Path, rng: random.Random) -> Case:
    """A byte-order mark, CRLF line ends, a NUL byte, UTF-16 or an invalid UTF-8 byte in a governed file."""
    rel = rng.choice([*MASTERS, RUNNERS, CHANGELOG])
    data = (repo / rel).read_bytes()
    kind = rng.choice(["bom", "crlf", "nul", "utf16", "latin1"])
    needs = CHANGELOG_NEEDS if rel == CHANGELOG else (MASTER_NEEDS if rel in MASTERS else ("validate", "check"))
    if kind == "bom":
        data, needs = b"\xef\xbb\xbf" + data, ()
    elif kind == "crlf":
        data = data.replace(b"\n", b"\r\n")
        needs = ("changelog-lint", "check") if rel == CHANGELOG else ()
    elif kind == "nul":
        at = data.index(b"\n", rng.randrange(len(data) // 2)) + 1
        data = data[:at] + b"\x00" + data[at:]
    elif kind == "utf16":
        data = data.decode("utf-8").encode("utf-16")
    else:
        at = data.index(b": ", rng.randrange(len(data) // 2)) + 2
        data = data[:at] + b"\xe9t\xe9" + data[at:]
    (repo / rel).write_bytes(data)
    if rel == CHANGELOG:
        needs = tuple(n for n in needs if n != "claims")  # no entry appended: claims has nothing to read
    return Case(f"{kind} in {rel}", rel, needs)


def huge_scalar(repo: Path, rng: random.Random) -> Case:
    """A multi-megabyte value in a master config: past limits.max-file-bytes it is one finding, below it
    still a bounded run."""
    rel, lines, start, key = _pick_config(repo, rng)
    size = rng.choice([2 << 20, 9 << 20])
    lines[start + 1: start + 1] = [f"  description: \"{'x' * size}\""]
    _write(repo, rel, lines)
    return Case(f"{size >> 20} MiB scalar in {rel}", rel, MASTER_NEEDS, key=key)


def deleted_or_linked(repo: Path, rng: random.Random) -> Case:
    """A governed file or a recipe deleted, or replaced by a symbolic link to a file outside the repository."""
    rel = rng.choice([*MASTERS, RUNNERS, CHANGELOG, "recipe"])
    key = ""
    if rel == "recipe":
        _, lines, start, key = _pick_config(repo, rng)
        scripts = sorted((repo / "benchmarks/single_node").rglob("*.sh"))
        rel = rng.choice(scripts).relative_to(repo).as_posix()
    target = repo / rel
    link = rng.random() < 0.6
    target.unlink()
    if link:
        outside = repo.parent / "outside" / Path(rel).name
        outside.parent.mkdir(exist_ok=True)
        outside.write_text(f"# {SECRET}\n{SECRET}: [{SECRET}]\nexport {SECRET.replace('-', '_')}=1\n", encoding="utf-8")
        target.symlink_to(outside)
    if rel in MASTERS:
        # A deleted master file leaves the others (`configs/*-master.yaml` matches what exists); a link out of
        # the repository is a file that cannot be read.
        needs: tuple[str, ...] = MASTER_NEEDS if link else ()
    elif rel == RUNNERS:
        needs = ("validate", "check", "recipe-lint")
    elif rel == CHANGELOG:
        needs = ("check", "changelog-lint")
    else:
        needs = ()
    return Case(f"{rel} {'linked outside' if link else 'deleted'}", rel, needs, key=key)


PATHOLOGICAL = (
    "while true; do :; done",
    "f() { f; }; f",
    "g() { g \"$@\" \"$@\"; }; g x",
    "for ((i = 0; ; i++)); do X=$((X + i)); done",
    "cat <<EOF\n{heredoc}\nEOF",
    "eval \"$(echo touch {marker})\"",
    "touch {marker}",
    "X=$(touch {marker}; echo 1)",
    "bash -c 'touch {marker}'",
    "python3 -c 'open(\"{marker}\", \"w\")'",
    "echo x > {marker}",
    "source /dev/stdin <<< 'touch {marker}'",
    "until false; do sleep 1; done",
    "A=x; for i in $(seq 1 25); do A=$A$A; done",
    "while read -r line; do echo \"$line\"; done < /dev/zero",
)


def pathological_recipe(repo: Path, rng: random.Random) -> Case:
    """A recipe a job runs that loops forever, recurses without end, holds a huge heredoc, or would create a
    file (the evaluator runs nothing, so no file may appear)."""
    from_config = repo / rng.choice(MASTERS)
    text = from_config.read_text(encoding="utf-8")
    prefixes = sorted(set(re.findall(r"^  model-prefix: (\S+)", text, re.M)))
    scripts = sorted(p for p in (repo / "benchmarks/single_node").rglob("*.sh")
                     if any(p.name.startswith(f"{prefix}_") for prefix in prefixes))
    script = rng.choice(scripts)
    marker = repo.parent / "executed-marker"
    body = rng.choice(PATHOLOGICAL).replace("{marker}", str(marker)).replace("{heredoc}", "y" * rng.choice([1000, 3 << 20]))
    lines = script.read_text(encoding="utf-8").split("\n")
    at = rng.randrange(1, len(lines))
    lines.insert(at, body)
    script.write_text("\n".join(lines), encoding="utf-8")
    rel = script.relative_to(repo).as_posix()
    prefix = script.name.split("_")[0]
    keys = [k for k in re.findall(r"^([A-Za-z0-9][^\s:#]*):[ \t]*$", text, re.M) if k.startswith(f"{prefix}-")]
    return Case(f"`{body[:40]}` at {rel}:{at + 1}", "", (), runs=("recipe-show", "recipe-lint", "check"),
                key=rng.choice(keys) if keys else "*", marker=marker)


def changelog_append(repo: Path, rng: random.Random) -> Case:
    """An appended entry that is not valid YAML, not a list item, of the wrong shape, or a rewritten entry."""
    path = repo / CHANGELOG
    text = path.read_text(encoding="utf-8")
    kind = rng.choice(["invalid", "mapping", "shape", "rewrite", "delete", "reorder"])
    key = "dsr1-fp4-mi355x-sglang"
    if kind == "invalid":
        text += f'\n- config-keys: [{key}]\n  description: ["a: b\n  pr-link: x\n'
    elif kind == "mapping":
        text += f"\nconfig-keys: [{key}]\n"
    elif kind == "shape":
        text += f"\n- config-keys: {rng.choice(['7', '[]', '{a: 1}', '!!set {a}'])}\n  description: [x]\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/XXX\n"
    else:
        lines = text.split("\n")
        items = [i for i, line in enumerate(lines) if line.startswith("- config-keys:")]
        at = rng.choice(items[:-1])
        if kind == "rewrite":
            lines[at + 1: at + 1] = ["  description: [rewritten]"] if rng.random() < 0.5 else []
            lines[at] = lines[at] + " # edited" if lines[at + 1].startswith("  description: [rewritten]") is False else lines[at]
        elif kind == "delete":
            nxt = next(i for i in items if i > at)
            del lines[at:nxt]
        else:
            nxt = next(i for i in items if i > at)
            block = lines[at:nxt]
            del lines[at:nxt]
            lines.extend(["", *block])
        text = "\n".join(lines)
    path.write_text(text, encoding="utf-8")
    needs = CHANGELOG_NEEDS if kind in ("invalid", "mapping", "shape") else ("check", "changelog-lint")
    if kind == "mapping":
        needs = ("validate", "check", "changelog-lint")
    return Case(f"changelog {kind}", CHANGELOG, needs, runs=("validate", "check", "claims", "changelog-lint", "changelog-new"),
                key=key)


def git_state(repo: Path, rng: random.Random) -> Case:
    """A shallow clone, a detached HEAD, or a branch with no history in common with `base`."""
    kind = rng.choice(["shallow", "detached", "unrelated", "no-base"])
    clone = repo.parent / f"clone-{kind}"
    shutil.rmtree(clone, ignore_errors=True)
    if kind == "shallow":
        (repo / "README.md").write_text("x\n", encoding="utf-8")
        git(repo, "commit", "-q", "-am", "second")
        git(repo.parent, "clone", "-q", "--depth", "1", f"file://{repo}", str(clone))
        git(repo, "reset", "-q", "--hard", "base")
    else:
        git(repo.parent, "clone", "-q", "--shared", str(repo), str(clone))
        git(clone, "tag", "base", "origin/main" if kind != "no-base" else "HEAD", "-f")
        if kind == "detached":
            git(clone, "checkout", "-q", "--detach", "HEAD")
        elif kind == "unrelated":
            git(clone, "checkout", "-q", "--orphan", "other")
            git(clone, "commit", "-q", "-m", "unrelated")
            git(clone, "tag", "-f", "base", "main")
        else:
            git(clone, "tag", "-d", "base")
    needs = ("check", "claims", "changelog-lint") if kind in ("shallow", "no-base") else ()
    return Case(f"git: {kind}", "base" if needs else "", needs, repo=clone,
                runs=("validate", "check", "claims", "changelog-lint", "matrix", "dispatch-parse"))


COMMENTS = ("/run-benchmark", "/run-benchmark conc=x", "/run-benchmark tp=-1 ep=99999999999999999999",
            "/run-benchmark $(touch {marker})", "/run-benchmark `touch {marker}`", "/run-benchmark ; rm -rf /",
            "/run-benchmark sha=" + "g" * 40, "/run-benchmark \u2028x", "/run-benchmark " + "*" * 5000,
            "/run-benchmark scenario=../../etc", "/run-benchmark [", "/run-benchmark changelog",
            "/run-benchmark help", "/RUN-BENCHMARK dsr1*")


def dispatch_comment(repo: Path, rng: random.Random) -> Case:
    """A hostile or malformed `/run-benchmark` comment."""
    marker = repo.parent / "executed-marker"
    comment = rng.choice(COMMENTS).replace("{marker}", str(marker))
    return Case(f"comment {comment[:40]!r}", "", (), runs=("dispatch-parse",), comment=comment, marker=marker)


MUTATIONS: dict[str, Mutation] = {
    "syntax-error": syntax_error,
    "wrong-type": wrong_type,
    "alias-bomb": alias_bomb,
    "encoding": encoding,
    "huge-scalar": huge_scalar,
    "deleted-or-linked": deleted_or_linked,
    "pathological-recipe": pathological_recipe,
    "changelog": changelog_append,
    "git-state": git_state,
    "dispatch-comment": dispatch_comment,
}


def _selection(repo: Path, key: str, known: dict[str, dict[str, object]]) -> str:
    """The selection a dispatch of ``key`` authorises at ``base``, pinned to HEAD (the mutated commit)."""
    if key not in known:
        result = run(repo, ["dispatch", "parse", f"/run-benchmark {key}", "--rev", "base"], "dispatch-parse")
        known[key] = json.loads(result.out).get("selection", {}) if result.code == 0 else {}
    return json.dumps({**known[key], "sha": git(repo, "rev-parse", "HEAD").strip()})


@dataclass
class Report:
    cases: int = 0
    runs: int = 0
    broken: list[Broken] = field(default_factory=list)
    slowest: list[tuple[float, str, str]] = field(default_factory=list)
    peak_mib: float = 0.0


def fuzz(repo: Path, seed: int, cases: int, *, commands_per_case: int | None = None,
         kinds: tuple[str, ...] = tuple(MUTATIONS), log: Callable[[str], None] | None = None) -> Report:
    """``cases`` mutations drawn by ``seed`` (each kind in turn), each run by its commands (at most
    ``commands_per_case`` of them, needed ones first); the tree is reset after each case."""
    rng = random.Random(seed)
    report = Report()
    selections: dict[str, dict[str, object]] = {}
    for index in range(cases):
        kind = kinds[index % len(kinds)]
        reset(repo)
        case = MUTATIONS[kind](repo, rng)
        target = case.repo or repo
        commands = [c for c in case.runs if c in case.needs] + [c for c in case.runs if c not in case.needs]
        if commands_per_case is not None:
            needed = [c for c in commands if c in case.needs]
            others = [c for c in commands if c not in case.needs]
            rng.shuffle(needed)
            rng.shuffle(others)
            commands = (needed + others)[:commands_per_case]
        if case.repo is None and {"dispatch-parse", "sweep-plan"} & set(commands):
            # Committed: these read a revision, not the work tree.
            git(repo, "add", "-A")
            git(repo, "commit", "-q", "--allow-empty", "-m", case.name[:60])
            if "sweep-plan" in commands:
                case.selection = _selection(repo, case.key or "*", selections)
        report.cases += 1
        for command in commands:
            result = run(target, argv_of(command, case), command)
            report.runs += 1
            report.peak_mib = max(report.peak_mib, result.peak_mib)
            report.slowest.append((result.cpu, command, case.name))
            broken = broken_promises(case, result)
            report.broken.extend(broken)
            if log is not None:
                log(f"{kind:20} {command:15} exit {result.code} {result.cpu:5.2f} s {result.peak_mib:5.0f} MiB  "
                    f"{case.name[:60]}" + "".join(f"\n    BROKEN {b.promise}: {b.detail}" for b in broken))
            if case.marker is not None and case.marker.exists():
                case.marker.unlink()
    reset(repo)
    report.slowest = sorted(report.slowest, reverse=True)[:5]
    return report
