"""Internal state of the single-pass baselines (``truncate``, ``rag-bm25``, ``rag-embed``).

Each baseline chunks the input with the one chunker, picks the text one call can see (a prefix that
fits the window, or the top-k retrieved chunks), asks once and reports every chunk: ``used`` when shown,
``filtered`` with the reason when not. Input and output keys are the shared contract
(:mod:`longgraph.state.graph_state`).
"""

from __future__ import annotations

from pydantic import BaseModel

from longgraph.state.graph_state import RunState


class ShownChunk(BaseModel):
    """A chunk (or the part of it that fitted) as the model is shown it."""

    chunk_id: int
    text: str
    note: str | None = None
    """Why only part of it was shown, or how it was chosen (rank and score of a retrieved chunk)."""


class BaselineState(RunState, total=False):
    shown: list[ShownChunk]
    """What the one call reads, in document order."""
