"""The package reads as the pipeline: no import circles, and no stage imports a later one.

Every import counts (at module level, in a function, under ``TYPE_CHECKING``):
a type a stage names is a dependency on the stage that defines it.  Two
exceptions are not imports of code by name and so are not seen here: the
rule catalogue (:func:`ci_tools.findings.all_rules` imports every
``rules.py``) and the stages of ``check`` given as ``"module:function"``.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "ci_tools"

# The data flow, first to last; a package may import its own layer and earlier ones only.
LAYERS: list[set[str]] = [
    {"errors", "findings", "frozen", "bounded", "words", "__init__"},  # the shared vocabulary (and the version)
    {"revision"},  # files of one revision: git or the work tree, YAML with positions
    {"schemacheck"},  # schemas/*.json compiled to checks, worded errors
    {"config"},  # .ci-tools.yaml, limits, recipe-resolution rules
    {"model"},  # master configs, runners, changelog loaded from a revision
    {"shell"},  # the partial bash interpreter
    {"jobs"},  # the matrix, each job's environment, which recipe it runs
    {"validation"},  # schema and cross-file rules over the configs
    {"evaluation"},  # each job's recipe evaluated: server command lines per role
    {"changelog"},  # the append-only gate, coverage of changes
    {"claims"},  # what entries say against what jobs run
    {"report"},  # findings rendered
    {"results"},  # job records, metrics, baselines, verdicts, the results comment
    {"github", "sweep"},  # dispatch from PR comments, runner-side execution
    {"check"},  # the PR job: every stage over a base and a head
    {"cli", "__main__"},
]
RANK = {name: i for i, layer in enumerate(LAYERS) for name in layer}


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@lru_cache(maxsize=1)  # the package's sources do not change while the tests run; parsed once, read by every test
def _imports() -> dict[str, set[str]]:
    modules = {_module(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = (package[: len(package) - node.level + 1] if node.level else [])
                target = ".".join(base + ([node.module] if node.module else []))
                for alias in node.names:  # `from . import evaluate` imports the module evaluate
                    sub = f"{target}.{alias.name}"
                    graph[module].add(sub if sub in modules else target)
            elif isinstance(node, ast.Import):
                graph[module].update(a.name for a in node.names)
        graph[module] = {t for t in graph[module] if t in modules and t != module}
    return graph


def _stage(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_package_has_a_layer() -> None:
    stages = {_stage(m) for m in _imports()}
    assert stages <= set(RANK), f"not placed in LAYERS: {sorted(stages - set(RANK))}"


def test_no_stage_imports_a_later_one() -> None:
    upward = sorted(f"{m} -> {t}" for m, targets in _imports().items() for t in targets
                    if RANK[_stage(t)] > RANK[_stage(m)])
    assert upward == []


def test_no_import_circles() -> None:
    graph = _imports()
    cycles: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert cycles == [], "\n".join(" -> ".join(c) for c in cycles)


def test_claims_text_never_imports_the_verdict_side() -> None:
    """What the text claims is read without knowing what the jobs run: ``claims.text`` imports no ``claims.verdict``."""
    graph = _imports()
    text = [m for m in graph if m.startswith("ci_tools.claims.text")]
    assert len(text) > 10
    crossing = sorted(f"{m} -> {t}" for m in text for t in graph[m] if t.startswith("ci_tools.claims.verdict"))
    assert crossing == []


@pytest.mark.parametrize(("importer", "module"), [
    ("ci_tools.changelog.lint", "ci_tools.findings"),  # from ..findings import ...
    ("ci_tools.model.repository", "ci_tools.revision.yamlpos"),  # from ..revision.yamlpos import ...
    ("ci_tools.evaluation", "ci_tools.evaluation.evaluate"),  # from . import evaluate (in a function)
    ("ci_tools.claims.verdict.check", "ci_tools.claims.text.extract"),  # from ..text.extract import ...
])
def test_the_graph_holds_the_real_imports(importer: str, module: str) -> None:
    assert module in _imports()[importer]
