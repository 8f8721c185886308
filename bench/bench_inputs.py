"""``validate`` and ``matrix`` beside an earlier ci-tools: the cost of holding every input to its schema.

``matrix`` now checks each master config against its schema before building a job
from it (jsonschema-rs: the import of its extension and ~0.5 ms for 208 configs),
and ``validate`` checks them with jsonschema-rs instead of the generated Python
the schemas were once translated into.  Both are run round-robin with ci-tools
at ``--baseline-rev`` (default: where this branch left ``main``) on the real
InferenceX tree.

Run: ``.venv/bin/python bench/bench_inputs.py [--runs N] [--baseline-rev REV]``
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import FULL_CORPUS, Table, bench_arguments, ci_tools_at, load_average, measure_each, merge_base_with_main  # noqa: E402


def main() -> int:
    parser = bench_arguments(__doc__, runs=21, ci_tools=True, baseline_rev="")
    args = parser.parse_args()
    rev = args.baseline_rev or merge_base_with_main()
    table = Table()
    print(f"{load_average()}; {args.runs} runs each, round-robin")
    table.print_header()
    with tempfile.TemporaryDirectory(prefix="bench-inputs-") as tmp:
        baseline = ci_tools_at(rev, Path(tmp) / "baseline")
        for command in (["validate"], ["matrix"]):
            argv = [*command, "--repo", str(FULL_CORPUS)]
            new, old = measure_each([[args.ci_tools, *argv], [*baseline.command, *argv]], args.runs)
            table.print_row(f"{command[0]}: ci-tools", new, old)
            table.print_row(f"{command[0]}: ci-tools@{rev[:12]}", old)
    return 0


if __name__ == "__main__":
    sys.exit(main())
