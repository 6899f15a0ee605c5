"""The wiring every graph module repeats, written once: the answering graph's builder, a chain of edges,
the bounded loop's plan → fan-out → gather cycle, and the finalize tail.

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
from longgraph.nodes.runtime import NodeFactory
from longgraph.state.context import Context
from longgraph.state.graph_state import GraphInputState, GraphOutputState

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


def add_finalize(
    builder: Builder, node: NodeFactory, strategy: str, *, after: Sequence[str], grounded: bool = True
) -> None:
    """``finalize`` (``nodes/finalize.py``: the answer contract, every chunk accounted for) after each of
    ``after``, then END. ``grounded=False`` for the baselines, whose answers are not checked."""
    builder.add_node("finalize", node(finalize, strategy=strategy, grounded=grounded, ends_run=True))
    for source in after:
        builder.add_edge(source, "finalize")
    builder.add_edge("finalize", END)
