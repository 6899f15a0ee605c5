"""The read stage: one call per chunk, in parallel, each giving a draft note (or a recorded failure).

LLM×MapReduce's map and Segment+'s gather are this one stage with different prompts: the prompt file
names the output schema, and the schema says how it fills a note draft. A draft is not yet evidence:
the grounding stage (``nodes/grounding.py``) checks it against its chunk.

A parse failure (after the bounded retries) is recorded with the raw answer; a transport failure
raises :class:`~longgraph.errors.EndpointError`, so a checkpointed run resumes by redoing only the
chunks that did not finish.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from langgraph.types import Send

from longgraph.errors import ConfigurationError
from longgraph.llm import StructuredCall
from longgraph.nodes.kit import RunKit
from longgraph.nodes.runtime import report_progress
from longgraph.state.contract import Chunk
from longgraph.state.graph_state import RunState
from longgraph.state.notes import ChunkRead
from longgraph.state.tasks import ReadTask


def each_chunk(target: str, *, beside: str | None = None) -> Callable[[RunState], list[Send | str]]:
    """A router sending every chunk to ``target`` (``max_concurrency`` in the client bounds what runs),
    and running ``beside`` in the same step (the passage search, next to the reads)."""

    def fan_out(state: RunState) -> list[Send | str]:
        chunks = state["input_chunks"]
        reads: list[Send | str] = [
            Send(target, ReadTask(chunk=c, question=state["question"], total=len(chunks))) for c in chunks
        ]
        return [*reads, beside] if beside else reads

    fan_out.__name__ = f"each_chunk_to_{target}"
    return fan_out


async def read_chunk(
    task: ReadTask, kit: RunKit, *, prompts: str, stage: str, label: str | None = None
) -> RunState:
    """Ask ``stage`` of the ``prompts`` set about one chunk; return its draft note.

    ``label`` (e.g. "reread") names the call in progress, usage and the read itself when it is not the
    stage's first reading of the chunk.
    """
    chunk = task["chunk"]
    result = await kit.call(**reading(chunk, task["question"], prompts=prompts, stage=stage, label=label))
    report_progress(label or stage, total=task["total"])
    return {"reads": [chunk_read(result, chunk.id, label or stage, prompts=prompts)], "usage": result.usage}


def start_reading(
    kit: RunKit, chunk: Chunk, question: str, *, prompts: str, stage: str
) -> asyncio.Task[StructuredCall[Any]]:
    """Start ``read_chunk``'s call for ``chunk`` now (the chunk node, before the fan-out reaches it)."""
    return kit.start_call(**reading(chunk, question, prompts=prompts, stage=stage))


def reading(
    chunk: Chunk, question: str, *, prompts: str, stage: str, label: str | None = None
) -> dict[str, Any]:
    """The :meth:`RunKit.call` arguments of a chunk's reading: one place, so a started call is joined."""
    name = label or stage
    return {
        "strategy": prompts,
        "stage": stage,
        "text": chunk.text,
        "question": question,
        "label": label,
        "record_unanswered": True,
        "work": f"{name} of chunk {chunk.id} (and any {name} call not finished)",
    }


def chunk_read(result: StructuredCall[Any], chunk_id: int, stage: str, *, prompts: str) -> ChunkRead:
    """A read call's outcome as a :class:`ChunkRead`: its draft note, or the failure and raw answer."""
    if result.value is None:
        return ChunkRead(chunk_id=chunk_id, stage=stage, error=result.error, raw=result.raw)
    drafting = getattr(result.value, "note_draft", None)
    if drafting is None:
        raise ConfigurationError(
            f"prompts/{prompts}/{stage}: schema {type(result.value).__name__} makes no note"
        )
    return ChunkRead(chunk_id=chunk_id, stage=stage, draft=drafting())
