"""Reads started by the chunk node while it chunks (``nodes/early_calls.py``): each joined by its read
node, never asked twice, never started when a plan may change the question, a dry run or a sync twin
would waste them, and cancelled when the chunk node fails."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from longgraph.graphs.mapreduce import build_graph
from longgraph.nodes import prepare
from longgraph.nodes.early_calls import STALE_AFTER_S, EarlyCalls
from longgraph.nodes.kit import RunKit, build_kit, kit_for
from longgraph.nodes.prepare import chunk_input
from longgraph.nodes.read import read_chunk
from longgraph.state.context import Context
from longgraph.state.contract import Chunk, GraphOutput
from longgraph.testing.fakes import FakeProvider, ScriptedChatModel
from longgraph.tests.conftest import FAKE_SETTINGS, QUESTION, planted

DOCUMENT = planted(40_000, at=0.6)


async def _kit(model: ScriptedChatModel, **settings: Any) -> RunKit:
    return await build_kit(Context(**{**FAKE_SETTINGS, **settings}), FakeProvider(model))  # type: ignore[arg-type]


async def _chunk_then_read(state: dict[str, Any], **settings: Any) -> tuple[int, int, list[Any], int]:
    """(calls started by the chunk node, model calls in all, the reads, calls left unjoined)."""
    model = ScriptedChatModel()
    kit = await _kit(model, **settings)
    chunked = await chunk_input(state, kit, prompts="mapreduce", stage="map", read_early="always")
    started = len(kit.early_calls)
    chunks: list[Chunk] = chunked["input_chunks"]
    reads = await asyncio.gather(
        *(
            read_chunk(
                {"chunk": c, "question": QUESTION, "total": len(chunks)},
                kit,
                prompts="mapreduce",
                stage="map",
            )
            for c in chunks
        )
    )
    return started, len(model.calls), [r["reads"][0] for r in reads], len(kit.early_calls)


def test_every_chunk_is_read_once_and_the_reads_are_the_same_as_without() -> None:
    state = {"question": QUESTION, "document": DOCUMENT}
    started, calls, reads, left = asyncio.run(_chunk_then_read(state))
    assert started == len(reads) > 3, "the chunk node did not start every chunk's reading"
    assert calls == len(reads), "a started reading was asked again"
    assert left == 0
    started_late, calls_late, reads_late, _ = asyncio.run(_chunk_then_read(state, read_while_chunking=False))
    assert started_late == 0 and calls_late == len(reads_late)
    assert reads == reads_late
    assert any(r.draft is not None and "smoked plums" in r.draft.answer for r in reads)


def test_several_documents_are_read_while_chunking_too() -> None:
    """The question is planned before the chunk node (the records route): by then the chunks' question
    is settled, so a run over several documents starts its readings while chunking as any other."""
    documents = [{"title": "A", "text": planted(9_000)}, {"title": "B", "text": planted(9_000, at=0.2)}]
    state = {"question": QUESTION, "documents": documents}
    started, calls, reads, _ = asyncio.run(_chunk_then_read(state))
    assert started == len(reads) == calls > 1


@pytest.mark.parametrize("sync", [True, False])
def test_a_whole_run_asks_each_chunk_once_on_either_api(sync: bool) -> None:
    model = ScriptedChatModel()
    graph = build_graph(FakeProvider(model))
    graph_input = {"question": QUESTION, "document": DOCUMENT}
    raw = (
        graph.invoke(graph_input, context=FAKE_SETTINGS)
        if sync
        else asyncio.run(graph.ainvoke(graph_input, context=FAKE_SETTINGS))
    )
    out = GraphOutput.model_validate(raw)
    assert "smoked plums" in out.answer
    assert out.stats.calls_by_stage["map"] == len(out.chunks) > 3
    maps = [c for c in model.calls if c["headers"]["X-Longgraph-Stage"] == "map"]
    assert len(maps) == len(out.chunks)


def test_a_failing_chunk_node_cancels_its_own_readings_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs sharing a context (a batch) share the kit: one run's bad input must not cancel the calls
    another run started."""
    real = prepare.chunks_once
    failing = False

    def chunks_then_fail(*args: Any, **kwargs: Any) -> Iterator[Chunk]:
        chunks = real(*args, **kwargs)
        if not failing:
            yield from chunks
            return
        yield next(chunks)
        yield next(chunks)
        raise RuntimeError("the tokenizer broke")

    monkeypatch.setattr(prepare, "chunks_once", chunks_then_fail)

    async def unanswered(*args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(30)  # still under way when the chunk node fails

    monkeypatch.setattr(RunKit, "call", unanswered)

    async def run() -> tuple[list[asyncio.Task[Any]], int, int]:
        nonlocal failing
        kit = await _kit(ScriptedChatModel())
        await chunk_input({"question": QUESTION, "document": planted(20_000)}, kit, read_early="always")
        others = len(kit.early_calls)  # another run's readings, still under way
        tasks: list[asyncio.Task[Any]] = []
        add = kit.early_calls.add
        monkeypatch.setattr(kit.early_calls, "add", lambda key, task: (tasks.append(task), add(key, task)))
        failing = True
        with pytest.raises(RuntimeError, match="tokenizer broke"):
            await chunk_input({"question": QUESTION, "document": DOCUMENT}, kit, read_early="always")
        left = len(kit.early_calls)
        await asyncio.gather(*tasks, return_exceptions=True)
        return tasks, others, left

    tasks, others, left = asyncio.run(run())
    assert len(tasks) == 2
    assert all(t.cancelled() for t in tasks), "a started reading outlived the failed chunk node"
    assert others > 0 and left == others, "the failed run cancelled another run's readings"


def test_a_call_is_taken_once_and_only_on_its_own_loop() -> None:
    early: EarlyCalls[int] = EarlyCalls()

    async def answer() -> int:
        return 7

    async def start() -> asyncio.Task[int]:
        task = asyncio.get_running_loop().create_task(answer())
        early.add("k", task)
        await task
        return task

    task = asyncio.run(start())  # its loop is closed now

    async def take() -> asyncio.Task[int] | None:
        return early.take("k")

    assert asyncio.run(take()) is None, "a call was handed to another event loop"
    assert len(early) == 1

    async def on_its_loop() -> tuple[asyncio.Task[int] | None, asyncio.Task[int] | None]:
        again = asyncio.get_running_loop().create_task(answer())
        early.add("k", again)
        return early.take("k"), early.take("k")

    first, second = asyncio.run(on_its_loop())
    assert first is not None and first is not task and second is None


def test_runs_sharing_a_context_and_starting_together_share_one_kit() -> None:
    """A batch starts every item at once with one context: a second kit would split the spending limit
    and the calls started ahead (found as 3 of 16 map calls asked twice by ``longgraph batch``)."""
    context, provider = Context(**FAKE_SETTINGS), FakeProvider()  # type: ignore[arg-type]

    async def together() -> list[RunKit]:
        return list(await asyncio.gather(*(kit_for(context, provider) for _ in range(8))))

    kits = asyncio.run(together())
    assert all(kit is kits[0] for kit in kits)


def test_a_cancelled_kit_build_leaves_the_waiting_runs_to_build_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from longgraph.nodes import kit as kit_module

    context, provider = Context(**FAKE_SETTINGS), FakeProvider()  # type: ignore[arg-type]
    real_build = kit_module.build_kit
    first = True

    async def slow_build(ctx: Context, prov: Any, served_user: str | None = None) -> RunKit:
        nonlocal first
        if first:
            first = False
            await asyncio.sleep(10)  # cancelled before it ends
        return await real_build(ctx, prov)

    monkeypatch.setattr(kit_module, "build_kit", slow_build)

    async def run() -> RunKit:
        builder = asyncio.create_task(kit_for(context, provider))
        await asyncio.sleep(0.01)
        waiter = asyncio.create_task(kit_for(context, provider))
        await asyncio.sleep(0.01)
        builder.cancel()
        return await asyncio.wait_for(waiter, 5)

    kit = asyncio.run(run())
    assert isinstance(kit, RunKit)


def test_a_finished_call_nobody_takes_is_dropped_after_a_while() -> None:
    """A served run interrupted after its chunk node never reads its chunks: its kit must not keep
    every chunk's text and answer until it is evicted."""
    now = [0.0]
    early: EarlyCalls[int] = EarlyCalls(clock=lambda: now[0])

    async def answer() -> int:
        return 7

    async def run() -> tuple[int, int, int]:
        for key in ("a", "b"):
            task = asyncio.get_running_loop().create_task(answer())
            early.add(key, task)
            await task
        await asyncio.sleep(0)  # the done callbacks
        now[0] = STALE_AFTER_S / 2
        fresh = asyncio.get_running_loop().create_task(answer())
        early.add("c", fresh)
        kept_early = len(early)
        now[0] = STALE_AFTER_S + 61
        late = asyncio.get_running_loop().create_task(answer())
        early.add("d", late)  # sweeps: a and b finished long ago; c and d are not finished yet
        await asyncio.gather(fresh, late)
        return kept_early, len(early), 0 if early.take("c") is None else 1

    kept_early, kept_late, c_taken = asyncio.run(run())
    assert kept_early == 3 and kept_late == 2 and c_taken == 1


def test_a_table_no_run_adds_to_any_more_is_swept_too() -> None:
    """A served run's kit gets no call after the run is interrupted: sweeping must not wait for one."""
    now = [0.0]
    early: EarlyCalls[int] = EarlyCalls(clock=lambda: now[0])

    async def answer() -> int:
        return 7

    async def run() -> None:
        task = asyncio.get_running_loop().create_task(answer())
        early.add("a", task)
        await task
        await asyncio.sleep(0)  # the done callback

    asyncio.run(run())
    now[0] = STALE_AFTER_S / 2
    early.sweep()
    assert len(early) == 1  # not stale yet
    now[0] = STALE_AFTER_S + 61
    early.sweep()
    assert len(early) == 0


def test_building_a_kit_sweeps_the_other_kits_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    swept: list[int] = []
    monkeypatch.setattr(EarlyCalls, "sweep", lambda self: swept.append(id(self)))
    provider = FakeProvider()
    first_context, second_context = Context(**FAKE_SETTINGS), Context(**FAKE_SETTINGS)  # type: ignore[arg-type]
    first = asyncio.run(kit_for(first_context, provider))
    second = asyncio.run(kit_for(second_context, provider))
    assert id(first.early_calls) in swept and id(second.early_calls) not in swept
