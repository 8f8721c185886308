"""``break``, ``continue`` and ``return`` on one side of an undecided branch.

When a branch cannot be decided, both sides run on copies of the state (see
:mod:`.state`).  A side that leaves its loop or function (``hf download &&
break``, ``[ -f "$X" ] || return 1``) must not be merged back into the
statements that follow the branch: on that path they never run.  Such a
side's state is handed to the innermost loop or function *target* instead,
and joined with the other paths where the loop or function ends.  A retry
loop is the typical case::

    for i in 1 2 3; do
        hf download "$MODEL" && break
        if [ "$i" = 3 ]; then exit 1; fi
    done

The ``exit 1`` is reached only on the path where every download failed, so
it is an exit on one side of an undecided branch, not a certain one.
"""

from __future__ import annotations

import dataclasses

from .conditions import Tri
from .state import State, merge


class Return(Exception):
    def __init__(self, status: Tri) -> None:
        super().__init__()
        self.status = status


class Break(Exception):
    pass


class Continue(Exception):
    pass


class Gone(Exception):
    """No path goes on from here: every one left through a target (or ended the script)."""


FLOW = (Return, Break, Continue, Gone)


class Target:
    """A loop or function body: the states that left it early on some path."""

    __slots__ = ("loop", "breaks", "continues", "returns")

    def __init__(self, loop: bool) -> None:
        self.loop = loop
        self.breaks: list[State] = []
        self.continues: list[State] = []
        self.returns: list[tuple[State, Tri]] = []

    def pending(self) -> list[State]:
        return self.breaks + self.continues + [s for s, _ in self.returns]


def target_for(targets: list[Target], flow: Exception) -> Target | None:
    """The innermost target that takes ``flow`` (a loop for break/continue, a function for return)."""
    loop = not isinstance(flow, Return)
    for t in reversed(targets):
        if t.loop == loop:
            return t
    return None


def hand_over(targets: list[Target], state: State, flow: Exception) -> bool:
    """Give a side that left by ``flow`` to its target; False when no target takes it."""
    if isinstance(flow, Gone):
        return True
    target = target_for(targets, flow)
    if target is None:
        return False
    if isinstance(flow, Break):
        target.breaks.append(state)
    elif isinstance(flow, Continue):
        target.continues.append(state)
    elif isinstance(flow, Return):
        target.returns.append((state, flow.status))
    return True


def base_of(state: State) -> State:
    """What :func:`.state.merge` needs of the state where paths split: the servers and exits so far."""
    return State(servers=list(state.servers), early_exits=list(state.early_exits))


def join(base: State, states: list[State]) -> State:
    """One state for several paths that split after ``base``."""
    joined = states[0]
    for other in states[1:]:
        joined = merge(base, joined, other)
    return joined


def exit_on_some_paths(base: State, dead: State, alive: list[State]) -> State:
    """The script exited on the path of ``dead`` only: the exit becomes conditional, ``alive`` goes on."""
    survivor = join(base, alive)
    merged = merge(base, dead, survivor)
    return dataclasses.replace(survivor, servers=merged.servers, early_exits=merged.early_exits,
                               missing=merged.missing)
