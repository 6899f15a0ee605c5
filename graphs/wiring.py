"""The wiring every graph module repeats, written once: the answering graph's builder, a chain of edges,
the bounded loop's plan → fan-out → gather cycle, the records route, and the finalize tail.

These only add nodes and edges; what a node does stays in ``nodes/``. A graph module stays a screen of
wiring that reads top to bottom in the order the run goes.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from itertools import pairwise
from typing import Any

from langchain_core.runnables import Runnable
from langgraph.graph import END, StateGraph
from langgraph.typing import StateT

from longgraph.nodes.finalize import finalize
from longgraph.nodes.loop import BoundedLoop
from longgraph.nodes.prepare import chunk_input
from longgraph.nodes.records.stages import (
    FIELDS_RESERVE,
    compute_records,
    each_chunk_records,
    extract_records,
    plan_records,
    route_plan,
)
from longgraph.nodes.records.stages import PROMPTS as RECORDS
from longgraph.nodes.runtime import NodeFactory
from longgraph.state.context import Context
from longgraph.state.graph_state import GraphInputState, GraphOutputState
from longgraph.state.tasks import RecordsTask

Builder = StateGraph[Any, Any, Any, Any]


def answering_builder(state: type[StateT]) -> StateGraph[StateT, Context, GraphInputState, GraphOutputState]:
    """A builder for a graph that answers a question: ``state`` inside, the answer contract's input and
    output schemas outside (``state/graph_state.py``), run settings as the typed :class:`Context`."""
    return StateGraph(
        state, context_schema=Context, input_schema=GraphInputState, output_schema=GraphOutputState
    )


def chain(builder: Builder, *names: str) -> None:
    """An edge from each name to the next: ``chain(b, START, "a", "b", END)``."""
    for source, target in pairwise(names):
        builder.add_edge(source, target)


def add_loop(
    builder: Builder,
    node: NodeFactory,
    loop: BoundedLoop,
    *,
    step: Runnable[Any, Any],
    task: type[Any],
    done: str,
    empty: str | None = None,
    stem: str | None = None,
    beside: Sequence[str] = (),
) -> str:
    """Add ``plan_<stem> ──Send per task──▶ <loop.combine_node> → gather_<stem> → plan_<stem>`` and
    return the plan node's name (the loop's entry).

    ``step`` is the combine node (one task of a round, input ``task``); the plan routes to ``done`` when it
    schedules nothing and to ``empty`` (default ``done``) when nothing is left to work on. ``stem``
    names the plan and gather nodes (default the loop's name). ``beside``: nodes the caller added that
    the plan may also send to and that feed the same gather (PECAN's vector prefetch).
    """
    stem = stem or loop.name
    plan, gather = f"plan_{stem}", f"gather_{stem}"
    builder.add_node(plan, node(loop.plan))
    builder.add_node(loop.combine_node, step, input_schema=task)
    builder.add_node(gather, node(loop.gather))
    routes: dict[Hashable, str] = {loop.combine_node: loop.combine_node, "done": done, "empty": empty or done}
    routes.update({name: name for name in beside})
    builder.add_conditional_edges(plan, loop.route, routes)
    for source in (loop.combine_node, *beside):
        builder.add_edge(source, gather)
    builder.add_edge(gather, plan)
    return plan


def add_records_route(builder: Builder, node: NodeFactory, *, otherwise: str, always: bool = False) -> str:
    """The records route in front of a strategy's own path; returns its entry (``plan_records``):

    plan_records ──aggregates──▶ chunk_records ──Send per chunk──▶ extract_records → compute_records
    plan_records ──otherwise──▶ ``otherwise``

    ``compute_records`` must be among ``add_finalize``'s ``after``. ``always``: plan whatever the run's
    ``plan_records`` setting (the ``records`` strategy)."""
    builder.add_node("plan_records", node(plan_records, always=always))
    chunking = {"also_fits": ("extract",), "reserve": FIELDS_RESERVE}
    builder.add_node("chunk_records", node(chunk_input, prompts=RECORDS, stage="extract", **chunking))
    builder.add_node("extract_records", node(extract_records), input_schema=RecordsTask)
    builder.add_node("compute_records", node(compute_records))
    builder.add_conditional_edges(
        "plan_records", route_plan, {"records": "chunk_records", "otherwise": otherwise}
    )
    builder.add_conditional_edges("chunk_records", each_chunk_records, ["extract_records"])
    builder.add_edge("extract_records", "compute_records")
    return "plan_records"


def add_finalize(
    builder: Builder,
    node: NodeFactory,
    strategy: str,
    *,
    after: Sequence[str],
    grounded: bool = True,
    path: str | None = None,
    name: str = "finalize",
) -> None:
    """``finalize`` (``nodes/finalize.py``: the answer contract, every chunk accounted for) after each of
    ``after``, then END. ``grounded=False`` for the baselines, whose answers are not checked; ``path``:
    what the result's ``path`` calls the strategy's own reading (default: the strategy's name);
    ``name``: the node's (a graph with two ways to the end, ``auto``, has two)."""
    own = path or strategy
    builder.add_node(name, node(finalize, strategy=strategy, grounded=grounded, path=own, ends_run=True))
    for source in after:
        builder.add_edge(source, name)
    builder.add_edge(name, END)
