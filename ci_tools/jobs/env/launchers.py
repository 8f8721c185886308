"""Variables a fleet's launcher (``runners/launch_<fleet>.sh``) adds to a recipe's environment.

The launcher runs between the workflow and the recipe: it exports what the
node provides (``MODEL_PATH``, ``PORT``, cache directories, ...), passes some
to a container (``docker -e NAME=value``, ``srun --export=ALL,NAME=value``)
and may overwrite a variable of the workflow (``export MODEL="$MODEL_PATH"``).
Those values are only known on the node, so they are known to exist but not
what they are.  A launcher that merely re-exports a variable
(``export ISL="$ISL"``, ``export GPU_COUNT="${GPU_COUNT:-$TP}"``) keeps its
value.  Every branch of the launcher counts (a variable exported for
multinode jobs only is counted for all jobs of the fleet): the set is an
over-approximation, values are never guessed.  ``NAME=value cmd`` counts when
``cmd`` starts a program that may run the recipe (``bash``, ``srun``,
``docker``, ...), not for a builtin such as ``IFS= read``.  A launcher that
starts recipes only with ``docker run`` passes them only what its ``-e``
options name (``passes``): the workflow's other variables never reach them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator

from ...bounded import BoundedDict
from ...findings import Location
from ...shell.parse import Node, content_hash, parse_script

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_DECLARE_EXPORT = {"export"}
_ENV_OPTIONS = ("-e", "--env")
# Programs through which a `NAME=value` prefix can reach a recipe.
_RUNNERS = frozenset({"bash", "sh", "srun", "sbatch", "salloc", "docker", "podman", "enroot", "apptainer",
                      "singularity", "env", "exec", "timeout", "nohup", "python", "python3"})


@dataclass(frozen=True)
class LauncherVars:
    """What a launcher does to the environment.

    ``sets``: names it gives a value of its own (with where); ``fills``: names
    it keeps when they have a value and sets otherwise (``${X:-default}``).
    """

    path: str
    sets: tuple[tuple[str, Location], ...]
    fills: tuple[tuple[str, Location], ...]
    # When every recipe the launcher starts runs in a `docker run` container: the names those containers
    # take from the launcher's environment (`-e NAME`, `-e NAME=value`, `--env ...`), nothing else reaching
    # the recipe; None when a recipe may see all of it (srun --export=ALL, bash, an --env-file).
    passes: frozenset[str] | None = None


# `$X`, `${X}`, `${X:-default}`, `${X:?msg}`: one pattern for every name (a pattern per name would be compiled
# again and again: Python's regex cache holds 512, and a replay scans thousands of names).
_REFERENCE = re.compile(r"\$(?P<bare>\w+)|\$\{(?P<name>\w+)(?P<op>:?[-=?])?(?P<rest>.*)\}", re.S)


def _kept_form(name: str, value: str) -> str | None:
    """``keep`` for ``$X``/``${X}``/``${X:?msg}``, ``fill`` for ``${X:-default}``/``${X:=default}``,
    None when the value is the launcher's own."""
    text = value.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1]
    m = _REFERENCE.fullmatch(text)
    if m is None or (m.group("bare") or m.group("name")) != name or (m.group("op") is None and m.group("rest")):
        return None
    return "fill" if m.group("op") and m.group("op")[-1] in "-=" else "keep"


def _walk(node: Node) -> Iterator[Node]:
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def _assignment(node: Node) -> tuple[str, str | None]:
    name = node.children[0].text if node.children else node.text
    rest = node.text[len(name):]
    return name, rest[1:] if rest.startswith("=") else None


def _items(node: Node) -> Iterator[tuple[str, str | None, Node]]:
    """(name, value or None for a bare name, node) of everything the statement puts in an environment."""
    if node.type == "declaration_command" and node.children:
        keyword = node.children[0].text
        flags = [c.text for c in node.children[1:] if c.type == "word" and c.text.startswith("-")]
        if keyword in _DECLARE_EXPORT or any("x" in f for f in flags):
            for c in node.children[1:]:
                if c.type == "variable_assignment":
                    name, value = _assignment(c)
                    yield name, value, c
                elif c.type == "variable_name":
                    yield c.text, None, c
    elif node.type == "command":
        words = [c for c in node.children if c.type != "variable_assignment"]
        program = words[0].text.rsplit("/", 1)[-1] if words else ""
        for c in node.children:
            if c.type == "variable_assignment" and program in _RUNNERS:  # `NAME=value cmd`: set for that command
                name, value = _assignment(c)
                yield name, value, c
        texts = [c.text for c in words]
        for i, (w, text) in enumerate(zip(words, texts)):
            if text.startswith("--export="):
                for item in text.removeprefix("--export=").split(","):
                    name, eq, value = item.partition("=")
                    if eq and _NAME.match(name):
                        yield name, value, w
            elif text.startswith("--env="):
                name, eq, value = text.removeprefix("--env=").partition("=")
                if _NAME.match(name):
                    yield name, value if eq else None, w
            elif text in _ENV_OPTIONS and i + 1 < len(words):
                name, eq, value = texts[i + 1].partition("=")
                if _NAME.match(name):
                    yield name, value if eq else None, words[i + 1]


# Programs that start a recipe with the launcher's whole environment (when it is not run in `docker run`).
_OTHER_STARTS = frozenset({"srun", "sbatch", "salloc", "enroot", "apptainer", "singularity"})
_SHELLS = frozenset({"bash", "sh", "exec", "source", "."})


def _container_passes(nodes: list[Node]) -> frozenset[str] | None:
    """The ``passes`` of a launcher (see :class:`LauncherVars`): the union of the ``-e`` names of its
    ``docker run`` commands, when nothing else of it can start a recipe."""
    runs: list[list[str]] = []
    for node in nodes:
        if node.type != "command":
            continue
        texts = [c.text for c in node.children if c.type != "variable_assignment"]
        if not texts:
            continue
        program = texts[0].rsplit("/", 1)[-1]
        if program in ("docker", "podman") and texts[1:2] == ["run"]:
            runs.append(texts)
        elif program in _OTHER_STARTS:
            return None
        elif program in _SHELLS and any("benchmarks/" in t or "$" in t for t in texts[1:]):
            return None  # `bash "$SCRIPT"`: a recipe started outside a container
    if not runs:
        return None
    names: set[str] = set()
    for texts in runs:
        for i, text in enumerate(texts):
            if text == "--env-file" or text.startswith("--env-file=") or "[@]" in text or "[*]" in text:
                return None  # names in a file or an array (`"${ENV_ARGS[@]}"`): not read here
            if text in _ENV_OPTIONS and i + 1 < len(texts):
                item = texts[i + 1]
            elif text.startswith("--env="):
                item = text.removeprefix("--env=")
            else:
                continue
            name = item.strip("\"'").split("=", 1)[0]
            if _NAME.match(name):
                names.add(name)
    return frozenset(names)


# Scans by (path, content): every snapshot of a replayed history builds its own contract, while a launcher
# changes in a few commits only; walking its whole tree again for each was a fifth of the replay.
# Distinct launcher versions kept (a whole history has a few hundred, ~1 KB each).
_SCANNED: BoundedDict[tuple[str, str], LauncherVars] = BoundedDict(512)


def scan_launcher(path: str, source: bytes) -> LauncherVars:
    """What the launcher at ``path`` does to the environment (see :class:`LauncherVars`), once per content."""
    key = (path, content_hash(source))
    found = _SCANNED.get(key)
    if found is None:
        found = _SCANNED.put(key, _scan(path, source))
    return found


def _scan(path: str, source: bytes) -> LauncherVars:
    script = parse_script(path, source)
    nodes = list(_walk(script.root))
    # What the launcher's assignments anywhere (plain ones included) do to a name: passing it on
    # (`-e NAME`, `--export=ALL,NAME=$NAME`) passes what they made of it.
    forms: dict[str, set[str]] = {}
    for node in nodes:
        if node.type == "variable_assignment" and node.children:
            name, value = _assignment(node)
            if value is not None:
                forms.setdefault(name, set()).add(_kept_form(name, value) or "own")
    sets: dict[str, Location] = {}
    fills: dict[str, Location] = {}
    for node in nodes:
        for name, value, where in _items(node):
            form = {"keep" if value is None else (_kept_form(name, value) or "own"), *forms.get(name, ())}
            if "own" in form:
                sets.setdefault(name, where.location())
            elif "fill" in form:
                fills.setdefault(name, where.location())
    return LauncherVars(path, tuple(sets.items()), tuple((n, w) for n, w in fills.items() if n not in sets),
                        _container_passes(nodes))
