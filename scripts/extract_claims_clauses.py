"""Every changelog text of a repository's history, with the subjects the claims checker knew for it.

Usage: extract_claims_clauses.py REPO OUT.json.gz [--since REV] [--head REV]

Replays ``claims --history`` over REPO (a clone of SemiAnalysisAI/InferenceX) and writes, for every
description bullet each changelog commit appended, the bullet and the catalog of subjects the checker
built for its entry's jobs at that commit (flags, keys of structured values, environment variables,
recipe variables, on/off flags, the word values and list settings it recorded, the flags the recipes
spell).  Catalogs are stored once each and subject names once each, so the whole history fits in a few
hundred kilobytes: ``tests/test_claims_unread.py`` runs the claim reader on every clause of it without the
repository.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path
from typing import Any

from ci_tools.claims.text.sentences import SourceText
from ci_tools.claims.text.subjects import Catalog
from ci_tools.claims.verdict import check, history
from ci_tools.config import load_config


def _catalog_record(cat: Catalog, names: dict[str, int]) -> dict[str, Any]:
    def index(name: str) -> int:
        return names.setdefault(name, len(names))

    return {
        "subjects": sorted(index(f"{s.kind} {s.name}") for s in cat.subjects.values()),
        "boolean": sorted(index(f"flag {n}") for n in cat.boolean_flags),
        "values": {str(index(n)): sorted(v) for n, v in sorted(cat.values.items())},
        "spelled": sorted(cat.spelled_flags),
        "lists": {n: list(items) for n, items in sorted(cat.lists.items())},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--since", default=None)
    parser.add_argument("--head", default="HEAD")
    args = parser.parse_args()
    config = load_config(args.repo.resolve())
    names: dict[str, int] = {}
    catalogs: list[dict[str, Any]] = []
    by_record: dict[str, int] = {}
    by_catalog: dict[int, int] = {}  # id() of a catalog the checker built -> its record (it lives while it is read)
    texts: list[list[Any]] = []
    pairs: set[tuple[str, int]] = set()
    at_commit = [""]
    # The reader and the entry check, wrapped to see each catalog and the texts read with it.
    reading, checking = getattr(check, "extract"), getattr(history, "check_entries")

    def recording(source: SourceText, catalog: Catalog | None, base_scope: Any = None) -> Any:
        if catalog is not None and source.path == config.changelog:
            at = by_catalog.get(id(catalog))
            if at is None:
                record = _catalog_record(catalog, names)
                key = json.dumps(record, sort_keys=True)
                at = by_record.get(key)
                if at is None:
                    at = by_record[key] = len(catalogs)
                    catalogs.append(record)
                by_catalog[id(catalog)] = at
            if (source.text, at) not in pairs:
                pairs.add((source.text, at))
                texts.append([at_commit[0], at, source.text])
        return reading(source, catalog, base_scope)

    def checking_at(*args: Any, **kwargs: Any) -> Any:
        at_commit[0] = str(getattr(args[2], "sha", ""))[:12]
        by_catalog.clear()
        return checking(*args, **kwargs)

    setattr(check, "extract", recording)
    setattr(history, "check_entries", checking_at)
    commits = history.changelog_commits(config, args.since, args.head)
    history._replay(config, commits, verbose=False, descriptions={})
    data = {
        "source": f"claims --history over {config.root.name} {args.since or 'start'}..{args.head}: every description "
                  f"bullet each changelog commit appended, with the catalog the checker built for its jobs",
        "commits": len(commits),
        "names": sorted(names, key=names.__getitem__),
        "catalogs": catalogs,
        "texts": texts,
    }
    with gzip.open(args.out, "wt", encoding="utf-8", compresslevel=9) as out:
        json.dump(data, out, separators=(",", ":"))
    print(f"{len(texts)} texts, {len(catalogs)} catalogs, {len(names)} names -> {args.out} "
          f"({args.out.stat().st_size // 1024} KiB)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
