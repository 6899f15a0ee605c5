"""Each served user's share (``longgraph/user_share.py``): runs in flight, calls and tokens per window."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.runnables import RunnableConfig

from longgraph.errors import ConfigurationError
from longgraph.nodes.runtime import _in_flight
from longgraph.spending import spending_limit
from longgraph.user_share import (
    RUNS,
    CallWindow,
    RunsInFlight,
    ShareSettings,
    UserShareExceeded,
    share_settings,
)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_settings_come_from_the_environment_and_a_malformed_one_is_refused() -> None:
    assert share_settings({}) == ShareSettings(runs=0, calls=0, prompt_tokens=0, window_s=60.0)  # one user
    users = {"LONGGRAPH_AUTH_TOKENS": "alice:t1,bob:t2"}
    assert share_settings(users) == ShareSettings(runs=4, calls=0, prompt_tokens=0, window_s=60.0)
    given = {"LONGGRAPH_USER_RUNS": "2", "LONGGRAPH_USER_CALLS": "30", "LONGGRAPH_USER_PROMPT_TOKENS": "9000",
             "LONGGRAPH_USER_WINDOW_S": "10"}  # fmt: skip
    assert share_settings(given) == ShareSettings(runs=2, calls=30, prompt_tokens=9000, window_s=10.0)
    for name, raw in [("LONGGRAPH_USER_RUNS", "two"), ("LONGGRAPH_USER_CALLS", "-1"),
                      ("LONGGRAPH_USER_WINDOW_S", "0"), ("LONGGRAPH_USER_WINDOW_S", "nan")]:  # fmt: skip
        with pytest.raises(ConfigurationError, match=name):
            share_settings({name: raw})


def test_a_users_run_past_the_limit_is_refused_and_another_users_is_not() -> None:
    runs = RunsInFlight(clock=Clock())
    runs.enter("alice", "a1", limit=2)
    runs.enter("alice", "a2", limit=2)
    runs.enter("alice", "a1", limit=2)  # a later step of a run in flight: no new place
    with pytest.raises(
        UserShareExceeded, match=r"'alice' already has 2 run\(s\) in flight.*LONGGRAPH_USER_RUNS=2"
    ):
        runs.enter("alice", "a3", limit=2)
    runs.enter("bob", "b1", limit=2)
    assert (runs.count("alice"), runs.count("bob")) == (2, 1)
    runs.enter("alice", "a4", limit=0)  # 0: no limit
    assert runs.count("alice") == 3


def test_a_run_gives_its_place_back_when_it_ends_fails_or_goes_quiet() -> None:
    clock = Clock()
    runs = RunsInFlight(grace_s=10.0, clock=clock)
    runs.enter("alice", "ends", limit=3)
    runs.exit("alice", "ends", ended=True)  # its last step (finalize), or a step that failed
    runs.enter("alice", "between", limit=3)
    runs.exit("alice", "between", ended=False)  # between two steps: still in flight
    clock.now += 5
    assert runs.count("alice") == 1
    runs.enter("alice", "between", limit=3)  # its next step
    runs.exit("alice", "between", ended=False)
    clock.now += 10.5  # no step for longer than the grace: the run ended some other way
    assert runs.count("alice") == 0
    runs.exit("alice", "unknown", ended=True)  # a step of a run not counted: nothing to give back


def test_a_call_waits_for_room_in_its_users_window_and_no_longer(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = Clock()
    window = CallWindow(calls=2, prompt_tokens=0, window_s=10.0, clock=clock)
    slept: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        slept.append(seconds)
        clock.now += seconds

    async def scenario() -> list[float]:
        return [await window.admit(100) for _ in range(3)]

    monkeypatch.setattr("longgraph.user_share.asyncio.sleep", fake_sleep)
    waited = asyncio.run(scenario())
    assert waited == [0.0, 0.0, 10.0]  # the third waits until the first has aged out of the window
    assert slept == [10.0]


def test_prompt_tokens_per_window_are_counted_and_one_large_call_is_never_stuck() -> None:
    clock = Clock()
    window = CallWindow(calls=0, prompt_tokens=1_000, window_s=60.0, clock=clock)
    assert window._room_at(600) == clock.now
    assert window._room_at(600) == clock.now + 60.0  # 1,200 > 1,000: when the first ages out
    clock.now += 61
    assert window._room_at(5_000) == clock.now  # alone in an empty window: admitted
    window.charge(300)  # the server counted the chat template too
    clock.now += 1
    assert window._room_at(1) == clock.now - 1 + 60.0


def test_a_served_run_without_a_budget_still_counts_against_its_users_window() -> None:
    window = CallWindow(calls=5, prompt_tokens=0, window_s=60.0)
    limit = spending_limit(None, None, lambda texts: sum(len(t) for t in texts), window)
    assert limit is not None and spending_limit(None, None, len, None) is None

    reserved: list[int] = []

    async def two_calls() -> None:
        for _ in range(2):
            reservation = await limit.reserve(["hello"], work="a map")
            reserved.append(reservation.tokens)
            limit.settle(reservation, reservation.counted + 7)  # the server counts 7 more than we do

    asyncio.run(two_calls())
    # Each call is charged to the window as the server counted it; the second was reserved at the
    # first one's excess already (``SpendingLimit.server_extra``), so it was charged nothing more.
    assert [tokens for _, tokens in window._sent] == [reserved[0] + 7, reserved[1]]
    assert reserved[1] == reserved[0] + 7


def test_a_graph_run_inside_another_does_not_end_its_parents_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pyramid-Align's ``answer`` is mapreduce's graph, whose last step (``finalize``) ends a run: inside
    the pyramid it gave the run's place back before ``record``, and a run of the same user admitted in
    that gap made ``record`` fail with every call spent."""
    monkeypatch.setenv("LONGGRAPH_USER_RUNS", "1")
    nested: RunnableConfig = {"configurable": {"run_id": "p1", "checkpoint_ns": "answer:t1|finalize:t2"}}
    last: RunnableConfig = {"configurable": {"run_id": "p1", "checkpoint_ns": "record:t3"}}
    other: RunnableConfig = {"configurable": {"run_id": "p2", "checkpoint_ns": "chunk:t4"}}
    with _in_flight("carol", nested, True):
        pass
    assert RUNS.count("carol") == 1  # the subgraph ended, the pyramid's run has not
    with pytest.raises(UserShareExceeded), _in_flight("carol", other, False):
        pass
    with _in_flight("carol", last, True):
        pass
    assert RUNS.count("carol") == 0
    with _in_flight("carol", other, True):  # now there is room
        pass
