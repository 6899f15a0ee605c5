"""The Segment+ answer and the result: the answer comes from the merged notes only.

Per Segment+ §3.2: "we use the final merged Notes as the context for model prediction ... the model
does not interact with the original segments". The result's evidence is the quotes of those final
notes, each with its document and character offsets (``verified=False`` when the quote was not found
in its segment); quotes that agree with the answer come first, then document order. Segment+ has no
confidence score, so ``confidence`` is None. Free-text notes (the "no structure" ablation) quote
nothing: their evidence is the spans of the segments behind the final notes, as in LLM×MapReduce.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from longgraph.llm import LLMProvider, call_structured
from longgraph.nodes.finalize import agrees, build_stats
from longgraph.nodes.runtime import ContextRuntime, report_progress
from longgraph.nodes.segment_notes import join_notes, note_value, question_words
from longgraph.prompts import prompts_for
from longgraph.state.contract import Chunk, ChunkReport, Evidence
from longgraph.state.outputs import NO_INFORMATION, ReduceOutput
from longgraph.state.segment_plus import EvidenceNote, GatheredSegment

PROMPTS = "segment_plus"


async def answer_notes(state: dict[str, Any], runtime: ContextRuntime, *, llm: LLMProvider) -> dict[str, Any]:
    """Ask for Rationale and Answer over the final notes.

    If the answer cannot be parsed after the bounded retries, the reasoning of the most valuable note
    (most verified quotes) is returned as the answer and ``stats.notes`` says so: raw model text is
    never the answer.
    """
    context = runtime.context
    notes: list[EvidenceNote] = state["merge_notes"]
    result = await call_structured(
        llm(context), prompts_for(PROMPTS, context.prompt_variant), "answer", task=context.task, schema=ReduceOutput,
        variables={"context": join_notes(notes), "question": state["question"]},
        parse_retries=context.parse_retries, work="the answer stage",
    )  # fmt: skip
    report_progress("answer", total=1)
    if result.value is not None:
        return {
            "answer": result.value.answer.strip(),
            "rationale": result.value.rationale.strip(),
            "usage": result.usage.as_dict(),
        }
    wanted = question_words(state["question"])
    best = max(notes, key=lambda n: note_value(n, wanted))
    return {
        "answer": best.reasoning.strip(),
        "rationale": "the answer stage was unparseable: this is the reasoning of the most supported note",
        "usage": result.usage.as_dict(),
        "decisions": [
            f"the answer was unparseable ({result.error}); answered with the reasoning of the note with "
            "the most verified quotes"
        ],
    }


def segment_reports(
    chunks: Sequence[Chunk],
    gathered: Sequence[GatheredSegment],
    notes: Sequence[EvidenceNote],
    filtered: Sequence[tuple[int, str]],
) -> list[ChunkReport]:
    """One report per segment: used, filtered (with why) or failed (with why and the raw answer)."""
    by_id = {g.chunk_id: g for g in gathered}
    set_aside = dict(filtered)
    used = {s for n in notes for s in n.sources}
    reports = []
    for chunk in chunks:
        g = by_id.get(chunk.id)
        base: dict[str, Any] = {"id": chunk.id, "parts": chunk.parts, "tokens": chunk.tokens}
        if g is None:
            reports.append(ChunkReport(**base, status="failed", reason="no note was taken"))
            continue
        if g.failed:
            reports.append(ChunkReport(**base, status="failed", reason=g.error, raw_output=g.raw))
            continue
        own = g.note.reasoning if g.note is not None else g.text_note.note if g.text_note else ""
        base["answer"] = own
        base["extracted"] = "\n".join(g.note.evidence) if g.note is not None else own
        if chunk.id in set_aside:
            reports.append(ChunkReport(**base, status="filtered", reason=set_aside[chunk.id]))
        elif chunk.id in used:
            reports.append(ChunkReport(**base, status="used"))
        else:
            reports.append(
                ChunkReport(**base, status="filtered", reason="its note did not reach the final notes")
            )
    return reports


def ranked_quotes(answer: str, notes: Sequence[EvidenceNote]) -> list[Evidence]:
    """The final notes' quotes, each span once: those agreeing with the answer first, then in order."""
    seen: set[tuple[object, ...]] = set()
    quotes = []
    for quote in (q for n in notes for q in n.quotes):
        key = (
            quote.doc_index,
            quote.start,
            quote.end,
            quote.verified,
            quote.text if not quote.verified else "",
        )
        if key not in seen:
            seen.add(key)
            quotes.append(quote)
    return sorted(quotes, key=lambda q: (not agrees(answer, q.text), q.doc_index, q.start))


def segment_spans(notes: Sequence[EvidenceNote], chunks: Sequence[Chunk]) -> list[Evidence]:
    """Free-text notes quote nothing: their evidence is the spans of the segments behind them."""
    by_id = {c.id: c for c in chunks}
    return [
        Evidence(chunk_id=source, doc_index=part.doc_index, title=part.title, start=part.start, end=part.end)
        for source in sorted({s for n in notes for s in n.sources})
        for part in by_id[source].parts
    ]


async def finalize_notes(
    state: dict[str, Any], runtime: ContextRuntime, *, strategy: str = "segment-plus"
) -> dict[str, Any]:
    """The output contract; with no note left, the answer is NO INFORMATION and the reason why."""
    chunks: list[Chunk] = state.get("input_chunks") or []
    gathered: list[GatheredSegment] = state.get("gathered") or []
    notes: list[EvidenceNote] = state.get("merge_notes") or []
    reports = segment_reports(chunks, gathered, notes, state.get("filtered") or [])
    stats = build_stats(state).model_dump()
    if not notes:
        failed = sum(r.status == "failed" for r in reports)
        why = "no note reached the answer: every segment's note was filtered out (see chunks for why)"
        if failed:
            why = f"no note reached the answer: {failed} of {len(reports)} segments failed, the rest were filtered out"
        return {
            "answer": NO_INFORMATION, "rationale": why, "confidence": None, "evidence": [], "chunks": reports,
            "stats": stats, "strategy": strategy,
        }  # fmt: skip
    answer = state.get("answer", "")
    return {
        "answer": answer,
        "rationale": state.get("rationale", ""),
        "confidence": None,
        "evidence": ranked_quotes(answer, notes)
        if any(n.structured for n in notes)
        else segment_spans(notes, chunks),
        "chunks": reports,
        "stats": stats,
        "strategy": strategy,
    }
