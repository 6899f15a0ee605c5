"""The one note every strategy's stages produce and consume, and what reading one chunk gives.

A model answer about a piece of text (LLM×MapReduce's four-field map output, a Segment+
Evidence/Reasoning note, a compact one-line answer, a ToM node summary...) is first a
:class:`NoteDraft`: the answer or partial answer, the sentences it quotes, its reasoning and the
model's own confidence, as the model said them. Each output schema says how it fills a draft
(``note_draft()`` in :mod:`longgraph.state.outputs`), so prompts and parsing stay per strategy and per
paper while everything downstream sees one shape.

The ground stage (``nodes/read.py``, by ``nodes/checks``) checks a draft against the chunk it came from
and turns it into a :class:`Note` — quotes located in the original documents (character offsets), a
confidence next to the model's — or reports why it is not evidence. Stages that only
move notes (group, collapse/merge loop, filter, answer, finalize, chunk accounting) take any note.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from longgraph.state.contract import Evidence


class NoteDraft(BaseModel):
    """What one model answer says, before it is checked against its source."""

    answer: str = ""
    """The (partial) answer; empty when the protocol has none (a Segment+ note)."""
    quotes: list[str] = Field(default_factory=list)
    """Sentences the model says it took from the text."""
    reasoning: str = ""
    """Rationale, reasoning, or the whole note of a free-text protocol."""
    model_confidence: float | None = None
    """The model's own score out of 5, when the protocol asks for one."""
    structured: bool = True
    """False for a free-text note (Segment+'s "no structure" ablation): rendered and merged as text."""
    no_information: bool = False
    """The model said the text holds nothing for the question (decided on the parsed answer)."""


class ChunkRead(BaseModel):
    """The outcome of one read call on one chunk: a draft, or a failure with the raw answer."""

    chunk_id: int
    stage: str = "read"
    """The stage that read it ("map", "gather", ...), for messages."""
    draft: NoteDraft | None = None
    error: str | None = None
    raw: str | None = None


class Note(BaseModel):
    """A note on its way to the answer: what it says, where it comes from, how much it is worth."""

    sources: list[int]
    """Ids of the chunks the note stands for, in document order."""
    answer: str = ""
    reasoning: str = ""
    quotes: list[Evidence] = Field(default_factory=list)
    """Spans of the original documents that support the note (``verified``), or quotes that could not
    be found there (``verified=False``, kept visible rather than hidden). Carried unchanged through
    every collapse or merge round, so the final evidence points at the exact characters."""
    model_confidence: float | None = None
    """The model's own score out of 5 (None when the protocol asks for none)."""
    confidence: float = 0.0
    """Evidence-based confidence out of 5 (``nodes/checks/notes.py`` documents the formula)."""
    structured: bool = True
    tokens: int = 0
    """Tokens of the note as rendered into a prompt (an upper bound over the prompt sets' labels)."""

    @property
    def verified_quotes(self) -> list[Evidence]:
        return [q for q in self.quotes if q.verified]


ChunkFate = Literal["noted", "no_information", "unsupported", "failed"]


class ChunkOutcome(BaseModel):
    """What the first reading of one chunk gave, after grounding: the input of its chunk report."""

    chunk_id: int
    fate: ChunkFate
    reason: str | None = None
    answer: str | None = None
    extracted: str | None = None
    """What the model quoted or extracted from the chunk, for inspection."""
    model_confidence: float | None = None
    confidence: float | None = None
    support: float | None = None
    relevance: float | None = None
    raw_output: str | None = None
