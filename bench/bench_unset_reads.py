"""Real bash against the default-keeping reduction (ci_tools/changelog/unset_reads.py), on every real edit of a
shell function.

For every first-parent commit of a clone of SemiAnalysisAI/InferenceX that changes a shell file (and, with
``--prs``, every pull request's head against its merge base with ``--main``), each function whose definition
changed is read at both revisions with the variables it reads that the file never names otherwise taken as
unset (:func:`ci_tools.changelog.unset_reads.unset_names`, the file itself being the code: coverage asks more,
the recipe's whole closure and each job's environment).  Where the two definitions reduce alike (judged to run
the same), real bash runs each: the definition, then a call, with every command outside bash recorded instead
of run (``command_not_found_handle`` on an empty ``PATH``; ``kill``, ``exec``, ``trap``, ``sleep``, ``wait``,
``cd``, ``source`` recorded too), the unset variables unset and every other variable the definitions read
unset, ``1``, ``0`` or ``dynamo-trt`` (four samples).  What it prints (the commands, the status, every
variable afterwards) must be the same for both revisions in every sample.  Printed: the edits read, those
judged the same, those bash ran alike in every sample, and each one it did not (a fault of the reduction),
with its commit, file and function; and how many judged the same bash also tells apart once the unset
variables are set (the edit is no trivial one).

Run: .venv/bin/python bench/bench_unset_reads.py --ix CLONE [--since DATE] [--prs --main REV] [--show N]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import ROOT, git, require  # noqa: E402

sys.path.insert(0, str(ROOT))
from ci_tools.changelog.shell_diff import normalized, read_side  # noqa: E402
from ci_tools.changelog.unset_reads import read_names, same_when_unset, unset_names  # noqa: E402

# Commands that would act outside the run (or wait on it), recorded instead; every other program is not found.
_RECORDED = ("kill", "exec", "trap", "sleep", "wait", "cd", "source", ".", "ulimit", "disown", "read")
_STANDINS = "\n".join(
    ["command_not_found_handle() { printf 'CMD'; printf ' %q' \"$@\"; printf '\\n'; return 0; }"]
    + [f"{name}() {{ printf 'CMD {name}'; printf ' %q' \"$@\"; printf '\\n'; return 0; }}"
       for name in _RECORDED if name != "."]) + "\n"
_SAMPLES: tuple[str | None, ...] = (None, "1", "0", "dynamo-trt")
# Variables bash sets itself, whose values differ from run to run.
_OWN = ("BASH", "RANDOM", "SRANDOM", "SECONDS", "EPOCH", "LINENO", "PPID", "_", "PIPESTATUS", "FUNCNAME", "COLUMNS",
        "LINES", "SHLVL", "PWD", "OLDPWD", "HISTCMD", "UID", "EUID", "GROUPS", "HOSTNAME", "HOSTTYPE", "MACHTYPE",
        "OSTYPE", "BASHOPTS", "SHELLOPTS", "IFS", "PS4", "DIRSTACK", "COMP_WORDBREAKS", "OPTIND", "OPTERR", "PATH")


_BASH_OWN = re.compile(r"declare -[-a-zA-Z]+ (" + "|".join(_OWN) + r"|BASH_[A-Z_]*)(=|$)")
_LINE = re.compile(r"line \d+:")


@dataclass(frozen=True)
class Edit:
    """One changed function: where (a commit or pull request, the file) and its two definitions' text."""

    where: str
    path: str
    name: str
    base: str
    head: str


def edits_between(where: str, ix: Path, base: str, head: str) -> list[Edit]:
    """Every function of a shell file changed between two revisions whose definition is on both sides."""
    changed = git(ix, "diff", "--name-only", base, head, "--", "*.sh").split()
    found: list[Edit] = []
    for path in changed:
        before, after = _show(ix, base, path), _show(ix, head, path)
        if before is None or after is None:
            continue
        b, h = read_side(path, before), read_side(path, after)
        for name in sorted(b.functions.keys() & h.functions.keys()):
            if normalized(b.functions[name]) != normalized(h.functions[name]):
                found.append(Edit(where, path, name, b.functions[name].text, h.functions[name].text))
    return found


def _show(ix: Path, rev: str, path: str) -> bytes | None:
    run = subprocess.run(["git", "-C", str(ix), "show", f"{rev}:{path}"], capture_output=True, check=False)
    return run.stdout if run.returncode == 0 else None


def judged_same(edit: Edit) -> frozenset[str] | None:
    """The unset variables under which the two definitions reduce alike; None when they do not."""
    base, head = read_side(edit.path, edit.base.encode()).functions, read_side(edit.path, edit.head.encode()).functions
    if edit.name not in base or edit.name not in head:
        return None
    pair = base[edit.name], head[edit.name]
    unset = unset_names(pair, [(edit.path, edit.base.encode()), (edit.path, edit.head.encode())], [])
    return unset if same_when_unset(*pair, unset) else None


def bash_prints(bash: str, definition: str, name: str, unset: frozenset[str], others: dict[str, str | None],
                sandbox: Path) -> str:
    """What bash prints running ``definition`` then ``name`` with ``unset`` unset and ``others`` as given."""
    lines = [_STANDINS, definition, "unset " + " ".join(sorted(unset)) if unset else ""]
    lines += [f"unset {k}" if v is None else f"{k}={v}" for k, v in sorted(others.items())]
    lines += [f"{name} a1 a2", 'echo "status=$?"', "declare -p"]
    env = {"PATH": str(sandbox / "nothing"), "HOME": str(sandbox), "LANG": "C"}
    try:
        run = subprocess.run([bash, "--norc", "--noprofile", "-c", "\n".join(lines)], capture_output=True, text=True,
                             cwd=sandbox, env=env, timeout=10, check=False)
    except subprocess.TimeoutExpired:
        return "<timed out>"
    printed = [line for line in run.stdout.splitlines() if not _BASH_OWN.match(line)]
    # An error message says at which line of the script: the two definitions' lengths differ.
    return "\n".join(printed) + _LINE.sub("line N:", run.stderr.replace(str(sandbox), "SANDBOX"))


def compare(edit: Edit, unset: frozenset[str], bash: str, sandbox: Path) -> tuple[bool, bool]:
    """(bash prints the same for both definitions in every sample, it prints something else once ``unset`` is set)."""
    base, head = read_side(edit.path, edit.base.encode()).functions, read_side(edit.path, edit.head.encode()).functions
    others = (read_names(base[edit.name]) | read_names(head[edit.name])) - unset
    alike = all(bash_prints(bash, edit.base, edit.name, unset, dict.fromkeys(others, value), sandbox)
                == bash_prints(bash, edit.head, edit.name, unset, dict.fromkeys(others, value), sandbox)
                for value in _SAMPLES)
    apart = any(bash_prints(bash, edit.base, edit.name, frozenset(), {**dict.fromkeys(others, "1"),
                                                                      **dict.fromkeys(unset, value)}, sandbox)
                != bash_prints(bash, edit.head, edit.name, frozenset(), {**dict.fromkeys(others, "1"),
                                                                         **dict.fromkeys(unset, value)}, sandbox)
                for value in ("0", "1", "true", "false", "x"))
    return alike, apart


def collect(ix: Path, since: str, prs: bool, main_rev: str) -> list[Edit]:
    edits: list[Edit] = []
    commits = git(ix, "log", "--first-parent", "--format=%H", *(["--since", since] if since else []), main_rev,
                  "--", "*.sh").split()
    for commit in commits:
        parents = git(ix, "rev-list", "--parents", "-n", "1", commit).split()[1:]
        if parents:
            edits += edits_between(commit[:12], ix, parents[0], commit)
    if prs:
        refs = git(ix, "for-each-ref", "--format=%(refname)", "refs/pull").split()
        for ref in sorted((r for r in refs if r.endswith("/head")), key=lambda r: int(r.split("/")[2])):
            base = subprocess.run(["git", "-C", str(ix), "merge-base", ref, main_rev], capture_output=True,
                                  text=True, check=False).stdout.strip()
            if base:
                edits += edits_between(f"#{ref.split('/')[2]}", ix, base, ref)
    return edits


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--ix", type=Path, required=True, help="a clone of SemiAnalysisAI/InferenceX")
    parser.add_argument("--since", default="", help="first-parent commits since this date (default: all)")
    parser.add_argument("--main", default="HEAD", help="the default branch's revision (default: HEAD of the clone)")
    parser.add_argument("--prs", action="store_true", help="also every refs/pull/N/head against its merge base")
    parser.add_argument("--show", type=int, default=20, help="print at most this many of the edits judged the same")
    args = parser.parse_args(argv)
    require(args.ix)
    bash = shutil.which("bash")
    if bash is None:
        raise SystemExit("bash is the oracle and is not on PATH")
    edits = collect(args.ix, args.since, args.prs, git(args.ix, "rev-parse", args.main))
    distinct = {(e.base, e.head, e.name): e for e in edits}
    same: list[tuple[Edit, frozenset[str]]] = []
    for edit in distinct.values():
        unset = judged_same(edit)
        if unset is not None:
            same.append((edit, unset))
    faults: list[Edit] = []
    apart = 0
    with tempfile.TemporaryDirectory(prefix="ci-tools-unset-") as tmp:
        for edit, unset in same:
            alike, differ = compare(edit, unset, bash, Path(tmp))
            apart += differ
            if not alike:
                faults.append(edit)
    print(f"function edits read: {len(edits)} ({len(distinct)} distinct pairs of definitions)")
    print(f"judged to run the same with the variables the file never names otherwise unset: {len(same)}")
    print(f"bash prints the same for both in every sample: {len(same) - len(faults)} of {len(same)}; "
          f"told apart by bash once the unset variables are set: {apart}")
    for edit, unset in same[:args.show]:
        print(f"  {edit.where} {edit.path} {edit.name} (unset: {', '.join(sorted(unset)[:6])}"
              f"{', ...' if len(unset) > 6 else ''})")
    print(f"faults (bash prints otherwise): {len(faults)}")
    for edit in faults:
        print(f"  {edit.where} {edit.path} {edit.name}")
    return 1 if faults else 0


if __name__ == "__main__":
    raise SystemExit(main())
