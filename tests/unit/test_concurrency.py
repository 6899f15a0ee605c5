"""The adaptive concurrency limit: halves on overload (once per cooldown), grows by one per window of
successes while the server has no queue, stays within [1, ceiling]; reading vLLM's queue gauge."""

from __future__ import annotations

import asyncio

import pytest

from longgraph.concurrency import AdaptiveLimit, metrics_url, waiting_requests

VLLM_METRICS = """# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="smollm2"} 4.0
# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="smollm2"} 7.0
vllm:num_requests_waiting_by_reason{reason="capacity"} 3.0
"""


def test_reads_the_waiting_gauge_and_where_it_is_served() -> None:
    assert waiting_requests(VLLM_METRICS) == 7.0
    assert waiting_requests("# no vllm here\nhttp_requests_total 3\n") is None
    assert metrics_url("http://gpu1:8000/v1") == "http://gpu1:8000/metrics"
    assert metrics_url("http://gpu1:8000/v1/") == "http://gpu1:8000/metrics"
    assert metrics_url("http://proxy/llm") == "http://proxy/llm/metrics"


def test_overload_halves_once_per_cooldown_and_never_below_one() -> None:
    limit = AdaptiveLimit(16, cooldown_s=60.0)
    limit.overloaded("429")
    limit.overloaded("429 again, same burst")
    assert limit.limit == 8
    fast = AdaptiveLimit(3, cooldown_s=0.0)
    for _ in range(5):
        fast.overloaded("429")
    assert fast.limit == 1
    assert [c.limit for c in fast.changes] == [1]  # 3 -> 1, then nothing left to cut


def test_successes_grow_the_limit_one_window_at_a_time_up_to_the_ceiling() -> None:
    limit = AdaptiveLimit(4, cooldown_s=0.0)
    limit.overloaded("429")
    assert limit.limit == 2
    limit.succeeded()
    assert limit.limit == 2  # one success is not a window of two
    limit.succeeded()
    assert limit.limit == 3
    for _ in range(20):
        limit.succeeded()
    assert limit.limit == 4
    assert [c.why for c in limit.changes][-1] == "the server keeps up"


def test_no_growth_while_the_server_holds_a_queue() -> None:
    limit = AdaptiveLimit(8, cooldown_s=0.0)
    limit.queue_read(5, previous=0)
    assert limit.limit == 4
    limit.queue_read(2, previous=5)  # shrinking: no cut, but still queued: no growth
    for _ in range(10):
        limit.succeeded()
    assert limit.limit == 4
    limit.queue_read(0, previous=2)
    for _ in range(4):
        limit.succeeded()
    assert limit.limit == 5


def test_a_fixed_limit_never_moves() -> None:
    limit = AdaptiveLimit(6, adaptive=False, cooldown_s=0.0)
    limit.overloaded("429")
    limit.queue_read(9, previous=0)
    assert limit.limit == 6 and not limit.changes


def test_acquire_holds_at_the_limit_and_a_cut_applies_to_new_calls() -> None:
    async def run() -> list[int]:
        limit = AdaptiveLimit(4, cooldown_s=0.0)
        peak: list[int] = []

        async def call(i: int) -> None:
            async with limit:
                peak.append(limit.in_use)
                if i == 3:  # the fourth in flight
                    limit.overloaded("429")  # 4 -> 2 while four are in flight
                await asyncio.sleep(0.01)

        await asyncio.gather(*(call(i) for i in range(12)))
        return peak

    peak = asyncio.run(run())
    assert max(peak[:4]) == 4 and max(peak[4:]) <= 2


def test_a_cancelled_waiter_passes_its_slot_on() -> None:
    async def run() -> int:
        limit = AdaptiveLimit(1)
        await limit.acquire()
        waiting = asyncio.create_task(limit.acquire())
        behind = asyncio.create_task(limit.acquire())
        await asyncio.sleep(0)
        waiting.cancel()
        limit.release()
        await asyncio.wait_for(behind, timeout=1)
        with pytest.raises(asyncio.CancelledError):
            await waiting
        return limit.in_use

    assert asyncio.run(run()) == 1
