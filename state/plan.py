"""Question decomposition: one question per document, then the answers combined in code.

Measured with SmolLM2-135M on the Loong-style suite (``evals/results/loong-synth/README.md``): asked to
"group the cases by verdict", it answered "The verdicts are:" even when shown the verdict sentence
alone, yet asked "What was the verdict in Rummesmirk v. Gaersil?" it answered right. An aggregation
question (group, order, compare, follow a chain) asks every document the same small question and then
does something a program does better than a small model: grouping, sorting, comparing numbers,
following links. A :class:`QuestionPlan` says what to ask each document and how to combine the
answers; the combination (``nodes/aggregate.py``) is code, so its result is exact given the
per-document answers, and each of those is a grounded note (``nodes/grounding.py``).
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field, field_validator

from longgraph.state.outputs import StructuredOutput, register_schema

Combine = Literal["none", "list", "group", "order", "highest", "lowest", "between", "chain"]
"""How per-document answers make the answer: ``none`` (one place answers: no decomposition), ``list``
(each document's answer), ``group`` (documents grouped by their answer, under ``labels`` when given),
``order`` (by the number each gives), ``highest``/``lowest`` (the extremum), ``between`` (numbers in the
question's range), ``chain`` (from the document the question names, follow the document each answer
names)."""

DOCUMENT = "{document}"
"""Where a per-document question names its document."""

NUMBERED: frozenset[str] = frozenset({"order", "highest", "lowest", "between"})
"""Combinations that read a number from each document's answer."""


@register_schema
class QuestionPlan(StructuredOutput):
    """How to answer a question over several documents (the ``decompose`` call's output, or given)."""

    per_document_question: str = Field(
        default="",
        description="The question to ask each document, with {document} where its name goes; empty: no plan.",
        json_schema_extra={"maxLength": 200},
    )
    combine: Combine = "none"
    labels: list[str] = Field(
        default_factory=list,
        description="For group: the groups the question names.",
        json_schema_extra={"maxItems": 8},
    )

    TEXT_LABELS: ClassVar[dict[str, str]] = {
        "per-document question": "per_document_question",
        "per document question": "per_document_question",
        "combine": "combine",
        "labels": "labels",
    }

    @field_validator("labels", mode="before")
    @classmethod
    def _split_labels(cls, value: Any) -> Any:
        """The text protocol gives labels as one line ("convicted, acquitted or dismissed")."""
        if isinstance(value, str):
            return [p.strip() for p in re.split(r",|\bor\b|\band\b|;", value) if p.strip()]
        return value

    @field_validator("combine", mode="before")
    @classmethod
    def _combine_word(cls, value: Any) -> Any:
        return value.strip().strip("\"'.").lower() if isinstance(value, str) else value

    @property
    def decomposes(self) -> bool:
        return self.combine != "none" and bool(self.per_document_question.strip())

    def question_for(self, document: str) -> str:
        """The per-document question about ``document`` (its title)."""
        return self.per_document_question.replace(DOCUMENT, document)


class DocumentValue(BaseModel):
    """One document's answer to the per-document question, as the combination uses it."""

    doc_index: int
    title: str
    answer: str | None = None
    """The answer of the document's strongest verified note; None: the document gave none."""
    sources: list[int] = Field(default_factory=list)
    """Chunks of the note the answer comes from."""
    number: float | None = None
    label: str | None = None
    link: int | None = None
    """``chain``: the document the answer names."""
    reason: str | None = None
    """Why the document takes no part in the answer (no answer, no number, no label, no link)."""


class Aggregation(BaseModel):
    """What the combination did: the plan, each document's value and the answer it computed."""

    plan: QuestionPlan
    values: list[DocumentValue]
    answer: str
    explanation: str
    used: list[int] = Field(default_factory=list)
    """Documents whose answers the combination weighed (every one compared for an extremum)."""
    named: list[int] = Field(default_factory=list)
    """Documents the answer names (the extremum alone): their notes are the answer's evidence."""
