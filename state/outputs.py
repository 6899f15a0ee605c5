"""Structured outputs of every LLM call, as pydantic models.

Each model doubles as the JSON schema sent for constrained decoding (vLLM ``json_schema``) and as the
target of the tolerant text parser (``TEXT_LABELS`` maps the paper's labels to fields).
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

NO_INFORMATION = "[NO INFORMATION]"


def is_no_information(answer: str) -> bool:
    """Decide NO INFORMATION on the parsed Answer field alone (never on a substring elsewhere)."""
    normalised = answer.strip().strip(".").strip().strip('"').upper()
    return normalised in ("[NO INFORMATION]", "NO INFORMATION", "") or normalised.startswith(
        "[NO INFORMATION]"
    )


class StructuredOutput(BaseModel):
    """Base of LLM outputs: labels of the text protocol, for the tolerant parser."""

    model_config = ConfigDict(extra="ignore")
    TEXT_LABELS: ClassVar[dict[str, str]] = {}


class MapOutput(StructuredOutput):
    """The structured information protocol (LLM×MapReduce §3.3): map and collapse both produce it."""

    # ``maxLength`` goes to the constrained decoder only (not to validation): it guarantees that the
    # JSON closes within ``max_output_tokens`` instead of a small model rambling until the cut.
    extracted_information: str = Field(
        description="Key facts from the text relevant to the question.", json_schema_extra={"maxLength": 600}
    )
    rationale: str = Field(
        description="How the extracted information leads to the answer.", json_schema_extra={"maxLength": 400}
    )
    answer: str = Field(
        description=f"The intermediate answer, or {NO_INFORMATION}.", json_schema_extra={"maxLength": 300}
    )
    confidence_score: float = Field(
        ge=0, le=5, description="Confidence out of 5, per the calibration rubric."
    )

    TEXT_LABELS: ClassVar[dict[str, str]] = {
        "extracted information": "extracted_information",
        "rationale": "rationale",
        "answer": "answer",
        "confidence score": "confidence_score",
        "confidence": "confidence_score",
    }

    @field_validator("confidence_score", mode="before")
    @classmethod
    def _clamp(cls, value: object) -> object:
        if isinstance(value, int | float):
            return min(5.0, max(0.0, float(value)))
        return value

    @property
    def has_information(self) -> bool:
        return not is_no_information(self.answer)


class ReduceOutput(StructuredOutput):
    """The final answer of the reduce stage."""

    rationale: str = Field(description="How the information, weighed by confidence, leads to the answer.")
    answer: str = Field(description="The final answer.")

    TEXT_LABELS: ClassVar[dict[str, str]] = {"rationale": "rationale", "answer": "answer"}


class SegmentNote(StructuredOutput):
    """A Segment+ note: Evidence quotes original sentences, Reasoning compresses partial answers."""

    evidence: list[str] = Field(
        description="Sentences quoted verbatim from the text that bear on the question.",
        json_schema_extra={"maxItems": 4, "items": {"type": "string", "maxLength": 300}},
    )
    reasoning: str = Field(
        description="Entities, events and partial answers, compressed.", json_schema_extra={"maxLength": 400}
    )

    TEXT_LABELS: ClassVar[dict[str, str]] = {"evidence": "evidence", "reasoning": "reasoning"}


class FilterDecision(StructuredOutput):
    """Segment+ filter: keep or remove a note."""

    decision: Literal["Keep", "Remove"]

    TEXT_LABELS: ClassVar[dict[str, str]] = {"decision": "decision", "label": "decision"}


class MergedReasoning(StructuredOutput):
    """Segment+ merge: the batch's reasoning parts merged into one or two sentences."""

    reasoning: str

    TEXT_LABELS: ClassVar[dict[str, str]] = {"reasoning": "reasoning"}


class FreeTextNote(StructuredOutput):
    """Segment+ "no structure" ablation: one free-text note per segment (and per merged batch).

    One field, so it still travels the one structured path (constrained decoding or a ``Note:`` label).
    """

    note: str = Field(description="Everything in the text that helps answer the question, in free text.")

    TEXT_LABELS: ClassVar[dict[str, str]] = {"note": "note", "merged note": "note"}


class DirectAnswer(StructuredOutput):
    """The baselines' one call (truncate, RAG): the answer alone, as standard decoding gives it.

    One field, so it still travels the one structured path; no rationale before it, which a small
    model would otherwise fill until its output budget runs out, never reaching the answer.
    """

    answer: str = Field(description=f"The answer, or {NO_INFORMATION}.")

    TEXT_LABELS: ClassVar[dict[str, str]] = {"answer": "answer", "final answer": "answer"}
