"""Structured outputs of every LLM call, as pydantic models.

Each model doubles as the JSON schema sent for constrained decoding (vLLM ``json_schema``) and as the
target of the tolerant text parser (``TEXT_LABELS`` maps the paper's labels to fields). Outputs that
describe a piece of text say how they fill the one note (``note_draft()``); prompt files name the
schema of each stage (``schema = "ChunkAnswer"``), looked up in :data:`SCHEMAS`.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from longgraph.state.notes import NoteDraft

NO_INFORMATION = "[NO INFORMATION]"


_NO_INFORMATION_ANSWERS = frozenset(
    {
        "[NO INFORMATION]",
        "NO INFORMATION",
        "",
        "NONE",
        "[NONE]",
        "N/A",
        "NO ANSWER",
        "UNKNOWN",
        "NO RELEVANT INFORMATION",
        "NOT MENTIONED",
        "NOTHING",
        "NO INFORMATION PROVIDED",
    }
)


def is_no_information(answer: str) -> bool:
    """Decide NO INFORMATION on the parsed Answer field alone (never on a substring elsewhere).

    Besides the paper's literal, the few whole answers that say the same ("NONE", "No relevant
    information.", "N/A") count: small models write them when told to answer NONE.
    """
    normalised = " ".join(answer.strip().strip(".").strip().strip('"').upper().split())
    return normalised in _NO_INFORMATION_ANSWERS or normalised.startswith("[NO INFORMATION]")


def clamp_score(value: object, high: float) -> object:
    """A score's before-validator: a number outside ``[0, high]`` is clamped into it (a model's 6 of 5
    is its 5); anything else is left for validation to refuse."""
    if isinstance(value, int | float):
        return min(high, max(0.0, float(value)))
    return value


class StructuredOutput(BaseModel):
    """Base of LLM outputs: labels of the text protocol, for the tolerant parser.

    A schema whose text protocol is not ``Label: value`` lines (ToM's numbered outline) gives its own
    ``TEXT_FORMAT`` (what text mode asks for) and ``parse_text`` (its reader).
    """

    model_config = ConfigDict(extra="ignore")
    TEXT_LABELS: ClassVar[dict[str, str]] = {}
    TEXT_FORMAT: ClassVar[str] = ""

    @classmethod
    def parse_text(cls, text: str) -> dict[str, Any] | None:
        """Read this schema's own text protocol; None: use the labelled-lines reader."""
        return None


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
        return clamp_score(value, 5.0)

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


ClaimVerdict = Literal["stated", "not stated", "contradicted"]


class CheckedClaim(StructuredOutput):
    """One claim a proposed answer makes in answer to the question, and what the sentences say of it."""

    claim: str = Field(json_schema_extra={"maxLength": 200})
    verdict: ClaimVerdict


_CLAIM_LINE = re.compile(
    r"^\s*(?:[-*]|\d+[.)])?\s*(.+?)\s*[|:=>-]+\s*(stated|not stated|contradicted)\W*$", re.I
)


class AnswerCheck(StructuredOutput):
    """The verification call (``prompts/verify.toml``, ``nodes/finalize.py: verifier_for``), as RAGAS's faithfulness reads an answer: the claims
    the proposed answer makes in answer to the question, each with a verdict against the sentences it
    rests on. An answer that makes no claim (an apology, "the text does not say") answers nothing."""

    claims: list[CheckedClaim] = Field(json_schema_extra={"maxItems": 6})
    """Required: a reply without the list is no verdict (unconfirmed), not an answer that claims nothing."""
    reason: str = Field(default="", json_schema_extra={"maxLength": 300})

    TEXT_FORMAT: ClassVar[str] = (
        "One line per claim, in the form:\n- <claim> | stated\n- <claim> | not stated\n"
        "- <claim> | contradicted\nNo line at all if the answer claims nothing."
    )

    @classmethod
    def parse_text(cls, text: str) -> dict[str, Any] | None:
        claims = [
            {"claim": m.group(1), "verdict": m.group(2).lower()}
            for line in text.splitlines()
            if (m := _CLAIM_LINE.match(line))
        ]
        return {"claims": claims} if claims else None

    @property
    def outcome(self) -> Literal["supported", "unconfirmed", "refuted", "empty"]:
        """``refuted`` when the sentences contradict a claim, ``supported`` when they state every one,
        ``empty`` when there is none, else ``unconfirmed``."""
        verdicts = {c.verdict for c in self.claims}
        if "contradicted" in verdicts:
            return "refuted"
        if not verdicts:
            return "empty"
        return "supported" if verdicts == {"stated"} else "unconfirmed"


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

    def note_draft(self) -> NoteDraft:
        return NoteDraft(answer=self.answer.strip(), no_information=is_no_information(self.answer))


class ParsedSection(BaseModel):
    """One numbered section of a chunk's outline (ToM's Hierarchical Semantic Parsing)."""

    model_config = ConfigDict(extra="ignore")
    number: str = Field(description='"1", "1.1", "1.1.1"...', json_schema_extra={"maxLength": 12})
    title: str = Field(json_schema_extra={"maxLength": 100})
    keywords: list[str] = Field(default_factory=list, json_schema_extra={"maxItems": 5})
    summary: str = Field(default="", json_schema_extra={"maxLength": 400})
    text: str = Field(
        default="",
        description="The section's original text (its opening words suffice: the chunk's own text is kept).",
        json_schema_extra={"maxLength": 600},
    )


_HEADING_NUMBER = re.compile(r"\[?(\d+(?:\.\d+)*)\.?\]?")
_OUTLINE_FIELD = re.compile(
    r"^\s*(?:\*{1,2}\s*)?(keywords|summary|original text)\s*(?:\*{1,2}\s*)?:\s*(?:\*{1,2}\s*)?(.*)$", re.I
)
"""Every run of spaces is matched one way: a model's output line is read in time linear in its length
(a pattern with optional spaces on both sides of optional stars splits a run of spaces every way
before it fails)."""


def outline_heading(line: str) -> tuple[str, str] | None:
    """(number, title) of a heading of the paper's outline, ``***1.2 [Title]***`` (up to three stars a
    side, the number and the brackets optional), or None. Read step by step, not by one pattern: the
    pattern it replaces took 3.1 s on a heading of 240 spaces (0.21 s at 120, about 16 times longer each
    time the spaces double), so a model that wrote a long run of spaces between stars could hang ToM's
    tree building."""
    if line and not line.strip("*"):  # a line of stars: a heading with no title, as the pattern read it
        return ("", "") if len(line) <= 6 else None
    lead, trail = len(line) - len(line.lstrip("*")), len(line) - len(line.rstrip("*"))
    if not lead or not trail or lead > 3 or trail > 3:
        return None
    inner = line[lead : len(line) - trail].strip()
    if "*" in inner or "\n" in inner:
        return None
    number = _HEADING_NUMBER.match(inner)
    if number is not None:
        inner = inner[number.end() :].strip()
    inner = inner.removeprefix("[").removesuffix("]")
    if "]" in inner:
        return None
    return (number.group(1) if number else ""), inner.strip()


class DocSections(StructuredOutput):
    """ToM's Hierarchical Semantic Parsing of one chunk (paper Figure 12): an overall title, keywords
    and summary, and numbered sections (at most 5 main sections, 4 levels), leaves with their text."""

    title: str = Field(json_schema_extra={"maxLength": 120})
    keywords: list[str] = Field(default_factory=list, json_schema_extra={"maxItems": 5})
    summary: str = Field(default="", json_schema_extra={"maxLength": 500})
    sections: list[ParsedSection] = Field(default_factory=list, json_schema_extra={"maxItems": 12})

    TEXT_FORMAT: ClassVar[str] = (
        "Strictly follow the structure below:\n***[General Title]***\n**Keywords**: [Keyword1; Keyword2; Keyword3]\n"
        "**Summary**: [Summary Content]\n***1. [First Title]***\n**Keywords**: [Keyword1; Keyword2; Keyword3]\n"
        "**Summary**: [Summary Content]\n**Original Text**: [If no lower-level titles, include the full text]\n"
        "***1.1 [Secondary Title]***\n**Keywords**: [Keyword1; Keyword2; Keyword3]\n**Summary**: [Summary Content]\n"
        "**Original Text**: [Include full text if no lower levels]\n..."
    )

    @classmethod
    def parse_text(cls, text: str) -> dict[str, Any] | None:
        """The paper's format: ``***1.2 Title***`` headings, then ``**Keywords**:``/``**Summary**:``/
        ``**Original Text**:`` fields (a field's value runs to the next heading or field). The first
        unnumbered heading is the general title. Returns None when no heading is found."""
        blocks: list[dict[str, Any]] = []
        current: dict[str, Any] | None = None
        field: str | None = None
        for line in text.splitlines():
            stripped = line.strip()
            if not stripped:
                continue
            heading = outline_heading(stripped)
            if heading and not _OUTLINE_FIELD.match(stripped):
                current = {
                    "number": heading[0],
                    "title": heading[1],
                    "keywords": [],
                    "summary": "",
                    "text": "",
                }
                blocks.append(current)
                field = None
                continue
            match = _OUTLINE_FIELD.match(stripped)
            if match and current is not None:
                field = {"keywords": "keywords", "summary": "summary", "original text": "text"}[
                    match.group(1).lower()
                ]
                value = match.group(2).strip().strip("[]")
                current[field] = (
                    [k.strip() for k in re.split(r"[;,]", value) if k.strip()]
                    if field == "keywords"
                    else value
                )
            elif current is not None and field in ("summary", "text"):
                current[field] = f"{current[field]}\n{stripped}".strip()
        if not blocks:
            return None
        general = blocks[0] if not blocks[0]["number"] else {"title": "", "keywords": [], "summary": ""}
        sections = [b for b in blocks if b["number"]]
        return {
            "title": general["title"],
            "keywords": general["keywords"],
            "summary": general["summary"],
            "sections": sections,
        }


class ClusterSummary(StructuredOutput):
    """ToM's bottom-up aggregation: one parent node summarising a cluster of nodes."""

    title: str = Field(json_schema_extra={"maxLength": 120})
    keywords: list[str] = Field(default_factory=list, json_schema_extra={"maxItems": 5})
    summary: str = Field(default="", json_schema_extra={"maxLength": 500})

    TEXT_LABELS: ClassVar[dict[str, str]] = {"title": "title", "keywords": "keywords", "summary": "summary"}


class TreeAnswerPlain(StructuredOutput):
    """ToM's "no confidence" ablation: Map and Reduce without a confidence score (and what
    :class:`TreeAnswer` adds its score to)."""

    key_info: str = Field(json_schema_extra={"maxLength": 500})
    reasoning_process: str = Field(json_schema_extra={"maxLength": 400})
    answer: str = Field(json_schema_extra={"maxLength": 120})

    TEXT_LABELS: ClassVar[dict[str, str]] = {
        "key_info": "key_info",
        "reasoning_process": "reasoning_process",
        "answer": "answer",
    }
    """The paper's own labels first (shown in text mode); "key info" and the like are read too."""

    def note_draft(self) -> NoteDraft:
        key_info, answer = self.key_info.strip(), self.answer.strip()
        return NoteDraft(
            answer=answer,
            quotes=[key_info] if key_info and key_info.lower() != "none" else [],
            reasoning=self.reasoning_process.strip(),
            no_information=is_no_information(answer)
            or answer.lower().startswith(("unknown", "insufficient")),
        )


class TreeAnswer(TreeAnswerPlain):
    """ToM's Map and Reduce output (paper Figures 10, 11): confidence out of 10, parsed and used."""

    confidence_score: float = Field(ge=0, le=10)

    TEXT_LABELS: ClassVar[dict[str, str]] = {
        **TreeAnswerPlain.TEXT_LABELS,
        "confidence_score": "confidence_score",
    }

    @field_validator("confidence_score", mode="before")
    @classmethod
    def _clamp(cls, value: object) -> object:
        return clamp_score(value, 10.0)

    def note_draft(self) -> NoteDraft:
        return super().note_draft().model_copy(update={"model_confidence": self.confidence_score / 2})


_BULLET = re.compile(r"^\s*(?:[*\-\u2022\u25cf]|\d{1,3}[.)])\s+(.*\S)\s*$")


class InformationPoints(StructuredOutput):
    """PECAN's graph construction (paper Table A1): the Information Points of a batch of nodes.

    The paper asks for bullet points; under constrained decoding they come back as a JSON list, in
    text mode as ``* point`` lines (``-``, ``•`` and ``1.`` bullets read too); a point repeated is kept
    once (SmolLM2 looping repeats one, e.g. "The World Trade Organization (WTO)" four times on a SQuAD
    16K document). An answer without a bullet stays unreadable: read a line at a time, a refusal
    ("I cannot summarise this.") would become a point. Each point becomes one node of the next level."""

    points: list[str] = Field(
        min_length=1, json_schema_extra={"maxItems": 24, "items": {"type": "string", "maxLength": 300}}
    )
    """At least one: an answer with no point is unreadable (retried, then the batch's failure), not an
    empty summary."""

    TEXT_FORMAT: ClassVar[str] = (
        "Generate in the format of:\n* summary point\n* summary point\n* summary point\n....."
    )

    @classmethod
    def parse_text(cls, text: str) -> dict[str, Any] | None:
        points = [m.group(1).strip("* ").strip() for line in text.splitlines() if (m := _BULLET.match(line))]
        unique: dict[str, str] = {}
        for point in points:
            if point:
                unique.setdefault(point.casefold(), point)
        return {"points": list(unique.values())} if unique else None


class Sufficiency(StructuredOutput):
    """PECAN's dynamic progress control (paper Table A2, first turn): can the question be answered
    from the information gathered so far? One word, constrained to Yes or No."""

    answer: Literal["Yes", "No"]

    TEXT_FORMAT: ClassVar[str] = 'Response "Yes" or "No" in one word. Do not provide any explanation.'

    @classmethod
    def parse_text(cls, text: str) -> dict[str, Any] | None:
        word = re.match(r"\W*(yes|no)\b", text.strip(), re.IGNORECASE)
        return {"answer": word.group(1).capitalize()} if word else None


_LIST_MARK = re.compile(r"(?:[*\-\u2022]|\d{1,3}[.)])\s*")
_CITED_IDS = re.compile(r"[\d,\s]*")


def cited_line(line: str) -> tuple[str, list[int]] | None:
    """(sentence, cited ids) of a line "1. The sentence. [3, 7]" (a list mark optional), or None. Read
    step by step, not by one pattern: the pattern it replaces, with optional spaces around an optional
    list mark and a lazy sentence, ran for minutes on a long line of spaces a model may write."""
    body = line.strip()
    opened = body.rfind("[")
    if not body.endswith("]") or opened < 0 or not _CITED_IDS.fullmatch(body, opened + 1, len(body) - 1):
        return None
    sentence = body[:opened].strip()
    mark = _LIST_MARK.match(sentence)
    sentence = sentence[mark.end() :] if mark else sentence
    return (sentence, [int(n) for n in re.findall(r"\d+", body[opened:])]) if sentence else None


class CitedSentence(BaseModel):
    text: str = Field(json_schema_extra={"maxLength": 300})
    cites: list[int] = Field(json_schema_extra={"maxItems": 8})
    """Ids of the lower sentences this sentence draws on (the ``[id]`` in front of each)."""


class PyramidSynthesis(StructuredOutput):
    """Pyramid-Align's upper node (paper Appendix B): sentences that synthesise the lower nodes, each
    citing the ids of the lower sentences it draws on (their importance propagates up through them).
    Text protocol: one sentence a line, its cited ids at the end in brackets."""

    sentences: list[CitedSentence] = Field(min_length=1, json_schema_extra={"maxItems": 12})

    TEXT_FORMAT: ClassVar[str] = (
        "Write one sentence a line, each ending with the ids of the sentences it draws on, e.g.\n"
        "The committee approved the budget in March. [3, 7]"
    )

    @classmethod
    def parse_text(cls, text: str) -> dict[str, Any] | None:
        sentences = []
        for line in text.splitlines():
            cited = cited_line(line)
            if cited:
                sentences.append({"text": cited[0], "cites": cited[1]})
        return {"sentences": sentences} if sentences else None


_INTERROGATIVE = re.compile(
    r"(?:what|why|how|when|where|who|whom|whose|which|in what|in which)\b", re.IGNORECASE
)


class GeneratedQuestion(StructuredOutput):
    """Pyramid-Align's question generation (paper Figure 8): one question about the given text."""

    question: str = Field(min_length=5, json_schema_extra={"maxLength": 300})

    TEXT_FORMAT: ClassVar[str] = "Write the question alone, on one line."

    @field_validator("question")
    @classmethod
    def _is_a_question(cls, value: str) -> str:
        """SmolLM2 wrote a sentence of the text, or the format line, as its "question" in 5 of 6 nodes:
        a record built on a statement teaches nothing, so one that neither ends with "?" nor opens with a
        wh-word is refused (a JSON ``pattern`` would constrain the decoder instead, but vLLM's xgrammar
        refuses it)."""
        value = value.strip()
        if value.endswith("?"):
            return value
        # "Why do founders get flattered ... the company." is a question with the wrong stop (3 of 18
        # SmolLM2 answers): one that opens with an interrogative word gets its question mark.
        if _INTERROGATIVE.match(value):
            return value.rstrip(" .!;:,") + "?"
        raise ValueError(f"not a question (no question mark at the end): {value[:80]!r}")

    @classmethod
    def parse_text(cls, text: str) -> dict[str, Any] | None:
        lines = [line.strip().strip("*#").strip() for line in text.splitlines() if line.strip()]
        asked = [line for line in lines if line.endswith("?")]
        chosen = (asked or lines or [""])[0]
        chosen = re.sub(r"^(?:question|q)\s*[:.]\s*", "", chosen, flags=re.IGNORECASE)
        return {"question": chosen} if len(chosen) >= 5 else None


SCHEMAS: dict[str, type[StructuredOutput]] = {
    model.__name__: model
    for model in (
        MapOutput,
        ChunkAnswer,
        ReduceOutput,
        SegmentNote,
        FilterDecision,
        AnswerCheck,
        MergedReasoning,
        FreeTextNote,
        DirectAnswer,
        DocSections,
        ClusterSummary,
        TreeAnswer,
        TreeAnswerPlain,
        InformationPoints,
        Sufficiency,
        PyramidSynthesis,
        GeneratedQuestion,
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
