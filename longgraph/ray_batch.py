"""A corpus on a Ray cluster: ``longgraph batch ITEMS --out OUT --ray [ADDRESS]`` and
``abatch(..., engine="ray")``.

Why Ray and not a scheduler of our own: our users already run Ray to drive vLLM fleets, and it brings
what a corpus beyond one machine needs — placement over nodes, workers that come back, a cluster
address — without us owning any of it. What longgraph adds is what makes it the same run as the local
engine:

* **The driver owns the results file.** Items are validated, skipped (finished before) and read on
  the driver exactly as the local engine does (``longgraph/batch.py``); each finished item's row is
  appended and fsynced there, with the same format and resume rules. Workers hold nothing a rerun needs.
* **Workers are async actors**, spread over the nodes (``SPREAD``), each running the graphs on its own
  event loop with its own client, several units at once. A worker knows no kind of work: it runs the
  task function it is sent (``longgraph/batch.py``'s item runner, ``longgraph/synth.py``'s synthesis)
  with its :class:`WorkerScope`, so this module imports neither and the arrows run one way.
* **One load budget per run.** ``max_concurrency`` means requests in flight for the whole run, however
  many workers: it is split among them (:func:`shares`), each worker's client limited to its share
  (and adapting below it as on one machine), and re-split among the survivors when a worker is lost,
  so a lost node cannot shrink the budget. No call to anyone per request: a gate actor taking a permit
  per request measured 0.42 of the local engine's items/s at 0.1 s per call on these two cores.
* **One spending budget per run, and a lost worker's spend counted.** ``max_calls`` and
  ``max_prompt_tokens`` are split among the workers like the load budget. Each worker tells a
  :class:`SpendLedger` actor of every request as it sends it and of its reply (fire-and-forget, no
  wait), under the Ray task of the item it serves; when a worker is lost, what its unfinished items
  spent is read from the ledger: its replacement gets the lost worker's share less what it spent, and
  the run's figures carry it (``lost_calls``, ``lost_prompt_tokens``, ``lost_completion_tokens``), so
  the corpus's call count is what the endpoint served. (A request sent in the instant the process was
  killed, before its report left, is the one thing that can be missed.)
* **Nothing lost when a node dies.** A lost worker is replaced by a new one where Ray finds room (it
  joins once it answers, within :data:`REPLACE_TIMEOUT_S`; the budget is re-split again). An item
  whose worker died goes back to the queue and runs on another worker (up to :data:`MAX_ATTEMPTS`
  times); its row is written once, by the driver, when it finishes. With checkpoints on a shared PostgreSQL (``checkpoint_url``) it resumes from its last
  step; otherwise it runs again, its finished calls answered by the result cache where the worker's
  node shares it.
* **Ctrl-C** stops the driver between rows: every row written is whole, and a rerun resumes.
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import logging
import os
import socket
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AsyncExitStack, ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from longgraph.errors import ConfigurationError, LonggraphError
from longgraph.llm import OpenAIProvider, Reply
from longgraph.state.context import Context

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 3
"""Workers an item may lose (a node dying under it) before its row says it failed."""
REPLACE_TIMEOUT_S = 30.0
"""How long a worker started in a lost one's place may take to be placed and answer; past it (no node
has room: the lost one's node is gone) the run goes on with the survivors."""


class WorkerLost(LonggraphError):
    """An item's worker died under it more than :data:`MAX_ATTEMPTS` times, or no worker is left."""


class SpendLedger:
    """A Ray actor: what each worker's units have spent (requests sent, prompt and completion tokens),
    by the Ray task id of the unit. Told by the workers as they spend; asked by the driver when a worker
    is lost (:meth:`spent_by`) and at the end of the run (:meth:`spent_on`)."""

    def __init__(self) -> None:
        self.by_task: dict[str, list[int]] = {}
        self.by_worker: dict[int, list[int]] = {}

    def _rows(self, worker: int, task: str) -> tuple[list[int], list[int]]:
        return self.by_worker.setdefault(worker, [0, 0, 0]), self.by_task.setdefault(task, [0, 0, 0])

    def sent(self, worker: int, task: str) -> None:
        for row in self._rows(worker, task):
            row[0] += 1

    def replied(self, worker: int, task: str, prompt_tokens: int, completion_tokens: int) -> None:
        for row in self._rows(worker, task):
            row[1] += prompt_tokens
            row[2] += completion_tokens

    def spent_by(self, worker: int) -> list[int]:
        """[requests, prompt tokens, completion tokens] worker ``worker`` (its serial) has spent."""
        return list(self.by_worker.get(worker, [0, 0, 0]))

    def spent_on(self, tasks: list[str]) -> list[int]:
        """[requests, prompt tokens, completion tokens] spent on these tasks, summed."""
        rows = [self.by_task.get(task, [0, 0, 0]) for task in tasks]
        return [sum(row[i] for row in rows) for i in range(3)]


_TASK: contextvars.ContextVar[str] = contextvars.ContextVar("longgraph_ray_task", default="")
"""The Ray task (one unit of work) the current coroutine serves: asyncio tasks a unit starts inherit it,
so every request of a unit's graph is charged to that unit."""


class LedgerTally:
    """A client's :class:`~longgraph.llm.CallTally` on a worker: each request and reply reported to the
    run's :class:`SpendLedger` without waiting for it."""

    def __init__(self, ledger: Any, worker: int) -> None:
        self.ledger, self.worker = ledger, worker

    def sent(self) -> None:
        self.ledger.sent.remote(self.worker, _TASK.get())

    def replied(self, reply: Reply) -> None:
        self.ledger.replied.remote(self.worker, _TASK.get(), reply.prompt_tokens, reply.completion_tokens)


class SharedBudgetProvider(OpenAIProvider):
    """The default provider, each client's limit this worker's share of the run's budget, resizable when
    the budget is re-split (:meth:`resize`); with a ledger, every client reports its spend to it."""

    def __init__(self, tally: LedgerTally | None = None) -> None:
        super().__init__()
        self.built: list[Any] = []
        self.tally = tally

    def build(self, context: Context) -> Any:
        client = super().build(context)
        client.tally = self.tally
        self.built.append(client)
        return client

    def resize(self, share: int) -> None:
        for client in self.built:
            client.limit.resize(share, "the run's budget was re-split among its workers")


def shares(permits: int, workers: int) -> list[int]:
    """``permits`` split among ``workers`` as evenly as whole requests allow (the first get one more)."""
    return [permits // workers + (1 if i < permits % workers else 0) for i in range(workers)]


@dataclass
class WorkerScope:
    """What a worker's tasks share: the resolved context, the provider whose limit is the worker's
    share of the budget, the checkpointer, and ``memo`` for what a kind of task builds once per worker
    (an item runner, a compiled graph)."""

    context: Context
    provider: SharedBudgetProvider
    checkpointer: Any
    memo: dict[str, Any] = field(default_factory=dict)


Task = Callable[..., Awaitable[dict[str, Any]]]
"""A unit's work on a worker: ``await task(scope, *args)``, its result plain data for the driver."""


class BatchWorker:
    """A Ray actor that runs the tasks it is sent on its own event loop, several at once, with one
    client whose limit is this worker's share of the run's budget."""

    def __init__(
        self, context: Context, checkpoint_url: str | None, ledger: Any = None, serial: int = 0
    ) -> None:
        self.context = context
        self.provider = SharedBudgetProvider(None if ledger is None else LedgerTally(ledger, serial))
        self.checkpoint_url = checkpoint_url
        self._scope: WorkerScope | None = None
        self._starting = asyncio.Lock()
        self._stack = AsyncExitStack()

    def resize(self, share: int) -> None:
        """This worker's new share of the run's budget (another worker was lost)."""
        self.context = self.context.replace(max_concurrency=share)
        self.provider.resize(share)

    async def _ready(self) -> WorkerScope:
        async with self._starting:
            if self._scope is None:
                from longgraph.api import resolved_context
                from longgraph.checkpointing import open_checkpointer

                checkpointer = None
                if self.checkpoint_url:
                    checkpointer = await self._stack.enter_async_context(
                        open_checkpointer(self.checkpoint_url)
                    )
                resolved = await resolved_context(self.context, self.provider)
                self._scope = WorkerScope(resolved, self.provider, checkpointer)
            return self._scope

    async def run(self, task: Task, *args: Any) -> dict[str, Any]:
        """``task(scope, *args)`` on this worker (a module-level function: Ray sends it by reference), its
        requests charged to this Ray task in the ledger."""
        import ray

        _TASK.set(ray.get_runtime_context().get_task_id() or "")
        return await task(await self._ready(), *args)

    def pid(self) -> int:
        """This worker's process id: answering it says the worker is placed and running."""
        return os.getpid()

    def peak_rss_mb(self) -> float:
        """This worker's peak resident memory (its own high-water mark, ``VmHWM``), in MB."""
        try:
            for line in Path("/proc/self/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024, 1)
        except OSError:
            pass
        return 0.0


U = TypeVar("U")


@dataclass
class _Flight(Generic[U]):
    unit: U
    worker: int
    attempts: int


LOST_SPEND = ("lost_calls", "lost_prompt_tokens", "lost_completion_tokens")
"""The run's figures for what lost workers spent on units they did not finish: requests sent, prompt and
completion tokens (each unit's row counts only the worker that finished it)."""


def spend_share(context: Context, index: int, workers: int, permits: int) -> Context:
    """Worker ``index``'s context: ``permits`` requests in flight and its share of the run's
    ``max_calls`` / ``max_prompt_tokens`` (split as :func:`shares` splits the load budget)."""
    calls, tokens = context.max_calls, context.max_prompt_tokens
    return context.replace(
        max_concurrency=permits,
        max_calls=None if calls is None else shares(calls, workers)[index],
        max_prompt_tokens=None if tokens is None else shares(tokens, workers)[index],
    )


def left_after(allowance: Context, spent: list[int]) -> Context | None:
    """A lost worker's allowance less what it spent (``spent``: requests, prompt tokens, completion
    tokens from the ledger): what its replacement may spend; None when nothing is left of it (no
    replacement is then started: the survivors finish the run)."""
    calls, tokens = allowance.max_calls, allowance.max_prompt_tokens
    calls_left = None if calls is None else calls - spent[0]
    tokens_left = None if tokens is None else tokens - spent[1]
    if (calls_left is not None and calls_left < 1) or (tokens_left is not None and tokens_left < 1):
        return None
    return allowance.replace(max_calls=calls_left, max_prompt_tokens=tokens_left)


CONNECT_TIMEOUT_S = 5.0
"""How long a cluster address may take to accept a connection before the run is refused."""


def refuse_unreachable(address: str | None) -> None:
    """A :class:`ConfigurationError` for a ``host:port`` (or ``ray://host:port``) where nothing accepts
    a connection within :data:`CONNECT_TIMEOUT_S`: ``ray.init`` waits for such a cluster's control
    service for minutes (``--ray 127.0.0.1:1`` ran past 150 s) before it gives up. ``auto``, ``local``
    and None are Ray's own choices, left to it."""
    if address is None or address in ("auto", "local"):
        return
    target = address.removeprefix("ray://")
    host, _, port = target.rpartition(":")
    if not host or not port.isdigit():
        raise ConfigurationError(f"--ray {address!r}: give host:port, ray://host:port or auto")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as exc:
        raise ConfigurationError(
            f"--ray {address}: no Ray cluster answers there ({exc.strerror or type(exc).__name__})"
        ) from None


def run_on_ray(
    units: Iterator[U],
    *,
    context: Context,
    address: str | None,
    workers: int | None,
    per_worker: int,
    checkpoint_url: str | None,
    submit: Callable[[Any, U], Any],
    finished: Callable[[U, Any], None],
    lost: Callable[[U, str], None],
) -> dict[str, int]:
    """Run each unit of work (a batch item, a document to synthesise from) on a worker of a Ray cluster:
    ``submit(worker, unit)`` sends it (an actor call), ``finished(unit, value)`` takes its result on this
    driver, ``lost(unit, why)`` its failure after :data:`MAX_ATTEMPTS` lost workers or when none is
    left. Returns the run's figures (workers, workers lost, the budget of requests in flight, the
    workers' peak RSS)."""
    try:
        import ray as ray_module
        from ray.exceptions import ActorDiedError, ActorUnavailableError, RayActorError
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
    except ImportError as exc:
        raise ConfigurationError("--ray needs Ray: pip install 'longgraph[ray]'") from exc
    ray: Any = ray_module  # its handles' methods are typed as the plain class's
    lost_errors = (ActorDiedError, ActorUnavailableError, RayActorError)
    started_here = not ray.is_initialized()
    if started_here:
        refuse_unreachable(address)
        ray.init(address=address, include_dashboard=False, log_to_driver=False, configure_logging=False)
    with ExitStack() as stack:
        if started_here:
            stack.callback(ray.shutdown)
        # One budget for the run: max_concurrency split among the workers (no call to anyone per request),
        # re-split among the survivors when one is lost. Never more workers than requests allowed.
        permits = context.max_concurrency
        count = min(permits, workers or max(1, int(ray.cluster_resources().get("CPU", 1))))
        for limit in (context.max_calls, context.max_prompt_tokens):
            count = min(count, limit or count)  # a share of the spending budget for every worker
        actor = ray.remote(BatchWorker).options(
            num_cpus=1, max_concurrency=per_worker, scheduling_strategy="SPREAD", max_restarts=0
        )
        # On the driver's own node: a worker node lost mid-run must not take the run's ledger with it.
        here = NodeAffinitySchedulingStrategy(node_id=ray.get_runtime_context().get_node_id(), soft=False)
        ledger = ray.remote(SpendLedger).options(num_cpus=0, scheduling_strategy=here).remote()
        stack.callback(lambda: ray.kill(ledger))
        allowances = [spend_share(context, i, count, share) for i, share in enumerate(shares(permits, count))]
        serials = list(range(count))  # each worker's name in the ledger; a replacement gets a new one
        pool = [
            actor.remote(allowance, checkpoint_url, ledger, serial)
            for serial, allowance in zip(serials, allowances, strict=True)
        ]
        stack.callback(lambda: [ray.kill(a) for a in pool])
        alive = set(range(count))
        replacing: dict[Any, tuple[int, float]] = {}  # a new worker's first answer -> its slot, asked when
        replacements_left, lost_count, replaced = count * MAX_ATTEMPTS, 0, 0
        lost_tasks: list[str] = []  # the Ray tasks of units whose worker died under them

        def resplit() -> None:
            survivors = sorted(alive)
            for w, share in zip(survivors, shares(permits, len(survivors)) if survivors else [], strict=True):
                pool[w].resize.remote(share)

        def replace(slot: int) -> None:
            """A new worker in a lost one's place (Ray places it where there is room); it joins the run,
            and the budget is re-split, once it answers."""
            nonlocal replacements_left
            if replacements_left <= 0:
                return
            replacements_left -= 1
            left = left_after(allowances[slot], ray.get(ledger.spent_by.remote(serials[slot])))
            if left is None:
                log.warning("worker %d spent its share of the run's budget: going on without it", slot)
                return
            allowances[slot] = left.replace(max_concurrency=1)
            serials[slot] = max(serials) + 1
            pool[slot] = actor.remote(allowances[slot], checkpoint_url, ledger, serials[slot])
            replacing[pool[slot].pid.remote()] = (slot, time.monotonic())

        queue: collections.deque[tuple[U, int]] = collections.deque()
        flights: dict[Any, _Flight[U]] = {}
        load = collections.Counter[int]()
        exhausted = False

        def fill() -> None:
            nonlocal exhausted
            while alive:
                worker = min(alive, key=lambda w: load[w])
                if load[worker] >= per_worker:
                    return
                if queue:
                    unit, attempts = queue.popleft()
                else:
                    nxt = None if exhausted else next(units, None)
                    if nxt is None:
                        exhausted = True
                        return
                    unit, attempts = nxt, 0
                flights[submit(pool[worker], unit)] = _Flight(unit, worker, attempts + 1)
                load[worker] += 1

        fill()
        while flights or (replacing and (queue or not exhausted)):  # a replacement only for work left
            ready, _ = ray.wait([*flights, *replacing], num_returns=1, timeout=1.0)
            for ref in ready:
                if ref in replacing:
                    slot, _since = replacing.pop(ref)
                    try:
                        ray.get(ref)
                    except lost_errors as exc:
                        log.warning(
                            "the worker replacing worker %d was lost too (%s)", slot, type(exc).__name__
                        )
                        continue
                    alive.add(slot)
                    replaced += 1
                    log.warning("worker %d was replaced", slot)
                    resplit()
                    continue
                flight = flights.pop(ref)
                load[flight.worker] -= 1
                try:
                    value = ray.get(ref)
                except lost_errors as exc:
                    lost_tasks.append(ref.task_id().hex())
                    if flight.worker in alive:
                        alive.discard(flight.worker)
                        lost_count += 1
                        log.warning("worker %d was lost (%s)", flight.worker, type(exc).__name__)
                        resplit()
                        replace(flight.worker)
                    if flight.attempts < MAX_ATTEMPTS and (alive or replacing):
                        queue.appendleft((flight.unit, flight.attempts))
                        continue
                    why = "no worker is left" if not alive else f"its worker died {flight.attempts} times"
                    lost(flight.unit, f"{why} ({type(exc).__name__}); rerun to retry it")
                    continue
                finished(flight.unit, value)
            for ref, (slot, since) in list(replacing.items()):
                if time.monotonic() - since > REPLACE_TIMEOUT_S:
                    del replacing[ref]
                    ray.kill(pool[slot])
                    log.warning("no room for a worker in worker %d's place: going on without it", slot)
            fill()
            if not alive and not replacing:
                for unit, _ in queue:
                    lost(unit, "no worker is left; rerun to retry it")
                queue.clear()
                for unit in units:
                    lost(unit, "no worker is left; rerun to retry it")
        figures: dict[str, int] = {
            "workers": count, "budget": permits, "workers_lost": lost_count, "workers_replaced": replaced,
        }  # fmt: skip
        lost_spend = ray.get(ledger.spent_on.remote(lost_tasks)) if lost_tasks else [0, 0, 0]
        for name, value in zip(LOST_SPEND, lost_spend, strict=True):
            figures[name] = value
        peaks = ray.get([pool[w].peak_rss_mb.remote() for w in sorted(alive)])
        figures["worker_peak_rss_mb"] = int(max(peaks, default=0.0))
        return figures
