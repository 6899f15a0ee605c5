"""Internal state of the LLM×MapReduce graph (TypedDicts inside, pydantic at the edges).

``mapped`` and ``collapsed`` are fan-in fields: each parallel ``Send`` task appends one item and the
gather nodes put them back in document order (results of one superstep can arrive in any order).
"""

from __future__ import annotations

import operator
from typing import Annotated, TypedDict

from pydantic import BaseModel

from longgraph.state.contract import Chunk
from longgraph.state.graph_state import RunState
from longgraph.state.outputs import MapOutput


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


class MapReduceState(RunState, total=False):
    mapped: Annotated[list[MappedChunk], operator.add]
    collapsed: Annotated[list[CollapsedGroup], operator.add]
    notes: list[Note]
    groups: list[list[Note]]
    collapse_round: int
    previous_tokens: int | None
