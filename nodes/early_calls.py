"""Calls started before the node that needs them runs, joined by that node instead of asked again.

LangGraph fans a stage out only when the node before it returns, so a 1.28M-token input would spend
its whole chunking (~0.4 s of tokenizer work) before the first map call left. The chunk node now
starts each chunk's reading as soon as the chunk is final (``nodes/prepare.py``); the read node later
asks :meth:`~longgraph.nodes.kit.RunKit.call` for the very same request and gets the call under way
(or its finished result) instead of a new one. The graph, its checkpoints and its results are
unchanged: only the calls leave earlier.

Each started call is taken once, by the first identical request, and only on the event loop it runs
on (a call belongs to its loop's connection pool). A call nobody takes is cancelled when the run's
chunk node fails (only that node's calls: runs sharing a context share the table), and otherwise
simply finishes: it was a call the run was about to make. A finished call still untaken after
:data:`STALE_AFTER_S` is dropped when a table is next swept: as calls are added to it, and whenever
a run builds a new kit (a served run interrupted after its chunk node never reads its chunks; its
kit could otherwise hold every chunk's text and answer, and through the task the run's state, until
evicted 256 runs later).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Hashable, Iterable
from typing import Generic, TypeVar

T = TypeVar("T")

STALE_AFTER_S = 600.0
"""A finished call not taken within this many seconds will not be: the run that started it moved on."""


class EarlyCalls(Generic[T]):
    """Started calls by request key, each taken once (thread-safe; a run may span event loops)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._started: defaultdict[Hashable, deque[asyncio.Task[T]]] = defaultdict(deque)
        self._untaken: set[asyncio.Task[T]] = set()
        self._finished_at: dict[asyncio.Task[T], float] = {}
        self._lock = threading.Lock()
        self._clock = clock
        self._swept_at = clock()

    def add(self, key: Hashable, task: asyncio.Task[T]) -> None:
        task.add_done_callback(self._finished)
        with self._lock:
            self._drop_stale()
            self._started[key].append(task)
            self._untaken.add(task)

    def _finished(self, task: asyncio.Task[T]) -> None:
        if not task.cancelled():
            task.exception()  # seen: the taker re-raises it; an untaken call's failure is not the run's
        with self._lock:
            if task in self._untaken:
                self._finished_at[task] = self._clock()

    def sweep(self) -> None:
        """Drop the calls finished and left untaken for :data:`STALE_AFTER_S` (a minute apart at most).

        :meth:`add` sweeps its own table, but a served run's kit gets no further call once the run is
        gone: :func:`~longgraph.nodes.kit.kit_for` sweeps every kit's table as it builds a new kit."""
        with self._lock:
            self._drop_stale()

    def _drop_stale(self) -> None:
        """Forget finished calls untaken for :data:`STALE_AFTER_S` (under the lock; a minute apart)."""
        now = self._clock()
        if now - self._swept_at < 60.0 or not self._finished_at:
            return
        self._swept_at = now
        self._forget({t for t, at in self._finished_at.items() if now - at > STALE_AFTER_S})

    def _forget(self, tasks: set[asyncio.Task[T]]) -> list[asyncio.Task[T]]:
        """Take ``tasks`` out of the table (under the lock); those that were in it."""
        found = [task for task in tasks if task in self._untaken]
        if not found:
            return found
        for key in list(self._started):
            kept = deque(task for task in self._started[key] if task not in tasks)
            if kept:
                self._started[key] = kept
            else:
                del self._started[key]
        for task in found:
            self._untaken.discard(task)
            self._finished_at.pop(task, None)
        return found

    def take(self, key: Hashable) -> asyncio.Task[T] | None:
        """The oldest call started for ``key`` on the running loop, now the caller's (None: none)."""
        if not self._started:
            return None
        loop = asyncio.get_running_loop()
        with self._lock:
            tasks = self._started.get(key)
            if not tasks:
                return None
            for task in tasks:
                if task.get_loop() is loop:
                    tasks.remove(task)
                    self._untaken.discard(task)
                    self._finished_at.pop(task, None)
                    if not tasks:
                        del self._started[key]
                    return task
        return None

    def cancel(self, tasks: Iterable[asyncio.Task[T]]) -> int:
        """Cancel ``tasks`` that were not taken yet (the node that started them failed); how many.

        Only the failed node's own: runs sharing a context (a batch) share the kit and its table."""
        with self._lock:
            dropped = self._forget(set(tasks))
        for task in dropped:
            task.get_loop().call_soon_threadsafe(task.cancel)
        return len(dropped)

    def __bool__(self) -> bool:
        return bool(self._started)  # unlocked: a hint, checked again under the lock by ``take``

    def __len__(self) -> int:
        with self._lock:
            return sum(len(queue) for queue in self._started.values())
