"""The adaptive concurrency limit: halves on overload (once per cooldown), grows by one per window of
successes while the server has no queue, stays within [1, ceiling]; reading vLLM's queue gauge."""

from __future__ import annotations

import asyncio
import time

import pytest

from longgraph.concurrency import AdaptiveLimit, metrics_url, waiting_requests

VLLM_METRICS = """# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="smollm2"} 4.0
# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="smollm2"} 7.0
vllm:num_requests_waiting_by_reason{engine="0",model_name="smollm2",reason="capacity"} 3.0
vllm:num_requests_waiting_by_reason{engine="0",model_name="smollm2",reason="deferred"} 4.0
"""


def test_reads_the_waiting_gauge_and_where_it_is_served() -> None:
    assert waiting_requests(VLLM_METRICS) == 3.0  # waiting for capacity; the other 4 are deferred
    older_server = "\n".join(line for line in VLLM_METRICS.splitlines() if "by_reason" not in line)
    assert waiting_requests(older_server) == 7.0  # no reasons given: the total
    two_engines = VLLM_METRICS + 'vllm:num_requests_waiting_by_reason{engine="1",reason="capacity"} 2.0\n'
    assert waiting_requests(two_engines) == 5.0
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


def test_a_queue_seen_in_one_read_only_is_the_servers_admission_not_overload() -> None:
    limit = AdaptiveLimit(8, cooldown_s=0.0)
    limit.queue_read(1, previous=0)  # a burst not yet admitted by the next scheduling step
    assert limit.limit == 8
    limit.queue_read(0, previous=1)
    assert limit.limit == 8 and not limit.changes


def test_no_growth_while_the_server_holds_a_queue() -> None:
    limit = AdaptiveLimit(8, cooldown_s=0.0)
    limit.queue_read(5, previous=0)
    assert limit.limit == 8  # one read: not yet overload
    limit.queue_read(5, previous=5)  # still queued, not shrinking: overload
    assert limit.limit == 4
    limit.queue_read(2, previous=5)  # shrinking: no cut, but still queued: no growth
    for _ in range(10):
        limit.succeeded()
    assert limit.limit == 4
    limit.queue_read(0, previous=2)
    for _ in range(4):
        limit.succeeded()
    assert limit.limit == 5


def test_a_queue_of_ours_cuts_straight_to_what_the_server_serves() -> None:
    limit = AdaptiveLimit(12, cooldown_s=0.0)
    limit.in_use = 12  # twelve of ours in flight, nine of them queued: the server serves three
    limit.queue_read(9, previous=9)
    assert limit.limit == 3  # not 6, which would take a second cut a cooldown later
    limit.in_use = 4  # a probe to four: one queued
    limit.limit = 4
    limit.queue_read(1, previous=1)
    assert limit.limit == 3  # halving would have undershot to 2


def test_a_queue_longer_than_ours_is_not_only_ours_and_halves() -> None:
    limit = AdaptiveLimit(8, cooldown_s=0.0)
    limit.in_use = 5
    limit.queue_read(20, previous=12)
    assert limit.limit == 4


def test_where_the_queue_is_read_growth_waits_for_a_read_after_each_change() -> None:
    limit = AdaptiveLimit(8, cooldown_s=0.0)
    limit.in_use = 8
    limit.queue_read(4, previous=4)
    assert limit.limit == 4
    for _ in range(40):  # many successes, but no read yet has seen the queue at four
        limit.succeeded()
    assert limit.limit == 4
    limit.queue_read(0, previous=4)
    for _ in range(40):
        limit.succeeded()
    assert limit.limit == 5  # one step per read, not 4 -> 8 between two reads
    unwatched = AdaptiveLimit(8, cooldown_s=0.0)  # an endpoint without /metrics: successes alone
    unwatched.overloaded("429")
    for _ in range(40):
        unwatched.succeeded()
    assert unwatched.limit == 8


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


def test_a_turned_away_call_waits_for_a_slot_under_the_lowered_limit_before_retrying() -> None:
    async def run() -> tuple[list[int], int]:
        limit = AdaptiveLimit(4, cooldown_s=0.0)
        retried_with: list[int] = []

        async def call(i: int) -> None:
            async with limit:
                await asyncio.sleep(0)  # all four in flight
                if i < 3:  # three are turned away: the limit halves, and they requeue
                    limit.overloaded("429")
                    await limit.requeue()
                    retried_with.append(limit.in_use)
                await asyncio.sleep(0.01)

        await asyncio.gather(*(call(i) for i in range(4)))
        return retried_with, limit.in_use

    retried_with, left = asyncio.run(run())
    assert max(retried_with) <= 2, retried_with  # retries ran under the cut (4 → 2 → 1), not at 4
    assert left == 0


def test_a_requeue_cancelled_while_waiting_leaves_the_count_balanced() -> None:
    async def run() -> int:
        limit = AdaptiveLimit(2, cooldown_s=0.0)

        async def turned_away() -> None:
            async with limit:
                limit.overloaded("429")
                await limit.requeue()

        await limit.acquire()
        await limit.acquire()  # two in flight; a cut to 1 makes the second requeue wait
        limit.release()
        task = asyncio.create_task(turned_away())
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        limit.release()
        return limit.in_use

    assert asyncio.run(run()) == 0


def test_a_rejected_call_cuts_only_when_it_was_admitted_after_the_last_cut() -> None:
    limit = AdaptiveLimit(12, cooldown_s=60.0)
    before = time.monotonic()
    limit.overloaded("429", admitted=before)
    limit.overloaded("429", admitted=before)  # sent under the old limit: the same overload
    assert limit.limit == 6
    limit.overloaded("429", admitted=time.monotonic())  # sent under the new limit: cut again, cooldown or not
    assert limit.limit == 3
    limit.overloaded("queue")  # a queue reading still waits out the cooldown
    assert limit.limit == 3
