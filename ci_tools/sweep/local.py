"""Run a selection of the matrix on one machine, one job at a time or N at once.

Each running job holds one of N slots (a node name, a port, a workspace:
:mod:`.slots`), taken when it starts and given back when it ends.  Progress
is reported through a callback so that the CLI can draw it; a stop request
(SIGTERM, Ctrl-C) stops the running jobs cleanly and leaves the ones not yet
started as ``not-run`` without a record.
"""

from __future__ import annotations

import queue
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable, Sequence

from .context import SweepContext
from .run import Prepared, execute
from .status import StatusRecord


@dataclass(frozen=True)
class LocalRun:
    records: tuple[StatusRecord, ...]
    skipped: int  # jobs never started because a stop was requested

    @property
    def failed(self) -> int:
        return sum(1 for r in self.records if r.status != "success")


def run_local(jobs: Sequence[Prepared], ctx: SweepContext, *, stop: threading.Event | None = None,
              on_start: Callable[[Prepared], None] | None = None,
              on_done: Callable[[StatusRecord], None] | None = None) -> LocalRun:
    stop = stop or threading.Event()
    records: list[StatusRecord | None] = [None] * len(jobs)
    lock = threading.Lock()
    slots: queue.SimpleQueue[int] = queue.SimpleQueue()
    for index in range(max(1, ctx.parallel)):
        slots.put(index)

    def one(index: int) -> None:
        if stop.is_set():
            return
        if on_start:
            with lock:
                on_start(jobs[index])
        slot = slots.get()  # never waits: the pool runs at most `parallel` jobs at once
        try:
            record = execute(jobs[index], ctx, slot, stop=stop)
        finally:
            slots.put(slot)
        records[index] = record
        if on_done:
            with lock:
                on_done(record)

    try:
        if ctx.parallel <= 1:
            for i in range(len(jobs)):
                one(i)
        else:
            with ThreadPoolExecutor(max_workers=ctx.parallel, thread_name_prefix="sweep-job") as pool:
                futures: list[Future[None]] = [pool.submit(one, i) for i in range(len(jobs))]
                for f in futures:
                    f.result()
    finally:
        assert ctx.workspaces is not None
        ctx.workspaces.remove()
    done = tuple(r for r in records if r is not None)
    return LocalRun(done, len(jobs) - len(done))
