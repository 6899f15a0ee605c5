"""Pyramid-Align's typed state (LLM×MapReduce paper §5, Appendices B–C): the pyramid and the record.

A pyramid is built once per document: its leaves are the document's chunks split into sentences, each
upper node synthesises about three nodes of the level below, and every sentence carries an id, so an
upper sentence can cite the lower sentences it draws on and inherit their importance (Appendix B). One
node, chosen by a seeded draw, is the context of one generated question; the project's ``mapreduce``
graph answers it over the whole document. The record is ``(X, Q, M, A)`` plus where it came from.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal, TypedDict

from pydantic import BaseModel, Field

from longgraph.state.graph_state import RunState
from longgraph.state.usage import Usage

Category = Literal["causal reasoning", "information extraction", "summarisation"]
CATEGORIES: tuple[Category, ...] = ("causal reasoning", "information extraction", "summarisation")
"""The paper's three question categories (Appendix C), in the order the seeded draw indexes them."""

QUESTION_STAGES: dict[Category, str] = {
    "causal reasoning": "question_causal",
    "information extraction": "question_extraction",
    "summarisation": "question_summary",
}
"""The prompt stage of each category (``prompts/pyramid.toml``)."""


class Sentence(BaseModel):
    """One sentence of a node: its id is unique in the pyramid, so upper sentences can cite it."""

    id: int
    text: str
    importance: float
    """A leaf's: the sum of its words' TF-IDF; an upper sentence's: the sum of what it cites."""
    cites: list[int] = Field(default_factory=list)
    """The lower sentences this one draws on (upper nodes only; ids that did not exist are dropped)."""


class PyramidNode(BaseModel):
    id: int
    level: int
    """0 for leaves (chunks), then one more per synthesis."""
    children: list[int] = Field(default_factory=list)
    chunk_id: int | None = None
    sentences: list[Sentence]

    @property
    def text(self) -> str:
        return " ".join(s.text for s in self.sentences)


class Pyramid(BaseModel):
    """The whole pyramid of one document, with what went wrong on the way."""

    nodes: list[PyramidNode] = Field(default_factory=list)
    levels: list[list[int]] = Field(default_factory=list)
    """Node ids per level, leaves first; the last level is the top (one root, unless bounded)."""
    importance: str = ""
    """How leaf importance was computed (named in every record)."""
    dropped_citations: int = 0
    """Cited sentence ids that were not among the synthesised nodes' sentences (dropped, counted)."""
    construction: str = ""
    """Why construction ended ("one root", or the bound that stopped it)."""
    notes: list[str] = Field(default_factory=list)

    def node(self, node_id: int) -> PyramidNode:
        return self.nodes[node_id]

    def sentence_index(self) -> dict[int, Sentence]:
        return {s.id: s for n in self.nodes for s in n.sentences}

    @property
    def next_sentence_id(self) -> int:
        return 1 + max((s.id for n in self.nodes for s in n.sentences), default=-1)


class SynthesisTask(TypedDict):
    """One upper node to write: the lower nodes it synthesises, rendered with ids and bolding."""

    index: int
    members: list[int]
    text: str
    round: int
    total: int


class Synthesised(BaseModel):
    """The fan-in of one synthesis: the sentences written (ids not yet assigned) or why none were."""

    index: int
    members: list[int]
    sentences: list[tuple[str, list[int]]] = Field(default_factory=list)
    error: str | None = None


class Record(BaseModel):
    """One training record: ``(X, Q, M, A)`` and its provenance (the dataset's JSONL line)."""

    id: str
    """The document's key: a hash of its text (a rerun skips documents already written)."""
    source: str
    X: str
    Q: str
    M: list[dict[str, Any]]
    """The answer's intermediate outputs: each chunk's map result (extracted information, rationale,
    answer, confidence, status) in chunk order, as the mapreduce graph reported it."""
    A: str
    category: Category
    source_node: int
    source_level: int
    levels: int
    model: str
    prompt_versions: dict[str, str]
    seed: int
    importance: str
    dropped_citations: int
    supported: bool | None = None
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    notes: list[str] = Field(default_factory=list)


class RejectedQuestion(BaseModel):
    """A node the model wrote no question from (a statement, the format line): what it wrote, and why
    that is not a question. A record built on a statement would teach nothing."""

    node: int
    error: str
    raw: str


class PyramidState(RunState, total=False):
    """The pyramid graph's state (the shared run state: chunks, usage, decisions, the loop's keys)."""

    seed: int
    source: str
    pyramid: Pyramid
    layer: list[int]
    synthesised: Annotated[list[Synthesised], operator.add]
    category: Category
    source_node: int
    rejected_questions: list[RejectedQuestion]
    record: Record


class PyramidInput(TypedDict, total=False):
    """What the pyramid graph takes: one document (or several read as one), a seed, a source name."""

    document: str
    documents: list[dict[str, Any]]
    seed: int
    source: str


class PyramidOutput(TypedDict, total=False):
    record: Record
    """Absent when no node gave a question (``rejected_questions`` says what the model wrote)."""
    pyramid: Pyramid
    rejected_questions: list[RejectedQuestion]
    usage: Usage
    """Every call the run made (a record carries its own; a run without one is paid for too)."""
