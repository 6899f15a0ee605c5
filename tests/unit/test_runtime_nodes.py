"""Graph nodes made by ``node_factory`` (``nodes/runtime.py``): a public-API node with both twins, the
run's kit and stream writer reachable on both graph APIs."""

from __future__ import annotations

import asyncio
from typing import Any, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph

from longgraph.nodes.kit import RunKit
from longgraph.nodes.runtime import StageNode, node_factory, report_progress
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


def test_a_node_has_both_twins_and_its_stages_name() -> None:
    made = node_factory(FakeProvider())(_stage, label="probe")
    assert isinstance(made, StageNode)
    assert made.name == "_stage" and made.__doc__ == _stage.__doc__


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
