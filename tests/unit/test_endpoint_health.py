"""A call out of the endpoint's retries: its chunk recorded as failed when the endpoint is up, the run
stopped when it is down (``nodes/endpoint_health.py``)."""

from __future__ import annotations

import asyncio

from longgraph.nodes.endpoint_health import BREAK_AFTER, EndpointHealth


class Probe:
    """A fake probe: answers as told, counting how often it was sent."""

    def __init__(self, answers: bool) -> None:
        self.answers, self.sent = answers, 0

    async def __call__(self) -> bool:
        self.sent += 1
        return self.answers


async def _verdict_after(health: EndpointHealth, then: list[bool]) -> bool:
    """One call out of retries while another call is under way, which then settles as ``then`` says."""
    health.started()  # the call that fails
    health.started()  # the other call
    waiting = asyncio.create_task(health.may_record_failure(Probe(False)))
    await asyncio.sleep(0)
    assert not waiting.done(), "decided before the call under way settled"
    for answered in then:
        health.settled(answered=answered)
        await asyncio.sleep(0)
    return await asyncio.wait_for(waiting, 1)


def test_a_failure_is_recorded_once_another_call_is_answered() -> None:
    health = EndpointHealth(answered=5)
    assert asyncio.run(_verdict_after(health, [True])) is True
    assert health.unanswered_in_a_row == 0


def _in_a_row(probe: Probe) -> list[bool]:
    """BREAK_AFTER calls under way, each running out of retries in turn."""

    async def scenario() -> list[bool]:
        health = EndpointHealth(answered=5)
        for _ in range(BREAK_AFTER + 1):  # one more stays under way: only the count can raise doubt
            health.started()
        verdicts = []
        for _ in range(BREAK_AFTER):
            verdicts.append(asyncio.create_task(health.may_record_failure(probe)))
            await asyncio.sleep(0)
        return list(await asyncio.wait_for(asyncio.gather(*verdicts), 1))

    return asyncio.run(scenario())


def test_failures_in_a_row_are_settled_by_one_probe_for_all() -> None:
    down, up = Probe(False), Probe(True)
    assert _in_a_row(down) == [False] * BREAK_AFTER and down.sent == 1  # down: every one stops the run
    assert _in_a_row(up) == [True] * BREAK_AFTER and up.sent == 1  # merely unlucky: each chunk recorded


def test_with_nothing_else_under_way_a_probe_decides() -> None:
    """The last call of a stage: a one-token probe says whether the endpoint is up (record the chunk)
    or down (stop: a chunk recorded as failed would not be redone by a resume)."""

    async def verdict(answered_before: int, probe: Probe) -> bool:
        health = EndpointHealth(answered=answered_before)
        health.started()
        decided = await asyncio.wait_for(health.may_record_failure(probe), 1)
        assert health.under_way == 0
        return decided

    up, down, never = Probe(True), Probe(False), Probe(True)
    assert asyncio.run(verdict(3, up)) is True and up.sent == 1  # the last chunk was unlucky
    assert asyncio.run(verdict(3, down)) is False and down.sent == 1  # it died at the last call
    assert asyncio.run(verdict(0, never)) is False and never.sent == 0  # down from the start


def test_an_answer_between_failures_resets_the_count() -> None:
    async def scenario() -> bool:
        health = EndpointHealth(answered=1, unanswered_in_a_row=BREAK_AFTER - 1)
        health.started()
        health.settled(answered=True)
        # not counted from BREAK_AFTER - 1: this failure alone does not stop the run
        return await _verdict_after(health, [True])

    assert asyncio.run(scenario()) is True
