"""When a chunk's call runs out of the endpoint's retries: record the chunk as failed, or stop the run.

A flaky endpoint (a share of 5xx answers) should cost a run the chunks whose calls were unlucky, not
the whole run: measured against the stub with 30% 5xx and default retries, one chunk out of retries
aborted a 30-chunk run after 5 s. So a chunk's reading whose call fails after its retries is recorded as
a failed chunk (its reason names the endpoint's error) and the run goes on; the failure budget
(``max_failed_fraction``, ``nodes/read.py``) still refuses an answer from too few chunks, and a
resume retries the recorded chunks (``longgraph/api.py``, through the result cache).

An endpoint that is *down* is another matter. Recording its chunks as failed would spend every chunk's
retries to say what one refused connection says, and would break resuming: a chunk recorded as failed
is a finished step, which a checkpoint resume does not redo. So a call out of retries waits for the
verdict of the calls around it before its chunk is recorded:

* another call is answered — the endpoint is up, this chunk was unlucky: record it;
* :data:`BREAK_AFTER` calls in a row run out of retries, or no other call is under way (the last calls
  of a stage) — one one-token probe decides for every call in doubt: answered, each records its chunk;
  not, each stops the run with :class:`~longgraph.errors.EndpointError` (resumable, as before). Without
  the probe an endpoint dying at a stage's last call would leave that chunk recorded as failed in the
  checkpoint (a resume would not redo it); and a stage's last calls are its slowest, the ones retried,
  so failures in a row at its end are common on a merely flaky endpoint (measured: 4 of 20 runs stopped
  at 30% 5xx, one retry, when three in a row stopped the run without a probe);
* the endpoint has answered no call of this run — it is down: stop, without a probe.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

BREAK_AFTER = 3
"""Unanswered calls in a row that put the endpoint in doubt (a probe then decides). With 30% 5xx and two
retries a call runs out with probability 0.3³ ≈ 2.7%, so three in a row is rarely bad luck alone."""


@dataclass
class EndpointHealth:
    """What one run's calls have seen of the endpoint (the runs of one batch share it: one endpoint).

    Thread-safe, and loop-agnostic: a graph invoked synchronously runs its tasks' coroutines on more
    than one event loop, so a waiting call is woken on its own loop (``call_soon_threadsafe``)."""

    answered: int = 0
    """Calls the endpoint answered (result-cache hits excluded: they say nothing of the endpoint)."""
    unanswered_in_a_row: int = 0
    under_way: int = 0
    """Calls started and not yet settled (a call waiting for its verdict is settled)."""
    probing: bool = False
    down: bool = False
    """A probe went unanswered; until the endpoint answers again, every call out of retries stops."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _waiting: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = field(
        default_factory=list, repr=False
    )

    def started(self) -> None:
        with self._lock:
            self.under_way += 1

    def settled(self, *, answered: bool) -> None:
        """One call is over: answered by the endpoint, or not (a cache hit, a refusal, an error)."""
        with self._lock:
            self.under_way -= 1
            if answered:
                self.answered += 1
                self.unanswered_in_a_row = 0
                self.down = False
            self._wake_all()

    async def may_record_failure(self, probe: Callable[[], Awaitable[bool]]) -> bool:
        """One call under way ran out of retries: True when its chunk may be recorded as failed and the
        run go on, False when the run should stop. Waits for the verdict (module docstring).

        Settles the call and counts it in one step: a call waiting for its verdict must never see the
        last call under way settled but not yet counted (it would take the endpoint for up)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            self.under_way -= 1
            self.unanswered_in_a_row += 1
            answered_before = self.answered
            self._wake_all()
        while True:
            with self._lock:
                if self.answered > answered_before:
                    return True
                if self.down:
                    return False
                in_doubt = self.unanswered_in_a_row >= BREAK_AFTER or self.under_way == 0
                if in_doubt and not self.answered:
                    return False  # it never answered this run: down, no probe needed
                probing_now = in_doubt and not self.probing
                if probing_now:
                    self.probing = True
                    self.under_way += 1  # the probe is a call: the calls waiting wait for it too
                else:
                    change: asyncio.Future[None] = loop.create_future()
                    self._waiting.append((loop, change))
            if probing_now:
                return await self._probed(probe)
            await change

    async def _probed(self, probe: Callable[[], Awaitable[bool]]) -> bool:
        """One probe for every call in doubt: answered, each records its chunk; not, each stops."""
        up = False
        try:
            up = await probe()
        finally:
            with self._lock:
                self.probing = False
                self.under_way -= 1
                if up:
                    self.answered += 1
                    self.unanswered_in_a_row = 0
                else:
                    self.down = True
                self._wake_all()
        return up

    def _wake_all(self) -> None:
        """Wake every waiting call, each on its own loop (called with the lock held)."""
        for loop, change in self._waiting:
            with contextlib.suppress(RuntimeError):  # its loop closed: its waiter was cancelled with it
                loop.call_soon_threadsafe(_resolve, change)
        self._waiting.clear()


def _resolve(change: asyncio.Future[None]) -> None:
    if not change.done():
        change.set_result(None)


def unanswered_failure(message: str) -> str:
    """A chunk's failure reason for a call that ran out of the endpoint's retries."""
    return f"the endpoint failed after its retries: {message}; a resume retries this chunk"


def built_with_unanswered_calls(state: Mapping[str, Any]) -> bool:
    """Whether a structure's construction (``build_usage``) lost any call to the endpoint."""
    usage = state.get("build_usage")
    return bool(usage is not None and usage.unanswered_calls)
