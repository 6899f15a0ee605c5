"""The state every strategy graph shares: its input keys, its output keys, and the run bookkeeping.

Strategy states extend :class:`RunState` with their own working keys; graphs declare
``input_schema=GraphInputState`` and ``output_schema=GraphOutputState``, so every graph has the same
contract (:mod:`longgraph.state.contract`) at its edges.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from longgraph.state.contract import Chunk, ChunkReport, DocumentIn, Evidence
from longgraph.state.reducers import add_usage


class GraphInputState(TypedDict, total=False):
    """The input keys (validated in the first node, so errors name the problem)."""

    question: str
    document: str | None
    documents: list[DocumentIn] | None


class GraphOutputState(TypedDict, total=False):
    """The output keys: the shared contract (:class:`longgraph.state.contract.GraphOutput`)."""

    answer: str
    rationale: str
    confidence: float | None
    evidence: list[Evidence]
    chunks: list[ChunkReport]
    stats: dict[str, Any]
    strategy: str


class RunState(GraphInputState, GraphOutputState, total=False):
    """Input, output, and what every run keeps track of on the way."""

    input_chunks: list[Chunk]
    started_at: float
    filtered: Annotated[list[tuple[int, str]], operator.add]
    """(chunk id, reason) for chunks whose information was set aside on purpose."""
    usage: Annotated[dict[str, Any], add_usage]
    decisions: Annotated[list[str], operator.add]
    """Notes for the user about choices the run made (fallbacks, trims): they end in ``stats.notes``."""
