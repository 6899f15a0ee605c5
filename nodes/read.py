"""The read stage: one call per chunk, in parallel, each giving a draft note (or a recorded failure).

LLM×MapReduce's map and Segment+'s gather are this one stage with different prompts: the prompt file
names the output schema, and the schema says how it fills a note draft. A draft is not yet evidence:
:func:`ground` checks it against its chunk (``nodes/checks``: a note only with a verbatim quote).

A parse failure (after the bounded retries) is recorded with the raw answer; a transport failure
raises :class:`~longgraph.errors.EndpointError`, so a checkpointed run resumes by redoing only the
chunks that did not finish.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from langgraph.types import Send

from longgraph.errors import ConfigurationError, TooManyFailures
from longgraph.llm import StructuredCall
from longgraph.nodes.checks import documents_of, ground_read, read_question
from longgraph.nodes.kit import RunKit
from longgraph.nodes.loop import fresh_loop
from longgraph.nodes.render import measure_notes
from longgraph.nodes.runtime import report_progress
from longgraph.state.contract import Chunk
from longgraph.state.graph_state import RunState
from longgraph.state.notes import ChunkOutcome, ChunkRead, Note
from longgraph.state.tasks import ReadTask


def each_chunk(target: str) -> Callable[[RunState], list[Send]]:
    """A router sending every chunk to ``target`` (``max_concurrency`` in the client bounds what runs)."""

    def fan_out(state: RunState) -> list[Send]:
        chunks = state["input_chunks"]
        return [
            Send(target, ReadTask(chunk=c, question=state["question"], total=len(chunks))) for c in chunks
        ]

    fan_out.__name__ = f"each_chunk_to_{target}"
    return fan_out


async def read_chunk(
    task: ReadTask, kit: RunKit, *, prompts: str, stage: str, label: str | None = None
) -> RunState:
    """Ask ``stage`` of the ``prompts`` set about one chunk; return its draft note.

    ``label`` names the call in progress, usage and the read itself when it is not the
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


def enforce_failure_budget(
    failed: Sequence[int], total: int, kit: RunKit, *, stage: str, first_error: str | None
) -> None:
    """Raise :class:`~longgraph.errors.TooManyFailures` when more than ``max_failed_fraction`` of the
    ``total`` chunks read failed (ids ``failed``): an answer from the rest would mislead."""
    if total and len(failed) / total > kit.context.max_failed_fraction:
        ids = ", ".join(map(str, failed[:20]))
        raise TooManyFailures(
            f"{len(failed)} of {total} chunks failed in the {stage} stage (chunks {ids}"
            f"{'…' if len(failed) > 20 else ''}); first error: {first_error}"
        )


async def ground(state: RunState, kit: RunKit) -> RunState:
    """Every chunk's reading checked against its chunk, in chunk order (``nodes/checks``): its outcome
    and, when it quotes the chunk verbatim, its note. Raises :class:`~longgraph.errors.TooManyFailures`
    when more reads failed than ``max_failed_fraction`` allows."""
    reads = sorted(state.get("reads") or [], key=lambda r: r.chunk_id)
    failed = [r for r in reads if r.draft is None]
    enforce_failure_budget(
        [r.chunk_id for r in failed],
        len(reads),
        kit,
        stage=failed[0].stage if failed else "",
        first_error=failed[0].error if failed else None,
    )
    chunks = {c.id: c for c in state.get("input_chunks") or []}
    documents = documents_of(state)
    question = read_question(state["question"])

    def check() -> list[tuple[ChunkOutcome, Note | None]]:
        return [ground_read(r, chunks[r.chunk_id], documents, question) for r in reads]

    graded = await asyncio.to_thread(check)  # CPU work off the event loop
    notes = [n for _, n in graded if n is not None]
    decisions = []
    unverified = [q for n in notes for q in n.quotes if not q.verified]
    if unverified:
        where = ", ".join(map(str, sorted({q.chunk_id for q in unverified})))
        decisions.append(
            f"{len(unverified)} quoted sentence(s) could not be found in their chunk (chunks {where}): "
            "kept and flagged verified=false in the evidence"
        )
    unsupported = sum(o.fate == "unsupported" for o, _ in graded)
    if unsupported:
        decisions.append(
            f"{unsupported} chunk(s) answered without a verbatim quote of their text (reported "
            f"'unsupported'); {len(notes)} note(s) passed"
        )
    handover: RunState = {
        "outcomes": [o for o, _ in graded],
        "notes": measure_notes(notes, kit),
        "decisions": decisions,
    }
    return fresh_loop(handover)
