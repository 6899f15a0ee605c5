"""The input/output contract every strategy graph shares.

Input: ``question`` and either ``document`` (one text) or ``documents`` (a list of ``{"title", "text"}``).
Output: ``answer``, ``rationale``, ``confidence``, ``evidence`` (the chunks the answer rests on, with
document and character offsets), ``chunks`` (every chunk with its status), and ``stats``.

Pydantic at the boundary (validation with clear messages), plain data inside.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from longgraph.errors import InputError, validation_problems
from longgraph.state.usage import Usage


class DocumentIn(BaseModel):
    """One input document; its title labels it in prompts and provenance."""

    model_config = ConfigDict(extra="forbid")

    title: str = ""
    text: str


class GraphInput(BaseModel):
    """What a caller gives a strategy graph."""

    model_config = ConfigDict(extra="forbid")

    question: str
    document: str | None = None
    documents: list[DocumentIn] | None = None
    plan: dict[str, Any] | None = None
    """A question plan to follow (``state/plan.py``), validated where it is used."""

    @field_validator("documents", mode="before")
    @classmethod
    def _texts_are_untitled_documents(cls, value: object) -> object:
        """A list of plain texts is the natural way to pass several documents: each is one, untitled."""
        if isinstance(value, list):
            return [{"text": item} if isinstance(item, str) else item for item in value]
        return value

    @model_validator(mode="after")
    def _exactly_one_source(self) -> GraphInput:
        if _VISIBLE.search(self.question) is None:
            raise ValueError("question is empty (no visible character)")
        if (self.document is None) == (self.documents is None):
            raise ValueError("give exactly one of 'document' or 'documents'")
        if self.documents is not None and not self.documents:
            raise ValueError("'documents' is an empty list")
        if not any(doc.text.strip() for doc in self.as_documents()):
            raise ValueError("the document has no text (empty or whitespace only)")
        return self

    def as_documents(self) -> list[DocumentIn]:
        if self.document is not None:
            return [DocumentIn(title="", text=self.document)]
        assert self.documents is not None
        return list(self.documents)


_VISIBLE = re.compile("[^\\s\x00-\x1f\x7f-\x9f\u200b-\u200f\u2060\ufeff]")
"""A character that shows: a question of spaces, control and zero-width characters asks nothing."""


def parse_input(raw: object) -> GraphInput:
    """Validate raw input into a :class:`GraphInput`, raising :class:`InputError` with the reasons."""
    if isinstance(raw, GraphInput):
        return raw
    if isinstance(raw, Mapping) and isinstance(raw.get("documents"), str | bytes):
        raise InputError(
            "'documents' is one string: give a list of documents (texts or {'title', 'text'} objects), "
            "or pass a single text as 'document'"
        )
    try:
        return GraphInput.model_validate(raw)
    except ValidationError as exc:
        raise InputError(f"invalid input: {validation_problems(exc)}") from exc


class ChunkPart(BaseModel):
    """A contiguous span of one document inside a chunk (character offsets into that document's text)."""

    doc_index: int
    title: str
    start: int
    end: int


class Chunk(BaseModel):
    """A piece of the input. Usually one span of one document; several small documents may share a
    chunk, each keeping its own title and boundaries (``parts``)."""

    id: int
    parts: list[ChunkPart]
    tokens: int
    text: str
    """What the model is shown: the spans, each headed by its document's title when there is one."""

    @property
    def doc_index(self) -> int:
        return self.parts[0].doc_index

    @property
    def title(self) -> str:
        return self.parts[0].title

    @property
    def start(self) -> int:
        return self.parts[0].start

    @property
    def end(self) -> int:
        return self.parts[-1].end if len({p.doc_index for p in self.parts}) == 1 else self.parts[0].end


ChunkStatus = Literal["used", "no_information", "unsupported", "filtered", "failed"]
"""``used``: its note reached the final stage. ``no_information``: the model found nothing for the
question. ``unsupported``: the model answered, but the answer is not evidence (it restates the
question, or its support is not in the chunk; the reason says which). ``filtered``: its note was set
aside on purpose (reason given). ``failed``: no readable answer (reason and raw output given)."""


class ChunkReport(BaseModel):
    """What became of one chunk: every chunk of the input appears in the result exactly once."""

    id: int
    parts: list[ChunkPart]
    tokens: int
    status: ChunkStatus
    reason: str | None = None
    answer: str | None = None
    confidence: float | None = None
    """Evidence-based confidence out of 5 of the chunk's note (see ``nodes/checks/notes.py``)."""
    model_confidence: float | None = None
    """The model's own score out of 5, when its protocol asks for one."""
    support: float | None = None
    """Share of the answer's new words found in the supporting span of the chunk (0–1)."""
    relevance: float | None = None
    """Share of the question's content words found in that span (0–1)."""
    raw_output: str | None = None
    extracted: str | None = None
    """What the model quoted or extracted from this chunk, for inspection."""


class Evidence(BaseModel):
    """A span the answer rests on: a chunk (or a quote inside it) with its provenance."""

    chunk_id: int
    doc_index: int
    title: str
    start: int
    end: int
    confidence: float | None = None
    text: str = ""
    verified: bool = True
    """False when a quoted span could not be found in its chunk (a possible hallucination)."""


class Stats(Usage):
    """What a run cost: the model calls (:class:`~longgraph.state.usage.Usage`) and the run's own figures."""

    build: Usage | None = None
    """Strategies that build a structure once per document (ToM's tree): what building it cost, within
    the totals above (zero calls when it came from the cache). The rest is the question's own cost."""
    build_seconds: float | None = None
    built_from_cache: bool | None = None
    structure: dict[str, Any] | None = None
    """Strategies that search a per-document structure (PECAN's graph): what it was and how it was
    weighted and searched — e.g. ``edges: "attention"`` or ``"embedding-similarity"``, never mixed."""
    collapse_rounds: int = 0
    seconds: float = 0.0
    resumed: bool = False
    """A checkpointed run that went on from its thread's checkpoint: the work saved there was not
    redone (nor counted in the figures above, nor reported as progress)."""
    notes: list[str] = Field(default_factory=list)
    """Decisions a user should know about (fallbacks taken, evidence trimmed...)."""


Verdict = Literal["supported", "unconfirmed", "refuted"]
SupportKind = Literal["extractive", "derived", "none"]
"""How a supported answer stands: a stretch of a verified quote the verification call confirmed
("extractive"), confirmed otherwise or computed in code ("derived"); "none" for any other."""
"""What the checks say of the model's own answer; never a rewrite of it."""


class Candidate(BaseModel):
    """An answer that did not stand, with why: a chunk's note no verified evidence supports, or the final
    stage's own answer when nothing confirmed it (listed first then, ``chunk_id`` None)."""

    chunk_id: int | None = None
    """The chunk whose note gave it; None: the final stage's answer, withheld."""
    answer: str
    confidence: float | None = None
    reason: str


class GraphOutput(BaseModel):
    """What a strategy graph returns."""

    answer: str
    rationale: str = ""
    confidence: float | None = None
    supported: bool | None = None
    """True exactly when ``verdict`` is ``supported``. False: the answer is not supported (NO INFORMATION,
    or an unconfirmed answer shown as the model gave it). None: the strategy does not check (baselines)."""
    verdict: Verdict | None = None
    """The checks' verdict on the model's own final answer (``nodes/finalize.py``): ``supported`` (the
    verified quotes in ``evidence`` state it, or code computed it from verified records), ``unconfirmed``
    (nothing confirms or refutes it: shown as given, flagged, with the quotes it rests on, when
    ``on_unconfirmed`` is "show"; else withheld and listed first among ``candidates``) or ``refuted``
    (the quotes contradict it: withheld, listed first among ``candidates``). None: there was no answer
    to check (the model found none) or the strategy does not check (baselines)."""
    verdict_reason: str = ""
    """Why the verdict is what it is, in one sentence (empty when ``verdict`` is None)."""
    support: SupportKind | None = None
    """How the answer stands on the verified notes (``nodes/finalize.py``): read in their quotes
    ("extractive"), worked out from them — a count, sum, comparison or verdict ("derived") — or not at all
    ("none": NO INFORMATION). None: the strategy does not check (baselines)."""
    candidates: list[Candidate] = Field(default_factory=list)
    evidence: list[Evidence] = Field(default_factory=list)
    chunks: list[ChunkReport] = Field(default_factory=list)
    stats: Stats = Field(default_factory=Stats)
    strategy: str = ""
    path: str = ""
    """Which path answered, and why (``auto`` and the strategies that plan a question, ``graphs/``):
    ``records`` (an aggregating question computed from records), ``plain`` (one call over the whole
    input), or the strategy's own reading; the reason follows in ``stats.notes``."""
