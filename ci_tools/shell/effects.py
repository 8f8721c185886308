"""What a function can change, read from its body once.

Two facts per function body, both syntactic and cached:

- *inert*: running it can only produce an exit status.  It assigns no
  variable outside its ``local`` ones, exports nothing, never exits, sources
  nothing, requires no variable (``check_env_vars``, ``${X:?}``), cannot
  start the server, and calls only inert functions and plain external
  commands.  ``wait_for_server_ready`` (a polling loop) is the typical one.
  When its status is not needed, the interpreter skips the call: the result
  is the same, at a fraction of the cost.
- *quiet*: it cannot end the script, require a variable, start a server,
  source a file, define a function or run a program whose name is unknown;
  it may assign global variables (their names are known).  Once the server
  command line has been captured, nothing reported depends on the values a
  quiet function computes except through those globals, so the interpreter
  skips it and makes its globals unknown (never guessed).  The client
  functions a recipe runs after the server (``run_benchmark_serving ...
  --max-concurrency "$CONC"``), which differ per job and so are not
  reusable from another job, are the typical ones.
"""

from __future__ import annotations

import re
from typing import Callable

from ..bounded import BoundedDict
from ..words import has_word
from .parse import Node
from .server import LaunchPattern

# Commands that run their arguments as another command (so may start the server).
WRAPPERS = frozenset({"exec", "nohup", "env", "numactl", "taskset", "timeout", "stdbuf", "setsid", "sudo", "time",
                      "command", "builtin", "chrt", "nice", "ionice", "srun", "mpirun", "torchrun", "bash", "sh"})

def may_launch(text: str, patterns: tuple[LaunchPattern, ...]) -> bool:
    """Whether ``text`` spells every literal word of some launch pattern after its program.

    The program itself is left out: it may be held in a variable.  A pattern
    that is a program only must spell the program.
    """
    entry = _MAY_LAUNCH.get(id(patterns))
    if entry is None or entry[0] is not patterns:
        entry = _MAY_LAUNCH[id(patterns)] = (patterns, BoundedDict(50_000))
    answers = entry[1]
    found = answers.get(text)
    if found is None:
        found = answers.put(text, _may_launch(text, patterns))
    return found


# Source texts are asked about again for every job: the answer is kept per text (per pattern tuple).
_MAY_LAUNCH: dict[int, tuple[tuple[LaunchPattern, ...], BoundedDict[str, bool]]] = {}


def _may_launch(text: str, patterns: tuple[LaunchPattern, ...]) -> bool:
    for p in patterns:
        words = p.literal_words[1:] if p.rest and p.literal_words and p.literal_words[0] == p.program else p.literal_words
        if all(has_word(text, word) for word in words):
            return True
    return False


# Commands that change what the evaluation tracks (a function using one is not inert).
_EFFECT_COMMANDS = {"exit", "source", ".", "check_env_vars", "eval", "export", "declare", "typeset",
                    "readonly", "unset", "set", "exec", "read", "mapfile", "readarray", "let"}
# Commands that may end the script, require a variable or run anything (a function using one is not quiet).
_TERMINAL_COMMANDS = {"exit", "source", ".", "check_env_vars", "eval", "exec", "command", "builtin"}
# `read` options that take a value (the word after them is not a variable name).
_READ_VALUE_OPTIONS = {"-d", "-p", "-n", "-N", "-t", "-u", "-i", "-C", "-c", "-O", "-s"}
# Names given to `set -o` / `set +o`.
_SHELL_OPTIONS = {"pipefail", "errexit", "nounset", "xtrace", "errtrace", "functrace", "noclobber", "noglob",
                  "posix", "verbose", "monitor", "notify", "allexport", "ignoreeof"}
_ARITH_TARGET = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:\+\+|--|[-+*/%&|^]?=(?!=)|<<=|>>=)|(?:\+\+|--)\s*([A-Za-z_][A-Za-z0-9_]*)")
_DEFAULT_ASSIGN = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*):?=")
_LOOPS = {"for_statement", "c_style_for_statement", "while_statement"}


class _Facts:
    __slots__ = ("effectful", "terminal", "callees", "globals")

    def __init__(self) -> None:
        self.effectful = False
        self.terminal = False
        self.callees: set[str] = set()
        self.globals: set[str] = set()


class _Scan:
    """One walk over a function body collecting its facts."""

    def __init__(self) -> None:
        self.facts = _Facts()
        self.locals: set[str] = set()
        self.assigned: set[str] = set()
        self.temporary: set[int] = set()  # `IFS= read ...`: assignments in front of a command last for it
        # Arrays run as commands ("${cmd[@]}"): their names, and the first words they are given.
        self.run_arrays: set[str] = set()
        self.first_words: dict[str, set[str | None]] = {}

    def effect(self) -> None:
        self.facts.effectful = True

    def terminal(self) -> None:
        self.facts.effectful = self.facts.terminal = True

    def walk(self, n: Node, loops: int) -> None:
        t = n.type
        if t == "declaration_command":
            self._declaration(n)
        elif t == "variable_assignment" and n.children:
            lhs = n.children[0]
            if id(n) not in self.temporary:
                name = lhs.child_of_type("variable_name") if lhs.type == "subscript" else lhs
                self.assigned.add(name.text if name is not None else "<subscript>")
            _note_first_word(n, self.first_words)
        elif t == "unset_command":
            self.effect()
            self.assigned.update(c.text for c in n.children[1:] if c.type in ("variable_name", "word")
                                 and not c.text.startswith("-"))
        elif t == "function_definition":
            self.terminal()
        elif t == "for_statement":
            var = n.child_of_type("variable_name")
            if var is not None:
                self.assigned.add(var.text)
        elif t in ("arithmetic_expansion", "compound_statement", "c_style_for_statement") and _assigns(n):
            self.effect()
            for m in _ARITH_TARGET.finditer(n.text):
                self.assigned.add(m.group(1) or m.group(2))
        elif t == "command":
            self._command(n, loops)
        elif t == "file_redirect" and _writes_a_file(n):
            self.effect()  # a file the recipe may read back (a config it passes with --config)
        inner = loops + (t in _LOOPS)
        for c in n.children:
            self.walk(c, inner)

    def _declaration(self, n: Node) -> None:
        keyword = n.children[0].type if n.children else ""
        if keyword != "local":
            self.effect()
        for c in n.children[1:]:
            target = c.children[0] if c.type == "variable_assignment" and c.children else c
            if target.type != "variable_name":
                if c.type != "variable_assignment" and not c.text.startswith("-"):
                    self.terminal()  # `export "$pair"`: which variable it sets is known only when it runs
                continue
            if keyword == "local":
                self.locals.add(target.text)
            else:
                self.assigned.add(target.text)

    def _command(self, n: Node, loops: int) -> None:
        for c in n.children:
            if c.type == "variable_assignment":
                self.temporary.add(id(c))
            elif c.type == "command_name":
                break
        name = n.child_of_type("command_name")
        words = [c for c in name.children if c.named] if name is not None else []
        array = _run_array(words)
        if array is not None:
            self.run_arrays.add(array)
            return
        if len(words) != 1 or words[0].type != "word":
            self.terminal()  # a dynamic command name ("$client") could be anything
            return
        word = words[0].text
        if word == "command" and _first_argument(n) in ("-v", "-V"):
            return  # `command -v git` looks a program up, it runs nothing
        if word in ("read", "mapfile", "readarray"):
            self.effect()
            self.assigned.update(_read_targets(n, word))
        elif word == "set" and _only_options(n):
            pass  # `set +x`, `set -o pipefail`: shell options, nothing evaluated here
        elif word in ("break", "continue") and loops == 0:
            self.terminal()  # leaves a loop of the caller
        elif word == "let":
            self.effect()
            for m in _ARITH_TARGET.finditer(n.text):
                self.assigned.add(m.group(1) or m.group(2))
        elif word in _TERMINAL_COMMANDS:
            self.terminal()
        elif word in _EFFECT_COMMANDS or word in WRAPPERS:
            self.effect()
            self.facts.callees.add(word)
        else:
            self.facts.callees.add(word)

    def finish(self) -> _Facts:
        facts = self.facts
        for array in self.run_arrays:
            # A local array whose every assignment starts with a plain program: that program runs.
            firsts = self.first_words.get(array, set())
            if array not in self.locals or not firsts or None in firsts or any(
                    w in _EFFECT_COMMANDS or w in WRAPPERS or w in _TERMINAL_COMMANDS for w in firsts):
                self.terminal()
            else:
                facts.callees.update(w for w in firsts if w is not None)
        facts.globals = self.assigned - self.locals
        if facts.globals:
            facts.effectful = True
        if "<subscript>" in facts.globals:
            facts.terminal = True  # an element of an array named by an expansion: which one is unknown
        return facts


def _scan(body: Node, patterns: tuple[LaunchPattern, ...]) -> _Facts:
    text = code_text(body)
    scan = _Scan()
    if ":?" in text or "?}" in text or may_launch(text, patterns):
        scan.terminal()
    if ":=" in text or "=}" in text:
        scan.effect()
        scan.assigned.update(_DEFAULT_ASSIGN.findall(text))
    scan.walk(body, 0)
    return scan.finish()


def code_text(n: Node) -> str:
    """The source text of ``n`` without its comments (a comment saying "we serve ..." launches nothing)."""
    comments: list[Node] = []
    stack = [n]
    while stack:
        c = stack.pop()
        if c.type == "comment":
            comments.append(c)
        else:
            stack.extend(c.children)
    if not comments:
        return n.text
    source = n.script.source
    out, at = [], n.start
    for c in sorted(comments, key=lambda c: c.start):
        out.append(source[at:c.start])
        at = c.end
    out.append(source[at:n.end])
    return b"".join(out).decode("utf-8", "replace")


def _assigns(n: Node) -> bool:
    text = n.text
    if n.type == "compound_statement" and not (n.children and n.children[0].type == "(("):
        return False
    stripped = text.replace("==", "").replace("!=", "").replace("<=", "").replace(">=", "")
    return "=" in stripped or "++" in text or "--" in text


def _run_array(words: list[Node]) -> str | None:
    """NAME when the command name is exactly "${NAME[@]}"."""
    if len(words) != 1 or words[0].type != "string" or len(words[0].children) != 3:
        return None
    inner = words[0].children[1]
    if inner.type != "expansion":
        return None
    sub = inner.child_of_type("subscript")
    if sub is None or not sub.text.endswith("[@]"):
        return None
    var = sub.child_of_type("variable_name")
    return var.text if var is not None else None


def _note_first_word(n: Node, first_words: dict[str, set[str | None]]) -> None:
    kids = n.children
    if len(kids) < 3 or kids[0].type != "variable_name" or kids[1].text != "=" or kids[2].type != "array":
        return
    items = [c for c in kids[2].children if c.named and c.type != "comment"]
    first = items[0] if items else None
    first_words.setdefault(kids[0].text, set()).add(first.text if first is not None and first.type == "word" else None)


def _read_targets(n: Node, command: str) -> set[str]:
    words = [c.text for c in n.children if c.named and c.type not in ("command_name", "variable_assignment")
             and c.type not in ("file_redirect", "herestring_redirect", "heredoc_redirect")]
    names: set[str] = set()
    skip = False
    for w in words:
        if skip:
            skip = False
            continue
        if w.startswith("-"):
            skip = w in _READ_VALUE_OPTIONS
            continue
        names.add(w)
    if not names:
        names.add("REPLY" if command == "read" else "MAPFILE")
    return names


def _writes_a_file(redirect: Node) -> bool:
    """``> FILE``, ``>> FILE`` (standard output into a file; /dev/null and ``>&2`` write none)."""
    op = next((k.type for k in redirect.children if not k.named), "")
    target = next((k for k in reversed(redirect.children) if k.named and k.type != "file_descriptor"), None)
    return op in (">", ">>", ">|", "&>", "&>>") and target is not None and target.text != "/dev/null"


def _first_argument(n: Node) -> str | None:
    after = False
    for c in n.children:
        if c.type == "command_name":
            after = True
        elif after and c.named:
            return c.text
    return None


def _only_options(n: Node) -> bool:
    words = [c.text for c in n.children if c.named and c.type != "command_name"]
    return bool(words) and all((w.startswith(("-", "+")) and w != "--") or w in _SHELL_OPTIONS for w in words)


class EffectAnalysis:
    """Per-process cache of function facts, keyed by the body node."""

    def __init__(self, patterns: tuple[LaunchPattern, ...]) -> None:
        self.patterns = patterns
        self._facts: dict[int, tuple[Node, _Facts]] = {}

    def _facts_of(self, body: Node) -> _Facts:
        hit = self._facts.get(id(body))
        if hit is not None and hit[0] is body:
            return hit[1]
        facts = _scan(body, self.patterns)
        self._facts[id(body)] = (body, facts)
        return facts

    def inert(self, body: Node, lookup: Callable[[str], object], depth: int = 0) -> bool:
        facts = self._facts_of(body)
        if facts.effectful:
            return False
        if depth > 16:
            return False
        for name in facts.callees:
            callee = lookup(name)
            if isinstance(callee, Node) and (callee is body or not self.inert(callee, lookup, depth + 1)):
                return False
        return True

    def quiet(self, body: Node, lookup: Callable[[str], object]) -> frozenset[str] | None:
        """The globals a quiet function (with the functions it calls) may assign; None when it is not quiet."""
        found: set[str] = set()
        seen: set[int] = set()
        pending = [body]
        while pending:
            b = pending.pop()
            if id(b) in seen:
                continue
            seen.add(id(b))
            if len(seen) > 64:
                return None
            facts = self._facts_of(b)
            if facts.terminal:
                return None
            found |= facts.globals
            pending.extend(c for c in (lookup(n) for n in facts.callees) if isinstance(c, Node))
        return frozenset(found)
