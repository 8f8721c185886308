"""The long run of the seeded fuzzer (tests/fuzzing.py): many cases on the whole real tree, every command.

Each case mutates the real InferenceX tree at 843c6254f (syntax errors, wrong
types, alias bombs, encodings, huge scalars, deleted files and links out of the
repository, pathological recipes, changelog rewrites, odd git states, hostile
comments) and runs every command that reads what it changed, each as its own
process under CPU and address-space limits.  Printed: cases and runs, every
broken promise (none expected), the slowest runs and the peak memory.  CI runs
one case of each kind on a cut tree (tests/test_fuzz.py).

Run: ``.venv/bin/python bench/bench_fuzz.py [--seed N] [--cases N] [--keep-configs N]``
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from fuzzing import MUTATIONS, fuzz, make_tree  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cases", type=int, default=4 * len(MUTATIONS))
    parser.add_argument("--keep-configs", type=int, default=None,
                        help="cut each master file to its first N configs (default: the whole tree)")
    parser.add_argument("--quiet", action="store_true", help="print only the summary and what broke")
    args = parser.parse_args()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ci-tools-fuzz-") as tmp:
        repo = make_tree(Path(tmp) / "ix", args.keep_configs)

        def log(line: str) -> None:
            if not args.quiet or "BROKEN" in line:
                print(line, flush=True)

        report = fuzz(repo, args.seed, args.cases, log=log)
    print(f"seed {args.seed}: {report.cases} cases, {report.runs} runs, {len(report.broken)} broken promise(s), "
          f"peak {report.peak_mib:.0f} MiB, {time.monotonic() - started:.0f} s")
    for cpu, command, case in report.slowest:
        print(f"  slowest: {cpu:6.2f} s CPU  {command:15} {case[:70]}")
    for broken in report.broken:
        print(f"  BROKEN {broken.case} / {broken.command}: {broken.promise}: {broken.detail}")
    return 1 if report.broken else 0


if __name__ == "__main__":
    sys.exit(main())
