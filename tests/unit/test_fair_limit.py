"""Slots of one client shared out between the users its calls are made for (``AdaptiveLimit``)."""

from __future__ import annotations

import asyncio
import contextvars

import pytest

from longgraph.concurrency import CALLER, AdaptiveLimit


async def _call(
    limit: AdaptiveLimit, user: str | None, order: list[str], tag: str, hold: asyncio.Event
) -> None:
    CALLER.set(user)
    async with limit:
        order.append(tag)
        await hold.wait()


def _start(
    limit: AdaptiveLimit, user: str | None, order: list[str], tag: str, hold: asyncio.Event
) -> asyncio.Task[None]:
    return asyncio.create_task(_call(limit, user, order, tag, hold), context=contextvars.copy_context())


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


def test_a_user_arriving_behind_another_users_flood_waits_one_turn_not_the_flood() -> None:
    async def scenario() -> list[str]:
        limit, order, hold = AdaptiveLimit(2, adaptive=False), [], asyncio.Event()
        flood = [_start(limit, "alice", order, f"a{i}", hold) for i in range(50)]
        await _settle()
        bob = _start(limit, "bob", order, "b0", asyncio.Event())
        await _settle()
        assert order == ["a0", "a1"]  # both slots taken, 48 of alice's calls and bob's waiting
        flood[0].cancel()  # alice's turn came first (she was waiting first): her next call
        await _settle()
        flood[1].cancel()  # then bob's: his one call, ahead of alice's 47 others
        await _settle()
        assert order == ["a0", "a1", "a2", "b0"]
        bob.cancel()
        hold.set()
        await asyncio.gather(*flood[1:], return_exceptions=True)
        assert limit.in_use == 0
        return order

    order = asyncio.run(scenario())
    assert sorted(order) == sorted([f"a{i}" for i in range(50)] + ["b0"])


def test_users_with_calls_waiting_take_slots_in_turn() -> None:
    async def scenario() -> list[str]:
        limit, order = AdaptiveLimit(1, adaptive=False), []
        holds: dict[str, asyncio.Event] = {}
        tasks: list[asyncio.Task[None]] = []
        for user, tags in [
            ("alice", ["a-first", "a0", "a1", "a2"]),
            ("bob", ["b0", "b1", "b2"]),
            (None, ["n0", "n1"]),
        ]:
            for tag in tags:
                holds[tag] = asyncio.Event()
                tasks.append(_start(limit, user, order, tag, holds[tag]))
                await _settle()
        while len(order) < len(holds):
            holds[order[-1]].set()  # the call holding the slot ends; the next takes it
            await _settle()
        holds[order[-1]].set()
        await asyncio.gather(*tasks)
        return order

    assert asyncio.run(scenario()) == ["a-first", "a0", "b0", "n0", "a1", "b1", "n1", "a2", "b2"]


def test_a_call_cancelled_while_waiting_leaves_no_trace_and_no_slot_lost() -> None:
    async def scenario() -> AdaptiveLimit:
        limit, order, hold = AdaptiveLimit(1, adaptive=False), [], asyncio.Event()
        holder = _start(limit, "alice", order, "a0", hold)
        await _settle()
        waiting = _start(limit, "bob", order, "b0", asyncio.Event())
        await _settle()
        waiting.cancel()
        await _settle()
        assert not limit._turns and not limit._queues
        hold.set()
        await holder
        async with limit:  # the slot is free again
            pass
        return limit

    limit = asyncio.run(scenario())
    assert limit.in_use == 0


@pytest.mark.parametrize("ceiling", [1, 3])
def test_without_users_the_limit_is_first_come_first_served(ceiling: int) -> None:
    async def scenario() -> list[str]:
        limit, order = AdaptiveLimit(ceiling, adaptive=False), []
        holds = [asyncio.Event() for _ in range(8)]
        tasks = [_start(limit, None, order, str(i), holds[i]) for i in range(8)]
        for i in range(8):
            await _settle()
            holds[i].set()
        await asyncio.gather(*tasks)
        return order

    assert asyncio.run(scenario()) == [str(i) for i in range(8)]
