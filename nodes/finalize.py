"""Assembling the result: every chunk's fate, the evidence, the confidence, and what the run cost."""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from typing import Any

from longgraph.nodes.runtime import ContextRuntime
from longgraph.state.contract import Chunk, ChunkReport, Evidence, Stats
from longgraph.state.mapreduce import MappedChunk, Note
from longgraph.state.outputs import NO_INFORMATION


def _normalise(text: str) -> str:
    return re.sub(r"[^0-9a-z\u00c0-\uffff]+", " ", text.lower()).strip()


def agrees(answer: str, other: str) -> bool:
    """Whether two short answers say the same thing (one contains the other, after normalising)."""
    a, b = _normalise(answer), _normalise(other)
    return bool(a and b) and (a in b or b in a)


def supporting_notes(answer: str, notes: Sequence[Note]) -> list[Note]:
    """Notes whose answer agrees with the final answer: the answer rests on their chunks."""
    return [n for n in notes if agrees(answer, n.output.answer)]


def chunk_reports(
    chunks: Sequence[Chunk], mapped: Sequence[MappedChunk], filtered: Sequence[tuple[int, str]]
) -> list[ChunkReport]:
    """One report per chunk: used, no information, filtered (with why) or failed (with why and raw)."""
    by_id = {m.chunk_id: m for m in mapped}
    set_aside = dict(filtered)
    reports = []
    for chunk in chunks:
        m = by_id.get(chunk.id)
        base: dict[str, Any] = {"id": chunk.id, "parts": chunk.parts, "tokens": chunk.tokens}
        if m is None:
            reports.append(ChunkReport(**base, status="failed", reason="never mapped"))
            continue
        if m.output is None:
            reports.append(ChunkReport(**base, status="failed", reason=m.error, raw_output=m.raw))
            continue
        said: dict[str, Any] = {
            "answer": m.output.answer,
            "confidence": m.output.confidence_score,
            "extracted": m.output.extracted_information,
        }
        if not m.output.has_information:
            reports.append(ChunkReport(**base, **said, status="no_information"))
        elif chunk.id in set_aside:
            reports.append(ChunkReport(**base, **said, status="filtered", reason=set_aside[chunk.id]))
        else:
            reports.append(ChunkReport(**base, **said, status="used"))
    return reports


def evidence_for(
    answer: str, notes: Sequence[Note], chunks: Sequence[Chunk], mapped: Sequence[MappedChunk]
) -> list[Evidence]:
    """The chunks behind the notes that support the answer (all final notes if none clearly does)."""
    support = supporting_notes(answer, notes) or list(notes)
    by_id = {c.id: c for c in chunks}
    outputs = {m.chunk_id: m.output for m in mapped if m.output is not None}
    evidence = []
    for source in sorted({s for n in support for s in n.sources}):
        chunk, output = by_id[source], outputs.get(source)
        if output is None or not output.has_information:
            continue
        for part in chunk.parts:
            evidence.append(
                Evidence(
                    chunk_id=source, doc_index=part.doc_index, title=part.title, start=part.start, end=part.end,
                    confidence=output.confidence_score, text=output.extracted_information,
                )
            )  # fmt: skip
    return sorted(evidence, key=lambda e: (-(e.confidence or 0), e.chunk_id))


def build_stats(state: dict[str, Any]) -> Stats:
    usage = state.get("usage") or {}
    return Stats(
        llm_calls=int(usage.get("calls", 0)),
        failed_calls=int(usage.get("failed_calls", 0)),
        cached_calls=int(usage.get("cached_calls", 0)),
        prompt_tokens=int(usage.get("prompt_tokens", 0)),
        completion_tokens=int(usage.get("completion_tokens", 0)),
        calls_by_stage=dict(usage.get("calls_by_stage") or {}),
        collapse_rounds=int(state.get("collapse_round") or 0),
        seconds=round(time.time() - state.get("started_at", time.time()), 3),
        notes=list(state.get("decisions") or []),
    )


async def finalize(
    state: dict[str, Any], runtime: ContextRuntime, *, strategy: str = "mapreduce"
) -> dict[str, Any]:
    """The output contract; with no informative note, the answer is the paper's NO INFORMATION."""
    chunks: list[Chunk] = state.get("input_chunks") or []
    mapped: list[MappedChunk] = state.get("mapped") or []
    notes: list[Note] = state.get("notes") or []
    reports = chunk_reports(chunks, mapped, state.get("filtered") or [])
    if not notes:
        failed = sum(r.status == "failed" for r in reports)
        why = "every chunk reported no information for this question"
        if failed:
            why = f"no chunk yielded information ({failed} of {len(reports)} failed, the rest reported none)"
        return {
            "answer": NO_INFORMATION, "rationale": why, "confidence": 0.0, "evidence": [], "chunks": reports,
            "stats": build_stats(state).model_dump(), "strategy": strategy,
        }  # fmt: skip
    answer = state.get("answer", "")
    support = supporting_notes(answer, notes)
    return {
        "answer": answer,
        "rationale": state.get("rationale", ""),
        "confidence": max((n.output.confidence_score for n in support), default=None),
        "evidence": evidence_for(answer, notes, chunks, mapped),
        "chunks": reports,
        "stats": build_stats(state).model_dump(),
        "strategy": strategy,
    }
