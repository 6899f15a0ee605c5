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
simply finishes: it was a call the run was about to make.
"""

from __future__ import annotations

import asyncio
import threading
from collections import defaultdict, deque
from collections.abc import Hashable, Iterable
from typing import Generic, TypeVar

T = TypeVar("T")


class EarlyCalls(Generic[T]):
    """Started calls by request key, each taken once (thread-safe; a run may span event loops)."""

    def __init__(self) -> None:
        self._started: defaultdict[Hashable, deque[asyncio.Task[T]]] = defaultdict(deque)
        self._lock = threading.Lock()

    def add(self, key: Hashable, task: asyncio.Task[T]) -> None:
        task.add_done_callback(_retrieve)
        with self._lock:
            self._started[key].append(task)

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
                    if not tasks:
                        del self._started[key]
                    return task
        return None

    def cancel(self, tasks: Iterable[asyncio.Task[T]]) -> int:
        """Cancel ``tasks`` that were not taken yet (the node that started them failed); how many.

        Only the failed node's own: runs sharing a context (a batch) share the kit and its table."""
        mine = set(tasks)
        with self._lock:
            dropped = [task for queue in self._started.values() for task in queue if task in mine]
            for key in list(self._started):
                kept = deque(task for task in self._started[key] if task not in mine)
                if kept:
                    self._started[key] = kept
                else:
                    del self._started[key]
        for task in dropped:
            task.get_loop().call_soon_threadsafe(task.cancel)
        return len(dropped)

    def __bool__(self) -> bool:
        return bool(self._started)  # unlocked: a hint, checked again under the lock by ``take``

    def __len__(self) -> int:
        with self._lock:
            return sum(len(queue) for queue in self._started.values())


def _retrieve(task: asyncio.Task[object]) -> None:
    """Mark a failure as seen: the taker re-raises it; an untaken call's failure is not the run's."""
    if not task.cancelled():
        task.exception()
