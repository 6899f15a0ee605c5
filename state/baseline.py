"""Internal state of the single-pass baselines (``truncate``, ``rag-bm25``, ``rag-embed``).

Each baseline chunks the input with the one chunker, picks the text one call can see (a prefix that
fits the window, or the top-k retrieved chunks), asks once and reports every chunk: ``used`` when shown,
``filtered`` with the reason when not. Input and output keys are the shared contract
(:class:`~longgraph.state.mapreduce.GraphInputState`, :class:`~longgraph.state.mapreduce.MapReduceOutput`).
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from pydantic import BaseModel

from longgraph.state.contract import Chunk, ChunkReport, DocumentIn, Evidence
from longgraph.state.reducers import add_usage


class ShownChunk(BaseModel):
    """A chunk (or the part of it that fitted) as the model is shown it."""

    chunk_id: int
    text: str
    note: str | None = None
    """Why only part of it was shown, or how it was chosen (rank and score of a retrieved chunk)."""


class BaselineState(TypedDict, total=False):
    # input
    question: str
    document: str | None
    documents: list[DocumentIn] | None
    # working state
    input_chunks: list[Chunk]
    started_at: float
    shown: list[ShownChunk]
    """What the one call reads, in document order."""
    filtered: Annotated[list[tuple[int, str]], operator.add]
    """(chunk id, reason) for every chunk the model was not shown."""
    usage: Annotated[dict[str, Any], add_usage]
    answer_error: str | None
    """Why the one answer call could not be parsed (its shown chunks are then reported failed)."""
    answer_raw: str | None
    decisions: Annotated[list[str], operator.add]
    # output
    answer: str
    rationale: str
    confidence: float | None
    evidence: list[Evidence]
    chunks: list[ChunkReport]
    stats: dict[str, Any]
    strategy: str
