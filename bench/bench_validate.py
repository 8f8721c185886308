"""Benchmark of ``ci-tools validate``: whole process, median wall time, CPU time and peak RSS.

Measured on the real InferenceX tree at 843c6254f (tests/data/
inferencex-843c625: 376 KB of master configs, runners.yaml, a 396 KB
changelog of 772 entries, every recipe and launcher), side by side in the same
run with:

- ``inferencex``: InferenceX's own validator (utils/matrix_logic/validation.py,
  pydantic) over the same files, the way its CI runs it: ``load_config_files``
  on both master files, ``load_runner_file``, and every changelog entry through
  its ``ChangelogEntry`` model (needs the ``bench`` extra: ``pip install -e
  '.[bench]'``; skipped with a note when pydantic is missing);
- ``ci-tools@REV``: ci-tools as it was at ``--baseline-rev`` (a git worktree of
  this repository, same interpreter), the previous implementation;
- ``csafeloader``: a Python process that only loads the same four YAML files
  with PyYAML's libyaml ``CSafeLoader`` (no positions, no rule), the floor of
  any validator that reads them with PyYAML.

Also measured: ``10x``, a copy of the tree whose master configs and changelog
are ten times as long (keys renamed per copy), for how the cost grows.

Each command is a fresh process, several runs after a warm-up; wall time
includes waiting for a core on a busy machine, CPU time (user + system) does
not.

With ``--large``: the real tree with copies of its changelog's history
appended until it is 50 MB, validated with the default limits (the file is
measured, not read: one `file-too-large` finding) and with
``limits.max-file-bytes`` raised to 1 GiB, beside CSafeLoader on the same files.

Run: ``.venv/bin/python bench/bench_validate.py [--runs N] [--large | --only-large] [--baseline-rev REV | --no-baseline]``
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import Table, bench_arguments, ci_tools_at, load_average, measure, require, tool_env  # noqa: E402
from benchlib import FULL_CORPUS as TREE  # noqa: E402

MASTERS = ("configs/amd-master.yaml", "configs/nvidia-master.yaml")
FILES = (*MASTERS, "configs/runners.yaml", "perf-changelog.yaml")
TOP_KEY = re.compile(r"^([A-Za-z0-9][^\s:#]*):[ \t]*$", re.M)
TARGET = 0.25  # seconds of wall time for validate on the real tree, on a quiet machine
# The revision before validate's YAML reading, row expansion and start-up imports were made cheaper.
BASELINE_REV = "c891bff"

CSAFELOADER = """
import sys, yaml
for path in sys.argv[1:]:
    with open(path, 'rb') as f:
        yaml.load(f.read().decode('utf-8'), Loader=yaml.CSafeLoader)
"""

# InferenceX's validator, as its CI calls it (utils/ on sys.path, like its workflows).
INFERENCEX = """
import sys, yaml
root = sys.argv[1]
sys.path.insert(0, root + '/utils')
from matrix_logic.validation import ChangelogEntry, load_config_files, load_runner_file
load_config_files([root + '/configs/amd-master.yaml', root + '/configs/nvidia-master.yaml'])
load_runner_file(root + '/configs/runners.yaml')
with open(root + '/perf-changelog.yaml') as f:
    for entry in yaml.safe_load(f):
        ChangelogEntry.model_validate(entry)
"""


def grow(dest: Path, copies: int) -> Path:
    """A copy of the tree's governed files, master configs and changelog ``copies`` times as long."""
    for rel in FILES:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        text = (TREE / rel).read_text(encoding="utf-8")
        if rel in MASTERS:
            text = "\n".join([text] + [TOP_KEY.sub(lambda m, i=i: f"{m.group(1)}-copy{i}:", text) for i in range(1, copies)])
        elif rel == "perf-changelog.yaml":
            text = "\n".join([text] * copies)
        (dest / rel).write_text(text, encoding="utf-8")
    shutil.copytree(TREE / "benchmarks", dest / "benchmarks")
    shutil.copytree(TREE / "runners", dest / "runners")
    return dest


def has_pydantic() -> bool:
    return subprocess.run([sys.executable, "-c", "import pydantic"], capture_output=True).returncode == 0


def build_large(dest: Path, size: int) -> Path:
    """The full real tree with its changelog grown past ``size`` bytes by copies of its history."""
    shutil.copytree(TREE, dest, ignore=shutil.ignore_patterns("expected"))
    for path in [dest, *dest.rglob("*")]:
        path.chmod(path.stat().st_mode | 0o200)
    history = (dest / "perf-changelog.yaml").read_bytes()
    body = history[history.index(b"\n- config-keys:") + 1:]
    grown = bytearray(history)
    while len(grown) < size:
        grown += b"\n" + body
    (dest / "perf-changelog.yaml").write_bytes(bytes(grown))
    return dest


def large(tool: str, runs: int, tmp: Path) -> None:
    """The real tree with a 50 MB changelog: default limits (measured, not read), a raised limit, CSafeLoader."""
    repo = build_large(tmp / "large", 50 * 1000 * 1000)
    report = tmp / "large-report.json"
    size = (repo / "perf-changelog.yaml").stat().st_size
    files = [str(repo / f) for f in FILES]
    env = tool_env(tmp / "pycache")
    validate = [tool, "validate", "--repo", str(repo), "--format", "json", "--output", str(report)]
    print(f"\nthe real tree with a {size / 1e6:.1f} MB changelog ({runs} run(s) each, the raised limit 1 run)")
    base = measure([sys.executable, "-c", CSAFELOADER, *files], 1, env=env, warmup=False)
    default = measure(validate, runs, env=env)
    (repo / ".ci-tools.yaml").write_text("limits:\n  max-file-bytes: 1073741824\n", encoding="utf-8")
    raised = measure(validate, 1, env=env, warmup=False)
    table = Table(label_width=36)
    table.print_header()
    table.print_row("validate, default limits (8 MiB)", default, base)
    table.print_row("validate, limit raised to 1 GiB", raised, base)
    table.print_row("baseline: CSafeLoader, same files", base)


def main() -> int:
    parser = bench_arguments(__doc__, runs=9, ci_tools=True, baseline_rev=BASELINE_REV)
    parser.add_argument("--large", action="store_true", help="Also validate the real tree with a 50 MB changelog.")
    parser.add_argument("--only-large", action="store_true", help="Only the 50 MB case of --large.")
    args = parser.parse_args()
    require(TREE)
    print(f"ci-tools: {args.ci_tools}; {load_average()}; {args.runs} runs each")
    if args.only_large:
        with tempfile.TemporaryDirectory() as tmp:
            large(args.ci_tools, args.runs, Path(tmp))
        return 0
    table = Table(label_width=36)
    table.print_header()
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        env = tool_env(Path(tmp) / "pycache")
        baseline = None if args.no_baseline else ci_tools_at(args.baseline_rev, Path(tmp) / "baseline")
        trees = {"real tree": TREE, "10x": grow(Path(tmp) / "ten", 10)}
        for name, tree in trees.items():
            validate = ["validate", "--repo", str(tree), "--format", "json", "--output", str(report)]
            commands = {"ci-tools": [args.ci_tools, *validate]}
            if baseline is not None:
                commands[f"ci-tools@{args.baseline_rev}"] = [*baseline.command, *validate]
            commands["csafeloader"] = [sys.executable, "-c", CSAFELOADER, *(str(tree / f) for f in FILES)]
            if name == "real tree":
                if has_pydantic():
                    commands["inferencex"] = [sys.executable, "-c", INFERENCEX, str(tree)]
                else:
                    print("(inferencex: pydantic is not installed; pip install -e '.[bench]')")
            measured = {label: measure(argv, args.runs, env=env) for label, argv in commands.items()}
            # The ratio: ci-tools beside its previous revision (the other rows are floors and references).
            previous = measured.get(f"ci-tools@{args.baseline_rev}")
            for label, got in measured.items():
                table.print_row(f"{name}: {label}", got, previous if label == "ci-tools" else None)
        if args.large:
            large(args.ci_tools, args.runs, Path(tmp))
    print(f"\ntarget: validate on the real tree <= {TARGET:.2f} s wall on a quiet machine")
    return 0


if __name__ == "__main__":
    sys.exit(main())
