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
from typing import Any, Literal

from langgraph.types import Send

from longgraph.errors import ConfigurationError, TooManyFailures
from longgraph.llm import StructuredCall
from longgraph.nodes.checks import (
    Question,
    documents_of,
    ground_read,
    read_question,
    strongest_sentence,
)
from longgraph.nodes.kit import RunKit
from longgraph.nodes.loop import fresh_loop
from longgraph.nodes.render import measure_notes
from longgraph.nodes.runtime import report_progress
from longgraph.state.context import Context
from longgraph.state.contract import Chunk, ChunkPart, DocumentIn
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


REREAD = "reread"
"""The stage label of a second reading."""
BEARS_ON = 0.5
"""A sentence holding at least this share of the question's content words bears on it."""


def rereading_enabled(context: Context) -> bool:
    """Second readings are for the compact protocol (the paper's protocol is measured as written)."""
    return context.reread and context.prompt_variant == "compact"


def passage_to_reread(chunk: Chunk, documents: Sequence[DocumentIn], question: Question) -> Chunk | None:
    """The part of ``chunk`` a second reading reads: its sentence holding the largest share of the
    question's words (:func:`~longgraph.nodes.checks.strongest_sentence`), at least :data:`BEARS_ON`,
    with its neighbours in the same document and without the document's title label; None when no
    sentence bears on the question."""
    share, best, sentences = strongest_sentence(chunk, documents, question)
    if share < BEARS_ON:
        return None
    around = [s for s in sentences[max(0, best - 1) : best + 2] if s.doc_index == sentences[best].doc_index]
    doc, start, end = around[0].doc_index, around[0].start, around[-1].end
    part = ChunkPart(doc_index=doc, title=around[0].title, start=start, end=end)
    return Chunk(id=chunk.id, parts=[part], tokens=0, text=documents[doc].text[start:end])


def rereads_to(target: str) -> Callable[[RunState], list[Send] | Literal["done"]]:
    """A router sending each passage worth a second reading to ``target``, or going on (``done``)."""

    def route_rereads(state: RunState) -> list[Send] | Literal["done"]:
        rereads = state.get("rereads") or []
        return [Send(target, task) for task in rereads] if rereads else "done"

    return route_rereads


def _better(
    a: tuple[ChunkOutcome, Note | None], b: tuple[ChunkOutcome, Note | None]
) -> tuple[ChunkOutcome, Note | None]:
    """Of two gradings of one chunk, the one that gave a note (the first of equals)."""
    return b if a[1] is None and b[1] is not None else a


async def ground(state: RunState, kit: RunKit) -> RunState:
    """Every chunk's reading checked against its chunk, in chunk order (``nodes/checks``): its outcome
    and, when it quotes the chunk verbatim, its note. A chunk that answered without quoting its text
    but holds a sentence bearing on the question is read once more, that passage alone
    (:func:`passage_to_reread`, compact protocol), and keeps the reading that gave a note: the tasks
    go out in ``rereads`` (empty on the second pass). Raises :class:`~longgraph.errors.TooManyFailures`
    when more first readings failed than ``max_failed_fraction`` allows."""
    by_chunk: dict[int, list[ChunkRead]] = {}
    for read in state.get("reads") or []:
        by_chunk.setdefault(read.chunk_id, []).append(read)
    first = [next((r for r in rs if r.stage != REREAD), rs[0]) for _, rs in sorted(by_chunk.items())]
    failed = [r for r in first if r.draft is None]
    enforce_failure_budget(
        [r.chunk_id for r in failed],
        len(first),
        kit,
        stage=failed[0].stage if failed else "",
        first_error=failed[0].error if failed else None,
    )
    chunks = {c.id: c for c in state.get("input_chunks") or []}
    documents = documents_of(state)
    question = read_question(state["question"])
    second_pass = any(r.stage == REREAD for r in state.get("reads") or [])

    def check() -> tuple[list[tuple[ChunkOutcome, Note | None]], list[ReadTask]]:
        graded, rereads = [], []
        for chunk_id, reads in sorted(by_chunk.items()):
            gradings = [ground_read(r, chunks[chunk_id], documents, question) for r in reads]
            best = gradings[0]
            for other in gradings[1:]:
                best = _better(best, other)
            if len(gradings) > 1:
                said = "answered on a second reading of its passage on the question"
                reason = (
                    said if best is not gradings[0] else f"{best[0].reason}; a second reading did not help"
                )
                best = (best[0].model_copy(update={"reason": reason}), best[1])
            graded.append(best)
            if not second_pass and best[0].fate == "unsupported" and rereading_enabled(kit.context):
                passage = passage_to_reread(chunks[chunk_id], documents, question)
                if passage is not None:
                    rereads.append(ReadTask(chunk=passage, question=state["question"], total=0))
        return graded, [
            ReadTask(chunk=t["chunk"], question=t["question"], total=len(rereads)) for t in rereads
        ]

    graded, rereads = await asyncio.to_thread(check)  # CPU work off the event loop
    notes = [n for _, n in graded if n is not None]
    decisions = []
    if second_pass:
        again = sum(any(r.stage == REREAD for r in rs) for rs in by_chunk.values())
        helped = sum(
            o.reason == "answered on a second reading of its passage on the question" for o, _ in graded
        )
        decisions.append(
            f"{again} chunk(s) were read a second time, their passage on the question alone: {helped} gave evidence"
        )
    unverified = [q for n in notes for q in n.quotes if not q.verified]
    if unverified and not rereads:
        where = ", ".join(map(str, sorted({q.chunk_id for q in unverified})))
        decisions.append(
            f"{len(unverified)} quoted sentence(s) could not be found in their chunk (chunks {where}): "
            "kept and flagged verified=false in the evidence"
        )
    unsupported = sum(o.fate == "unsupported" for o, _ in graded)
    if unsupported and not rereads:
        decisions.append(
            f"{unsupported} chunk(s) answered without a verbatim quote of their text (reported "
            f"'unsupported'); {len(notes)} note(s) passed"
        )
    handover: RunState = {
        "outcomes": [o for o, _ in graded],
        "notes": measure_notes(notes, kit),
        "rereads": rereads,
        "decisions": decisions,
    }
    return fresh_loop(handover)
