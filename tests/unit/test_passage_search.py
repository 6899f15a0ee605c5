"""The passage search beside the read stage (``find_passages``) decides what grounding would decide.

Grounding used to search every chunk for its strongest passage after the last read; the search now
runs next to the reads, and ``ground`` takes its findings. These tests check that the second readings
and outcomes are the same either way, that ``ground`` does not search again when the findings are
there, and that the graphs run the search in the read step.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import longgraph.nodes.grounding as grounding
import longgraph.nodes.passages as passages
from longgraph.graphs.mapreduce import build_graph
from longgraph.nodes.kit import RunKit, build_kit
from longgraph.nodes.prepare import chunk_input
from longgraph.state.context import Context
from longgraph.state.notes import ChunkRead, NoteDraft
from longgraph.testing.fakes import FakeProvider, ScriptedChatModel
from longgraph.tests.conftest import FACT, FAKE_SETTINGS, QUESTION, planted

DOCUMENT = planted(40_000, at=0.3)


async def _state_after_reading(kit: RunKit) -> dict[str, Any]:
    """Chunks of the planted document, every one read as "no information" (so the chunk holding the
    fact has a strong passage its reading missed: a second reading is due)."""
    state: dict[str, Any] = {"question": QUESTION, "documents": [{"text": DOCUMENT}]}
    state.update(await chunk_input(state, kit, prompts="mapreduce", stage="map"))
    state["reads"] = [
        ChunkRead(chunk_id=c.id, stage="map", draft=NoteDraft(no_information=True))
        for c in state["input_chunks"]
    ]
    return state


def _kit() -> RunKit:
    return asyncio.run(build_kit(Context(**FAKE_SETTINGS), FakeProvider()))  # type: ignore[arg-type]


def test_ground_decides_the_same_with_the_passages_found_beside_the_reads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kit = _kit()
    state = asyncio.run(_state_after_reading(kit))
    searching = asyncio.run(grounding.ground(state, kit))
    found = asyncio.run(passages.find_passages(state, kit))
    assert set(found["passages"]) == {c.id for c in state["input_chunks"]}  # type: ignore[arg-type]

    def no_search(*args: Any) -> None:
        raise AssertionError("ground searched a chunk whose passage was already found")

    monkeypatch.setattr(grounding, "strongest_passage", no_search)
    taking = asyncio.run(grounding.ground({**state, **found}, kit))
    assert taking["outcomes"] == searching["outcomes"]
    assert taking["rereads"] == searching["rereads"]
    [reread] = taking["rereads"]  # type: ignore[misc]
    assert FACT in reread["chunk"].text


def test_no_search_when_second_readings_are_off() -> None:
    kit = asyncio.run(build_kit(Context(**{**FAKE_SETTINGS, "reread": False}), FakeProvider()))  # type: ignore[arg-type]
    state = asyncio.run(_state_after_reading(kit))
    assert asyncio.run(passages.find_passages(state, kit)) == {}


def test_the_graph_searches_in_the_read_step_and_grounds_after_it() -> None:
    graph = build_graph(FakeProvider(ScriptedChatModel()))
    graph_input = {"question": QUESTION, "documents": [{"text": DOCUMENT}]}
    step_of: dict[str, set[int]] = {}
    for event in graph.stream(graph_input, context=FAKE_SETTINGS, stream_mode="debug"):
        if event["type"] == "task":
            step_of.setdefault(event["payload"]["name"], set()).add(event["step"])
    assert step_of["find_passages"] == step_of["map_chunk"]
    assert min(step_of["ground"]) == max(step_of["map_chunk"]) + 1
