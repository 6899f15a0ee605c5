"""Values that belong to one event loop, closed inside that loop as it shuts down.

An HTTP connection pool, a semaphore or a watcher task is bound to the loop that made it, so clients
are cached per loop. ``longgraph.ask`` (like any ``asyncio.run``) makes a new loop per call, and a
graph run through LangGraph's sync API gives each node call a loop of its own. Cached and never
closed, each loop's clients kept their sockets open, and kept the loop alive; through the loop's
tasks they kept the runs themselves (a task holds the context it was created in, and with it
LangGraph's run config). Measured before this module: +11 MB, 5,500 objects and 16 open sockets per
``aask`` of a 1.28M-token input, in one process, for good.

asyncio gives code on a loop one chance to run as the loop shuts down: ``asyncio.run`` (and any
runner that calls ``loop.shutdown_asyncgens()``) closes every async generator started on the loop.
:class:`PerLoop` keeps one such generator per loop; its closing closes that loop's values and forgets
the loop. A loop closed without that step (``loop.close()`` alone) is forgotten the next time a value
is asked for on another loop: its values are dropped unclosed (their sockets close when collected).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import AsyncGenerator, Awaitable, Callable, Hashable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

log = logging.getLogger(__name__)
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


@dataclass
class _LoopValues(Generic[K, V]):
    closer: AsyncGenerator[None, None]
    """Held here: the loop keeps its async generators in a weak set."""
    values: dict[K, V] = field(default_factory=dict)


class PerLoop(Generic[K, V]):
    """One value per key and event loop, each closed with ``close`` when its loop shuts down.

    Thread-safe: sync graph runs ask from several threads, each with a loop of its own."""

    def __init__(self, close: Callable[[V], Awaitable[None]]) -> None:
        self._close = close
        self._loops: dict[asyncio.AbstractEventLoop, _LoopValues[K, V]] = {}
        self._lock = threading.Lock()

    def get(self, key: K, make: Callable[[], V]) -> V:
        """The running loop's value for ``key``, made by ``make()`` the first time it is asked for."""
        loop = asyncio.get_running_loop()
        scope = self._loops.get(loop)
        if scope is None:
            scope = self._open(loop)
        value = scope.values.get(key)
        if value is None:
            value = scope.values[key] = make()
        return value

    def loops(self) -> int:
        """How many loops hold values (closed ones not yet forgotten included)."""
        return len(self._loops)

    def _open(self, loop: asyncio.AbstractEventLoop) -> _LoopValues[K, V]:
        with self._lock:
            for closed in [other for other in self._loops if other.is_closed()]:
                log.debug("forgetting the values of a loop closed without shutting down its generators")
                del self._loops[closed]
            scope = self._loops[loop] = _LoopValues(self._closed_at_shutdown(loop))
        # Run it to its ``yield`` now, synchronously: the first step registers it with the running
        # loop (its first-iteration hook), and nothing before the ``yield`` awaits. A task would not
        # do: a loop shutting down cancels its tasks before it closes its generators.
        with contextlib.suppress(StopIteration):  # raised as it suspends at its yield, as intended
            scope.closer.asend(None).send(None)
        return scope

    async def _closed_at_shutdown(self, loop: asyncio.AbstractEventLoop) -> AsyncGenerator[None, None]:
        try:
            yield
        finally:
            with self._lock:
                scope = self._loops.pop(loop, None)
            for value in scope.values.values() if scope is not None else ():
                try:
                    await self._close(value)
                except Exception:  # one value failing to close must not keep the others open
                    log.warning("closing %r as its event loop shut down failed", value, exc_info=True)
