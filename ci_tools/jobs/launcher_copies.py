"""Recipe directories a fleet's launcher copies into its srt-slurm checkout, under another name or not.

InferenceX's srt-slurm launchers clone srt-slurm, copy directories of the
repository's recipes over the checkout and submit the job's ``CONFIG_FILE``
from there.  The copy may rename: ``launch_b300-nv.sh`` ran::

    elif [[ $FRAMEWORK == "dynamo-vllm" && $MODEL_PREFIX == "minimaxm2.5" && $PRECISION == "fp4" ]]; then
        cp -rT "$GITHUB_WORKSPACE/benchmarks/multi_node/srt-slurm-recipes/vllm/minimax-m2.5-b300" recipes/vllm/minimax-m2.5

so on that fleet ``CONFIG_FILE=recipes/vllm/minimax-m2.5/1k1k/dep2-1p2d.yaml``
is the repository's ``.../vllm/minimax-m2.5-b300/1k1k/dep2-1p2d.yaml``, not
``.../vllm/minimax-m2.5/...`` (another fleet's recipes, or nothing).

The copies are read from the launcher's syntax tree, never run: a recursive
``cp`` (``-r``, ``-R``, ``-a``) of one directory whose source is
``$GITHUB_WORKSPACE/<repository path>`` and whose destination is a relative
path of the checkout, each spelled as text or as variables the launcher
assigned text on the way; with ``-T`` (or without, when the destination was
not made first with ``mkdir -p``) the destination is the copy, else the copy
is the source's name inside it.  Each copy keeps the conditions of the
``if``/``elif``/``else`` branches around it (earlier ``elif`` conditions
false); a ``case`` or loop around it, or a function it is in, leaves its
condition undecided.

Whether a copy happens for a job is decided by those conditions, read with
the variables the workflow gives the launcher from the job's own fields
(:func:`launcher_inputs`: the ones the resolution of a job depends on
anyway); a condition on anything else (a file, a node's variable) is
undecided, and an undecided copy counts as made.  A copy that cannot be
spelled (a destination computed at run time) is left out: it cannot be
matched with a recipe's name.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Callable, Collection, Mapping

from ..revision.snapshot import Snapshot
from ..shell.conditions import and3, not3, or3, test_argv, test_expression, test_words
from ..shell.parse import Node, if_clauses, parse_script
from .job import AGENTIC, Job

# What `$GITHUB_WORKSPACE` stands for while a copy's words are spelled: the repository's root.
_WORKSPACE = "\0workspace"
_RECURSIVE_LONG = {"--recursive", "--archive"}
_NO_TARGET_LONG = {"--no-target-directory"}
# The condition of a `case` item, a loop or a function body: always undecided.
_UNDECIDED: tuple[Node, ...] = ()

Guard = tuple[tuple[Node, ...], bool]  # (the condition's statements, whether they must hold)


@dataclass(frozen=True)
class RecipeCopy:
    """``cp -rT <source> <destination>`` in a launcher: ``source`` a repository directory, ``destination`` a
    path of the srt-slurm checkout, ``guards`` the branch conditions under which it runs."""

    source: str
    destination: str
    launcher: str
    line: int
    guards: tuple[Guard, ...] = ()

    def maps(self, reference: str) -> str | None:
        """The repository path a checkout path ``reference`` is after this copy, if the copy covers it."""
        if not reference.startswith(self.destination + "/"):
            return None
        return posixpath.normpath(self.source + reference[len(self.destination):])

    def describe(self) -> str:
        return f"{self.launcher}:{self.line} copies {self.source}/ to {self.destination}/ in the srt-slurm checkout"


def read_launcher(snapshot: Snapshot, path: str) -> tuple[str, bytes | None]:
    """A launcher's path and text; one kept as a symbolic link (git stores the target's path as its
    content) is followed to its target."""
    data = snapshot.read(path)
    for _ in range(4):
        if data is None or b"\n" in data or len(data) > 255 or not data.strip().endswith(b".sh"):
            break
        target = path.rsplit("/", 1)[0] + "/" + data.strip().decode("utf-8", "replace")
        following = snapshot.read(target)
        if following is None:
            break
        path, data = target, following
    return path, data


def launcher_inputs(job: Job, settings: Mapping[str, str]) -> dict[str, str]:
    """The variables InferenceX's workflow passes a launcher that come from the job's own fields (the
    templates' ``env:``, the multinode launch step's ``IS_MULTINODE`` and exports of additional-settings); the
    others are unknown here.  ``tests/test_launcher_copies.py`` holds them to the repository's env contract."""
    f = job.fields
    out = {name: str(f[key]) for name, key in (("MODEL_PREFIX", "model-prefix"), ("PRECISION", "precision"),
                                                ("FRAMEWORK", "framework"), ("SPEC_DECODING", "spec-decoding"))
           if isinstance(f.get(key), str)}
    out["IS_AGENTIC"] = "1" if job.scenario == AGENTIC else "0"
    # The multinode template's launch step exports it; the single-node one leaves it unset, which bash reads empty.
    out["IS_MULTINODE"] = "true" if job.multinode else ""
    out.update(settings)
    return out


# -- reading a launcher ---------------------------------------------------------------------------------------


def scan_copies(path: str, data: bytes) -> tuple[RecipeCopy, ...]:
    """Every copy of a repository directory into the checkout that the launcher at ``path`` makes."""
    if b"cp" not in data or b"GITHUB_WORKSPACE" not in data:
        return ()  # no copy of the repository's files can be spelled: no parse
    script = parse_script(path, data)
    out: list[RecipeCopy] = []
    _Walk(path, out).block(script.root.children, (), {})
    return tuple(out)


class _Walk:
    def __init__(self, path: str, out: list[RecipeCopy]) -> None:
        self.path = path
        self.out = out

    def block(self, nodes: tuple[Node, ...] | list[Node], guards: tuple[Guard, ...],
              consts: dict[str, str | None]) -> None:
        made: set[str] = set()  # directories `mkdir -p` made in this block
        for node in nodes:
            self.stmt(node, guards, consts, made)

    def stmt(self, n: Node, guards: tuple[Guard, ...], consts: dict[str, str | None], made: set[str]) -> None:
        t = n.type
        if t == "variable_assignment":
            name = n.child_of_type("variable_name")
            value = n.children[-1] if len(n.children) >= 3 else None
            if name is not None:
                consts[name.text] = spelled(value, lambda v: _const(consts, v)) if value is not None else ""
        elif t == "declaration_command":  # `export NAME=text` assigns as well
            for c in n.children:
                if c.type == "variable_assignment":
                    self.stmt(c, guards, consts, made)
        elif t == "command":
            self.command(n, guards, consts, made)
        elif t == "if_statement":
            clauses, else_body = if_clauses(n)
            before: list[Guard] = []
            for cond, body, _ in clauses:
                self.block(body, (*guards, *before, (tuple(cond), True)), dict(consts))
                before.append((tuple(cond), False))
            if else_body is not None:
                self.block(else_body, (*guards, *before), dict(consts))
            _forget_assigned(n, consts)
        elif t in ("case_statement", "for_statement", "c_style_for_statement", "while_statement",
                   "function_definition"):
            for body in _bodies(n):
                self.block(body, (*guards, (_UNDECIDED, True)), dict(consts))
            _forget_assigned(n, consts)
        elif t in ("list", "compound_statement", "subshell", "redirected_statement", "negated_command"):
            self.block([c for c in n.children if c.named], guards, consts)

    def command(self, n: Node, guards: tuple[Guard, ...], consts: dict[str, str | None], made: set[str]) -> None:
        name = n.child_of_type("command_name")
        if name is None:
            return
        args = [c for c in n.children if c.named and c.type not in ("command_name", "variable_assignment",
                                                                       "file_redirect", "comment")]
        words = [spelled(a, lambda v: _const(consts, v)) for a in args]
        program = name.text
        if program == "mkdir":
            made.update(w for w in words if w is not None and not w.startswith("-"))
            return
        if program != "cp":
            return
        flags = [w for w in words if w is not None and w.startswith("-") and w != "-"]
        operands = [w for w in words if w is None or not w.startswith("-") or w == "-"]
        short = "".join(f[1:] for f in flags if not f.startswith("--"))
        recursive = any(c in short for c in "rRa") or any(f in _RECURSIVE_LONG for f in flags)
        if not recursive or len(operands) != 2 or None in operands:
            return
        source, destination = str(operands[0]), str(operands[1]).rstrip("/")
        if not source.startswith(_WORKSPACE + "/") or destination.startswith(("/", _WORKSPACE)) or not destination:
            return
        source = posixpath.normpath(source[len(_WORKSPACE) + 1:])
        no_target = "T" in short or any(f in _NO_TARGET_LONG for f in flags)
        if not no_target and destination in made:
            destination = f"{destination}/{posixpath.basename(source)}"
        destination = posixpath.normpath(destination)
        if source.startswith("..") or destination.startswith(".."):
            return
        self.out.append(RecipeCopy(source, destination, self.path, n.line, guards))


def _const(consts: Mapping[str, str | None], name: str) -> str | None:
    return _WORKSPACE if name == "GITHUB_WORKSPACE" else consts.get(name)


def _bodies(n: Node) -> list[list[Node]]:
    found: list[list[Node]] = []
    for c in n.children:
        if c.type in ("do_group", "compound_statement"):
            found.append([x for x in c.children if x.named])
        elif c.type == "case_item":
            found.append([x for x in c.children if x.named][1:])
    return found


def _forget_assigned(n: Node, consts: dict[str, str | None]) -> None:
    """After a branch, a loop or a declaration, a variable assigned in it has no known text any more."""
    stack = [n]
    while stack:
        c = stack.pop()
        if c.type == "variable_assignment":
            name = c.child_of_type("variable_name")
            if name is not None:
                consts[name.text] = None
        stack.extend(c.children)


def spelled(node: Node, lookup: Callable[[str], str | None]) -> str | None:
    """The text of a word whose parts are text and variables ``lookup`` knows (``${X:-default}`` too);
    None when any part is something else (a command's output, an unknown variable)."""
    t = node.type
    if t in ("word", "number", "extglob_pattern", "regex"):  # a pattern's text is the pattern
        return None if "\\" in node.text or "$" in node.text else node.text
    if t == "raw_string":
        return node.text[1:-1]
    if t == "string_content":
        return node.text
    if t in ("string", "concatenation"):
        parts = [spelled(c, lookup) for c in node.children if c.named]
        return None if None in parts else "".join(str(p) for p in parts)
    if t == "simple_expansion":
        name = node.child_of_type("variable_name")
        return lookup(name.text) if name is not None else None
    if t == "expansion":
        kids = [c for c in node.children if c.type not in ("${", "}")]
        if not kids or kids[0].type != "variable_name":
            return None
        value = lookup(kids[0].text)
        if len(kids) == 1:
            return value
        if len(kids) >= 2 and kids[1].type in (":-", "-"):
            default = spelled(kids[2], lookup) if len(kids) > 2 else ""
            if value is None:
                return None
            return default if (value == "" if kids[1].type == ":-" else False) else value
        return None
    return None


# -- deciding a copy's conditions for a job ------------------------------------------------------------------


class _Operands:
    """The words of a launcher's condition, read with fixed variables (see :class:`ci_tools.shell.conditions.Operands`)."""

    def __init__(self, values: Mapping[str, str]) -> None:
        self.values = values

    def scalar_text(self, node: Node) -> tuple[str | None, object]:
        return spelled(node, self.values.get), None

    def scalar(self, name: str, node: Node) -> object:
        return self.values.get(name)

    def file_test(self, op: str, path: str | None) -> bool | None:
        return None  # what the node's files are is known only there


def holds(guard: Guard, values: Mapping[str, str]) -> bool | None:
    """Whether a copy's branch condition is as the branch needs it for these variables; None: undecided."""
    statements, expected = guard
    result = _status([s for s in statements if s.named and s.type != "comment"], _Operands(values))
    return result if expected else not3(result)


def _status(statements: list[Node], operands: _Operands) -> bool | None:
    if not statements:
        return None
    n = statements[-1]  # an `if` takes the status of its last condition statement
    if n.type == "test_command":
        inner = [c for c in n.children if c.named]
        if not inner:
            return False
        if n.children[0].type == "[[":
            return test_expression(operands, inner[0], True)
        words: list[str | None] = []  # `[ ]` is a command: its words, as the interpreter reads them
        for c in inner:
            test_words(operands, c, words)
        return test_argv(words, operands, n)
    if n.type == "negated_command":
        return not3(_status([c for c in n.children if c.named], operands))
    if n.type == "list":
        kids = n.children
        left = _status([kids[0]], operands)
        for i in range(1, len(kids) - 1, 2):
            right = _status([kids[i + 1]], operands)
            left = and3(left, right) if kids[i].type == "&&" else or3(left, right)
        return left
    return None


def copy_for(copies: tuple[RecipeCopy, ...], reference: str, values: Mapping[str, str],
             files: Collection[str]) -> tuple[RecipeCopy | None, str | None]:
    """The copy that gives ``reference`` (a checkout path) to a job with launcher variables ``values``, and
    the repository file it is; (None, None) when no copy the job's launcher makes covers it.

    A later copy overwrites an earlier one, so the last that holds the file wins; when the copies that
    cover the path hold no such file, the last of them is returned with a file that does not exist.
    """
    covering = [(c, mapped) for c in copies if (mapped := c.maps(reference)) is not None
                and all(holds(g, values) is not False for g in c.guards)]
    if not covering:
        return None, None
    held = [(c, m) for c, m in covering if m in files]
    return held[-1] if held else covering[-1]


__all__ = ["RecipeCopy", "copy_for", "holds", "launcher_inputs", "read_launcher", "scan_copies", "spelled"]
