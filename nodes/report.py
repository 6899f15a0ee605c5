"""The one chunk report: what became of every chunk of the input, for every strategy.

A chunk is ``failed`` (no readable answer: reason and raw output), ``no_information``,
``unsupported`` (its answer is not evidence: reason), ``filtered`` (its note was set aside on
purpose: reason), or ``used`` (its note reached the final stage). Every chunk appears exactly once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from longgraph.state.contract import Chunk, ChunkReport, ChunkStatus
from longgraph.state.notes import ChunkOutcome

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
