"""Which functions cannot change anything the evaluation reports.

A function is *inert* when running it can only produce an exit status: it
assigns no variable outside its ``local`` ones, exports nothing, never exits,
sources nothing, requires no variable (``check_env_vars``, ``${X:?}``),
cannot start the server, and calls only inert functions and plain external
commands.  ``wait_for_server_ready`` (a polling loop) is the typical one.
When its status is not needed (a plain statement, not a condition), the
interpreter skips the call: the result is the same, at a fraction of the
cost.  The analysis is syntactic and cached per function body.
"""

from __future__ import annotations

import re
from typing import Callable

from .parse import Node
from .server import LaunchPattern

# Commands that run their arguments as another command (so may start the server).
WRAPPERS = frozenset({"exec", "nohup", "env", "numactl", "taskset", "timeout", "stdbuf", "setsid", "sudo", "time",
                      "command", "builtin", "chrt", "nice", "ionice", "srun", "mpirun", "torchrun", "bash", "sh"})


_WORD_RES: dict[str, re.Pattern[str]] = {}


def _word_re(word: str) -> re.Pattern[str]:
    found = _WORD_RES.get(word)
    if found is None:
        found = _WORD_RES[word] = re.compile(r"(?<![\w.-])" + re.escape(word) + r"(?![\w.-])")
    return found


def may_launch(text: str, patterns: tuple[LaunchPattern, ...]) -> bool:
    """Whether ``text`` spells every literal word of some launch pattern after its program.

    The program itself is left out: it may be held in a variable.  A pattern
    that is a program only must spell the program.
    """
    for p in patterns:
        words = p.literal_words[1:] if p.rest and p.literal_words and p.literal_words[0] == p.program else p.literal_words
        if all(word in text and _word_re(word).search(text) for word in words):
            return True
    return False

_EFFECT_COMMANDS = {"exit", "source", ".", "check_env_vars", "eval", "export", "declare", "typeset",
                    "readonly", "unset", "set", "exec", "read", "mapfile", "readarray", "let"}


class _Facts:
    __slots__ = ("effectful", "callees")

    def __init__(self) -> None:
        self.effectful = False
        self.callees: set[str] = set()


def _scan(body: Node, patterns: tuple[LaunchPattern, ...]) -> _Facts:
    facts = _Facts()
    text = body.text
    if ":=" in text or ":?" in text or "?}" in text or may_launch(text, patterns):
        facts.effectful = True
        return facts
    locals_: set[str] = set()
    assigned: set[str] = set()
    stack = [body]
    while stack and not facts.effectful:
        n = stack.pop()
        t = n.type
        if t == "declaration_command":
            keyword = n.children[0].type if n.children else ""
            if keyword != "local":
                facts.effectful = True
                break
            for c in n.children[1:]:
                target = c.children[0] if c.type == "variable_assignment" and c.children else c
                if target.type == "variable_name":
                    locals_.add(target.text)
        elif t == "variable_assignment" and n.children:
            lhs = n.children[0]
            assigned.add(lhs.text if lhs.type == "variable_name" else "<subscript>")
        elif t in ("unset_command", "function_definition"):
            facts.effectful = True
            break
        elif t == "for_statement":
            var = n.child_of_type("variable_name")
            if var is not None:
                assigned.add(var.text)
        elif t in ("arithmetic_expansion", "compound_statement") and ("=" in n.text.replace("==", "")
                                                                       .replace("!=", "").replace("<=", "")
                                                                       .replace(">=", "") or "++" in n.text
                                                                       or "--" in n.text):
            if t == "arithmetic_expansion" or (n.children and n.children[0].type == "(("):
                facts.effectful = True
                break
        elif t == "command":
            name = n.child_of_type("command_name")
            words = [c for c in name.children if c.named] if name is not None else []
            if len(words) != 1 or words[0].type != "word":
                facts.effectful = True  # a dynamic command name ("$client") could be anything
                break
            word = words[0].text
            if word in _EFFECT_COMMANDS or word in WRAPPERS:
                facts.effectful = True
                break
            facts.callees.add(word)
        stack.extend(n.children)
    if assigned - locals_:
        facts.effectful = True
    return facts


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
