"""Per-loop values (``longgraph/loop_scope.py``) are closed inside their loop as it shuts down, and a
client's loop no longer outlives it: each ``asyncio.run`` (every ``longgraph.ask``, every node of a
sync graph run) had left its clients, their sockets and its run behind."""

from __future__ import annotations

import asyncio
import contextvars
import gc
import logging
import threading
import weakref
from typing import Any

import httpx
import pytest

from longgraph.concurrency import AdaptiveLimit, QueueWatch
from longgraph.llm import Endpoint, LLMClient
from longgraph.loop_scope import PerLoop
from longgraph.openai_chat import OpenAIChat


class _Pool:
    """Stands for a connection pool: remembers the loop it was made on and whether it was closed there."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.loop = asyncio.get_running_loop()
        self.closed_on: asyncio.AbstractEventLoop | None = None

    async def aclose(self) -> None:
        await asyncio.sleep(0)  # closing may await: the loop is still running
        self.closed_on = asyncio.get_running_loop()


def _pools() -> PerLoop[str, _Pool]:
    return PerLoop(_Pool.aclose)


def test_one_value_per_key_and_loop_closed_in_its_loop_when_asyncio_run_ends() -> None:
    pools = _pools()

    async def ask() -> tuple[_Pool, _Pool, _Pool]:
        first = pools.get("a", lambda: _Pool("a"))
        assert pools.get("a", lambda: _Pool("a again")) is first
        return first, pools.get("b", lambda: _Pool("b")), pools.get("a", lambda: _Pool("never"))

    a, b, same = asyncio.run(ask())
    assert same is a
    assert a.closed_on is a.loop and b.closed_on is b.loop  # closed while their loop still ran
    assert pools.loops() == 0  # and the loop forgotten

    a2, *_ = asyncio.run(ask())
    assert a2 is not a and a2.loop is not a.loop  # a new loop gets values of its own
    assert a2.closed_on is a2.loop


def test_values_are_closed_after_the_loops_tasks_are_cancelled() -> None:
    """``asyncio.run`` cancels what is still running first, then closes the values: a call cancelled
    mid-request is done with its pool before the pool closes."""
    order: list[str] = []

    async def close(pool: _Pool) -> None:
        await pool.aclose()
        order.append("pool closed")

    pools: PerLoop[str, _Pool] = PerLoop(close)

    async def stuck() -> None:
        try:
            await asyncio.sleep(3600)
        finally:
            order.append("task cancelled")

    async def main() -> None:
        pools.get("a", lambda: _Pool("a"))
        asyncio.get_running_loop().create_task(stuck())
        await asyncio.sleep(0)

    asyncio.run(main())
    assert order == ["task cancelled", "pool closed"]


def test_a_loop_closed_without_shutting_down_is_forgotten_on_the_next_loop(
    caplog: pytest.LogCaptureFixture,
) -> None:
    pools = _pools()
    loop = asyncio.new_event_loop()
    stranded = loop.run_until_complete(_make(pools, "a"))
    loop.close()  # no shutdown_asyncgens: nothing could run on it any more
    assert pools.loops() == 1
    unraisable: list[Any] = []
    with caplog.at_level(logging.WARNING), _catch_unraisable(unraisable):
        fresh = asyncio.run(_make(pools, "a"))
        gc.collect()
    assert fresh is not stranded and fresh.closed_on is fresh.loop
    assert stranded.closed_on is None  # it could not be closed: dropped, to be collected
    assert pools.loops() == 0
    assert unraisable == [] and not caplog.records


def test_one_value_failing_to_close_leaves_the_others_closed(caplog: pytest.LogCaptureFixture) -> None:
    async def close(pool: _Pool) -> None:
        if pool.name == "bad":
            raise OSError("socket already gone")
        await pool.aclose()

    pools: PerLoop[str, _Pool] = PerLoop(close)

    async def main() -> list[_Pool]:
        return [pools.get(name, lambda name=name: _Pool(name)) for name in ("good", "bad", "also good")]

    with caplog.at_level(logging.WARNING, logger="longgraph.loop_scope"):
        good, bad, also_good = asyncio.run(main())
    assert good.closed_on is good.loop and also_good.closed_on is also_good.loop and bad.closed_on is None
    assert any("socket already gone" in (r.exc_text or "") for r in caplog.records)
    assert pools.loops() == 0


def test_loops_on_many_threads_at_once_each_close_their_own() -> None:
    """A sync graph run gives each node call a loop on a thread of its own, several at a time."""
    pools = _pools()
    made: list[_Pool] = []
    lock = threading.Lock()
    start = threading.Barrier(8)

    def worker() -> None:
        async def main() -> None:
            start.wait()
            for key in ("a", "b", "c"):
                pool = pools.get(key, lambda key=key: _Pool(key))
                with lock:
                    made.append(pool)
                await asyncio.sleep(0.001)

        asyncio.run(main())

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(made) == 24 and len({id(p) for p in made}) == 24
    assert all(p.closed_on is p.loop for p in made)
    assert pools.loops() == 0


def test_a_client_closes_its_pools_and_its_queue_watcher() -> None:
    """What the provider closes at shutdown: the lean chat model's HTTP client and the watcher task."""

    async def main() -> tuple[httpx.AsyncClient, asyncio.Task[None]]:
        http = httpx.AsyncClient(transport=httpx.MockTransport(lambda r: httpx.Response(200, text="")))
        chat = OpenAIChat(base_url="http://127.0.0.1:9/v1", api_key="k", model="m", sampling={}, timeout=1.0,
                          max_retries=0, http=http)  # fmt: skip
        watch = QueueWatch(AdaptiveLimit(4, adaptive=True), ["http://127.0.0.1:9/v1"], "")
        client = LLMClient([Endpoint(url="http://127.0.0.1:9/v1", model=chat)], model_name="m", max_concurrency=4,
                           mode="text", sampling={}, watch=watch)  # fmt: skip
        watch.ensure_running()
        task = watch._task
        assert task is not None and not task.done()
        await client.aclose()
        return http, task

    http, task = asyncio.run(main())
    assert http.is_closed
    assert task.cancelled()


_RUN_STATE: contextvars.ContextVar[object] = contextvars.ContextVar("run_state")


class _State:
    """Stands for a run's state, reachable from the context a node runs in."""


def test_the_queue_watcher_does_not_keep_the_run_that_started_it() -> None:
    """A task keeps the context it was created in; the watcher outlives the node that starts it."""
    watch = QueueWatch(AdaptiveLimit(4, adaptive=True), ["http://127.0.0.1:9/v1"], "", interval_s=60.0)

    async def main() -> None:
        state = _State()
        seen = weakref.ref(state)

        def node(state: _State) -> None:  # runs in the run's context, as a node does
            _RUN_STATE.set(state)
            watch.ensure_running()

        contextvars.copy_context().run(node, state)
        del state
        gc.collect()
        assert watch._task is not None and not watch._task.done()  # still watching
        assert seen() is None  # but not holding the run

    asyncio.run(main())


async def _make(pools: PerLoop[str, _Pool], key: str) -> _Pool:
    return pools.get(key, lambda: _Pool(key))


class _catch_unraisable:
    """Collects what Python reports as unraisable (an exception in a finaliser) instead of printing it."""

    def __init__(self, into: list[Any]) -> None:
        self._into = into

    def __enter__(self) -> None:
        import sys

        self._previous = sys.unraisablehook
        sys.unraisablehook = self._into.append

    def __exit__(self, *exc: object) -> None:
        import sys

        sys.unraisablehook = self._previous
