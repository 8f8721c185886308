"""Whether a changed function runs as before where the variables its change reads are unset.

A common edit to a shared library adds an override that keeps the old
behaviour by default: ``--url http://localhost:$PORT`` becomes ``--url
${AIPERF_SERVER_URL:-http://localhost:$PORT}``, a new ``if [[ -n
"${AIPERF_TRACE_SOURCE_FLAG:-}" ]]; then ...; fi`` opens the function, a
condition gains ``&& "${OPT_OUT:-1}" != "0"``.  For a job whose environment
does not set the variable, and whose files never assign it, the function runs
exactly as before; coverage should then not count the change for it.

The function's text at each revision is *reduced* with such variables unset
(:func:`reduced`): ``${V:-D}`` and ``${V-D}`` become ``D``; ``${V}``, ``$V``,
``${V:-}``, ``${V:+D}`` inside double quotes, or unquoted as a whole argument of a command, become nothing; a ``[[ ]]``/``[ ]`` test
whose operands are then literal is decided (``-n ""`` false, ``"1" != "0"``
true) and ``&&``/``||`` folded; an ``if`` whose only condition is decided
keeps the branch taken.  Each rewrite keeps what bash would run, so two
reduced texts that read the same (comments dropped, runs of whitespace as
one space, as :mod:`.shell_diff` aligns statements) run the same.  Every
other form is left as written: a reduction that cannot tell leaves the texts
different, and the change counts.

Which variables are unset (:func:`unset_names`): those the two definitions
read that no file of the job's code writes or names other than by reading
them (an identifier anywhere else, a ``V=`` in a string, ``eval`` of a
computed text or an assignment to a computed name makes every name possibly
set), that are not among the variables only a run knows
(:data:`ci_tools.shell.expand.RUNTIME_VARIABLES`), and that the job's
environment does not hold: the same reading of the environment the
evaluator makes when it expands ``${X:-}`` for a job.
"""

from __future__ import annotations

import fnmatch
import re
from typing import Callable, Iterable

from ..bounded import BoundedDict
from ..shell.expand import RUNTIME_VARIABLES
from ..shell.parse import Node, parse_script

# The operators of ``${V<op>D}`` that give D for an unset V, and those that give nothing.
_DEFAULTS = (":-", "-")
_ALTERNATES = (":+", "+")
_IDENTIFIER = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_GLOB = re.compile(r"[*?\[\]]")
_BARE = re.compile(r"[A-Za-z0-9_./:=@%+,${}-]*")
# Commands whose arguments may assign a variable named in them.
_ASSIGNING = frozenset({"declare", "typeset", "export", "local", "readonly", "read", "printf", "mapfile",
                        "readarray", "unset", "getopts", "let"})
_IMPURE = frozenset({"command_substitution", "process_substitution", "arithmetic_expansion"})
_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
# Commands that assign the variables their words name, each with its options that take a value.
_NAME_TAKERS = {"read": "dinNptu", "mapfile": "dnOsuCc", "readarray": "dnOsuCc"}


# Per definition text: the variables it reads; per definition text and unset names: its reduction.  Every row of
# every config reaching a changed function asks again.
_READS: BoundedDict[str, frozenset[str]] = BoundedDict(1024)
_REDUCED: BoundedDict[tuple[str, frozenset[str]], bytes | None] = BoundedDict(1024)


def read_names(node: Node) -> frozenset[str]:
    """The named variables ``node`` reads by ``$V`` or ``${V...}`` (positional and special parameters left out)."""
    found = _READS.get(node.text)
    if found is None:
        found = _READS.put(node.text, _read_names(node))
    return found


def _read_names(node: Node) -> frozenset[str]:
    names: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type in ("simple_expansion", "expansion"):
            name = n.child_of_type("variable_name")
            if name is not None and _IDENTIFIER.fullmatch(name.text.encode()):  # not $1, $@, $?
                names.add(name.text)
        stack.extend(n.children)
    return frozenset(names)


# Per file content: the identifiers it spells other than as a read (None: it may assign any name).
_NAMED: BoundedDict[bytes, frozenset[str] | None] = BoundedDict(256)


def named_otherwise(path: str, data: bytes) -> frozenset[str] | None:
    """The identifiers a shell file spells other than by reading a variable, in a comment or as plain text of a
    string (where ``V=`` still counts): every name the file may assign.  None when it may assign a name it does
    not spell (``eval "$cmd"``, ``declare "$name=1"``, ``read -r "$var"``)."""
    found = _NAMED.get(data)
    if found is None and data not in _NAMED:
        found = _NAMED.put(data, _named_otherwise(path, data))
    return found


def _named_otherwise(path: str, data: bytes) -> frozenset[str] | None:
    script = parse_script(path, data)
    names: set[bytes] = set()
    source = script.source
    stack = [script.root]
    while stack:
        n = stack.pop()
        if n.type == "comment":
            continue
        if n.type in ("command", "declaration_command"):
            if _dynamic_assignment(n):
                return None
            if n.type == "declaration_command" or _program(n) in _ASSIGNING or _program(n) == "eval":
                # `export 'V'`, `read -r 'V'`, `eval 'V=1'`: every name it spells, quoted or not.
                names.update(_IDENTIFIER.findall(source[n.start:n.end]))
        if n.type in ("simple_expansion", "expansion"):
            name = n.child_of_type("variable_name")
            op = next((c.text.strip() for c in n.children if not c.named and c.text.strip() not in ("$", "${", "}")), "")
            if name is not None and op in ("", *_DEFAULTS, *_ALTERNATES):
                stack.extend(c for c in n.children if c is not name)
                continue
        if n.type in ("string_content", "raw_string", "heredoc_content"):
            # Plain text names nothing unless it spells an assignment (`export "V=1"`, a heredoc of `V=1`).
            names.update(m.group(1) for m in re.finditer(rb"([A-Za-z_][A-Za-z0-9_]*)\+?=", source[n.start:n.end]))
            continue
        if not n.children:
            names.update(_IDENTIFIER.findall(source[n.start:n.end]))
        stack.extend(n.children)
    return frozenset(name.decode() for name in names)


def _dynamic_assignment(command: Node) -> bool:
    """Whether a command may assign a variable whose name it computes: ``eval``/``let`` of a computed text, or a
    computed name where ``read``, ``printf -v``, ``mapfile``, ``getopts`` or ``declare`` take one."""
    if command.type == "declaration_command":
        return any(_computed(c) for c in command.children if c.named and c.type not in ("variable_assignment",))
    program = _program(command)
    words = [c for c in command.children if c.named and c.type != "command_name" and c.type not in _REDIRECTS]
    if program in ("eval", "let"):
        return any(_computed(w) for w in words)
    if program == "printf":
        return len(words) > 1 and words[0].text == "-v" and _computed(words[1])
    if program == "getopts":
        return len(words) > 1 and _computed(words[1])
    if program in _NAME_TAKERS:
        return any(_computed(w) for w in _name_words(words, _NAME_TAKERS[program]))
    return False


def _name_words(words: list[Node], valued: str) -> list[Node]:
    """The words of ``read``/``mapfile`` that name a variable: those not an option or an option's value (``-a``
    of ``read`` takes a name)."""
    names: list[Node] = []
    i = 0
    while i < len(words):
        text = words[i].text
        if text.startswith("-") and len(text) > 1:
            if text[-1] == "a" and valued == _NAME_TAKERS["read"] and i + 1 < len(words):
                names.append(words[i + 1])
                i += 1
            elif text[-1] in valued:
                i += 1
        else:
            names.append(words[i])
        i += 1
    return names


def _program(command: Node) -> str:
    name = command.child_of_type("command_name")
    return name.text if name is not None else ""


def _computed(word: Node) -> bool:
    stack = [word]
    while stack:
        n = stack.pop()
        if n.type in ("simple_expansion", "expansion", *_IMPURE):
            return True
        stack.extend(n.children)
    return False


def unset_names(definitions: Iterable[Node], files: Iterable[tuple[str, bytes]],
                environments: Iterable[Iterable[str]]) -> frozenset[str]:
    """The variables ``definitions`` read that are unset wherever they run: no file of ``files`` (the job's code,
    at both revisions) names them other than by reading them, no environment of ``environments`` (the jobs', at
    both revisions) holds them, and only a run does not know them.  Empty when a file may assign a name it does
    not spell."""
    candidates = frozenset().union(*(read_names(d) for d in definitions)) - RUNTIME_VARIABLES
    for path, data in files:
        named = named_otherwise(path, data)
        if named is None:
            return frozenset()
        candidates -= named
    for environment in environments:
        candidates -= frozenset(environment)
    return candidates


def same_when_unset(base: Node, head: Node, unset: frozenset[str]) -> bool:
    """Whether two definitions of a function read the same once ``unset`` are taken as unset (:func:`reduced`)."""
    if not unset:
        return False
    before = reduced(base, unset)
    return before is not None and before == reduced(head, unset)


def reduced(node: Node, unset: frozenset[str]) -> bytes | None:
    """``node``'s text with ``unset`` substituted, decided tests folded and dead branches dropped, without
    comments, runs of whitespace as one space; None when the substituted text does not parse.  A function's
    definition is a whole syntax tree: its text alone decides the reduction."""
    key = (node.text, unset)
    if key not in _REDUCED:
        _REDUCED.put(key, _reduced(node, unset))
    return _REDUCED.get(key)


def _reduced(node: Node, unset: frozenset[str]) -> bytes | None:
    substituted = _Printer(lambda n: _substitute(n, unset)).text(node)
    if substituted == node.text:
        folded = _Printer(_fold).text(node)
    else:
        script = parse_script(node.script.path, substituted.encode("utf-8", "surrogateescape"))
        if script.problems:
            return None
        folded = _Printer(_fold).text(script.root)
    return b" ".join(folded.encode("utf-8", "surrogateescape").replace(b"\\\n", b" ").split())


class _Printer:
    """A node's source text, each node ``override`` answers for (a text, not None) replaced, comments dropped."""

    def __init__(self, override: Callable[[Node], str | None]) -> None:
        self.override = override

    def text(self, node: Node) -> str:
        if node.type == "comment":
            return ""
        replaced = self.override(node)
        if replaced is not None:
            return replaced
        if not node.children:
            return node.text
        source = node.script.source
        out, at = [], node.start
        for child in node.children:
            out.append(source[at:child.start].decode("utf-8", "surrogateescape"))
            out.append(self.text(child))
            at = child.end
        out.append(source[at:node.end].decode("utf-8", "surrogateescape"))
        return "".join(out)


def _substitute(n: Node, unset: frozenset[str]) -> str | None:
    """What an expansion of an unset variable gives, written as the text bash would then run."""
    if n.type not in ("simple_expansion", "expansion"):
        return None
    name = n.child_of_type("variable_name")
    if name is None or name.text not in unset:
        return None
    lead = n.script.source[n.start:n.children[0].start + n.children[0].text.index("$")].decode()
    parent = _parent(n)
    # Inside double quotes an empty expansion is empty text; unquoted and a whole argument of a command, the
    # argument is gone (no empty word is passed); anywhere else it is left as written.
    empty = lead if parent is not None and parent.type in ("string", "command") else None
    if n.type == "simple_expansion" or len(n.children) == 3:  # $V, ${V}
        return empty
    op = n.children[2]
    if op.named or n.children[-1].text != "}":
        return None
    default = n.script.source[op.end:n.children[-1].start].decode("utf-8", "surrogateescape")
    if op.text in _DEFAULTS and not default:
        return empty
    # Written bare, the default must read as it did inside the expansion: inside double quotes any text without
    # quotes; elsewhere (an assignment, a `[[ ]]` operand, a word) text that no splitting, comment or operator
    # reads otherwise (`X=${V:-a b}` is not `X=a b`).
    quoted = parent is not None and parent.type == "string"
    if op.text in _DEFAULTS and ('"' not in default and "'" not in default if quoted else _BARE.fullmatch(default)):
        return lead + default
    if op.text in _ALTERNATES:
        return empty
    return None


def _parent(n: Node) -> Node | None:
    stack = [n.script.root]
    while stack:
        p = stack.pop()
        for c in p.children:
            if c is n:
                return p
            if c.start <= n.start and n.end <= c.end:
                stack.append(c)
    return None


# -- tests and branches decided -----------------------------------------------------------------------------------


def _fold(n: Node) -> str | None:
    if n.type == "test_command":
        decided = _decide_test(n)
        if decided is not None:
            return "true" if decided else "false"
        if _misread(n):
            return None
        pattern = bool(n.children) and n.children[0].text == "[["
        return _Printer(lambda e: _fold_operand(e, pattern)).text(n)
    if n.type == "if_statement":
        return _taken_branch(n)
    return None


def _fold_operand(n: Node, pattern: bool) -> str | None:
    """Inside a test: ``X && <true>`` is ``X``, ``X || <false>`` is ``X`` (either order), the decided operand
    being literal, so that dropping it drops no effect."""
    if n.type != "binary_expression":
        return None
    named = [c for c in n.children if c.named]
    ops = [c.text for c in n.children if not c.named]
    if len(named) != 2 or ops not in (["&&"], ["||"]):
        return None
    neutral = ops == ["&&"]  # the operand value that leaves the other's truth as it is
    for kept, dropped in ((named[0], named[1]), (named[1], named[0])):
        if _decide(dropped, pattern) is neutral and _pure(dropped):
            return _Printer(lambda e: _fold_operand(e, pattern)).text(kept)
    return None


def _taken_branch(n: Node) -> str | None:
    """An ``if`` with one condition, a decided test, and no ``elif``, that is a statement of a block (not part of a
    list, a pipeline, a redirection or run in the background): the text of the branch it takes (its last
    statement's `;` left out, as a line's end would end it).  An ``if`` that takes no branch ends with status 0:
    it is dropped only where the next statement sets the status before anything reads it, else it is `true`."""
    parent = _parent(n)
    if parent is None or parent.type not in ("compound_statement", "program"):
        return None
    siblings = list(parent.children)
    after = siblings[siblings.index(n) + 1:]
    if after and not after[0].named and after[0].text == "&":
        return None
    keywords = [i for i, c in enumerate(n.children) if not c.named and c.text in ("if", "then", "fi")]
    if len(keywords) != 3 or any(c.type == "elif_clause" for c in n.children):
        return None
    condition = [c for c in n.children[keywords[0] + 1:keywords[1]] if c.named]
    if len(condition) != 1 or condition[0].type != "test_command":
        return None
    decided = _decide_test(condition[0])
    if decided is None:
        return None
    if decided:
        body = [c for c in n.children[keywords[1] + 1:keywords[2]] if c.type != "else_clause"]
    else:
        otherwise = n.child_of_type("else_clause")
        body = list(otherwise.children[1:]) if otherwise is not None else []
    while body and not body[-1].named and body[-1].text in (";", "\n"):
        body.pop()
    if not body:
        following = next((c for c in after if c.named and c.type != "comment"), None)
        return "" if following is not None and not _reads_status(following) else "true"
    printer, source = _Printer(_fold), n.script.source
    out = [printer.text(body[0])]
    for before, child in zip(body, body[1:]):
        out.append(source[before.end:child.start].decode("utf-8", "surrogateescape"))
        out.append(printer.text(child))
    return "".join(out)


def _reads_status(n: Node) -> bool:
    """Whether a statement may read the status the one before it left."""
    return "$?" in n.text or "${?" in n.text


def _decide_test(test: Node) -> bool | None:
    inner = [c for c in test.children if c.named]
    if len(inner) != 1 or _misread(test):
        return None
    pattern = test.children[0].text == "[["
    return _decide(inner[0], pattern)


def _decide(n: Node, pattern: bool) -> bool | None:
    """The truth of a test expression whose operands are literal; None when it cannot be told without running."""
    named = [c for c in n.children if c.named]
    ops = [c.text for c in n.children if not c.named]
    if n.type == "parenthesized_expression" and len(named) == 1:
        return _decide(named[0], pattern)
    if n.type == "unary_expression" and len(named) >= 1:
        operator = n.children[0].text
        if operator == "!":
            inner = _decide(named[-1], pattern)
            return None if inner is None else not inner
        value = _literal(named[-1])
        if value is None:
            return None
        return {"-n": value != "", "-z": value == ""}.get(operator)
    if n.type == "binary_expression" and len(named) == 2 and len(ops) == 1:
        op, (left, right) = ops[0], named
        if op in ("&&", "||"):
            a, b = _decide(left, pattern), _decide(right, pattern)
            if op == "&&":
                if a is False or (b is False and _pure(left)):
                    return False
                return True if a is True and b is True else None
            if a is True or (b is True and _pure(left)):
                return True
            return False if a is False and b is False else None
        lhs, rhs = _literal(left), _literal(right)
        if lhs is None or rhs is None:
            return None
        if op in ("==", "=", "!="):
            if right.type not in ("string", "raw_string") and _GLOB.search(rhs):
                if not pattern or "(" in rhs:  # `[ ]` expands it as file names; extglob is not read here
                    return None
                same = fnmatch.fnmatchcase(lhs, rhs)
            else:
                same = lhs == rhs
            return same if op != "!=" else not same
    return None


def _misread(test: Node) -> bool:
    """Whether the grammar grouped the test otherwise than bash: tree-sitter-bash reads ``[[ $A = a || $B = b ]]``
    as ``$A = (a || $B) = b``, a comparison with an expression for an operand.  Such a test is not folded."""
    stack = [test]
    while stack:
        n = stack.pop()
        if n.type == "binary_expression":
            ops = [c.text for c in n.children if not c.named]
            if ops and ops[0] not in ("&&", "||") and any(c.type == "binary_expression" for c in n.children):
                return True
        stack.extend(n.children)
    return False


def _literal(n: Node) -> str | None:
    """The text a test operand gives when it holds no expansion."""
    if n.type == "string":
        parts = [c for c in n.children if c.named]
        if all(c.type == "string_content" for c in parts) and "\\" not in n.text:
            return "".join(c.text for c in parts)
        return None
    if n.type == "raw_string":
        return n.text[1:-1]
    if n.type in ("word", "number", "extglob_pattern") and not re.search(r"[$`\\'\"]", n.text):
        return n.text
    return None


def _pure(n: Node) -> bool:
    """Whether evaluating a test operand has no effect beyond its truth (no command run, nothing assigned)."""
    stack = [n]
    while stack:
        c = stack.pop()
        if c.type in _IMPURE:
            return False
        if c.type == "expansion" and any(not k.named and k.text in (":=", "=") for k in c.children):
            return False
        stack.extend(c.children)
    return True


__all__ = ["named_otherwise", "read_names", "reduced", "same_when_unset", "unset_names"]
