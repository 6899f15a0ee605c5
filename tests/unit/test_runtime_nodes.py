"""Graph nodes made by ``node_factory`` (``nodes/runtime.py``): LangGraph's own function-node wrapper,
the run's kit and stream writer reachable on both graph APIs."""

from __future__ import annotations

import asyncio
from typing import Any, TypedDict

import pytest
from langgraph._internal._runnable import RunnableCallable
from langgraph.graph import END, START, StateGraph

from longgraph.nodes.kit import RunKit
from longgraph.nodes.runtime import node_factory, report_progress
from longgraph.state.context import Context
from longgraph.testing.fakes import FakeProvider
from longgraph.tests.conftest import FAKE_SETTINGS


class _State(TypedDict, total=False):
    seen: str


async def _stage(state: _State, kit: RunKit, *, label: str) -> dict[str, Any]:
    report_progress(label, total=1)
    return {"seen": f"{label}:{kit.context.max_concurrency}"}


def _graph() -> Any:
    node = node_factory(FakeProvider())
    builder = StateGraph(_State, context_schema=Context)
    builder.add_node("only", node(_stage, label="probe"))
    builder.add_edge(START, "only")
    builder.add_edge("only", END)
    return builder.compile()


def test_a_node_is_langgraphs_own_function_wrapper_with_both_twins() -> None:
    """The cheap wrapper (a signature read once, no callback managers per call); a LangGraph upgrade
    that moves the class fails here rather than silently at import or in speed."""
    made = node_factory(FakeProvider())(_stage, label="probe")
    assert isinstance(made, RunnableCallable)
    assert made.func is not None and made.afunc is not None
    assert made.name == "_stage"


@pytest.mark.parametrize("sync", [True, False], ids=["sync API", "async API"])
def test_a_node_sees_its_context_and_streams_progress_on_either_api(sync: bool) -> None:
    graph, context = _graph(), {**FAKE_SETTINGS, "max_concurrency": 3}

    async def collect() -> list[tuple[str, Any]]:
        return [part async for part in graph.astream({}, context=context, stream_mode=["custom", "values"])]

    parts = (
        list(graph.stream({}, context=context, stream_mode=["custom", "values"]))
        if sync
        else asyncio.run(collect())
    )
    assert ("custom", {"stage": "probe", "total": 1, "advance": 1}) in parts
    assert parts[-1] == ("values", {"seen": "probe:3"})
