"""Concurrency that adapts to the server: fewer requests in flight when it is overloaded, more again
when it drains.

Why: ``max_concurrency`` is a ceiling chosen before the run, but a server's capacity moves (other
users, a replica restarting, a rate-limiting proxy). Above capacity, a vLLM server queues requests —
latency grows for everyone and timeouts follow — and a proxy answers 429, which the SDK retries
after ``Retry-After``: in both cases more concurrency buys nothing and costs retries.

The rule is TCP's (additive increase, multiplicative decrease), on three overload signals:

* **a 429 or 503 answer** (seen by an ``httpx`` response hook, so retried attempts count too);
* **no answer within ``request_timeout``** (each timed-out attempt, ``on_timeout`` of
  :func:`~longgraph.http_retries.post_with_retries`): a server that admits every request, as vLLM on
  CPU does, shows overload only as slowness, with nothing queued;
* **a growing queue**: while calls are in flight, each endpoint's Prometheus ``/metrics`` is read
  twice a second, and requests waiting for its capacity (:func:`waiting_requests`) above zero and
  not shrinking is overload (and while any request is queued, the limit does not grow). An endpoint
  without ``/metrics`` (not vLLM) is asked once and then left alone.

On overload the limit halves (at least 1); on a queue reading it falls instead to what the server
serves of ours (our calls in flight less the queue) when that is known and lower. A turned-away or
timed-out call cuts only when it was sent after the last cut (a burst of 429s to calls sent under the
old limit is one overload, not ten); a queue reading cuts at most once per ``cooldown_s``. A
turned-away or timed-out call gives its slot back and waits for one under the new limit before it is
retried (:meth:`AdaptiveLimit.requeue`). After as many successful calls as the limit (about one round
trip of the whole window) with no overload, it grows by one, up to ``max_concurrency``. Every change
is logged on ``longgraph.concurrency`` with its reason and kept in :attr:`AdaptiveLimit.changes`.
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import logging
import math
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import httpx

from longgraph.openai_chat import shared_ssl_context

log = logging.getLogger(__name__)

_WAITING = re.compile(r"^vllm:num_requests_waiting(?:\{[^}]*\})?\s+([0-9.eE+-]+)\s*$", re.MULTILINE)
_WAITING_FOR_CAPACITY = re.compile(
    r'^vllm:num_requests_waiting_by_reason\{[^}]*reason="capacity"[^}]*\}\s+([0-9.eE+-]+)\s*$', re.MULTILINE
)


@dataclass
class LimitChange:
    at: float
    limit: int
    why: str


@dataclass
class AdaptiveLimit:
    """An async limit on calls in flight whose value moves between 1 and ``ceiling``."""

    ceiling: int
    adaptive: bool = True
    cooldown_s: float = 1.0
    limit: int = 0
    in_use: int = 0
    changes: collections.deque[LimitChange] = field(default_factory=lambda: collections.deque(maxlen=200))
    _queues: dict[str | None, collections.deque[asyncio.Future[None]]] = field(
        default_factory=dict, repr=False
    )
    """Calls waiting for a slot, per user they are made for (:data:`CALLER`)."""
    _turns: collections.deque[str | None] = field(default_factory=collections.deque, repr=False)
    """The users with a call waiting, in the order their next call is given a slot."""
    _successes: int = 0
    _last_cut: float = float("-inf")
    _queued: bool = False
    _watched: bool = False
    _read_since_change: bool = False

    def __post_init__(self) -> None:
        self.limit = self.limit or self.ceiling

    async def __aenter__(self) -> AdaptiveLimit:
        await self.acquire()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.release()

    async def acquire(self) -> None:
        """Wait for a slot; the task's admission time is kept (:func:`admitted_at`) so that a turned-away
        call admitted before the last cut does not cut again.

        Fair between users: a freed slot goes to the users with calls waiting in turn, one call each
        (:data:`CALLER`: the served user a call is made for), so one user's thousands of queued calls
        delay another's by about one call, not by all of them. Within a user, first come first served;
        a call arriving while others wait queues behind them (no barging past a woken waiter)."""
        if self.in_use < self.limit and not self._turns:
            self.in_use += 1
            _ADMITTED.set(time.monotonic())
            return
        owner = CALLER.get()
        waiter = asyncio.get_running_loop().create_future()
        queue = self._queues.get(owner)
        if queue is None:
            queue = self._queues[owner] = collections.deque()
            self._turns.append(owner)
        queue.append(waiter)
        try:
            await waiter  # resolved with the slot already counted as ours (:meth:`_wake`)
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.in_use -= 1  # handed a slot as it was cancelled: it passes on
            else:
                self._forget(owner, waiter)
            self._wake()
            raise
        _ADMITTED.set(time.monotonic())

    def _forget(self, owner: str | None, waiter: asyncio.Future[None]) -> None:
        queue = self._queues.get(owner)
        if queue is not None and waiter in queue:
            queue.remove(waiter)
            if not queue:
                del self._queues[owner]
                self._turns.remove(owner)

    def release(self) -> None:
        self.in_use -= 1
        self._wake()

    def _wake(self) -> None:
        """Hand free slots to waiting calls, one user at a time in turn."""
        while self.in_use < self.limit and self._turns:
            owner = self._turns.popleft()
            queue = self._queues[owner]
            waiter = queue.popleft()
            if queue:
                self._turns.append(owner)
            else:
                del self._queues[owner]
            if waiter.done():
                continue
            self.in_use += 1
            waiter.set_result(None)

    async def requeue(self) -> None:
        """A call the server turned away gives its slot back and waits for one under the (lowered)
        limit before the SDK retries it; its admission time is renewed, so if it is turned away again
        it cuts again. Without this, every call in flight at a cut keeps retrying at
        the old concurrency: measured under CPU load, 12 calls retrying against 3 slots exhausted one
        call's 20 retries although the limit had fallen to 6."""
        if not self.adaptive:
            return
        self.release()  # and queue behind the waiters: its retry is sent under the limit of now
        try:
            await self.acquire()
        except asyncio.CancelledError:
            self.in_use += 1  # the caller's exit releases the slot it believes it holds
            raise

    def overloaded(self, why: str, *, admitted: float | None = None, served: int | None = None) -> None:
        """The server is over capacity: cut to ``served`` (what the server is seen to serve of ours at
        once) when that is known and lower, else halve the limit. A call turned away (``admitted``:
        when it got its slot) cuts only when it was admitted after the last cut, so a burst of
        rejections of calls sent under the old limit is one overload, and calls sent under the new
        one that are still turned away cut again at once (TCP's once per round trip). A queue reading
        cuts at most once per ``cooldown_s``."""
        now = time.monotonic()
        if not self.adaptive:
            return
        if admitted is not None and admitted < self._last_cut:
            return
        if admitted is None and now - self._last_cut < self.cooldown_s:
            return
        self._last_cut = now
        self._successes = 0
        cut = served if served is not None and served < self.limit else self.limit // 2
        if self.limit > 1:
            self._set(max(1, cut), f"overload: {why}")

    def queue_read(self, waiting: float, previous: float) -> None:
        """The server's queue as last read: overload when it held requests at the last read too and
        is not shrinking; no growth while it holds any.

        One read is not enough: vLLM lists a burst's requests as waiting until its next scheduling
        step admits them. Measured on the idle embedded server, 8 requests in flight read "1 waiting"
        twice in 16 s, each halving the limit, and the map stage ran at 0.895 of a plain client's
        throughput instead of 0.968 with a fixed limit.

        The cut goes straight to what the server serves of ours (our calls in flight less the
        queue): halving took two cooldowns to go from 12 to a server serving 3, and on a short map
        stage that second second of a 9-deep queue was half of all the queueing (measured: 13.1
        queued request-seconds against a fixed limit's 27.3); and halving a probe from 4 to a server
        serving 3 undershot to 2. When the queue is as long as our calls in flight, it is not only
        ours, and the limit halves."""
        self._queued = waiting > 0
        self._watched = self._read_since_change = True
        if waiting > 0 and previous > 0 and waiting >= previous:
            served = self.in_use - math.ceil(waiting)
            self.overloaded(
                f"{waiting:g} request(s) queued at the server", served=served if served >= 1 else None
            )

    def succeeded(self) -> None:
        """A call answered: after a window's worth of successes since the last change (and with no
        queue at the server), one more slot.

        Where the queue is read, the limit grows only after a read has followed the last change:
        successes come every few milliseconds and reads every half second, so without this the
        limit climbed 3 → 4 → 5 against a server serving 3 before any read could see the queue."""
        if not self.adaptive or self.limit >= self.ceiling or self._queued:
            return
        if self._watched and not self._read_since_change:
            return
        self._successes += 1
        if self._successes >= self.limit and time.monotonic() - self._last_cut >= self.cooldown_s:
            self._successes = 0
            self._set(self.limit + 1, "the server keeps up")

    def resize(self, ceiling: int, why: str) -> None:
        """A new ceiling (a Ray worker's share of the run's budget, re-split when a worker is lost):
        the current limit moves by as much, within 1 and the new ceiling."""
        moved = max(1, min(ceiling, self.limit + ceiling - self.ceiling))
        self.ceiling = ceiling
        self._set(moved, why)

    def _set(self, limit: int, why: str) -> None:
        log.info("requests in flight: %d → %d (%s)", self.limit, limit, why)
        self.limit = limit
        self._read_since_change = False
        self.changes.append(LimitChange(at=time.time(), limit=limit, why=why))
        self._wake()


_ADMITTED: contextvars.ContextVar[float | None] = contextvars.ContextVar("admitted", default=None)
CALLER: contextvars.ContextVar[str | None] = contextvars.ContextVar("longgraph_caller", default=None)
"""The user the current task's model calls are made for: a served run's authenticated user (set by
each node, ``nodes/runtime.py``), None for a caller of ``longgraph.ask``. :meth:`AdaptiveLimit.acquire`
shares the slots of one client out between users in turn."""


def admitted_at() -> float | None:
    """When the current task's call got its slot (None outside a limited call)."""
    return _ADMITTED.get()


def metrics_url(base_url: str) -> str:
    """vLLM serves ``/metrics`` at the server's root, beside ``/v1``."""
    root = base_url.rstrip("/")
    return (root[: -len("/v1")] if root.endswith("/v1") else root) + "/metrics"


def waiting_requests(metrics: str) -> float | None:
    """The requests waiting for the server's capacity, summed over its engines; None when the text
    has no queue gauge.

    Recent vLLM splits its queue by reason: ``capacity``, and ``deferred`` by transient constraints
    (a request held while its structured-output grammar compiles, a LoRA budget, a KV transfer).
    Only the first is overload: every call of ours asks for a JSON schema, so a burst of them reads
    as "waiting" on an idle server while the grammars compile. Older servers give the total only."""
    values = [float(v) for v in _WAITING_FOR_CAPACITY.findall(metrics)] or [
        float(v) for v in _WAITING.findall(metrics)
    ]
    return sum(values) if values else None


@dataclass
class QueueWatch:
    """Reads the endpoints' queues while calls are in flight and reports a growing one as overload."""

    limit: AdaptiveLimit
    urls: Sequence[str]
    api_key: str
    interval_s: float = 0.5
    _task: asyncio.Task[None] | None = field(default=None, repr=False)
    _silent: set[str] = field(default_factory=set, repr=False)

    def ensure_running(self) -> None:
        """Start watching (from a call on the client's loop) unless it already is or cannot help."""
        if not self.limit.adaptive or (self._task is not None and not self._task.done()):
            return
        if len(self._silent) == len(self.urls):
            return
        # A context of its own: a task keeps the context it was created in, and the node starting the
        # watcher runs in LangGraph's (the run's config, and through it the run's state).
        self._task = asyncio.get_running_loop().create_task(
            self._watch(), name="longgraph-queue-watch", context=contextvars.Context()
        )

    async def stop(self) -> None:
        """Stop watching (its client closing), waiting for the watcher to let go of its connection."""
        task, self._task = self._task, None
        if task is None or task.done():
            return
        task.cancel()
        await asyncio.wait([task])  # not ``await task``: its CancelledError is not the caller's

    async def _watch(self) -> None:
        previous: dict[str, float] = {}
        idle = 0
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        async with httpx.AsyncClient(timeout=2.0, headers=headers, verify=shared_ssl_context()) as http:
            # The first read comes half an interval in: it only sets the baseline the next one is
            # compared with, and a burst sent at once is then cut an interval sooner than it was.
            pause = self.interval_s / 2
            while idle < 2:  # stops once no call has been in flight for two reads
                await asyncio.sleep(pause)
                pause = self.interval_s
                idle = idle + 1 if self.limit.in_use == 0 else 0
                for url in self.urls:
                    if url in self._silent:
                        continue
                    waiting = await self._read(http, url)
                    if waiting is None:
                        continue
                    self.limit.queue_read(waiting, previous.get(url, 0.0))
                    previous[url] = waiting

    async def _read(self, http: httpx.AsyncClient, url: str) -> float | None:
        try:  # the whole read has 2 s: a trickled answer passes every per-read timeout
            async with asyncio.timeout(2.0):
                response = await http.get(metrics_url(url))
        except (httpx.HTTPError, TimeoutError):
            return None  # a transient failure: the calls themselves will say if the server is down
        waiting = waiting_requests(response.text) if response.status_code == 200 else None
        if waiting is None:
            self._silent.add(url)  # no vLLM metrics here: do not ask again
        return waiting
