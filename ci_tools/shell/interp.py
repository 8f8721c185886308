"""Partial evaluation of a recipe's statements for one job's environment.

The interpreter walks the syntax tree the way bash would run it, but never
runs an external command: it tracks variables, exports, functions and the
positional parameters, decides ``if``/``case``/``&&``/``||`` whenever the
condition is known, and records every server command line it passes.  When a
condition is unknown, both sides run on copies of the state, which are then
merged (see :mod:`.state`).  Loops whose items are unknown run their body
once as one side of such a branch.  A side that leaves its loop or function
(``break``, ``continue``, ``return``) is joined with the other paths where the
loop or function ends (see :mod:`.flow`).
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from typing import Callable, cast

from ..config import ProjectConfig
from ..findings import Location
from ..revision.read_log import branch_log, logged_reads
from ..revision.snapshot import Snapshot
from .arith import evaluate_arith, evaluate_arith_text
from .commands import format_printf
from .conditions import Tri, _has_quotes, not3, test_argv, test_expression, test_words
from .effects import WRAPPERS, EffectAnalysis, may_launch
from .expand import RUNTIME_VARIABLES, SCRIPT_NAME, Field, ShellExit, literal_text, significant
from .flow import (
    FLOW,
    Break,
    Continue,
    Gone,
    Return,
    Target,
    base_of,
    exit_on_some_paths,
    hand_over,
    join,
)
from .loops import Loops
from .memo import CallMemo, Effects
from .model import EarlyExit, MissingEnv, Value
from .parse import IfClause, Node, Script, condition_names, if_clauses, parse_script
from .pure import POSITIONAL, PureCache, pure_reads
from .server import (
    LaunchPattern,
    find_launch,
    parse_flags,
    split_patterns,
    takes_model_first,
)
from .state import ArrayVal, Binding, Captured, Server, State, merge
from .structured import with_keys
from .unread_value import UnreadValue, unread_value

_REDIRECTS = {"file_redirect", "heredoc_redirect", "herestring_redirect", "heredoc_body", "heredoc_start"}
_MAX_CALL_DEPTH = 32
# Nested calls of one function (recursion) evaluated before its deeper calls count as unknown.
_MAX_RECURSION = 3
_NO_SERVER_SCAN = {"echo", "printf", "log", "info", "warn", "logger"}
# Environment files installers write in the home directory, and the directory each puts on PATH.
_INSTALLER_ENVS = (("/.local/bin/env", "$HOME/.local/bin"), ("/.cargo/env", "$HOME/.cargo/bin"))
_DYNAMIC_PATH = re.compile(r"dirname|\$0|\$\{0\}|BASH_SOURCE|pwd|realpath|readlink")




class Interpreter(Loops):
    def __init__(self, recipe_path: str, config: ProjectConfig, snapshot: Snapshot) -> None:
        super().__init__()
        self.recipe_path = recipe_path
        self.config = config
        self.snapshot = snapshot
        # Routers are launches too (what may start one is evaluated as what may start a server), told apart
        # when found.
        launches = config.server_patterns + config.router_patterns
        self.patterns = split_patterns(launches)
        self.router_patterns = frozenset(split_patterns(config.router_patterns))
        self.state = State()
        self.errors: list[str] = []
        self.guards: list[tuple[Node, str]] = []
        # Loops and function calls being evaluated, innermost last (see .flow).
        self.targets: list[Target] = []
        # Commands whose program is unknown until run time (any of them could start the server).
        self.opaque_commands: list[Location] = []
        # Every function a command of the evaluation named, on any side of an undecidable branch, whether its
        # body was then evaluated, reused from an earlier call or skipped as one that changes nothing evaluated.
        self.dispatched: set[str] = set()
        # Those of them named once a server had started: what the job runs after it (the client, the eval).
        self.dispatched_late: set[str] = set()
        # Calls being evaluated, per function body.
        self.active: dict[int, int] = {}
        self.frames: list[dict[str, Binding | None]] = []
        self.call_depth = 0
        self.subshell_depth = 0
        self.sourcing: list[str] = []
        # `set -a` (allexport) is on: read by the steps that assign a sourced file's names.
        self.allexport = False
        # > 0 while an exit status is used (conditions, `&&`/`||` operands).
        self.status_needed = 0
        self.forks = 0
        # While a top-level function call is recorded for reuse (see .memo).
        self.empty_reads: set[str] | None = None
        self.called: set[str] | None = None
        # Function calls and sources being recorded (quiet functions are skipped only outside them).
        self.recording = 0
        # Steps with effects outside the state (a container started): a call that takes one is not recorded.
        self.external_effects = 0
        self.effects = _effects_for(launches, self.patterns)

    # -- entry -------------------------------------------------------------------------------
    def run(self, script: Script) -> None:
        self._problems(script)
        try:
            self.block(script.root.children)
        except ShellExit:
            pass
        except FLOW:
            pass
        except RecursionError:
            # Nesting deeper than Python's stack allows: what the rest of the script does is not known.
            self.errors.append(f"{script.path}: nested too deeply to evaluate; what follows the failing "
                               "statement is unknown")

    def _problems(self, script: Script) -> None:
        for p in script.problems:
            if script.bash_accepts:  # the grammar's limit, not the script's error: no recipe-syntax finding
                self.errors.append(f"{script.path}:{p.line}:{p.column}: tree-sitter-bash cannot read this line, which "
                                   f"bash accepts ({p.text}): the script's evaluation is incomplete")
            else:
                self.errors.append(f"{script.path}:{p.line}:{p.column}: bash syntax error: {p.text}")

    # -- statements --------------------------------------------------------------------------
    def block(self, nodes: tuple[Node, ...] | list[Node]) -> Tri:
        status: Tri = True
        count = len(nodes)
        for i, n in enumerate(nodes):
            if not n.named or n.type == "comment":
                continue
            if i + 1 < count and nodes[i + 1].type == "&":
                if not self._runs_nothing(n):
                    self.subshell(lambda n=n: self.stmt(n))  # type: ignore[misc]
                status = True
            else:
                status = self.stmt(n)
        return status

    def stmt(self, n: Node) -> Tri:
        handler = _HANDLERS.get(n.type)
        if handler is None:
            return None
        return handler(self, n)

    def _assignment_stmt(self, n: Node) -> Tri:
        self.assign(n)
        return True

    def _assignments_stmt(self, n: Node) -> Tri:
        for c in n.children:
            if c.type == "variable_assignment":
                self.assign(c)
        return True

    def _redirected(self, n: Node) -> Tri:
        return self.redirected(n)

    def is_function(self, name: str) -> bool:
        return name in self.state.functions

    def _negated(self, n: Node) -> Tri:
        inner = next((c for c in n.children if c.named), None)
        return not3(self.status_of(inner)) if inner is not None else None

    def status_of(self, n: Node) -> Tri:
        self.status_needed += 1
        try:
            return self.stmt(n)
        finally:
            self.status_needed -= 1

    def condition(self, nodes: list[Node]) -> Tri:
        self.status_needed += 1
        try:
            return self.block(nodes)
        finally:
            self.status_needed -= 1

    def _pipeline(self, n: Node) -> Tri:
        parts = [c for c in n.children if c.named]
        if self.sink is not None:
            return self.piped(parts)
        # tree-sitter-bash reads `! echo "$X" | grep -q Y` as a pipeline whose first command is negated; bash
        # negates the pipeline's status.
        negated = parts[0].type == "negated_command"
        commands = [*[c for c in parts[0].children if c.named][:1], *parts[1:]] if negated else parts
        if self.status_needed and self._status_computable(commands):
            # `if echo "$CONFIG" | grep -q -- '--flag'`: the last command's status, its input the text printed.
            saved, self.sink = self.sink, []
            try:
                found = self.piped(commands)
            finally:
                self.sink = saved
            return (None if found is None else not found) if negated else found
        status: Tri = None
        for p in parts:
            if self._runs_nothing(p):
                status = None  # `nvidia-smi | grep ...`: nothing to evaluate, no state to copy for it
                continue
            status = self.subshell(lambda p=p: self.stmt(p))  # type: ignore[misc]
        return status if len(parts) == 1 else None

    def _status_computable(self, parts: list[Node]) -> bool:
        """A pipeline of ``echo``/``printf`` into modelled commands: its status is the last command's (the printing
        commands succeed, so ``pipefail`` changes nothing)."""
        if len(parts) < 2 or not all(p.type == "command" for p in parts) or not self._computable_parts(parts):
            return False
        for p in parts[:-1]:
            if p.memo is None:
                p.memo = self._command_shape(p)
            if cast(_CommandShape, p.memo)[2] not in ("echo", "printf"):
                return False
        return True

    def _runs_nothing(self, n: Node) -> bool:
        """A plain external command (see ``_command``): evaluating it changes nothing and reports nothing."""
        if n.type != "command" or self.status_needed:
            return False
        if n.memo is None:
            n.memo = self._command_shape(n)
        prefix, words, literal_name, standalone = cast(_CommandShape, n.memo)
        return (bool(words) and not standalone and literal_name is not None
                and literal_name not in self.state.functions
                and (literal_name not in _BUILTINS or literal_name in _INERT_BUILTINS))

    def _subshell_stmt(self, n: Node) -> Tri:
        return self.subshell(lambda: self.block(n.children))

    def _compound(self, n: Node) -> Tri:
        if n.children and n.children[0].type == "((":
            result: int | None = 0
            for c in n.children:
                if c.named:
                    result = evaluate_arith(self, c)
            return None if result is None else result != 0
        return self.block(n.children)

    def _test_command(self, n: Node) -> Tri:
        reads = pure_reads(n)
        if reads is None:
            return self._test_now(n)
        inputs = self._pure_inputs(reads, type(self), self.snapshot)
        return cast(Tri, _PURE.get((id(n), *map(id, inputs)), inputs, lambda: self._test_now(n)))

    def pure_scalar(self, node: Node, location: Location) -> Value:
        """``scalar_value`` of a word, computed once per inputs when the word is pure (see .pure)."""
        reads = pure_reads(node)
        if reads is None:
            return self.scalar_value(node, location, node.text)
        # The value also depends on how this interpreter expands (its class, its launch patterns) and
        # on where it is assigned.
        inputs = self._pure_inputs(reads, type(self), self.patterns, location)
        return cast(Value, _PURE.get((id(node), *map(id, inputs)), inputs,
                                     lambda: self.scalar_value(node, location, node.text)))

    def _pure_inputs(self, reads: tuple[str, ...], *context: object) -> tuple[object, ...]:
        """The bindings a pure word reads (positional parameters one by one), after ``context``."""
        if self.reads is not None:
            self.reads.update(n for n in reads if n != POSITIONAL)
        get = self.state.vars.get
        inputs: list[object] = list(context)
        for name in reads:
            if name == POSITIONAL:
                inputs.append(len(self.state.positional))
                inputs.extend(self.state.positional)
            else:
                inputs.append(get(name))
        return tuple(inputs)

    def _test_now(self, n: Node) -> Tri:
        inner = [c for c in n.children if c.named]
        double = bool(n.children) and n.children[0].type == "[["
        if not inner:
            return False
        if double:
            return test_expression(self, inner[0], True)
        # `[ ]` is an ordinary command: its words follow POSIX test precedence
        # (-o below -a), which tree-sitter's expression tree does not model.
        words: list[str | None] = []
        for c in inner:
            test_words(self, c, words)
        return test_argv(words, self, n)

    def _function_definition(self, n: Node) -> Tri:
        name = next((c for c in n.children if c.type == "word"), None)
        body = next((c for c in reversed(n.children) if c.named and c.type != "word"), None)
        if name is not None and body is not None:
            self.state.functions[name.text] = body
        return True

    def _list(self, n: Node) -> Tri:
        kids = n.children
        if len(kids) < 3:
            return self.block(kids)
        left, op, right = kids[0], kids[1].type, kids[-1]
        a = self.status_of(left)
        if (op == "&&" and a is False) or (op == "||" and a is True):
            return a
        guard_text = left.text if op == "&&" else f"! {left.text}"

        def run() -> Tri:
            return self.guarded(left, guard_text, lambda: self.stmt(right))

        if a is None:
            return self.fork(run, _nothing)
        return run()

    # -- if / case / loops -------------------------------------------------------------------
    def _if(self, n: Node) -> Tri:
        if n.memo is None:
            n.memo = if_clauses(n)
        clauses, else_body = cast(_IfClauses, n.memo)
        log = branch_log(self.snapshot)
        if log is not None:  # a chain's evaluation: what its conditions read here (coverage asks which branch runs)
            log.note_branch(n.script.path, n.line, {name: self._known_text(name) for name in condition_names(n)})
        return self._if_chain(clauses, else_body, 0)

    def _known_text(self, name: str) -> str | None:
        """A variable's value when it is set to a known scalar; None otherwise (unset, unknown, an array)."""
        value = self.state.vars.get(name)
        return value.text if isinstance(value, Value) else None

    def _if_chain(self, clauses: list[IfClause], else_body: list[Node] | None, i: int) -> Tri:
        # Clauses whose condition is false are passed over in a loop; an undecided one forks.
        while i < len(clauses):
            cond, body, text = clauses[i]
            c = self.condition(cond)
            if c is False:
                i += 1
                continue
            guard = cond[0] if cond else None

            def run(body: list[Node] = body, guard: Node | None = guard, text: str = text) -> Tri:
                return self.guarded(guard, text, lambda: self.block(body))

            if c is True:
                return run()
            return self.fork(run, lambda i=i: self._if_chain(clauses, else_body, i + 1))  # type: ignore[misc]
        return self.block(else_body) if else_body is not None else True

    def _case(self, n: Node) -> Tri:
        if n.memo is None:
            word_node = next((c for c in n.children if c.named and c.type != "case_item" and c.type != "comment"), None)
            n.memo = (word_node, [_case_item(c, word_node) for c in n.children if c.type == "case_item"])
        word, items = cast(tuple["Node | None", list[_CaseItem]], n.memo)
        if word is None:
            return True
        value, _ = self.scalar_text(word)
        return self._case_chain(value, items, 0)

    def _case_chain(self, value: str | None, items: list[_CaseItem], i: int) -> Tri:
        while i < len(items):
            item, patterns, body, cond_text = items[i]
            matched: Tri = False
            for p, literal, glob, quoted in patterns:
                text = literal if literal is not None else self.scalar_text(p)[0]
                if text is None or value is None:
                    matched = None if matched is False else matched
                    if text == "*":
                        matched = True
                    continue
                if (text == value) if (quoted or not glob) else fnmatch.fnmatchcase(value, text):
                    matched = True
                    break
            if matched is False:
                i += 1
                continue

            def run(item: Node = item, body: list[Node] = body, cond_text: str = cond_text) -> Tri:
                return self.guarded(item, cond_text, lambda: self.block(body))

            if matched is True:
                return run()
            return self.fork(run, lambda i=i: self._case_chain(value, items, i + 1))  # type: ignore[misc]
        return True

    # -- control helpers ---------------------------------------------------------------------
    def guarded(self, guard: Node | None, text: str, run: Callable[[], Tri]) -> Tri:
        if guard is None:
            return run()
        self.guards.append((guard, text))
        try:
            return run()
        finally:
            self.guards.pop()

    def fork(self, a: Callable[[], Tri], b: Callable[[], Tri]) -> Tri:
        """Run both sides of an undecidable branch and merge what they leave.

        A side that ends the script leaves its exits (conditional) to the other; a side that leaves its
        loop or function (break, continue, return) is handed to that loop or function (see .flow).
        """
        self.forks += 1
        before = self.state
        outcomes: list[tuple[State, ShellExit | None, Exception | None]] = []
        for side in (a, b):
            self.state = before.clone()
            exited: ShellExit | None = None
            flow: Exception | None = None
            try:
                side()
            except ShellExit as exc:
                # Kept without its traceback: frames holding the exception that holds them are a cycle
                # only the collector frees (thousands per sweep).
                exited = exc.with_traceback(None)
            except FLOW as exc:
                flow = exc.with_traceback(None)
            outcomes.append((self.state, exited, flow))
        (sa, ea, fa), (sb, eb, fb) = outcomes
        if ea is not None and eb is not None:
            self.state = merge(before, sa, sb)
            raise ShellExit(ea.code if ea.code == eb.code else "", ea.node, missing_env=ea.missing_env and eb.missing_env)
        if ea is not None or eb is not None:
            dead, alive, flow = (sa, sb, fb) if ea is not None else (sb, sa, fa)
            merged = merge(before, dead, alive)
            alive.servers, alive.early_exits, alive.missing = merged.servers, merged.early_exits, merged.missing
            if flow is not None and hand_over(self.targets, alive, flow):
                raise Gone()
            self.state = alive
            return None
        live = [s for s, f in ((sa, fa), (sb, fb)) if f is None or not hand_over(self.targets, s, f)]
        if not live:
            raise Gone()
        self.state = live[0] if len(live) == 1 else merge(before, sa, sb)
        return None

    def subshell(self, run: Callable[[], Tri]) -> Tri:
        """A subshell, pipeline element or background job: variable changes do not survive it."""
        before = self.state
        self.state = before.clone()
        self.subshell_depth += 1
        # break/return inside a subshell end the subshell only.
        targets, self.targets = self.targets, []
        status: Tri
        try:
            status = run()
        except ShellExit as exc:
            status = exc.code == "0" if exc.code else None
        except FLOW:
            status = None
        finally:
            self.subshell_depth -= 1
            self.targets = targets
        inner = self.state
        self.state = before
        before.servers, before.early_exits, before.missing = inner.servers, inner.early_exits, inner.missing
        if before.captured is None:
            before.captured = inner.captured
        return status

    # -- assignments -------------------------------------------------------------------------
    def _declare_local(self, name: str) -> None:
        if self.frames and name not in self.frames[-1]:
            self.frames[-1][name] = self.state.vars.get(name)

    def assign(self, n: Node, *, local: bool = False, associative: bool = False) -> str | None:
        kids = n.children
        if not kids:
            return None
        if n.memo is None:
            n.memo = self._constant_assignment(n)
        if isinstance(n.memo, tuple):
            # NAME=literal: the same value every time, built once.
            name, constant = cast(tuple[str, Value], n.memo)
            if local:
                self._declare_local(name)
            self.state.vars[name] = constant
            return name
        if isinstance(n.memo, UnreadValue):
            if local:
                self._declare_local(n.memo.name)
            self.state.vars[n.memo.name] = self._unread_value(n.memo, n.location())
            return n.memo.name
        lhs = kids[0]
        op = kids[1].text if len(kids) > 1 else "="
        rhs = kids[2] if len(kids) > 2 else None
        index: str | None = None
        if lhs.type == "subscript":
            name_node = lhs.child_of_type("variable_name")
            inner = [c for c in lhs.children if c.named and c is not name_node]
            if name_node is None:
                return None
            name = name_node.text
            index = self.scalar_text(inner[0])[0] if inner else None
        else:
            name = lhs.text
        if local:
            self._declare_local(name)
        loc = n.location()
        state = self.state
        if self.reads is not None:
            self.reads.add(name)
        old = state.vars.get(name)
        if rhs is not None and rhs.type == "array" and (associative or (isinstance(old, ArrayVal) and old.keys is not None)):
            state.vars[name] = self._associative(rhs, old if op == "+=" else None, loc, n.text)
            return name
        if rhs is not None and rhs.type == "array":
            if op != "+=" and (reads := pure_reads(rhs)) is not None:
                inputs = self._pure_inputs(reads, type(self), loc)
                state.vars[name] = cast(ArrayVal, _PURE.get((id(rhs), *map(id, inputs)), inputs,
                                                          lambda: self._array(rhs, loc, n.text)))
                return name
            items = tuple(self.values([c for c in rhs.children if c.named and c.type != "comment"]))
            opened = False
            if op == "+=" and old is not None:
                items = (old.items if isinstance(old, ArrayVal) else (old,)) + items
                opened = isinstance(old, ArrayVal) and old.open
            state.vars[name] = ArrayVal(items, loc, n.text, open=opened)
            return name
        value = self.pure_scalar(rhs, loc) if rhs is not None else Value("", loc, expression="")
        if isinstance(old, ArrayVal) and old.keys is not None and lhs.type == "subscript":
            if index is None:
                state.vars[name] = ArrayVal((Value(None, loc, True, n.text),), loc, n.text, True, ())
            else:
                state.vars[name] = old.with_item(index, value, loc, n.text)
            return name
        if index is not None or lhs.type == "subscript":
            items_list = list(old.items) if isinstance(old, ArrayVal) else ([old] if old is not None else [])
            if index is None or not index.isdigit():
                state.vars[name] = ArrayVal((Value(None, loc, True, n.text),), loc, n.text)
                return name
            i = int(index)
            while len(items_list) <= i:
                items_list.append(Value("", loc))
            if op == "+=":
                prev = items_list[i]
                value = Value(None if prev.text is None or value.text is None else prev.text + value.text,
                              loc, prev.conditional or value.conditional, n.text)
            items_list[i] = value
            state.vars[name] = ArrayVal(tuple(items_list), loc, n.text, open=isinstance(old, ArrayVal) and old.open)
            return name
        if op == "+=" and old is not None:
            prev = (old.items[0] if old.items else Value("", loc)) if isinstance(old, ArrayVal) else old
            joined = None if prev.text is None or value.text is None else prev.text + value.text
            # appending keeps what is known of the start (`MOUNTS+=",x"` after an undecided branch)
            prefix = "" if joined is not None else prev.known_prefix if prev.text is None else \
                prev.text + value.known_prefix
            value = Value(joined, loc, prev.conditional or value.conditional, n.text, known_prefix=prefix)
            if isinstance(old, ArrayVal):
                state.vars[name] = ArrayVal((value,) + old.items[1:], loc, n.text, open=old.open)
                return name
        state.vars[name] = value
        return name

    def _array(self, rhs: Node, loc: Location, text: str) -> ArrayVal:
        return ArrayVal(tuple(self.values([c for c in rhs.children if c.named and c.type != "comment"])), loc, text)

    def _associative(self, rhs: Node, old: Binding | None, loc: Location, text: str) -> ArrayVal:
        """``declare -A M=([key]=value ...)``: each element is expanded, then split at ``]=``."""
        array = old if isinstance(old, ArrayVal) and old.keys is not None else ArrayVal((), loc, text, False, ())
        for element in (c for c in rhs.children if c.named and c.type != "comment"):
            word = self.scalar_value(element, element.location(), element.text)
            m = _ASSOCIATIVE_ELEMENT.match(word.text) if word.text is not None else None
            if m is None:
                # An element whose key is not known: which keys the array has is not known either.
                return ArrayVal((Value(None, loc, True, text),), loc, text, True, ())
            value = Value(m.group(2), element.location(), word.conditional, element.text)
            array = array.with_item(m.group(1), value, loc, text)
        return array

    def _constant_assignment(self, n: Node) -> tuple[str, Value] | UnreadValue | bool:
        kids = n.children
        if kids[0].type != "variable_name" or (len(kids) > 1 and kids[1].text != "="):
            return False
        if n.start in n.script.unread_assignments:
            # a value tree-sitter-bash cannot read and bash can (see .bash_syntax): a default it reads alone
            return unread_value(kids[0].text, n.text.partition("=")[2], f"{n.script.path}:{n.line}")
        rhs = kids[2] if len(kids) > 2 else None
        if rhs is None:
            return kids[0].text, Value("", n.location(), expression="")
        lit = self.literal(rhs) if rhs.type != "array" else None
        if lit is None:
            return False
        return kids[0].text, Value(lit[0], n.location(), False, rhs.text)

    def _unread_value(self, unread: UnreadValue, loc: Location) -> Value:
        """``"${SOURCE:-DEFAULT}"`` as bash expands it: SOURCE's value when it is set and not empty, else the
        default's; unknown when SOURCE's value is, or when the value has another form."""
        current = self.state.vars.get(unread.source) if unread.source is not None else None
        if unread.default is None or unread.rest is None or isinstance(current, ArrayVal) \
                or (current is not None and current.text is None):
            return Value(None, loc, False, unread.expression)
        head = current if current is not None and current.text else \
            self.scalar_value(unread.default, loc, unread.expression)
        rest = self.scalar_value(unread.rest, loc, unread.expression)
        if head.text is None or rest.text is None:
            return Value(None, loc, head.conditional or rest.conditional, unread.expression)
        return Value(head.text + rest.text, loc, head.conditional or rest.conditional, unread.expression)

    def _declaration(self, n: Node) -> Tri:
        kids = n.children
        keyword = kids[0].type if kids else ""
        options = "".join(c.text[1:] for c in kids[1:] if c.type == "word" and c.text.startswith("-"))
        exporting = keyword == "export" or "x" in options
        local = keyword == "local" or (keyword in ("declare", "typeset") and bool(self.frames) and "g" not in options)
        for c in kids[1:]:
            name: str | None = None
            if c.type == "variable_assignment":
                name = self.assign(c, local=local, associative="A" in options)
            elif c.type in _SPELLED_DECLARATION and not c.text.startswith("-"):
                name = self._spelled_declaration(c, keyword, options, local)
            elif c.type == "variable_name":
                name = c.text
                self._declare_name(name, c, keyword, options, local)
            if name is not None and exporting:
                if "n" in options:
                    self.state.exported.discard(name)
                else:
                    self.state.exported.add(name)
        return True

    def _declare_name(self, name: str, word: Node, keyword: str, options: str, local: bool) -> None:
        """``declare NAME`` / ``local NAME`` / ``export NAME`` without a value: the name is declared (empty,
        or an empty array with ``-a``/``-A``) unless it is set already; ``export`` only marks it."""
        if local:
            self._declare_local(name)
        if self.reads is not None:
            self.reads.add(name)
        if name not in self.state.vars and keyword != "export":
            self.state.vars[name] = (ArrayVal((), word.location(), word.text, False, () if "A" in options else None)
                                     if "a" in options or "A" in options
                                     else Value("", word.location(), expression=word.text))

    def _spelled_declaration(self, word: Node, keyword: str, options: str, local: bool) -> str | None:
        """``export "$pair"``: the variable a word's value spells (``NAME=VALUE`` or ``NAME``).

        A loop over a table's ``KEY=VALUE`` words exports them this way.  A value of one
        variable keeps where that value was written (the table's line).  When the text is
        not known, which variable is set is not known: an error (what the script exports
        is then incomplete), never a guess.
        """
        text, pieces = self.scalar_text(word)
        m = _SPELLED.fullmatch(text) if text is not None else None
        if m is None:
            self.errors.append(f"{word.script.path}:{word.line}: `{word.text}` declares a variable whose name is "
                               f"{'not known' if text is None else f'not a name ({text!r})'}; what it sets is unknown")
            return None
        name = m.group(1)
        if m.group(2) is None:
            self._declare_name(name, word, keyword, options, local)
            return name
        if local:
            self._declare_local(name)
        if self.reads is not None:
            self.reads.add(name)
        used = significant(pieces)
        origin = used[0].origin if len(used) == 1 else None
        where = origin.location if origin is not None and origin.text == text else word.location()
        conditional = any(p.origin is not None and p.origin.conditional for p in used)
        self.state.vars[name] = Value(m.group(2), where, conditional, word.text)
        return name

    def _unset(self, n: Node) -> Tri:
        functions = any(c.type == "word" and c.text == "-f" for c in n.children)
        for c in n.children[1:]:
            if c.type in ("variable_name", "word") and not c.text.startswith("-"):
                if functions:
                    self.state.functions.pop(c.text, None)
                else:
                    self.state.vars.pop(c.text, None)
                    self.state.exported.discard(c.text)
        return True

    # -- simple commands ---------------------------------------------------------------------
    def _command(self, n: Node) -> Tri:
        if n.memo is None:
            n.memo = self._command_shape(n)
        prefix, words, literal_name, standalone = cast(_CommandShape, n.memo)
        for a in standalone:
            self.assign(a)
        if not words:
            return True
        if (literal_name is not None and literal_name not in self.state.functions
                and (literal_name not in _BUILTINS or literal_name in _INERT_BUILTINS)):
            if self.sink is None:
                if self.status_needed and literal_name in _STATUS_COMMANDS:
                    # `if awk -v s="$X" 'BEGIN { exit !(s > 0) }'`: the status decides a branch.
                    return self.command_status(self.argv(words))
                # An external command that cannot launch the server, whose output goes nowhere
                # that matters: nothing to evaluate.
                return None
            return self.print_command(n, self.argv(words))
        argv = self.argv(words)
        if not argv:
            return True
        name = argv[0][1].text
        builtin = _BUILTINS.get(name) if name is not None else None
        if builtin is not None:
            return builtin(self, n, argv)
        if name is not None and name in self.state.functions:
            self._named([name])
            body = self.state.functions[name]
            if self.sink is None and isinstance(body, Node):
                if self.status_needed == 0 and self.effects.inert(body, self._function):
                    return None  # only its exit status could come out of it, and nothing uses that
                if self.state.captured is not None and self.recording == 0:
                    havoc = self.effects.quiet(body, self._function)
                    if havoc is not None:
                        return self._skip_quiet(n, name, havoc)
            return self.call(name, [v for _, v in argv[1:]])
        if name in _NO_SERVER_SCAN:
            return self.print_command(n, argv) if self.sink is not None else True
        return self._maybe_server(n, argv, prefix)

    def _command_shape(self, n: Node) -> _CommandShape:
        """A command's parts, derived once: prefix assignments, words, and its name when static."""
        prefix: list[Node] = []
        name_node: Node | None = None
        arg_nodes: list[Node] = []
        for c in n.children:
            if c.type == "variable_assignment" and name_node is None:
                prefix.append(c)
            elif c.type == "command_name":
                name_node = c
            elif c.type in _REDIRECTS or not c.named or c.type == "comment":
                continue
            elif name_node is not None:
                arg_nodes.append(c)
        if name_node is None:
            return [], [], None, prefix
        standalone: list[Node] = []
        if prefix and _newline_between(prefix[-1], name_node):
            # tree-sitter-bash joins `A=1 B=2` and the next line's command into one node.
            standalone, prefix = prefix, []
        names = [c for c in name_node.children if c.named]
        literal: str | None = None
        text = n.text
        if (len(names) == 1 and names[0].type == "word" and names[0].text not in WRAPPERS
                and not may_launch(text, self.patterns) and ":=" not in text and ":?" not in text
                and not _assigns_in_arithmetic(n)
                and not (names[0].text == "printf" and arg_nodes and arg_nodes[0].text == "-v")):
            literal = names[0].text
        return prefix, names + arg_nodes, literal, standalone

    def _maybe_server(self, n: Node, argv: list[tuple[Field, Value]], prefix: list[Node]) -> Tri:
        texts = [v.text for _, v in argv]
        launch = find_launch(texts, self.patterns)
        end = launch[0] if launch is not None else None
        if end is None and self.sink is None:
            delegated = self._delegated_script(texts)
            if delegated is not None:
                return self._run_script(n, argv, *delegated)
        if end is None:
            if texts[0] is None and self.sink is None:
                # A program known only at run time: it may be the server (reported when none is found).
                loc = n.location()
                if loc not in self.opaque_commands:
                    self.opaque_commands.append(loc)
            return self.print_command(n, argv) if self.sink is not None else None
        values = [v for _, v in argv]
        model_first = launch is not None and takes_model_first(launch[1])
        if self.file_reads is not None:
            self.file_reads.update(self.state.files)  # a flag may name any file the recipe wrote
        flags = with_keys(parse_flags([f for f, _ in argv[end:]], values[end:], model_first), self.state.files)
        router = launch is not None and launch[1] in self.router_patterns
        self.state.servers.append(Server(tuple(flags), n.location(), tuple(values), router))
        if self.state.captured is None and not router:
            env_vars = dict(self.state.vars)
            exported = set(self.state.exported)
            for a in prefix:
                kids = a.children
                rhs = kids[2] if len(kids) > 2 else None
                name = kids[0].text
                env_vars[name] = (self.scalar_value(rhs, a.location(), rhs.text) if rhs is not None
                                  else Value("", a.location()))
                exported.add(name)
            self.state.captured = Captured(env_vars, frozenset(exported))
        return None

    def _delegated_script(self, words: list[str | None]) -> tuple[int, str, bool] | None:
        """``[exec] [env NAME=VALUE...] bash|sh [-opts] SCRIPT ARGS``: (SCRIPT's index, its path, exec)."""
        i = 0
        replaces = bool(words) and words[0] == "exec"
        i += replaces
        if i < len(words) and words[i] == "env":
            i += 1
            while i < len(words) and (words[i] or "").partition("=")[1] and not (words[i] or "").startswith("-"):
                i += 1
        if i >= len(words) or words[i] not in ("bash", "sh"):
            return None
        i += 1
        while i < len(words) and (words[i] or "").startswith("-"):
            i += 1
        path = words[i] if i < len(words) else None
        if path is None or self.snapshot.read(posixpath.normpath(path)) is None:
            return None
        return i, posixpath.normpath(path), replaces

    def _run_script(self, n: Node, argv: list[tuple[Field, Value]], at: int, path: str, replaces: bool) -> Tri:
        """Another recipe run by this one; with ``exec`` it replaces this one (its exits are the job's)."""
        data = self.snapshot.read(path)
        assert data is not None
        script = parse_script(path, data)
        self._problems(script)
        settings = [v for _, v in argv[:at] if v.text is not None and "=" in v.text and v.text[0] != "-"]

        def run() -> Tri:
            for v in settings:
                name, _, text = (v.text or "").partition("=")
                self.state.vars[name] = Value(text, v.location, v.conditional, v.expression)
                self.state.exported.add(name)
            self.state.positional = tuple(v for _, v in argv[at + 1:])
            recipe, self.recipe_path = self.recipe_path, path  # its $0
            try:
                return self.block(script.root.children)
            finally:
                self.recipe_path = recipe

        if not replaces:
            return self.subshell(run)
        status = run()
        raise ShellExit("" if status is None else "0" if status else "1", n)

    def _skip_quiet(self, n: Node, name: str, assigns: frozenset[str]) -> Tri:
        """A quiet function called after the server started: its globals become unknown (see .effects)."""
        state = self.state
        for var in assigns:
            old = state.vars.get(var)
            unknown = Value(None, n.location(), True, f"set by {name}")
            state.vars[var] = ArrayVal((unknown,), n.location(), n.text, True) if isinstance(old, ArrayVal) else unknown
        return None

    def _function(self, name: str) -> object:
        """A function's body by name, noting the lookup while a call is recorded."""
        if self.called is not None:
            self.called.add(name)
        return self.state.functions.get(name)

    def _emptiness(self, name: str, vars: dict[str, Binding] | None = None) -> bool | None:
        """Whether a variable is unset or empty (None: unknown), as ``check_env_vars`` tests it."""
        b = (self.state.vars if vars is None else vars).get(name)
        if b is None:
            return None if name in RUNTIME_VARIABLES else True
        v = b if isinstance(b, Value) else (b.items[0] if b.items else None)
        if v is None:
            return True
        return None if v.text is None else v.text == ""

    def _named(self, names: list[str]) -> None:
        """Functions a command names (see :attr:`dispatched`), and when a server has started, those named after it."""
        self.dispatched.update(names)
        if self.state.captured is not None:
            self.dispatched_late.update(names)

    def call(self, name: str, args: list[Value]) -> Tri:
        self._named([name])
        body = self.state.functions[name]
        assert isinstance(body, Node)
        key = (id(body), tuple(args), self.status_needed > 0, self.subshell_depth > 0,
               id(self.guards[-1][0]) if self.guards else 0, *self.memo_context())
        return self._recorded(key, name, lambda: self._run_call(body, name, args))

    def script_identity(self) -> object:
        """What ``$0`` depends on (a recorded call that read it is reused only for the same)."""
        return self.recipe_path

    def memo_context(self) -> tuple[object, ...]:
        """More of the interpreter's own state a recorded call depends on (none here)."""
        return ()

    def _recorded(self, key: tuple[object, ...], name: str | None, run: Callable[[], Tri]) -> Tri:
        """Run a function call or ``source``, reusing recorded effects when its reads agree (.memo).

        Calls nest: what an inner call read (recorded, or replayed) is also read by the calls around it.
        """
        if self.sink is not None:
            # Printing into a captured output (which recorded effects do not replay).
            if self.called is not None and name is not None:
                self.called.add(name)
            return run()
        state = self.state
        outer_reads, outer_empties, outer_called = self.reads, self.empty_reads, self.called
        outer_files = self.file_reads
        hit = _CALLS.find(key, state.vars, state.functions, self._emptiness, self.script_identity, state.files)
        if hit is not None:
            if outer_reads is not None and outer_empties is not None and outer_called is not None:
                outer_reads.update(n for n, _ in hit.reads)
                outer_empties.update(n for n, _ in hit.empties)
                outer_called.update(n for n, _ in hit.functions)
            if outer_files is not None:
                outer_files.update(k for k, _ in hit.files_read)
            if hit.repo_reads and (log := logged_reads(self.snapshot)) is not None:
                log.extend(hit.repo_reads)
            # The functions the recorded call looked up, as if it ran again (what it calls by a name only known
            # at run time among them).
            self._named([n for n, _ in hit.functions if n in state.functions])
            return self._replay(hit)
        start_vars, start_exported, start_functions = dict(state.vars), set(state.exported), dict(state.functions)
        start_files = dict(state.files)
        outer = [len(t.pending()) for t in self.targets]
        counts = (len(state.servers), len(state.early_exits), len(state.missing), len(self.errors), self.forks,
                  len(self.opaque_commands))
        external = self.external_effects
        captured = state.captured
        output = self.output_mark()
        log = logged_reads(self.snapshot)
        logged = len(log) if log is not None else 0
        reads: set[str] = set()
        empties: set[str] = set()
        called: set[str] = {name} if name is not None else set()
        files: set[str] = set()
        self.reads, self.empty_reads, self.called, self.file_reads = reads, empties, called, files
        self.recording += 1
        try:
            status = run()
        finally:
            self.recording -= 1
            self.reads, self.empty_reads, self.called, self.file_reads = outer_reads, outer_empties, outer_called, outer_files
            if outer_reads is not None and outer_empties is not None and outer_called is not None:
                outer_reads |= reads
                outer_empties |= empties
                outer_called |= called
            if outer_files is not None:
                outer_files |= files
        end = self.state
        if end.captured is not captured:
            return status  # it started the server: the captured env depends on every variable
        if outer != [len(t.pending()) for t in self.targets]:
            return status  # some path left an enclosing loop: not recorded in the effects
        if self.external_effects != external:
            return status
        _CALLS.store(key, Effects(
            script=self.script_identity() if SCRIPT_NAME in reads else None,
            files_read=tuple((k, start_files.get(k)) for k in sorted(files)),
            reads=tuple((n, start_vars.get(n)) for n in sorted(reads) if n != SCRIPT_NAME),
            empties=tuple((n, self._emptiness(n, start_vars)) for n in sorted(empties)),
            functions=tuple((n, id(start_functions.get(n))) for n in sorted(called)),
            changed={k: v for k, v in end.vars.items() if start_vars.get(k) is not v},
            removed=tuple(k for k in start_vars if k not in end.vars),
            exported_added=frozenset(end.exported - start_exported),
            exported_removed=frozenset(start_exported - end.exported),
            functions_changed={k: v for k, v in end.functions.items() if start_functions.get(k) is not v},
            files_changed={k: v for k, v in end.files.items() if start_files.get(k) is not v},
            servers=end.servers[counts[0]:], early_exits=end.early_exits[counts[1]:],
            missing=end.missing[counts[2]:], errors=self.errors[counts[3]:], forks=self.forks - counts[4],
            opaque_commands=self.opaque_commands[counts[5]:], status=status,
            printed=self.output_since(output),
            repo_reads=tuple(dict.fromkeys(log[logged:])) if log is not None else (),
        ))
        return status

    def output_mark(self) -> object:
        """Where a captured output stands (see ``output_since``); this interpreter records none."""
        return None

    def output_since(self, mark: object) -> tuple[object, ...]:
        """What was printed into the captured output since ``mark`` (replayed with a recorded call)."""
        return ()

    def replay_output(self, printed: tuple[object, ...]) -> None:
        """Print again what a recorded call printed."""

    def _replay(self, e: Effects) -> Tri:
        state = self.state
        state.vars.update(e.changed)
        for k in e.removed:
            state.vars.pop(k, None)
        state.exported |= e.exported_added
        state.exported -= e.exported_removed
        state.functions.update(e.functions_changed)
        if e.files_changed:
            state.files.update(e.files_changed)
        self.opaque_commands.extend(c for c in e.opaque_commands if c not in self.opaque_commands)
        state.servers.extend(e.servers)
        state.early_exits.extend(e.early_exits)
        state.missing.extend(e.missing)
        self.errors.extend(e.errors)
        self.forks += e.forks
        if e.printed:
            self.replay_output(e.printed)
        return e.status

    def _run_call(self, body: Node, name: str, args: list[Value]) -> Tri:
        if self.call_depth >= _MAX_CALL_DEPTH:
            self.errors.append(f"{body.script.path}:{body.line}: function {name} calls itself too deeply to evaluate")
            return None
        if self.active.get(id(body), 0) >= _MAX_RECURSION:
            # A function calling itself on values that are not known (a process tree walk): what the
            # deeper calls print or set is unknown.
            if self.sink is not None:
                self.emit(None, body)
            havoc = self.effects.quiet(body, self._function)
            return self._skip_quiet(body, name, havoc) if havoc is not None else None
        self.active[id(body)] = self.active.get(id(body), 0) + 1
        try:
            return self._run_body(body, name, args)
        finally:
            self.active[id(body)] -= 1

    def _run_body(self, body: Node, name: str, args: list[Value]) -> Tri:
        saved = self.state.positional
        self.state.positional = tuple(args)
        frame: dict[str, Binding | None] = {}
        self.frames.append(frame)
        self.call_depth += 1
        target, base = Target(loop=False), base_of(self.state)
        self.targets.append(target)
        status: Tri = None
        live = True
        try:
            try:
                status = self.stmt(body)
            except Return as r:
                status = r.status
            except Gone:
                live = False
            except ShellExit:
                if not target.returns:
                    raise
                self.state = exit_on_some_paths(base, self.state, [s for s, _ in target.returns])
                target.returns = []
            if target.returns:
                # It returned early on some paths: join them with the path that ran to the end.
                states = [s for s, _ in target.returns] + ([self.state] if live else [])
                statuses = {st for _, st in target.returns} | ({status} if live else set())
                self.state = join(base, states)
                status = statuses.pop() if len(statuses) == 1 else None
                live = True
        finally:
            self.targets.pop()
            self.call_depth -= 1
            self.frames.pop()
            for var, old in frame.items():
                if old is None:
                    self.state.vars.pop(var, None)
                else:
                    self.state.vars[var] = old
            self.state.positional = saved
        if not live:
            raise Gone()
        return status

    # -- builtins ----------------------------------------------------------------------------
    def _exit(self, n: Node, argv: list[tuple[Field, Value]]) -> Tri:
        code = argv[1][1].text if len(argv) > 1 else "0"
        code = "" if code is None else code
        if self.subshell_depth == 0:
            guard, text = self.guards[-1] if self.guards else (n, n.text)
            self.state.early_exits.append(EarlyExit(guard.location(), text, code))
        raise ShellExit(code, n)

    def _return(self, n: Node, argv: list[tuple[Field, Value]]) -> Tri:
        code = argv[1][1].text if len(argv) > 1 else "0"
        raise Return(None if code is None else code == "0")

    def _break(self, n: Node, argv: list[tuple[Field, Value]]) -> Tri:
        raise Break()

    def _continue(self, n: Node, argv: list[tuple[Field, Value]]) -> Tri:
        raise Continue()

    def _shift(self, n: Node, argv: list[tuple[Field, Value]]) -> Tri:
        count = argv[1][1].text if len(argv) > 1 else "1"
        k = int(count) if count and count.isdigit() else 1
        self.state.positional = self.state.positional[k:]
        return True

    def _set(self, n: Node, argv: list[tuple[Field, Value]]) -> Tri:
        texts = [v.text for _, v in argv]
        for i, t in enumerate(texts[1:], 1):
            if t == "--":
                break
            if t is not None and re.fullmatch(r"[-+][a-zA-Z]+", t) and "a" in t:
                self.allexport = t.startswith("-")
            elif t in ("-o", "+o") and i + 1 < len(texts) and texts[i + 1] == "allexport":
                self.allexport = t == "-o"
        if "--" in texts:
            self.state.positional = tuple(v for _, v in argv[texts.index("--") + 1:])
        return True

    def _test(self, n: Node, argv: list[tuple[Field, Value]]) -> Tri:
        return test_argv([v.text for _, v in argv[1:]], self, n)

    def _true(self, n: Node, argv: list[tuple[Field, Value]]) -> Tri:
        return True

    def _false(self, n: Node, argv: list[tuple[Field, Value]]) -> Tri:
        return False

    def _read(self, n: Node, argv: list[tuple[Field, Value]]) -> Tri:
        mapfile = argv[0][1].text in ("mapfile", "readarray")
        array = mapfile
        # options that take the next word: `read -t TIMEOUT`, but `mapfile -t` only strips newlines
        with_value = _MAPFILE_VALUE_OPTIONS if mapfile else _READ_VALUE_OPTIONS
        skip_next = False
        names: list[str] = []
        for _, v in argv[1:]:
            t = v.text
            if skip_next:
                skip_next = False
                continue
            if t is None:
                continue
            if t.startswith("-") and len(t) > 1:
                # letters may be grouped (`read -ra IP_ARRAY`); one that takes a value ends the group,
                # its value the rest of the word or else the next word (`read -rp "Name: " NAME`)
                for k, letter in enumerate(t[1:], start=1):
                    if letter == "a" and not mapfile:
                        array = True
                    if "-" + letter in with_value:
                        skip_next = k == len(t) - 1
                        break
                continue
            names.append(t)
        if array and names:
            names = names[-1:]
        for name in names or (["MAPFILE"] if array else ["REPLY"]):
            unknown = Value(None, n.location(), False, n.text)
            # what is read is not known: nor how many items an array gets
            self.state.vars[name] = ArrayVal((), n.location(), n.text, open=True) if array else unknown
        return None

    def _let(self, n: Node, argv: list[tuple[Field, Value]]) -> Tri:
        result: int | None = 0
        for _, v in argv[1:]:
            result = None if v.text is None else evaluate_arith_text(self, v.text, n)
        return None if result is None else result != 0

    def _check_env_vars(self, n: Node, argv: list[tuple[Field, Value]]) -> Tri:
        missing = False
        for f, v in argv[1:]:
            if v.text is None:
                continue
            if self.empty_reads is not None:
                self.empty_reads.add(v.text)
            if self._emptiness(v.text) is True:
                self.state.missing.append(MissingEnv(v.text, v.location))
                missing = True
        if missing:
            raise ShellExit("1", n, missing_env=True)
        return True

    def _source(self, n: Node, argv: list[tuple[Field, Value]]) -> Tri:
        if len(argv) < 2:
            return False
        field, value = argv[1]
        path = self._resolve_source(n, field, value)
        if path is None and (self._activate_venv(n, field, value) or self._installer_env(n, field, value)):
            return True
        if path is None:
            self.errors.append(f"{n.script.path}:{n.line}: cannot resolve `{n.text}`; what it defines is unknown")
            return None
        if path in self.sourcing or len(self.sourcing) > 16:
            return True
        data = self.snapshot.read(path)
        if data is None:
            self.errors.append(f"{n.script.path}:{n.line}: sourced file {path} does not exist")
            return False
        script = parse_script(path, data)
        self._problems(script)

        def run() -> Tri:
            self.sourcing.append(path)
            try:
                return self.block(script.root.children)
            finally:
                self.sourcing.pop()

        # The library every recipe sources mostly defines functions: recorded once per recipe and reused.
        # A sourced file sees the caller's positional parameters.
        key = ("source", id(script.root), self.state.positional, self.status_needed > 0, self.subshell_depth > 0,
               id(self.guards[-1][0]) if self.guards else 0, *self.memo_context())
        return self._recorded(key, None, run)

    def _activate_venv(self, n: Node, field: Field, value: Value) -> bool:
        """``source <dir>/bin/activate`` of a Python virtual environment the script makes at run time (``uv venv
        "$VENV_DIR"``; the file is not in the repository): every activate script exports ``VIRTUAL_ENV`` (the
        directory) and ``PATH`` with the directory's ``bin`` first, and unsets ``PYTHONHOME``; nothing else a
        later step can see.  False for any other file."""
        written = value.text if value.text is not None else "".join(p.text or "" for p in field.pieces)
        if not written.endswith("/bin/activate"):
            return False
        where = n.location()
        venv = value.text[: -len("/bin/activate")] if value.text is not None else None
        known_path = self.state.vars.get("PATH")
        path = (f"{venv}/bin:{known_path.text}" if venv is not None and isinstance(known_path, Value)
                and known_path.text is not None else None)
        self.state.vars["VIRTUAL_ENV"] = Value(venv, where, expression=f"the directory of {n.text}")
        self.state.vars["PATH"] = Value(path, where, expression=f"PATH with the bin of {n.text} first")
        self.state.exported |= {"VIRTUAL_ENV", "PATH"}
        self.state.vars.pop("PYTHONHOME", None)
        self.state.exported.discard("PYTHONHOME")
        return True

    def _installer_env(self, n: Node, field: Field, value: Value) -> bool:
        """``source $HOME/.local/bin/env`` after uv's installer (``$HOME/.cargo/env`` after rustup's): the file
        the installer wrote on the node, which puts its ``bin`` directory first on ``PATH`` unless ``PATH``
        holds it already, and does nothing else.  ``PATH`` is then known only on the node.  False for any other
        file."""
        written = value.text if value.text is not None else "".join(p.text or "" for p in field.pieces)
        directory = next((d for suffix, d in _INSTALLER_ENVS if written.endswith(suffix)), None)
        if directory is None:
            return False
        said = f"PATH with {directory} put first unless it holds it, after {n.text}"
        self.state.vars["PATH"] = Value(None, n.location(), expression=said)
        self.state.exported.add("PATH")
        return True

    def _resolve_source(self, n: Node, field: Field, value: Value) -> str | None:
        here = posixpath.dirname(n.script.path)
        lib = self.config.benchmark_lib
        written = n.text + " " + " ".join(p.origin.expression for p in field.pieces if p.origin is not None)
        dynamic = bool(_DYNAMIC_PATH.search(written))
        suffix = ""
        for p in reversed(field.pieces):
            if p.text is None:
                break
            suffix = p.text + suffix
        candidates: list[str] = []
        if value.text is not None and not value.text.startswith("/"):
            candidates += [posixpath.normpath(posixpath.join(here, value.text)), posixpath.normpath(value.text)]
        elif value.text is None and dynamic and suffix.startswith("/"):
            candidates.append(posixpath.normpath(posixpath.join(here, suffix.lstrip("/"))))
        for c in candidates:
            if not c.startswith("..") and self.snapshot.read(c) is not None:
                return c
        name = posixpath.basename(value.text if value.text is not None else suffix)
        if name and name == posixpath.basename(lib) and (dynamic or value.text is not None):
            return lib
        return None

    def _noop(self, n: Node, argv: list[tuple[Field, Value]]) -> Tri:
        return True

    def _print(self, n: Node, argv: list[tuple[Field, Value]]) -> Tri:
        return self.print_command(n, argv) if self.sink is not None else True

    def _printf(self, n: Node, argv: list[tuple[Field, Value]]) -> Tri:
        if len(argv) > 2 and argv[1][1].text == "-v":
            # printf -v NAME FORMAT ARGS: the formatted text goes to a variable.
            name, rest = argv[2][1].text, [v.text for _, v in argv[3:]]
            if name is None:
                return None
            text = None if not rest or any(t is None for t in rest) else format_printf(rest[0] or "", [t or "" for t in rest[1:]])
            self.assign_scalar(name, Value(text, n.location(), False, n.text))
            return True
        return self._print(n, argv)

    def _unknown(self, n: Node, argv: list[tuple[Field, Value]]) -> Tri:
        return None


# prefix assignments, words (name first), the name when static and harmless, assignments on their own.
_CommandShape = tuple[list[Node], list[Node], "str | None", list[Node]]
_IfClauses = tuple[list[IfClause], "list[Node] | None"]


_EFFECTS: dict[tuple[str, ...], EffectAnalysis] = {}
_CALLS = CallMemo()
_PURE = PureCache()


def _effects_for(patterns: tuple[str, ...], split: tuple[LaunchPattern, ...]) -> EffectAnalysis:
    found = _EFFECTS.get(patterns)
    if found is None:
        found = _EFFECTS[patterns] = EffectAnalysis(split)
    return found


def _nothing() -> Tri:
    return None


# Words of `export`/`declare` other than NAME and NAME=VALUE: their value spells the variable.
_SPELLED_DECLARATION = frozenset({"string", "raw_string", "simple_expansion", "expansion", "concatenation", "word"})
_SPELLED = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:=(.*))?", re.S)
_ASSOCIATIVE_ELEMENT = re.compile(r"^\[(.*?)\]=(.*)$", re.S)
# Options of `read` and of `mapfile`/`readarray` written with their value as the next word.
_READ_VALUE_OPTIONS = frozenset({"-p", "-d", "-n", "-N", "-t", "-u", "-i"})
_MAPFILE_VALUE_OPTIONS = frozenset({"-d", "-n", "-O", "-s", "-u", "-C", "-c"})
_ARITH_ASSIGN = re.compile(r"\+\+|--|(?<![=!<>])=(?!=)")


def _assigns_in_arithmetic(n: Node) -> bool:
    """Whether a ``$((...))`` inside the command assigns a variable (``$((N += 1))``, ``$((N++))``)."""
    if "$((" not in n.text:
        return False
    stack = [n]
    while stack:
        c = stack.pop()
        if c.type == "arithmetic_expansion" and _ARITH_ASSIGN.search(c.text[3:-2]):
            return True
        stack.extend(c.children)
    return False


def _newline_between(a: Node, b: Node) -> bool:
    gap = a.script.source[a.end:b.start]
    return b"\n" in gap.replace(b"\\\n", b"")


# (item, [(pattern, literal text or None, has glob characters, quoted)], body, condition text)
_CaseItem = tuple[Node, list[tuple[Node, "str | None", bool, bool]], list[Node], str]
_GLOB = re.compile(r"[*?\[]")


def _case_item(item: Node, word: Node | None) -> _CaseItem:
    kids = item.children
    close = next((k for k, c in enumerate(kids) if c.type == ")"), 0)
    patterns = [c for c in kids[:close] if c.named]
    body = [c for c in kids[close + 1:] if c.named]
    shapes = []
    for p in patterns:
        literal = literal_text(p)
        shapes.append((p, literal, literal is None or bool(_GLOB.search(literal)), _has_quotes(p)))
    text = f"{word.text if word is not None else ''} matches {' | '.join(p.text for p in patterns)}"
    return item, shapes, body, text



_HANDLERS: dict[str, Callable[[Interpreter, Node], Tri]] = {
    "variable_assignment": Interpreter._assignment_stmt,
    "variable_assignments": Interpreter._assignments_stmt,
    "declaration_command": Interpreter._declaration,
    "unset_command": Interpreter._unset,
    "command": Interpreter._command,
    "list": Interpreter._list,
    "pipeline": Interpreter._pipeline,
    "negated_command": Interpreter._negated,
    "redirected_statement": Interpreter._redirected,
    "if_statement": Interpreter._if,
    "case_statement": Interpreter._case,
    "for_statement": Interpreter._for,
    "c_style_for_statement": Interpreter._c_for,
    "while_statement": Interpreter._while,
    "compound_statement": Interpreter._compound,
    "subshell": Interpreter._subshell_stmt,
    "function_definition": Interpreter._function_definition,
    "test_command": Interpreter._test_command,
}

# External commands whose exit status is computed when a condition needs it (see .commands).
_STATUS_COMMANDS = frozenset({"awk", "gawk", "mawk"})

# Builtins without effect on what the recipe runs (skipped when their words have no side effects).
_INERT_BUILTINS = {"echo", "printf", "wait", "sleep", "cd"}

_BUILTINS: dict[str, Callable[[Interpreter, Node, list[tuple[Field, Value]]], Tri]] = {
    "exit": Interpreter._exit,
    "return": Interpreter._return,
    "break": Interpreter._break,
    "continue": Interpreter._continue,
    "shift": Interpreter._shift,
    "set": Interpreter._set,
    "test": Interpreter._test,
    "[": Interpreter._test,
    "true": Interpreter._true,
    ":": Interpreter._true,
    "false": Interpreter._false,
    "read": Interpreter._read,
    "mapfile": Interpreter._read,
    "readarray": Interpreter._read,
    "let": Interpreter._let,
    "check_env_vars": Interpreter._check_env_vars,
    "source": Interpreter._source,
    ".": Interpreter._source,
    "echo": Interpreter._print,
    "printf": Interpreter._printf,
    "wait": Interpreter._noop,
    "sleep": Interpreter._noop,
    "eval": Interpreter._unknown,
    "cd": Interpreter._unknown,
}
# The names the interpreter runs itself (everything else is an external program).
BUILTIN_NAMES = frozenset(_BUILTINS)
