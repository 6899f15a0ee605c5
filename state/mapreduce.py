"""Internal state of the LLM×MapReduce graph (TypedDicts inside, pydantic at the edges).

``mapped`` and ``collapsed`` are fan-in fields: each parallel ``Send`` task appends one item and the
gather nodes put them back in document order (results of one superstep can arrive in any order).
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from pydantic import BaseModel

from longgraph.state.contract import Chunk, ChunkReport, DocumentIn, Evidence
from longgraph.state.outputs import MapOutput
from longgraph.state.reducers import add_usage


class Note(BaseModel):
    """One item of structured information on its way to the reduce stage, with where it came from."""

    sources: list[int]
    """Ids of the chunks this note summarises."""
    output: MapOutput
    tokens: int
    """Tokens of the note as rendered into a collapse/reduce prompt."""


class MappedChunk(BaseModel):
    """The map stage's outcome for one chunk: a parsed output, or a failure with the raw answer."""

    chunk_id: int
    output: MapOutput | None = None
    error: str | None = None
    raw: str | None = None


class CollapsedGroup(BaseModel):
    """The collapse stage's outcome for one group of notes."""

    index: int
    sources: list[int]
    output: MapOutput | None = None
    error: str | None = None


class MapTask(TypedDict):
    """Payload of one map ``Send``."""

    chunk: Chunk
    question: str
    total: int


class CollapseTask(TypedDict):
    """Payload of one collapse ``Send``."""

    index: int
    notes: list[Note]
    question: str
    round: int
    total: int


class MapReduceState(TypedDict, total=False):
    # input
    question: str
    document: str | None
    documents: list[DocumentIn] | None
    # working state
    input_chunks: list[Chunk]
    started_at: float
    mapped: Annotated[list[MappedChunk], operator.add]
    collapsed: Annotated[list[CollapsedGroup], operator.add]
    notes: list[Note]
    groups: list[list[Note]]
    collapse_round: int
    previous_tokens: int | None
    filtered: Annotated[list[tuple[int, str]], operator.add]
    """(chunk id, reason) for chunks whose information was set aside on purpose."""
    usage: Annotated[dict[str, Any], add_usage]
    decisions: Annotated[list[str], operator.add]
    # output
    answer: str
    rationale: str
    confidence: float | None
    evidence: list[Evidence]
    chunks: list[ChunkReport]
    stats: dict[str, Any]
    strategy: str


class MapReduceOutput(TypedDict, total=False):
    """What the graph returns: the shared contract (:class:`longgraph.state.contract.GraphOutput`)."""

    answer: str
    rationale: str
    confidence: float | None
    evidence: list[Evidence]
    chunks: list[ChunkReport]
    stats: dict[str, Any]
    strategy: str


class GraphInputState(TypedDict, total=False):
    """The input keys (validated in the first node, so errors name the problem)."""

    question: str
    document: str | None
    documents: list[DocumentIn] | None
