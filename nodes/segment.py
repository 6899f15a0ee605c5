"""The Segment+ gather stage: segment the input, take one note per segment in parallel, collect them.

Per Segment+ §3.2: each segment yields a note ``{"Evidence": …, "Reasoning": …}``: Evidence quotes
original sentences (precision), Reasoning compresses entities, events and partial answers (recall).
Here Evidence is a list of quoted sentences, so each quote can be located in the original document
(``nodes/provenance.py``) when the notes are collected: the result's evidence then points at the
quote itself, and a quote that is not in its segment is flagged, not dropped.

Segments are ``Context.segment_size`` tokens (3,000, the paper's best setting), or less when the
window cannot hold that much with the prompt and output (or ``chunk_size`` asks for less). A note
that cannot be parsed after the bounded retries marks its segment failed with the raw answer; more
failures than ``max_failed_fraction`` raise :class:`~longgraph.errors.TooManyFailures`.
"""

from __future__ import annotations

from typing import Any

from langgraph.types import Send

from longgraph.endpoint import resolve_tokenizer_spec
from longgraph.errors import TooManyFailures
from longgraph.llm import LLMProvider, call_structured
from longgraph.nodes.prepare import chunk_documents
from longgraph.nodes.provenance import documents_of, has_words, locate_quotes
from longgraph.nodes.runtime import ContextRuntime, report_progress
from longgraph.nodes.segment_notes import measured
from longgraph.prompts import prompts_for
from longgraph.state.contract import Chunk
from longgraph.state.mapreduce import MapTask
from longgraph.state.outputs import FreeTextNote, SegmentNote
from longgraph.state.segment_plus import EvidenceNote, GatheredSegment
from longgraph.tokenizer import get_tokenizer

PROMPTS = "segment_plus"
"""The prompt set of every Segment+ stage (``prompts/segment_plus.toml``)."""


async def segment_input(
    state: dict[str, Any], runtime: ContextRuntime, *, structured: bool = True
) -> dict[str, Any]:
    """The segment node: the shared chunker with ``size=segment_size``, budgeted for the gather prompt."""
    stage, schema = ("gather", SegmentNote) if structured else ("gather_text", FreeTextNote)
    return await chunk_documents(
        state, runtime, strategy=PROMPTS, stage=stage, schema=schema, size=runtime.context.segment_size
    )


def fan_out_segments(state: dict[str, Any]) -> list[Send]:
    """One ``Send`` per segment; the LLM client's semaphore bounds what runs at once."""
    chunks: list[Chunk] = state["input_chunks"]
    return [
        Send("take_note", MapTask(chunk=c, question=state["question"], total=len(chunks))) for c in chunks
    ]


async def take_note(
    task: MapTask, runtime: ContextRuntime, *, llm: LLMProvider, structured: bool = True
) -> dict[str, Any]:
    """One note for one segment: Evidence and Reasoning, or free text in the "no structure" ablation."""
    context = runtime.context
    chunk = task["chunk"]
    common: dict[str, Any] = {
        "task": context.task,
        "variables": {"context": chunk.text, "question": task["question"]},
        "parse_retries": context.parse_retries,
        "work": f"note of segment {chunk.id} (and any note not finished)",
    }
    client, prompts = llm(context), prompts_for(PROMPTS, context.prompt_variant)
    if structured:
        note = await call_structured(client, prompts, "gather", schema=SegmentNote, **common)
        outcome = GatheredSegment(chunk_id=chunk.id, note=note.value, error=note.error)
        raw, usage = (None if note.value is not None else note.raw), note.usage
    else:
        text = await call_structured(client, prompts, "gather_text", schema=FreeTextNote, **common)
        outcome = GatheredSegment(chunk_id=chunk.id, text_note=text.value, error=text.error)
        raw, usage = (None if text.value is not None else text.raw), text.usage
    outcome.raw = raw
    report_progress("gather", total=task["total"])
    return {"gathered": [outcome], "usage": usage.as_dict()}


async def gather_notes(state: dict[str, Any], runtime: ContextRuntime) -> dict[str, Any]:
    """Order notes by segment, check the failure budget, locate every quote in its document."""
    gathered: list[GatheredSegment] = sorted(state.get("gathered") or [], key=lambda g: g.chunk_id)
    failed = [g for g in gathered if g.failed]
    if gathered and len(failed) / len(gathered) > runtime.context.max_failed_fraction:
        ids = ", ".join(str(g.chunk_id) for g in failed[:20])
        raise TooManyFailures(
            f"{len(failed)} of {len(gathered)} segments failed in the gather stage (segments {ids}"
            f"{'…' if len(failed) > 20 else ''}); first error: {failed[0].error}"
        )
    chunks = {c.id: c for c in state.get("input_chunks") or []}
    documents = documents_of(state)
    notes: list[EvidenceNote] = []
    for g in gathered:
        if g.note is not None:
            quotes = [q.strip() for q in g.note.evidence if has_words(q)]
            located = locate_quotes(quotes, chunks[g.chunk_id], documents)
            notes.append(EvidenceNote(sources=[g.chunk_id], quotes=located, reasoning=g.note.reasoning))
        elif g.text_note is not None:
            notes.append(EvidenceNote(sources=[g.chunk_id], reasoning=g.text_note.note, structured=False))
    unverified = [q for n in notes for q in n.quotes if not q.verified]
    decisions = []
    if unverified:
        where = sorted({q.chunk_id for q in unverified})
        decisions.append(
            f"{len(unverified)} quoted sentence(s) could not be found in their segment (segments "
            f"{', '.join(map(str, where))}): kept and flagged verified=false in the evidence"
        )
    tokenizer = get_tokenizer(resolve_tokenizer_spec(runtime.context))
    return {
        "candidates": measured(notes, tokenizer),
        "collapse_round": 0,
        "previous_tokens": None,
        "merge_batches": [],
        "decisions": decisions,
    }
