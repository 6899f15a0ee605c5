"""Internal state of the Segment+ graphs, and of the note stages they share with other strategies.

A Segment+ note travels as an :class:`EvidenceNote`: quotes that already carry their provenance
(an :class:`~longgraph.state.contract.Evidence` per quote, located in the original document when the
note is gathered) plus the reasoning. The filter and merge stages (``nodes/notes_filter.py``,
``nodes/merge.py``) work on these notes only, under their own keys (``candidates``, ``merge_notes``,
``merge_batches``, ``merged``), so any graph can add them next to its own state: the mapreduce graph
with the Segment+ merge as its collapse stage does exactly that (:class:`MapReduceMergeState`).

The merge round counter shares ``collapse_round`` with LLM×MapReduce so ``stats.collapse_rounds``
reports merge rounds without a second stats builder.
"""

from __future__ import annotations

import operator
from typing import Annotated, TypedDict

from pydantic import BaseModel, Field

from longgraph.state.contract import Evidence
from longgraph.state.graph_state import RunState
from longgraph.state.mapreduce import MapReduceState
from longgraph.state.outputs import FreeTextNote, SegmentNote


class EvidenceNote(BaseModel):
    """One note on its way to the answer: verbatim quotes with provenance, reasoning, and its sources."""

    sources: list[int]
    """Ids of the chunks (segments) this note stands for, in document order."""
    quotes: list[Evidence] = Field(default_factory=list)
    """The Evidence part: sentences quoted from the segments, each located in its document."""
    reasoning: str = ""
    """The Reasoning part; in the free-text ablation the whole note."""
    structured: bool = True
    """False for a free-text note (the "no structure" ablation): rendered and merged as plain text."""
    answer: str = ""
    """An intermediate answer carried from a mapreduce map output (empty for Segment+ notes)."""
    confidence: float | None = None
    """Carried from a mapreduce map output (max over a merged batch); None for Segment+ notes."""
    tokens: int = 0
    """Tokens of the note as rendered into a filter/merge/answer prompt."""


class GatheredSegment(BaseModel):
    """The gather stage's outcome for one segment: a parsed note, or a failure with the raw answer."""

    chunk_id: int
    note: SegmentNote | None = None
    text_note: FreeTextNote | None = None
    error: str | None = None
    raw: str | None = None

    @property
    def failed(self) -> bool:
        return self.note is None and self.text_note is None


class FilterTask(TypedDict):
    """Payload of one filter ``Send``: the note to label Keep or Remove."""

    index: int
    note: EvidenceNote
    question: str
    total: int


class FilterOutcome(BaseModel):
    """The filter's label for one note (``keep`` is True when the label could not be read)."""

    index: int
    keep: bool
    error: str | None = None


class MergeTask(TypedDict):
    """Payload of one merge ``Send``: a batch of consecutive notes."""

    index: int
    notes: list[EvidenceNote]
    question: str
    round: int
    total: int


class MergedBatch(BaseModel):
    """The merge stage's outcome for one batch: one note of the same structure."""

    index: int
    note: EvidenceNote
    error: str | None = None


class NoteStageState(TypedDict, total=False):
    """The keys of the shared note stages (filter, merge); mixed into each graph's state."""

    gathered: Annotated[list[GatheredSegment], operator.add]
    candidates: list[EvidenceNote]
    """Notes waiting for the filter."""
    judged: Annotated[list[FilterOutcome], operator.add]
    merge_notes: list[EvidenceNote]
    """Notes in the merge loop; after it, the notes the answer is given."""
    merge_batches: list[list[EvidenceNote]]
    merged: Annotated[list[MergedBatch], operator.add]
    collapse_round: int
    previous_tokens: int | None


class SegmentPlusState(RunState, NoteStageState, total=False):
    """Segment+: the shared run state plus the note stages' keys."""


class MapReduceMergeState(MapReduceState, NoteStageState, total=False):
    """LLM×MapReduce state plus the Segment+ merge keys (the swapped collapse stage)."""
