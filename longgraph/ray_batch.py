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
  event loop with its own client (:class:`~longgraph.batch.ItemRunner`, the local engine's item
  runner), several items at once.
* **One load budget per run.** ``max_concurrency`` means requests in flight for the whole run, however
  many workers: every request takes a permit of one :class:`PermitGate` actor after its worker's own
  limit, and gives it back when answered. A permit held by a worker that died is returned when the
  driver learns of the death, so a lost node cannot shrink the budget.
* **Nothing lost when a node dies.** An item whose worker died goes back to the queue and runs on a
  surviving worker (up to :data:`MAX_ATTEMPTS` times); its row is written once, by the driver, when it
  finishes. With checkpoints on a shared PostgreSQL (``checkpoint_url``) it resumes from its last
  step; otherwise it runs again, its finished calls answered by the result cache where the worker's
  node shares it.
* **Ctrl-C** stops the driver between rows: every row written is whole, and a rerun resumes.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from longgraph.batch import BatchItem, BatchSummary, ItemRunner, failure_row, read_item_documents
from longgraph.errors import ConfigurationError, LonggraphError
from longgraph.jsonl import Appender
from longgraph.llm import LLMProvider, OpenAIProvider
from longgraph.state.context import Context

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 3
"""Workers an item may lose (a node dying under it) before its row says it failed."""
_GATE_CALLS = 100_000
"""Calls the gate actor serves at once: every request waiting for a permit is one."""


class WorkerLost(LonggraphError):
    """An item's worker died under it more than :data:`MAX_ATTEMPTS` times, or no worker is left."""


class PermitGate:
    """The run's budget of requests in flight (a Ray actor: one per run). Permits are counted per
    worker, so a dead worker's are returned at once (:meth:`forget`)."""

    def __init__(self, permits: int) -> None:
        self.free = permits
        self.held: collections.Counter[str] = collections.Counter()
        self.waiting: collections.deque[asyncio.Future[None]] = collections.deque()
        self.most_held = 0
        self.forgotten: set[str] = set()

    async def acquire(self, worker: str) -> bool:
        """Wait for a permit; False for a worker the driver declared dead (it must not send)."""
        while self.free <= 0 and worker not in self.forgotten:
            waiter = asyncio.get_running_loop().create_future()
            self.waiting.append(waiter)
            await waiter
        if worker in self.forgotten:
            return False
        self.free -= 1
        self.held[worker] += 1
        self.most_held = max(self.most_held, sum(self.held.values()))
        return True

    def release(self, worker: str) -> None:
        if self.held[worker] <= 0:
            return  # forgotten meanwhile: its permits were already returned
        self.held[worker] -= 1
        self.free += 1
        self._wake()

    def forget(self, worker: str) -> int:
        """Return every permit ``worker`` holds (it died); its later requests get none."""
        returned = self.held.pop(worker, 0)
        self.forgotten.add(worker)
        self.free += returned
        self._wake(everyone=True)
        return returned

    def figures(self) -> dict[str, int]:
        return {"free": self.free, "held": sum(self.held.values()), "most_held": self.most_held}

    def _wake(self, everyone: bool = False) -> None:
        count = len(self.waiting) if everyone else self.free
        while count > 0 and self.waiting:
            waiter = self.waiting.popleft()
            if not waiter.done():
                waiter.set_result(None)
                count -= 1


class GatePermit:
    """One request's permit of the run's :class:`PermitGate`, as an async context manager
    (``LLMClient.gate``)."""

    def __init__(self, gate: Any, worker: str) -> None:
        self.gate = gate
        self.worker = worker

    async def __aenter__(self) -> GatePermit:
        if not await self.gate.acquire.remote(self.worker):
            raise WorkerLost(f"worker {self.worker} was declared lost; its item runs elsewhere")
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.gate.release.remote(self.worker)


class GatedProvider(OpenAIProvider):
    """The default provider, each client's requests also taking a permit of the run's gate."""

    def __init__(self, gate: Any, worker: str) -> None:
        super().__init__()
        self.gate = gate
        self.worker = worker

    def build(self, context: Context) -> Any:
        client = super().build(context)
        client.gate = GatePermit(self.gate, self.worker)
        return client


class BatchWorker:
    """A Ray actor that answers items on its own event loop (several at once), with one client whose
    requests take permits of the run's gate."""

    def __init__(self, context: Context, gate: Any, worker: str, checkpoint_url: str | None) -> None:
        self.context = context
        self.provider: LLMProvider = GatedProvider(gate, worker)
        self.checkpoint_url = checkpoint_url
        self._runner: ItemRunner | None = None
        self._starting = asyncio.Lock()
        self._stack: Any = None

    async def _ready(self) -> ItemRunner:
        async with self._starting:
            if self._runner is None:
                from contextlib import AsyncExitStack

                from longgraph.api import resolved_context
                from longgraph.checkpointing import open_checkpointer

                self._stack = AsyncExitStack()
                checkpointer = None
                if self.checkpoint_url:
                    checkpointer = await self._stack.enter_async_context(
                        open_checkpointer(self.checkpoint_url)
                    )
                resolved = await resolved_context(self.context, self.provider)
                self._runner = ItemRunner(
                    resolved, self.provider, checkpointer, where="the shared checkpoints"
                )
            return self._runner

    async def answer(
        self, item: BatchItem, documents: tuple[str | None, list[Any] | None, list[str]], full: bool
    ) -> dict[str, Any]:
        runner = await self._ready()
        return await runner.answer(item, full=full, documents=documents)

    def peak_rss_mb(self) -> float:
        """This worker's peak resident memory (its own high-water mark, ``VmHWM``), in MB."""
        try:
            for line in Path("/proc/self/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024, 1)
        except OSError:
            pass
        return 0.0


@dataclass
class _Flight:
    item: BatchItem
    worker: int
    attempts: int


def run_on_ray(
    items: Iterator[BatchItem],
    *,
    todo: set[str],
    summary: BatchSummary,
    context: Context,
    path: Path | None,
    address: str | None,
    workers: int | None,
    items_per_worker: int,
    full: bool,
    checkpoint_url: str | None,
    on_item: Callable[[dict[str, Any], BatchSummary], None] | None,
) -> dict[str, int]:
    """Answer the items of ``todo`` on a Ray cluster, writing each row to ``path`` on this driver; the
    gate's figures are returned (``most_held``: the most requests in flight at once, cluster-wide)."""
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
        ray.init(address=address, include_dashboard=False, log_to_driver=False, configure_logging=False)
    with ExitStack() as stack:
        if started_here:
            stack.callback(ray.shutdown)
        permits = context.max_concurrency * max(1, len(context.base_urls))
        # The gate lives on the driver's node: a worker node dying must not take the budget with it.
        here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
        gate = (
            ray.remote(max_concurrency=_GATE_CALLS)(PermitGate)
            .options(num_cpus=0, scheduling_strategy=here)
            .remote(permits)
        )
        count = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        actor = ray.remote(BatchWorker).options(
            num_cpus=1, max_concurrency=items_per_worker, scheduling_strategy="SPREAD", max_restarts=0
        )  # fmt: skip
        pool = [actor.remote(context, gate, f"w{i}", checkpoint_url) for i in range(count)]
        stack.callback(lambda: [ray.kill(a) for a in pool])
        alive = set(range(count))
        appender = stack.enter_context(Appender(path)) if path is not None else None
        queue: collections.deque[tuple[BatchItem, int]] = collections.deque()
        flights: dict[Any, _Flight] = {}
        load = collections.Counter[int]()
        source = (i for i in items if i.id in todo)
        exhausted = False

        def fill() -> None:
            nonlocal exhausted
            while alive:
                worker = min(alive, key=lambda w: load[w])
                if load[worker] >= items_per_worker:
                    return
                if queue:
                    item, attempts = queue.popleft()
                else:
                    if exhausted:
                        return
                    nxt = next(source, None)
                    if nxt is None:
                        exhausted = True
                        return
                    item, attempts = nxt, 0
                documents = read_item_documents(item)  # on the driver: workers need not see its files
                ref = pool[worker].answer.remote(item, documents, full)
                flights[ref] = _Flight(item, worker, attempts + 1)
                load[worker] += 1

        def write(row: dict[str, Any]) -> None:
            row.pop("budget_stop", None)
            if appender is not None:
                appender.write(row)
            summary.count(row)
            if on_item is not None:
                on_item(row, summary)

        started = time.perf_counter()
        fill()
        while flights:
            ready, _ = ray.wait(list(flights), num_returns=1, timeout=1.0)
            for ref in ready:
                flight = flights.pop(ref)
                load[flight.worker] -= 1
                try:
                    row = ray.get(ref)
                except lost_errors as exc:
                    if flight.worker in alive:
                        alive.discard(flight.worker)
                        returned = ray.get(gate.forget.remote(f"w{flight.worker}"))
                        log.warning(
                            "worker w%d was lost (%s); %d permit(s) returned",
                            flight.worker,
                            type(exc).__name__,
                            returned,
                        )
                    if flight.attempts < MAX_ATTEMPTS and alive:
                        queue.appendleft((flight.item, flight.attempts))
                        continue
                    why = "no worker is left" if not alive else f"its worker died {flight.attempts} times"
                    row = failure_row(
                        flight.item, WorkerLost(f"{why} ({type(exc).__name__}); rerun to retry it"), 0.0
                    )
                write(row)
            fill()
            if not alive and (queue or not exhausted):
                for item, _ in queue:
                    write(failure_row(item, WorkerLost("no worker is left; rerun to retry it"), 0.0))
                queue.clear()
                for item in source:
                    write(failure_row(item, WorkerLost("no worker is left; rerun to retry it"), 0.0))
                exhausted = True
        summary.seconds = round(time.perf_counter() - started, 3)
        figures: dict[str, int] = ray.get(gate.figures.remote())
        figures["workers"] = count
        figures["workers_lost"] = count - len(alive)
        peaks = ray.get([pool[w].peak_rss_mb.remote() for w in sorted(alive)])
        figures["worker_peak_rss_mb"] = int(max(peaks, default=0.0))
        return figures
