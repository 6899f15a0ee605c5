"""Structured outputs of every LLM call, as pydantic models.

Each model doubles as the JSON schema sent for constrained decoding (vLLM ``json_schema``) and as the
target of the tolerant text parser (``TEXT_LABELS`` maps the paper's labels to fields). Outputs that
describe a piece of text say how they fill the one note (``note_draft()``); prompt files name the
schema of each stage (``schema = "ChunkAnswer"``), looked up in :data:`SCHEMAS`.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from longgraph.state.notes import NoteDraft

NO_INFORMATION = "[NO INFORMATION]"


_NO_INFORMATION_ANSWERS = frozenset(
    {
        "[NO INFORMATION]", "NO INFORMATION", "", "NONE", "[NONE]", "N/A", "NO ANSWER", "UNKNOWN",
        "NO RELEVANT INFORMATION", "NOT MENTIONED", "NOTHING", "NO INFORMATION PROVIDED",
    }
)  # fmt: skip


def is_no_information(answer: str) -> bool:
    """Decide NO INFORMATION on the parsed Answer field alone (never on a substring elsewhere).

    Besides the paper's literal, the few whole answers that say the same ("NONE", "No relevant
    information.", "N/A") count: small models write them when told to answer NONE.
    """
    normalised = " ".join(answer.strip().strip(".").strip().strip('"').upper().split())
    return normalised in _NO_INFORMATION_ANSWERS or normalised.startswith("[NO INFORMATION]")


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

    def note_draft(self) -> NoteDraft:
        extracted = self.extracted_information.strip()
        return NoteDraft(
            answer=self.answer.strip(),
            quotes=[extracted] if extracted and extracted.lower() not in ("none", "n/a") else [],
            reasoning=self.rationale.strip(),
            model_confidence=self.confidence_score,
            no_information=not self.has_information,
        )


class ChunkAnswer(StructuredOutput):
    """The compact protocol: one answer, first and only, in words copied from the text.

    Measured with SmolLM2-135M (the embedded model) on needle haystacks: the paper's four fields made it
    write ~147 tokens of extraction and rationale before an answer that was then wrong; asked only for
    the sentence that answers, it copied the planted sentence from the chunk that holds it in 20–23 of
    24 cases at ~25 tokens per call. Its self-reported confidence was 0.5 for every chunk, holder or
    not, so this protocol asks for none: confidence comes from the grounding check alone.
    """

    answer: str = Field(
        description=f"The sentence of the text that answers, or {NO_INFORMATION}.",
        json_schema_extra={"maxLength": 240},
    )

    TEXT_LABELS: ClassVar[dict[str, str]] = {"answer": "answer", "final answer": "answer"}

    def note_draft(self) -> NoteDraft:
        return NoteDraft(answer=self.answer.strip(), no_information=is_no_information(self.answer))


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

    def note_draft(self) -> NoteDraft:
        quotes = [q.strip() for q in self.evidence if q.strip()]
        reasoning = self.reasoning.strip()
        empty = not reasoning or is_no_information(reasoning)
        return NoteDraft(quotes=quotes, reasoning=reasoning, no_information=not quotes and empty)


class FilterDecision(StructuredOutput):
    """Segment+ filter: keep or remove a note."""

    decision: Literal["Keep", "Remove"]

    TEXT_LABELS: ClassVar[dict[str, str]] = {"decision": "decision", "label": "decision"}


class MergedReasoning(StructuredOutput):
    """Segment+ merge: the batch's reasoning parts merged into one or two sentences."""

    reasoning: str

    TEXT_LABELS: ClassVar[dict[str, str]] = {"reasoning": "reasoning"}

    def note_draft(self) -> NoteDraft:
        return NoteDraft(reasoning=self.reasoning.strip())


class FreeTextNote(StructuredOutput):
    """Segment+ "no structure" ablation: one free-text note per segment (and per merged batch).

    One field, so it still travels the one structured path (constrained decoding or a ``Note:`` label).
    """

    note: str = Field(description="Everything in the text that helps answer the question, in free text.")

    TEXT_LABELS: ClassVar[dict[str, str]] = {"note": "note", "merged note": "note"}

    def note_draft(self) -> NoteDraft:
        text = self.note.strip()
        return NoteDraft(reasoning=text, structured=False, no_information=is_no_information(text))


class DirectAnswer(StructuredOutput):
    """The baselines' one call (truncate, RAG): the answer alone, as standard decoding gives it.

    One field, so it still travels the one structured path; no rationale before it, which a small
    model would otherwise fill until its output budget runs out, never reaching the answer.
    """

    answer: str = Field(description=f"The answer, or {NO_INFORMATION}.")

    TEXT_LABELS: ClassVar[dict[str, str]] = {"answer": "answer", "final answer": "answer"}


SCHEMAS: dict[str, type[StructuredOutput]] = {
    model.__name__: model
    for model in (
        MapOutput,
        ChunkAnswer,
        ReduceOutput,
        SegmentNote,
        FilterDecision,
        MergedReasoning,
        FreeTextNote,
        DirectAnswer,
    )
}
"""Output schemas by name, as prompt files refer to them. Strategies add theirs with :func:`register_schema`."""


def register_schema(model: type[StructuredOutput]) -> type[StructuredOutput]:
    """Make ``model`` nameable from a prompt file (usable as a class decorator)."""
    SCHEMAS[model.__name__] = model
    return model


def answer_of(output: StructuredOutput) -> str:
    """The answer field of a final-stage output (every final schema has one)."""
    return str(getattr(output, "answer", "")).strip()


def rationale_of(output: StructuredOutput) -> str:
    return str(getattr(output, "rationale", "")).strip()
