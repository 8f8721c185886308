"""Loops: ``for``, ``while``/``until`` and C-style ``for``, run iteration by iteration while their control is known.

A loop whose items or condition are known runs for real (argument parsing
with ``shift``, ``for attempt in 1 2 3``, ``for ((n = 1; n <= MAX; n++))``
building capture sizes).  When the control is unknown, one more iteration
becomes one side of an undecided branch.  ``break``/``continue`` on one side
of an undecided branch inside the body reach the loop (see :mod:`.flow`).
Limits keep evaluation finite: past them, what the loop keeps changing is
unknown, never guessed.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, cast

from .arith import evaluate_arith
from .conditions import Tri, not3
from .expand import ShellExit
from .flow import Break, Continue, Gone, Target, base_of, exit_on_some_paths, join
from .model import Value
from .parse import Node
from .state import ArrayVal, Binding
from .streams import Streams

_MAX_LOOP_ITEMS = 512
_MAX_WHILE_ITERATIONS = 256
# C-style loops build lists of capture sizes up to the concurrency.
_MAX_C_FOR_ITERATIONS = 4096
# `while` loops copy the variables to detect a fixed point only after this many rounds.
_SETTLE_AFTER = 4
# Items left in a `for` loop above which forking iterations stop being run one by one.
_LONG_LOOP = 8
# Rounds of a `while` or C-style `for` that fork (depend on something unknown) before the loop's end is unknown.
_MAX_FORKING_ROUNDS = 16


def _nothing() -> Tri:
    return None


class Loops(Streams):
    """The loop statements of the interpreter (mixed into it)."""

    # Provided by the interpreter.
    targets: list[Target]
    forks: int

    def fork(self, a: Callable[[], Tri], b: Callable[[], Tri]) -> Tri:
        raise NotImplementedError

    def condition(self, nodes: list[Node]) -> Tri:
        raise NotImplementedError

    def _loop_body(self, body: Node | None) -> Tri:
        """One more iteration that may or may not run (the loop's control is unknown)."""
        if body is None:
            return True
        return self._loop(body, body, lambda first: first, settle=False, cap=2)

    def _loop(self, n: Node, body: Node | None, advance: Callable[[bool], Tri], *, settle: bool,
              cap: int = _MAX_WHILE_ITERATIONS) -> Tri:
        """Run a loop whose control is known, iteration by iteration.

        ``advance(first)`` prepares the next iteration: True runs the body, False ends the loop, None
        (unknown) makes one more iteration one side of an undecided branch and ends the loop there.
        ``settle`` (``while``/``until``, C-style ``for``): stop iterating once an iteration forks (how the
        loop goes on then depends on something unknown) or changes nothing (a fixed point), and after
        the iteration cap treat what the loop keeps changing as unknown.
        """
        target, base = Target(loop=True), base_of(self.state)
        self.targets.append(target)
        live, status = True, cast(Tri, True)
        before: dict[str, Binding] = {}
        start = dict(self.state.vars) if settle else {}
        forking = 0
        try:
            for i in range(cap):
                go = advance(i == 0)
                if go is False:
                    break
                if go is None:
                    status = self.fork(lambda: self._loop_body(body), _nothing)
                    break
                # The fixed-point test copies the variables: only loops still going after a few rounds pay it.
                watch = settle and i >= _SETTLE_AFTER
                forks, positional, before = self.forks, self.state.positional, dict(self.state.vars) if watch else {}
                try:
                    status = self.block(body.children) if body is not None else True
                except Break:
                    target.breaks.append(self.state)
                    live = False
                except Continue:
                    pass
                except Gone:
                    live = False
                if target.continues:
                    self.state = join(base, target.continues + ([self.state] if live else []))
                    target.continues, live = [], True
                if not live:
                    break
                if settle:
                    state = self.state
                    forking += self.forks != forks
                    if forking > _MAX_FORKING_ROUNDS:
                        # Round after round depends on something unknown: how the loop ends is not known.
                        self._havoc_since(start, n)
                        status = None
                        break
                    if (watch and state.positional is positional and len(state.vars) == len(before)
                            and all(state.vars.get(k) is v for k, v in before.items())):
                        status = None  # a fixed point: more iterations change nothing (`while true; do sleep; done`)
                        break
            else:
                if settle:
                    # Still running after the cap: what the loop keeps changing is not known.
                    self._havoc_since(before, n)
                    status = None
        except ShellExit:
            pending = target.pending()
            if not pending:
                raise
            self.state = exit_on_some_paths(base, self.state, pending)
            return None
        finally:
            self.targets.pop()
        states = target.breaks + ([self.state] if live else [])
        if not states:
            raise Gone()
        if len(states) > 1:
            self.state = join(base, states)
            return None
        self.state = states[0]
        return status

    def _open_arrays_since(self, earlier: dict[str, Binding]) -> None:
        """Arrays a loop of unknown length changed (``IPS+=("$IP")`` once per node): how many items they
        have is unknown."""
        state = self.state
        for k, b in state.vars.items():
            if isinstance(b, ArrayVal) and b.keys is None and not b.open and b is not earlier.get(k):
                state.vars[k] = dataclasses.replace(b, open=True)

    def _havoc_since(self, earlier: dict[str, Binding], n: Node) -> None:
        """Variables changed since ``earlier`` become unknown (the loop went on for an unknown number of rounds)."""
        state = self.state
        for k, v in list(state.vars.items()):
            if earlier.get(k) is not v:
                state.vars[k] = Value(None, n.location(), True, n.text.split("\n", 1)[0])

    def _for(self, n: Node) -> Tri:
        var = n.child_of_type("variable_name")
        body = n.child_of_type("do_group")
        kids = n.children
        has_in = any(c.type == "in" for c in kids)
        if has_in:
            start = next(k for k, c in enumerate(kids) if c.type == "in") + 1
            words = [c for c in kids[start:] if c.named and c.type not in ("do_group", "comment")]
            items = self.values(words)
        else:
            items = list(self.state.positional)
        name = var.text if var is not None else "_"
        if len(items) > _MAX_LOOP_ITEMS or any(v.text is None for v in items):
            self.assign_scalar(name, Value(None, n.location(), True, n.text))
            before = dict(self.state.vars)
            status = self.fork(lambda: self._loop_body(body), _nothing)
            self._open_arrays_since(before)
            return status
        pending = iter(items)
        left = len(items)
        forks = self.forks
        # A long loop whose iterations fork (polling `for i in $(seq 1 90)` until a command succeeds) is not
        # run to its end: once an iteration forks, how many more run is unknown.
        before_loop = dict(self.state.vars) if left > _LONG_LOOP else None
        abandoned = False

        def advance(first: bool) -> Tri:
            nonlocal left, forks, abandoned
            if not first and before_loop is not None and self.forks != forks and left > _LONG_LOOP:
                abandoned = True
                self.assign_scalar(name, Value(None, n.location(), True, n.text.split("\n", 1)[0]))
                return None
            forks = self.forks
            item = next(pending, None)
            if item is None:
                return False
            left -= 1
            self.assign_scalar(name, item)
            return True

        status = self._loop(n, body, advance, settle=False, cap=len(items) + 1)
        if abandoned and before_loop is not None:
            self._havoc_since(before_loop, n)
        return status

    def _while(self, n: Node) -> Tri:
        body = n.child_of_type("do_group")
        until = bool(n.children) and n.children[0].type == "until"
        cond = [c for c in n.children if c.named and c.type not in ("do_group", "comment")]

        def advance(first: bool) -> Tri:
            c = self.condition(cond) if cond else True
            return not3(c) if until else c

        # Known true: each iteration runs for real (argument-parsing loops with `shift`).
        return self._loop(n, body, advance, settle=True)

    def _c_for(self, n: Node) -> Tri:
        """``for ((init; condition; update))``: run for real while the condition is known."""
        body = n.child_of_type("do_group") or n.child_of_type("compound_statement")
        if n.memo is None:
            n.memo = _c_for_clauses(n)
        init, cond, update = cast(tuple[list[Node], list[Node], list[Node]], n.memo)

        def advance(first: bool) -> Tri:
            for node in init if first else update:
                self._arith_statement(node)
            if not cond:
                return True
            result: int | None = 0
            for node in cond:
                result = self._arith_statement(node)
            return None if result is None else result != 0

        return self._loop(n, body, advance, settle=True, cap=_MAX_C_FOR_ITERATIONS)

    def _arith_statement(self, node: Node) -> int | None:
        """One expression of ``((...))`` (an assignment is its own node type there)."""
        if node.type == "variable_assignment" and len(node.children) >= 3:
            value = evaluate_arith(self, node.children[2])
            name = node.children[0].text
            self.assign_scalar(name, Value(None if value is None else str(value), node.location(), False, node.text))
            return value
        return evaluate_arith(self, node)



def _c_for_clauses(n: Node) -> tuple[list[Node], list[Node], list[Node]]:
    """The init, condition and update expressions between ``((`` and ``))``."""
    groups: list[list[Node]] = [[]]
    inside = False
    for c in n.children:
        if c.type == "((":
            inside = True
        elif c.type == "))":
            break
        elif inside and c.type == ";":
            groups.append([])
        elif inside and c.named and c.type != "comment":
            groups[-1].append(c)
    groups += [[] for _ in range(3 - len(groups))]
    return groups[0], groups[1], groups[2]


