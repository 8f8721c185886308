"""Probe sentences against the real tree: truths flagged and lies caught, per sentence.

``tests/data/claims_probes.txt`` holds hand-written bullets, each marked true or false of the real tree
(``tests/data/inferencex-843c625``): wordings tried one family at a time (exceptions, contrasts, old states, bounds,
conditions, drops, recipe names, defaults with exceptions per concurrency, arm or role).  The bench appends them as
entries to a throwaway git copy of the tree (``A || B``: one entry of two bullets; a key ``a+b``: an entry of two
config keys), one commit per config key (as a change appends its entries), runs ``claims`` on each, and reports how
many truths drew an error or a warning and how many lies did, listing each miss.

Run: .venv/bin/python bench/bench_claims_probes.py [--list] [--probes FILE]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import ROOT, THIS_BUILD, committed_tree, git, require  # noqa: E402

PROBES = ROOT / "tests" / "data" / "claims_probes.txt"
BULLETS = " || "  # between the bullets of one entry
PER_COMMIT = 90
KEYS = "+"  # between the config keys of one entry


def load(probes: Path) -> list[tuple[bool, str, str]]:
    """(true of the tree, config key, sentence) of each probe line."""
    out = []
    for n, line in enumerate(probes.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("|", 2)
        if len(parts) != 3 or parts[0] not in ("T", "L"):
            raise SystemExit(f"{probes}:{n}: expected T|key|sentence or L|key|sentence, found {line!r}")
        out.append((parts[0] == "T", parts[1], parts[2]))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--list", action="store_true", help="list every probe with what the check said")
    parser.add_argument("--probes", type=Path, default=PROBES,
                        help="a probe file of the same form, to try a new wording family before it joins the kept one")
    args = parser.parse_args()
    require(args.probes)
    probes = load(args.probes)
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "ix"
        committed_tree(repo)
        said: dict[int, list[str]] = {n: [] for n in range(len(probes))}
        keys = list(dict.fromkeys(key for _, key, _ in probes))
        # one commit per config key (in parts of at most PER_COMMIT entries, as a change that appends more is not
        # read past limits.max-appended-entries), as a change appends its entries: the entries of one commit share
        # the catalog of subjects their jobs' recipes set
        batches = [(key, part) for key in keys
                   for ns in [[n for n, p in enumerate(probes) if p[1] == key]]
                   for part in (ns[i:i + PER_COMMIT] for i in range(0, len(ns), PER_COMMIT))]
        for key, part in batches:
            changelog = repo / "perf-changelog.yaml"
            text = changelog.read_text(encoding="utf-8")
            line_of: dict[int, int] = {}
            for number in part:
                listed = "".join(f"    - {k}\n" for k in key.split(KEYS))  # "a+b": an entry of two config keys
                text += f"\n- config-keys:\n{listed}  description:\n"
                for bullet in probes[number][2].split(BULLETS):  # "A || B": one entry of two bullets
                    text += f"    - {json.dumps(bullet, ensure_ascii=False)}\n"
                    line_of[text.count("\n")] = number
                text += f"  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/{80000 + number}\n"
            changelog.write_text(text, encoding="utf-8")
            git(repo, "commit", "-q", "-am", f"probes of {key}")
            proc = subprocess.run([*THIS_BUILD, "claims", "--repo", str(repo), "--base", "HEAD~1", "--head", "HEAD",
                                   "--format", "json"], capture_output=True, text=True, cwd=repo)
            if proc.returncode not in (0, 1):
                raise SystemExit(f"claims failed ({proc.returncode}): {proc.stderr.strip()[-400:]}")
            for f in json.loads(proc.stdout)["findings"]:
                n = line_of.get(f["line"])
                if n is not None and f["severity"] in ("error", "warning"):
                    said[n].append(f"{f['severity']}: {f['message'][:160]}")
    truths = [n for n, p in enumerate(probes) if p[0]]
    lies = [n for n, p in enumerate(probes) if not p[0]]
    flagged = [n for n in truths if said[n]]
    caught = [n for n in lies if said[n]]
    print(f"probes: {len(probes)} ({len(truths)} truths, {len(lies)} lies)")
    print(f"truths flagged: {len(flagged)} of {len(truths)}; lies caught: {len(caught)} of {len(lies)}")
    for n in range(len(probes)):
        miss = (n in flagged) or (n in lies and n not in caught)
        if miss or args.list:
            truth, key, sentence = probes[n]
            tag = ("TRUTH FLAGGED" if n in flagged else "truth") if truth else ("lie caught" if said[n] else "LIE MISSED")
            print(f"  {tag:13s} [{key}] {sentence}")
            for s in said[n]:
                print(f"      {s}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
