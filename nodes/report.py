"""The one chunk report: what became of every chunk of the input, for every strategy.

Also the run's stats (:func:`build_stats`) and a baseline's evidence (:func:`shown_evidence`: one call
gives no finer provenance than the chunks it was shown). A chunk is ``failed`` (no readable answer: reason and raw output), ``no_information``,
``unsupported`` (its answer is not evidence: reason), ``filtered`` (its note was set aside on
purpose: reason), or ``used`` (its note reached the final stage). Every chunk appears exactly once.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from longgraph.nodes.checks import words_of
from longgraph.state.contract import Chunk, ChunkReport, ChunkStatus, Evidence, Stats
from longgraph.state.graph_state import RunState
from longgraph.state.notes import ChunkOutcome
from longgraph.state.outputs import is_no_information
from longgraph.state.usage import Usage

NOT_REACHED = "its note did not reach the final stage"


def chunk_reports(
    chunks: Sequence[Chunk],
    outcomes: Sequence[ChunkOutcome],
    used: set[int],
    filtered: Sequence[tuple[int, str]],
) -> list[ChunkReport]:
    """One report per chunk, in chunk order."""
    by_id = {o.chunk_id: o for o in outcomes}
    set_aside = dict(filtered)
    reports = []
    for chunk in chunks:
        base: dict[str, Any] = {"id": chunk.id, "parts": chunk.parts, "tokens": chunk.tokens}
        outcome = by_id.get(chunk.id)
        if outcome is None:
            status: ChunkStatus = "filtered" if chunk.id in set_aside else "failed"
            reports.append(ChunkReport(**base, status=status, reason=set_aside.get(chunk.id, "never read")))
            continue
        said = outcome.model_dump(
            include={"answer", "extracted", "model_confidence", "confidence", "support", "relevance"}
        )
        if outcome.fate == "failed":
            reports.append(
                ChunkReport(**base, status="failed", reason=outcome.reason, raw_output=outcome.raw_output)
            )
        elif outcome.fate in ("no_information", "unsupported"):
            reports.append(ChunkReport(**base, **said, status=outcome.fate, reason=outcome.reason))
        elif chunk.id in set_aside:
            reports.append(ChunkReport(**base, **said, status="filtered", reason=set_aside[chunk.id]))
        elif chunk.id in used:
            reports.append(ChunkReport(**base, **said, status="used", reason=outcome.reason))
        else:
            reports.append(ChunkReport(**base, **said, status="filtered", reason=NOT_REACHED))
    return reports


def build_stats(state: RunState, extra: Usage | None = None) -> Stats:
    usage = (state.get("usage") or Usage()) + (extra or Usage())
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
