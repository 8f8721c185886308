#!/usr/bin/env python3
"""Extract the GitHub REST operations ci-tools calls from ``@octokit/openapi``.

The full description is ~10 MB; the tests need only the handful of operations
the dispatch client makes, plus every component they reference (transitively),
so that a local server can validate each request the client sends.

It also copies the webhook example payloads the tests start from
(``@octokit/webhooks-examples``), verbatim, one file per example.

Usage (re-runnable; the output is deterministic)::

    npm install --prefix /tmp/octo @octokit/openapi@23.0.2 @octokit/webhooks-examples@7.6.1
    python scripts/extract_openapi_ops.py \
        --openapi /tmp/octo/node_modules/@octokit/openapi/generated/api.github.com.json \
        --webhooks /tmp/octo/node_modules/@octokit/webhooks-examples/api.github.com/index.json \
        --out tests/data/octokit
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

# (method, path template): the operations ci_tools.github.client calls.
OPERATIONS = (
    ("get", "/repos/{owner}/{repo}/collaborators/{username}/permission"),
    ("get", "/repos/{owner}/{repo}/pulls/{pull_number}"),
    ("post", "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions"),
    ("get", "/repos/{owner}/{repo}/issues/{issue_number}/comments"),
    ("post", "/repos/{owner}/{repo}/issues/{issue_number}/comments"),
    ("patch", "/repos/{owner}/{repo}/issues/comments/{comment_id}"),
    ("post", "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches"),
    # Idempotent dispatch: is there a run for this dispatch key already?
    ("get", "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs"),
    # Head pinning: when, by GitHub's clock, the head branch last moved.
    ("get", "/repos/{owner}/{repo}/activity"),
    # Results baseline fallback: the artifacts of the last default-branch sweep, and one artifact's zip.
    ("get", "/repos/{owner}/{repo}/actions/runs/{run_id}/artifacts"),
    ("get", "/repos/{owner}/{repo}/actions/artifacts/{artifact_id}/{archive_format}"),
    # The results comment while a sweep runs: which of the run's jobs have ended.
    ("get", "/repos/{owner}/{repo}/actions/runs/{run_id}/jobs"),
)


# (event, action): the first published example of each is copied.
WEBHOOK_EXAMPLES = (("issue_comment", "created"), ("issue_comment", "edited"))


def _refs(node: Any, out: set[str]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/components/"):
            out.add(ref)
        for value in node.values():
            _refs(value, out)
    elif isinstance(node, list):
        for value in node:
            _refs(value, out)


def _resolve(spec: dict[str, Any], ref: str) -> Any:
    node: Any = spec
    for part in ref.removeprefix("#/").split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def extract(spec: dict[str, Any]) -> dict[str, Any]:
    paths: dict[str, dict[str, Any]] = {}
    for method, path in OPERATIONS:
        try:
            op = spec["paths"][path][method]
        except KeyError:
            raise SystemExit(f"operation {method.upper()} {path} is not in the description") from None
        paths.setdefault(path, {})[method] = op
    components: dict[str, dict[str, Any]] = {}
    pending: set[str] = set()
    _refs(paths, pending)
    seen: set[str] = set()
    while pending:
        ref = pending.pop()
        if ref in seen:
            continue
        seen.add(ref)
        value = _resolve(spec, ref)
        _, _, kind, name = ref.split("/", 3)
        components.setdefault(kind, {})[name] = value
        _refs(value, pending)
    return {
        "openapi": spec.get("openapi"),
        "info": {"title": spec["info"].get("title"), "version": spec["info"].get("version"),
                 "x-extracted-by": "scripts/extract_openapi_ops.py"},
        "paths": {p: dict(sorted(m.items())) for p, m in sorted(paths.items())},
        "components": {k: dict(sorted(v.items())) for k, v in sorted(components.items())},
    }


def webhook_examples(index: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """File name -> payload for every example in WEBHOOK_EXAMPLES."""
    out: dict[str, dict[str, Any]] = {}
    for event, action in WEBHOOK_EXAMPLES:
        group = next((e for e in index if e.get("name") == event), None)
        example = next((x for x in (group or {}).get("examples", []) if x.get("action") == action), None)
        if example is None:
            raise SystemExit(f"no `{event}` `{action}` example in the webhooks package")
        out[f"{event}.{action}.json"] = example
    return out


def _write_json(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--openapi", type=Path, required=True, help="api.github.com.json from @octokit/openapi")
    parser.add_argument("--webhooks", type=Path, help="api.github.com/index.json from @octokit/webhooks-examples")
    parser.add_argument("--out", type=Path, required=True, help="directory to write into")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    spec = json.loads(args.openapi.read_text(encoding="utf-8"))
    ops = extract(spec)
    _write_json(args.out / "openapi-ops.json", ops)
    count = sum(len(m) for m in ops["paths"].values())
    refs = sum(len(v) for v in ops["components"].values())
    print(f"wrote {count} operations and {refs} components to {args.out / 'openapi-ops.json'}", file=sys.stderr)
    if args.webhooks:
        for name, payload in webhook_examples(json.loads(args.webhooks.read_text(encoding="utf-8"))).items():
            _write_json(args.out / name, payload)
            print(f"wrote {args.out / name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
