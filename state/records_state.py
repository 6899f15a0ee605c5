"""Internal state of the records graph (``graphs/records.py``): the shared run state, the plan, each
chunk's extraction and the computation (:mod:`longgraph.state.records`); the computation is the run state's ``computation``."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from longgraph.state.contract import Chunk
from longgraph.state.graph_state import RunState
from longgraph.state.records import RecordsRead


class RecordsState(RunState, total=False):
    """The records path."""

    record_plan: dict[str, Any] | None
    """The :class:`~longgraph.state.records.RecordPlan` followed; None: the question goes elsewhere."""
    plan_problem: str | None
    """Why the question did not go the records path (the plan did not parse, or cannot be carried out)."""
    record_reads: Annotated[list[RecordsRead], operator.add]


class RecordsTask(TypedDict):
    """One chunk's extraction call: the chunk, and the question ending with the plan's fields."""

    chunk: Chunk
    question: str
    total: int
