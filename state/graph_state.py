"""The state every strategy graph shares: its input keys, its output keys, and the run bookkeeping.

Strategy states extend :class:`RunState` with their own working keys; graphs declare
``input_schema=GraphInputState`` and ``output_schema=GraphOutputState``, so every graph has the same
contract (:mod:`longgraph.state.contract`) at its edges.

The shared stages agree on these keys: the read stage appends to ``reads`` (one per chunk, any
order), the grounding stage turns them into ``outcomes`` (one per chunk) and ``notes`` (the evidence
in play), the bounded reduction loop (``nodes/reduction.py``) works on ``notes`` with ``loop_tasks`` (a round's tasks),
``combined``, ``rounds`` and ``previous_tokens``, and ``finalize`` reads ``notes``, ``outcomes``,
``filtered`` and ``answer``. Fan-in fields use ``operator.add``; a gather node clears one with
:func:`cleared` (returning ``[]`` appends nothing).
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal, TypedDict, cast

from langgraph.types import Overwrite

from longgraph.state.contract import Chunk, ChunkReport, DocumentIn, Evidence, SupportKind
from longgraph.state.notes import ChunkOutcome, ChunkRead, Note
from longgraph.state.records import RecordsRead
from longgraph.state.tasks import Combined, ReadTask
from longgraph.state.usage import Usage


class GraphInputState(TypedDict, total=False):
    """The input keys (validated in the first node, so errors name the problem)."""

    question: str
    document: str | None
    documents: list[DocumentIn] | None
    plan: dict[str, Any] | None
    """A :class:`~longgraph.state.records.RecordPlan` to follow instead of planning (``nodes/records/``)."""


class GraphOutputState(TypedDict, total=False):
    """The output keys: the shared contract (:class:`longgraph.state.contract.GraphOutput`)."""

    answer: str
    rationale: str
    confidence: float | None
    supported: bool | None
    support: SupportKind | None
    verdict: Literal["supported", "unconfirmed", "refuted"] | None
    verdict_reason: str
    candidates: list[dict[str, Any]]
    evidence: list[Evidence]
    chunks: list[ChunkReport]
    stats: dict[str, Any]
    strategy: str
    path: str


class RunState(GraphInputState, GraphOutputState, total=False):
    """Input, output, and what every run keeps track of on the way."""

    input_chunks: list[Chunk]
    started_at: float
    filtered: Annotated[list[tuple[int, str]], operator.add]
    """(chunk id, reason) for chunks whose information was set aside on purpose."""
    unread: list[int]
    """Chunks no stage read (ToM's query-aware compression set them aside before any call)."""
    usage: Annotated[Usage, operator.add]
    decisions: Annotated[list[str], operator.add]
    """Notes for the user about choices the run made (fallbacks, trims): they end in ``stats.notes``."""
    reads: Annotated[list[ChunkRead], operator.add]
    """Fan-in of the read stage: one per chunk, in completion order."""
    outcomes: list[ChunkOutcome]
    """One per chunk, in chunk order, after grounding."""
    rereads: list[ReadTask]
    """Passages the ground stage sends to be read a second time (``nodes/read.py``)."""
    notes: list[Note]
    """The notes in play: grounded notes, then what the reduction loop made of them."""
    loop_tasks: list[Any]
    """The tasks of a bounded loop's next round (``nodes/loop.py``); empty when it is done."""
    combined: Annotated[list[Combined], operator.add]
    rounds: int
    """Rounds of the reduction loop done (collapse or merge); ``stats.collapse_rounds``."""
    previous_tokens: int | None
    build_usage: Annotated[Usage, operator.add]
    """What building a per-document structure cost (ToM's tree, PECAN's graph); none when cached."""
    build_seconds: float
    built_from_cache: bool
    build_started: float
    """When the structure's build started (``time.time()``), for ``build_seconds``."""
    structure: dict[str, Any]
    """What per-document structure was searched and how (``stats.structure``)."""
    record_plan: dict[str, Any] | None
    """The :class:`~longgraph.state.records.RecordPlan` followed (``nodes/records/``); None: the question
    keeps its strategy's own path."""
    plan_problem: str | None
    """Why the question did not take the records path (no plan, or one that cannot be carried out)."""
    record_reads: Annotated[list[RecordsRead], operator.add]
    """Fan-in of the records extraction: one per chunk."""
    fits: bool
    """``auto``: whether the question and documents fit one plain call (``nodes/fit.py``)."""
    computation: dict[str, Any]
    """The records path's result (:class:`~longgraph.state.records.Computation`, ``nodes/records/``): the
    answer computed in code from checked records."""


def cleared() -> list[Any]:
    """An empty fan-in: the value that *replaces* what an ``operator.add`` key holds, where ``[]`` would
    append nothing. It is LangGraph's ``Overwrite([])``, typed as the list it replaces so that a node
    returning it still returns its state's type (checked by mypy, key by key)."""
    return cast(list[Any], Overwrite([]))
