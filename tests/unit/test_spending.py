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
        assert reserved == 3 + PER_MESSAGE_TOKENS
        spent.settle(reserved, 40)  # the server counted the chat template too: 29 more than reserved
        assert spent.prompt_tokens == 40
        extra = 40 - reserved  # later calls are reserved with what the server counts beyond the tokenizer
        second = await spent.reserve(["x " * 20], work="w")
        assert second == 20 + PER_MESSAGE_TOKENS + extra
        spent.settle(second, 10)  # a smaller report is not a refund
        assert spent.prompt_tokens == 40 + second == 97
        with pytest.raises(BudgetExhausted, match="max_prompt_tokens 100"):
            await spent.reserve(["a"], work="the reduce")  # 97 + 1 + 8 + 29 > 100
        assert spent.prompt_tokens == 97

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
