"""Generated paraphrases of true and false claims about every setting of the real tree.

For every setting the real InferenceX tree's recipes pass (server flags, keys
of JSON/YAML flag values, exported environment variables, flags without a
value; per multinode role), as the evaluator sees them, and the image every
config runs (its master config's ``image:``, one per image), ``tests/paraphrase``
edits its value in a copy of the tree and writes changelog entries stating it
in the forms of ``tests/data/claims_paraphrase/forms.yaml``, each as a truth
(the new value) and a lie (another value), then runs the claims checker on
them.  Reported: lies caught (a finding names the setting), misread (a finding
names another setting), missed with a trace (``claim-unverified``), missed
silently; truths flagged.  Per form, recipe family, spelling of the setting,
spelling of the value; the held-out part (one setting name in five, and the
forms marked ``held-out``) apart from the part tuned on.

Targets: lies caught >= 98 %, truths flagged <= 1 %, missed silently 0.

Run: .venv/bin/python bench/bench_claims_paraphrase.py [--limit N] [--only TEXT] [--list] [--json FILE] [--write-sample FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import FULL_CORPUS, ROOT, load_average  # noqa: E402

sys.path.insert(0, str(ROOT / "tests"))
from paraphrase.drive import discover_tree, load_tree, run_all  # noqa: E402
from paraphrase.run import Outcome, tallies  # noqa: E402

TARGETS = "targets: lies caught >= 98 %, truths flagged <= 1 %, missed silently 0"


def _print_tallies(title: str, outcomes: list[Outcome], keys: tuple[str, ...]) -> None:
    print(f"\n== {title}")
    for key in keys:
        for name, tally in tallies(outcomes, key).items():
            print(f"  {key:8} {name[:34]:34} {tally.line()}")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tree", type=Path, default=FULL_CORPUS, help="the InferenceX tree (default: the committed one)")
    parser.add_argument("--limit", type=int, help="only the first N settings (in name order)")
    parser.add_argument("--only", action="append", metavar="TEXT",
                        help="only the settings whose kind, name or family contains TEXT (repeatable; any of them)")
    parser.add_argument("--list", action="store_true", help="list the lies missed and truths flagged (tuned part only)")
    parser.add_argument("--held-out-list", action="store_true", help="list the misses of the held-out part too")
    parser.add_argument("--json", type=Path, help="write every outcome here")
    parser.add_argument("--write-sample", type=Path, help="write the planned settings (for the test's fixed sample)")
    args = parser.parse_args()
    print(load_average())
    start = time.perf_counter()
    tree = load_tree(args.tree)
    discovery = discover_tree(tree)
    found = time.perf_counter() - start
    print(f"settings: {len(discovery.candidates)} (kind, name, family) in {found:.1f} s; values no sentence can "
          f"state: {dict(sorted(discovery.skipped.items()))}")
    if args.only:
        discovery.candidates = {group: options for group, options in discovery.candidates.items()
                                if any(text in " ".join(group) for text in args.only)}
    run = run_all(tree, discovery, limit=args.limit)
    print(f"planned {len(run.planned)} settings, {len(run.unplanned)} not stateable, {len(run.outcomes)} sentences "
          f"checked in {run.seconds:.1f} s")
    for group, why in sorted(run.unplanned.items()):
        print(f"  not planned: {group}: {why[:160]}")
    tuned = [o for o in run.outcomes if not o.sentence.held_out]
    held = [o for o in run.outcomes if o.sentence.held_out]
    _print_tallies("tuned part", tuned, ("all", "family", "kind", "form", "subject", "value"))
    _print_tallies("held-out part (not tuned on)", held, ("all", "family", "form"))
    _print_tallies("all", run.outcomes, ("all",))
    print(TARGETS)
    if args.list or args.held_out_list:
        shown = run.outcomes if args.held_out_list else tuned
        for o in shown:
            if o.verdict in ("caught", "clean", "trace" if o.sentence.truth else "-"):
                continue
            s = o.sentence
            print(f"\n[{o.verdict}] {s.form.id} {s.setting.family} {s.setting.kind} {s.setting.name} "
                  f"({s.setting.config_key}{' role ' + s.setting.role if s.setting.role else ''}): "
                  f"{'truth' if s.truth else 'lie'} {s.text!r}")
            for line in o.said:
                print(f"    {line[:300]}")
    if args.json:
        args.json.write_text(json.dumps([{
            "form": o.sentence.form.id, "truth": o.sentence.truth, "text": o.sentence.text, "verdict": o.verdict,
            "held_out": o.sentence.held_out, "family": o.sentence.setting.family, "setting": o.sentence.setting.key,
            "config": o.sentence.setting.config_key, "said": list(o.said)} for o in run.outcomes], indent=1))
    if args.write_sample:
        args.write_sample.write_text(json.dumps([s.to_json() for s in run.planned], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
