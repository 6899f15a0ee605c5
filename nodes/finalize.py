"""The result, for every strategy: the answer settled against the evidence, every chunk's fate, the cost.

**Settling the answer** (strategies that ground their notes): the final answer must be one a verified
note supports — its new words found in the verified quotes of the notes that reached the final stage
(``nodes/grounding.py``, :func:`~longgraph.nodes.grounding.support_in_notes`). When the final stage's
answer is not (a small model may pick a confident wrong note or restate the question), the strongest
verified note's own answer is returned instead and ``stats.notes`` says so. When no verified note
reached the final stage, the answer is NO INFORMATION, ``supported`` is False, and ``candidates``
lists the best answers that failed the check, with why: the result says plainly that nothing in the
text supports an answer, instead of passing a guess off as one.

``evidence`` is the quotes that support the answer (exact spans of the original documents, with the
confidence of their notes), strongest first, followed by the other quotes of those notes (unverified
ones flagged); ``confidence`` is the evidence-based confidence of the strongest supporting note.

Baselines (``settle=False``) answer from one call: their answer stands as given, ``supported`` is
None, and their evidence is the shown chunks whose text contains the answer.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from longgraph.nodes.grounding import MIN_SUPPORT, support_in_notes
from longgraph.nodes.kit import RunKit
from longgraph.nodes.lexical import words_of
from longgraph.nodes.reduction import strength
from longgraph.nodes.report import chunk_reports
from longgraph.state.contract import Candidate, Chunk, ChunkReport, Evidence, Stats
from longgraph.state.graph_state import RunState
from longgraph.state.notes import ChunkOutcome, Note
from longgraph.state.outputs import NO_INFORMATION, is_no_information
from longgraph.state.plan import Aggregation
from longgraph.state.usage import Usage

MAX_CANDIDATES = 5


def build_stats(state: RunState) -> Stats:
    usage = state.get("usage") or Usage()
    built = "built_from_cache" in state
    return Stats(
        **usage.model_dump(),
        build=(state.get("build_usage") or Usage()) if built else None,
        build_seconds=state.get("build_seconds") if built else None,
        built_from_cache=state.get("built_from_cache") if built else None,
        structure=state.get("structure"),
        collapse_rounds=int(state.get("rounds") or 0),
        seconds=round(time.time() - state.get("started_at", time.time()), 3),
        notes=list(state.get("decisions") or []),
    )


def agrees(answer: str, other: str) -> bool:
    """Whether two short texts say the same thing (one's words contain the other's, in order)."""
    a, b = " ".join(words_of(answer)), " ".join(words_of(other))
    return bool(a and b) and (f" {a} " in f" {b} " or f" {b} " in f" {a} ")


def note_answer(note: Note) -> str:
    """What a note answers: its answer, else its most relevant verified quote, else its reasoning."""
    if note.answer.strip() and not is_no_information(note.answer):
        return note.answer.strip()
    quotes = note.verified_quotes
    if quotes:
        return " ".join(max(quotes, key=lambda q: q.confidence or 0.0).text.split())
    return note.reasoning.strip()


def candidates_from(outcomes: Sequence[ChunkOutcome]) -> list[Candidate]:
    """The best answers that failed the grounding check (most support, then most relevance)."""
    rejected = [o for o in outcomes if o.fate == "unsupported" and o.answer]
    rejected.sort(key=lambda o: (-(o.support or 0.0), -(o.relevance or 0.0), o.chunk_id))
    return [
        Candidate(chunk_id=o.chunk_id, answer=o.answer or "", confidence=o.confidence, reason=o.reason or "")
        for o in rejected[:MAX_CANDIDATES]
    ]


def _evidence(supporting: Sequence[Evidence], notes: Sequence[Note]) -> list[Evidence]:
    chosen = {(q.doc_index, q.start, q.end, q.text) for q in supporting}
    rest = [q for n in notes for q in n.quotes if (q.doc_index, q.start, q.end, q.text) not in chosen]
    ordered = sorted(supporting, key=lambda q: (-(q.confidence or 0.0), q.doc_index, q.start))
    seen: set[tuple[object, ...]] = set()
    out = []
    for q in [*ordered, *sorted(rest, key=lambda q: (not q.verified, q.doc_index, q.start))]:
        key = (q.doc_index, q.start, q.end, q.verified, q.text if not q.verified else "")
        if key not in seen:
            seen.add(key)
            out.append(q)
    return out


def settle(state: RunState, notes: Sequence[Note], outcomes: Sequence[ChunkOutcome]) -> dict[str, Any]:
    """The answer, rationale, confidence, support flag, candidates and evidence of a grounded run."""
    question = state["question"]
    if not any(n.verified_quotes for n in notes):
        failed = sum(o.fate == "failed" for o in outcomes)
        unsupported = sum(o.fate == "unsupported" for o in outcomes)
        if unsupported:
            why = (
                f"no verified note answers the question: {unsupported} chunk(s) answered, but none of those "
                "answers is supported by its text (see candidates)"
            )
        elif failed:
            why = f"no chunk yielded information ({failed} of {len(outcomes)} failed, the rest reported none)"
        else:
            why = "every chunk reported no information for this question"
        return {
            "answer": NO_INFORMATION, "rationale": why, "confidence": 0.0, "supported": False,
            "candidates": [c.model_dump() for c in candidates_from(outcomes)], "evidence": [],
        }  # fmt: skip
    answer = (state.get("answer") or "").strip()
    decisions: list[str] = []
    support, quotes = (
        support_in_notes(answer, notes, question) if answer and not is_no_information(answer) else (None, [])
    )
    if support is None or support.support < MIN_SUPPORT or not quotes:
        strongest = max((n for n in notes if n.verified_quotes), key=strength)
        fallback = note_answer(strongest)
        shown = f"{answer[:80]!r}" if answer else "no readable answer"
        decisions.append(
            f"the final answer ({shown}) is not supported by any verified note: answered with the strongest "
            f"verified note (chunks {', '.join(map(str, strongest.sources))})"
        )
        answer, quotes = fallback, strongest.verified_quotes
        rationale = strongest.reasoning or "the strongest verified note's answer"
    else:
        rationale = state.get("rationale", "")
    supporting_notes = [n for n in notes if any(q in n.quotes for q in quotes)]
    confidence = max((n.confidence for n in supporting_notes), default=None)
    return {
        "answer": answer, "rationale": rationale, "confidence": confidence, "supported": True, "candidates": [],
        "evidence": _evidence(quotes, supporting_notes), "decisions": decisions,
    }  # fmt: skip


def settle_aggregation(
    aggregation: Aggregation, notes: Sequence[Note], outcomes: Sequence[ChunkOutcome], chunks: Sequence[Chunk]
) -> dict[str, Any]:
    """A decomposed question's result: the answer computed in code from the documents' verified notes
    (``nodes/aggregate.py``) stands as computed; its evidence is the notes of the documents it names,
    then of the others it weighed; its confidence is the weakest of the notes it names."""
    if not aggregation.answer.strip():
        return {
            "answer": NO_INFORMATION, "rationale": f"no per-document answer could be combined: {aggregation.explanation}",
            "confidence": 0.0, "supported": False, "candidates": [c.model_dump() for c in candidates_from(outcomes)],
            "evidence": [],
        }  # fmt: skip
    doc_of = {c.id: c.doc_index for c in chunks}
    named = set(aggregation.named)
    naming = [n for n in notes if doc_of[n.sources[0]] in named]
    quotes = [q for n in naming for q in n.verified_quotes]
    return {
        "answer": aggregation.answer, "rationale": aggregation.explanation,
        "confidence": min((n.confidence for n in naming), default=None), "supported": bool(quotes),
        "candidates": [], "evidence": _evidence(quotes, notes),
    }  # fmt: skip


def shown_evidence(answer: str, chunks: Sequence[Chunk], used: set[int]) -> list[Evidence]:
    """Baselines: the shown chunks whose text contains the answer (one call gives no finer provenance)."""
    if is_no_information(answer):
        return []
    return [
        Evidence(chunk_id=c.id, doc_index=p.doc_index, title=p.title, start=p.start, end=p.end)
        for c in chunks
        if c.id in used and agrees(answer, c.text)
        for p in c.parts
    ]


async def finalize(state: RunState, kit: RunKit, *, strategy: str, grounded: bool = True) -> dict[str, Any]:
    """The output contract of ``strategy`` (see the module docstring)."""
    chunks: list[Chunk] = state.get("input_chunks") or []
    outcomes: list[ChunkOutcome] = state.get("outcomes") or []
    notes: list[Note] = state.get("notes") or []
    used = {s for n in notes for s in n.sources}
    reports: list[ChunkReport] = chunk_reports(chunks, outcomes, used, state.get("filtered") or [])
    aggregation = state.get("aggregation")
    if grounded and aggregation:
        settled = settle_aggregation(Aggregation.model_validate(aggregation), notes, outcomes, chunks)
    elif grounded:
        settled = settle(state, notes, outcomes)
    else:
        answer = (state.get("answer") or "").strip() or NO_INFORMATION
        answer = NO_INFORMATION if is_no_information(answer) else answer
        settled = {
            "answer": answer, "rationale": state.get("rationale", ""), "confidence": None, "supported": None,
            "candidates": [], "evidence": shown_evidence(answer, chunks, used),
        }  # fmt: skip
    stats = build_stats(state)
    stats.notes += settled.pop("decisions", [])
    return {**settled, "chunks": reports, "stats": stats.model_dump(), "strategy": strategy}
