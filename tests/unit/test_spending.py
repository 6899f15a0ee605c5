"""The spending limit: refuses the call that would pass a budget, waits for paid-for calls, charges the
server's count when it is larger."""

from __future__ import annotations

import asyncio

import pytest

from longgraph.errors import BudgetExhausted
from longgraph.spending import PER_MESSAGE_TOKENS, SpendingLimit, spending_limit


def words(texts: list[str] | tuple[str, ...]) -> int:
    return sum(len(t.split()) for t in texts)


def limit(**budgets: int | None) -> SpendingLimit:
    made = spending_limit(
        budgets.get("max_calls"), budgets.get("max_prompt_tokens"), lambda t: words(list(t))
    )
    assert made is not None
    return made


def test_no_budget_means_no_limit_object() -> None:
    assert spending_limit(None, None, lambda t: 0) is None


def test_max_calls_refuses_the_call_past_it_naming_the_work() -> None:
    async def run() -> SpendingLimit:
        spent = limit(max_calls=2)
        for _ in range(2):
            spent.settle(await spent.reserve(["a b c"], work="map of chunk 0"), None)
        with pytest.raises(BudgetExhausted, match=r"max_calls 2.*left undone: map of chunk 7") as caught:
            await spent.reserve(["a"], work="map of chunk 7")
        assert caught.value.spent_calls == 2
        assert caught.value.exit_code == 5
        return spent

    spent = asyncio.run(run())
    assert spent.calls == 2 and spent.refused == 1


def test_max_prompt_tokens_counts_before_sending_and_charges_the_larger_reported_count() -> None:
    async def run() -> None:
        spent = limit(max_prompt_tokens=100)
        reserved = await spent.reserve(["one two three"], work="w")
        assert reserved.tokens == reserved.counted == 3 + PER_MESSAGE_TOKENS == 11
        spent.settle(reserved, 22)  # the server counted a template preamble too: 11 more
        assert spent.prompt_tokens == 22 and spent.server_extra == 11
        second = await spent.reserve(["x " * 20], work="w")  # later calls are reserved with it
        assert second.counted == 20 + PER_MESSAGE_TOKENS and second.tokens == 28 + 11
        spent.settle(second, 10)  # a smaller report is not a refund, nor a lesson
        assert spent.prompt_tokens == 22 + 39 == 61 and spent.server_extra == 11
        with pytest.raises(BudgetExhausted, match="max_prompt_tokens 100"):
            await spent.reserve(["a " * 25], work="the reduce")  # 61 + 25 + 8 + 11 > 100
        assert spent.prompt_tokens == 61
        third = await spent.reserve(["a " * 20], work="w")  # 61 + 20 + 8 + 11 = 100 fits exactly
        assert third.tokens == 39 and spent.prompt_tokens == 100

    asyncio.run(run())


def test_a_call_that_fits_exactly_is_sent_and_the_next_is_not() -> None:
    async def run() -> SpendingLimit:
        spent = limit(max_prompt_tokens=2 * (2 + PER_MESSAGE_TOKENS))
        for _ in range(2):
            spent.settle(await spent.reserve(["a b"], work="w"), None)
        with pytest.raises(BudgetExhausted):
            await spent.reserve(["a"], work="w")
        return spent

    spent = asyncio.run(run())
    assert spent.prompt_tokens == 2 * (2 + PER_MESSAGE_TOKENS)


def test_under_a_token_limit_the_first_call_goes_alone_and_the_rest_are_reserved_with_its_excess() -> None:
    """Several calls in flight before the server's count is known could each pass the limit by the
    chat template's tokens; the first reply tells that excess before anything else is sent."""

    async def run() -> tuple[list[str], SpendingLimit]:
        spent = limit(max_prompt_tokens=200)
        events: list[str] = []

        async def call(name: str) -> None:
            reservation = await spent.reserve(["w " * 12], work=name)
            events.append(f"sent {name} at {reservation.tokens}")
            await asyncio.sleep(0.02)
            spent.settle(reservation, reservation.counted + 10)
            events.append(f"answered {name}")

        await asyncio.gather(call("a"), call("b"), call("c"), return_exceptions=True)
        return events, spent

    events, spent = asyncio.run(run())
    assert events[:2] == ["sent a at 20", "answered a"]  # the others waited for the first count
    assert sorted(events[2:4]) == ["sent b at 30", "sent c at 30"]  # then went together, with it
    assert spent.prompt_tokens == 30 + 30 + 30 <= 200


def test_without_a_token_limit_calls_do_not_wait_for_the_first_count() -> None:
    async def run() -> int:
        spent = limit(max_calls=10)
        first = await spent.reserve(["a"], work="w")
        await spent.reserve(["b"], work="w")  # would wait forever if it probed
        return first.tokens

    assert asyncio.run(run()) == 1 + PER_MESSAGE_TOKENS


def test_a_refused_call_waits_for_the_calls_in_flight_before_raising() -> None:
    """The run stops only once what was paid for has answered (and can be checkpointed)."""

    async def run() -> list[str]:
        spent = limit(max_calls=1)
        events: list[str] = []
        reserved = await spent.reserve(["a"], work="first")

        async def in_flight() -> None:
            await asyncio.sleep(0.05)
            events.append("answered")
            spent.settle(reserved, None)

        async def refused() -> None:
            try:
                await spent.reserve(["b"], work="second")
            except BudgetExhausted:
                events.append("refused")

        await asyncio.gather(in_flight(), refused())
        return events

    assert asyncio.run(run()) == ["answered", "refused"]
