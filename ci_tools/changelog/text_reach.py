"""The functions a single-node recipe may run, bounded by its files' text alone, no job evaluated.

A change of a shared library's function bodies changes a job's run only where the job may call one of them
(:meth:`ci_tools.changelog.run_effect.RunEffect._classify`).  Learning it from evaluations means evaluating a
job of every row of every recipe that sources the library: InferenceX's throughput recipes never call the
agentic replay's ``build_replay_cmd``, yet an edit of it evaluated a job of each of their rows.  The text bounds
the reach first: a function no text of the recipe's files can run is one no job of it calls, and the rows are
left unevaluated.

What the text may run, transitively: the commands its top-level statements name, every word that could name a
function anywhere in the code run (``trap cleanup EXIT``, ``retry 3 run_client``, a string ``bash -c`` runs),
the same in the bodies of the functions reached, and what a command whose name is an expansion may run:

- ``"${CMD[@]}"``, ``"$PY"``, ``$REPLAY_CMD``: the first word of every value the files assign the variable
  (``CMD=(python3 -m ...)``, ``PY="$VENV/bin/python"``); a word holding ``/`` names no function (bash runs it
  as a path), a plain word is a call of that name, ``$OTHER`` is read the same way.  What ``+=`` appends
  (``REPLAY_CMD+=" $metrics_url"``) follows the first word where an assignment gives one, and is read only for
  a variable no assignment does; ``$(command -v uv)`` (``which``, ``type -P``) gives a path, or the name itself
  where a function has it;
- a script ``bash``/``sh`` runs: the words its text spells (a file of the repository; a path the repository
  does not hold is outside it, or written by the recipe, whose here-document is code read above).

The bound is unknown (``None``: evaluation decides, as before) wherever the text cannot say: a command name
built otherwise (``"${ENGINE}_serve"``, ``$(...)``), a variable used as one that the job's environment may give
or that something other than an assignment sets (``read``, ``for``, ``printf -v``, a nameref), a script whose
path is not spelled out, ``eval`` of a string with an expansion or an assignment in it, ``source`` of a process
substitution, an element assigned by its index (``CMD[0]=...``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Sequence

from ..bounded import BoundedDict
from ..shell.parse import Node
from .shell_diff import SHELL_NAME

# Commands that run a script file in a new shell (its functions are its own; what it calls, its text spells).
_SHELLS = frozenset({"bash", "sh"})
# Commands that set a variable named by an argument, not by an assignment.
_SETTERS = frozenset({"read", "mapfile", "readarray", "getopts", "printf"})
# An expansion's text, dropped before asking whether a value holds `/` outside of it.
_EXPANSION = re.compile(r"\$\{[^}]*\}|\$\([^)]*\)|`[^`]*`")
# A value that is where a program is found: a path (or nothing), or the name itself for a function of that name.
_LOOKUP = re.compile(r"\$\(\s*(?:command\s+-v|which|type\s+-P)\s+([A-Za-z0-9_.+-]+)\s*\)")
# A command name or a value's first word that is one variable's value: `$X`, `${X}`, `"${X[@]}"`.
_PLAIN_REFERENCE = re.compile(r"^\$\{?([A-Za-z_][A-Za-z0-9_]*)(?:\[[@*0]\])?\}?$")


@dataclass(frozen=True)
class _Facts:
    """What one statement or function definition says for the bound, read once per node (a shared library's
    nodes are asked for by every recipe that sources it): the values it assigns to each variable, and its
    commands that run what their spelled names do not say."""

    assigned: tuple[tuple[str, Node], ...]
    appended: tuple[tuple[str, Node], ...]  # `NAME+=VALUE`
    expanded: tuple[Node, ...]  # command names that are expansions
    scripts: tuple[str, ...]  # the scripts `bash`/`sh` run, as written
    unknown: bool  # a nameref, a command without a name, `eval` of a built or assigning string, `source <(...)`


# Facts by node id: the node is kept beside them, so that its id is not reused while they are.
_FACTS: BoundedDict[int, tuple[Node, _Facts]] = BoundedDict(8192)


def text_reach(code: Sequence[Node], definitions: Mapping[str, Sequence[Node]], called: frozenset[str],
               environment: frozenset[str], script_words: Callable[[str], frozenset[str] | None],
               reach: Callable[[frozenset[str]], frozenset[str]]) -> frozenset[str] | None:
    """The names the recipe may call (functions among them), or None when its text cannot bound them.

    ``code``: the top-level statements of the recipe's files (both revisions); ``definitions``: each function's
    definitions; ``called``: the command names ``code`` spells; ``environment``: the variables the jobs may start
    with; ``script_words(path)``: the words the text of the script ``bash PATH`` runs spells (empty when the
    repository holds no such file, None when the path cannot be read as one); ``reach(seeds)``: the seeds and,
    transitively, what the bodies of the functions among them call or spell
    (:func:`ci_tools.changelog.run_effect._reach`)."""
    code_facts = [_facts(node) for node in code]
    function_facts = {name: [_facts(node) for node in nodes] for name, nodes in definitions.items()}
    assigned: dict[str, list[Node]] = {}
    appended: dict[str, list[Node]] = {}
    for facts in [*code_facts, *(f for fs in function_facts.values() for f in fs)]:
        for variable, value in facts.assigned:
            assigned.setdefault(variable, []).append(value)
        for variable, value in facts.appended:
            appended.setdefault(variable, []).append(value)
    resolve = _Resolver(assigned, appended, environment, script_words, frozenset(definitions))
    seeds = resolve(code_facts)
    if seeds is None:
        return None
    reached = reach(called | seeds)
    read: set[str] = set()  # functions whose bodies' commands were read
    while True:
        unread = [name for name in reached if name in definitions and name not in read]
        if not unread:
            return reached
        read.update(unread)
        more = resolve([f for name in unread for f in function_facts[name]])
        if more is None:
            return None
        reached = reach(reached | more)


class _Resolver:
    """The functions the commands of some statements may run that their spelled names do not say."""

    def __init__(self, assigned: Mapping[str, list[Node]], appended: Mapping[str, list[Node]],
                 environment: frozenset[str], script_words: Callable[[str], frozenset[str] | None],
                 defined: frozenset[str]) -> None:
        self.assigned, self.appended = assigned, appended
        self.environment, self.script_words, self.defined = environment, script_words, defined

    def __call__(self, facts: Iterable[_Facts]) -> frozenset[str] | None:
        found: set[str] = set()
        for f in facts:
            if f.unknown:
                return None
            for word in f.expanded:
                match = _PLAIN_REFERENCE.match(word.text.strip('"'))
                values = None if match is None else self._values(match.group(1), frozenset())
                if values is None:
                    return None
                found |= values & self.defined
            for script in f.scripts:
                spelled = self.script_words(script)
                if spelled is None:
                    return None
                found |= spelled & self.defined
        return frozenset(found)

    def _values(self, variable: str, seen: frozenset[str]) -> frozenset[str] | None:
        """The plain first words the variable's values may give a command (None: unknown)."""
        if variable in seen or variable in self.environment or not (variable in self.assigned
                                                                    or variable in self.appended):
            return None  # a cycle, or a value the job's environment may give
        values = self.assigned.get(variable, [])
        if not any(_first_word(value) for value in values):  # no assignment gives a first word: appends may
            values = [*values, *self.appended.get(variable, [])]
        found: set[str] = set()
        for value in values:
            located = _LOOKUP.fullmatch(value.text.strip("\"'"))
            if located is not None:  # `$(command -v uv)`: a path, or the name itself where it is a function
                found.update({located.group(1)} & self.defined)
                continue
            first = _first_word(value)
            if first is None:
                return None
            if not first or "/" in _EXPANSION.sub("", first):
                continue  # nothing to run, or a path: bash runs a word holding `/` as a file, never as a function
            if "$" not in first and "`" not in first:
                found.add(first)
                continue
            match = _PLAIN_REFERENCE.match(first)
            more = None if match is None else self._values(match.group(1), seen | {variable})
            if more is None:
                return None
            found |= more
        return frozenset(found)


def _facts(node: Node) -> _Facts:
    found = _FACTS.get(id(node))
    if found is not None and found[0] is node:
        return found[1]
    assigned: list[tuple[str, Node]] = []
    appended: list[tuple[str, Node]] = []
    expanded: list[Node] = []
    scripts: list[str] = []
    unknown = False
    stack = [node]
    while stack:
        n = stack.pop()
        stack.extend(n.children)
        kind = n.type
        if kind == "variable_assignment":
            target = n.children[0] if n.children else None
            if target is not None and target.type == "subscript":  # `CMD[0]=...`: an element, read as unknown
                element = target.child_of_type("variable_name")
                if element is not None:
                    assigned.append((element.text, n))
            elif len(n.children) >= 3 and target is not None and target.type == "variable_name":
                (appended if n.children[1].type == "+=" else assigned).append((target.text, n.children[2]))
        elif kind == "for_statement":
            variable = n.child_of_type("variable_name")
            if variable is not None:
                assigned.append((variable.text, n))  # not an assignment's value: unknown (_first_word)
        elif kind == "declaration_command":
            unknown = unknown or any(c.type == "word" and c.text.startswith("-") and not c.text.startswith("--")
                                     and "n" in c.text for c in n.children)
        elif kind == "command":
            # The name follows the assignments the command is prefixed with (`UV_CACHE_DIR=... "$UV" venv`).
            at = next((i for i, c in enumerate(n.children) if c.type == "command_name"), None)
            if at is None:
                continue
            name = n.children[at].children[0] if n.children[at].children else None
            words = [c for c in n.children[at + 1:] if c.type != "comment"]
            if name is None:
                unknown = True
            elif name.type != "word" or "$" in name.text:
                expanded.append(name)
            elif name.text in _SETTERS:
                assigned.extend((c.text, n) for c in words if c.type == "word" and SHELL_NAME.fullmatch(c.text))
            elif name.text == "eval" and any("$" in w.text or "`" in w.text or "=" in w.text for w in words):
                unknown = True  # a string built at run time, or one that assigns what a command name may expand
            elif name.text in ("source", ".") and words and words[0].type == "process_substitution":
                unknown = True
            else:
                script = _script_of(name.text, [w.text for w in words])
                if script:
                    scripts.append(script)
    facts = _Facts(tuple(assigned), tuple(appended), tuple(expanded), tuple(scripts), unknown)
    _FACTS.put(id(node), (node, facts))
    return facts


def _script_of(name: str, words: Sequence[str]) -> str:
    """The script ``bash``/``sh`` runs, as written, when this command runs one (after wrappers: ``nohup bash
    x.sh``, ``timeout 600 bash x.sh``); "" when it runs none (not a shell, ``-c``, standard input)."""
    at = 0 if name in _SHELLS else next((i + 1 for i, w in enumerate(words) if w in _SHELLS), None)
    if at is None:
        return ""
    while at < len(words) and words[at].startswith("-"):
        if not words[at].startswith("--") and "c" in words[at][1:]:
            return ""  # `-c STRING`: its function names are words of this code
        at += 1
    return words[at].strip("\"'") if at < len(words) and words[at][0] not in "<>|&" else ""


def _first_word(value: Node) -> str | None:
    """The first word an assigned value gives a command that expands it (its first element for an array);
    None for a statement that sets the variable otherwise (``read``, ``for``)."""
    if value.type == "array":
        elements = [c for c in value.children if c.named and c.type != "comment"]
        return _first_word(elements[0]) if elements else ""
    text = value.text
    if value.type in ("string", "raw_string"):
        text = text[1:-1]
    elif value.type not in ("word", "simple_expansion", "expansion", "concatenation", "number"):
        return None
    parts = text.replace('"', " ").replace("'", " ").split()
    return parts[0] if parts else ""


__all__ = ["text_reach"]
