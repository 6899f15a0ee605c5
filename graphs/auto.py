"""Auto, the default of ``longgraph ask``: one plain call when the input fits, else mapreduce's path.

START → fits_whole ──fits──▶ truncate → answer → finalize_plain → END (the whole input, one call)
fits_whole ──otherwise──▶ plan_records → … mapreduce's graph, records route included … → finalize → END

A plain call beats divide-and-conquer when the input fits the window (the RLM paper's own caveat);
``fits_whole`` counts the input against what the baseline's prompt leaves for text
(``nodes/fit.py``). Both ways are wired here as nodes (not subgraphs), so a served run streams every
stage's progress. The result's ``path`` is ``plain``, ``records`` or ``mapreduce``; ``stats.notes``
says why.
"""

from __future__ import annotations

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import START
from langgraph.graph.state import CompiledStateGraph

from longgraph.graphs.declare import CostShape, Strategy
from longgraph.graphs.mapreduce import add_mapreduce
from longgraph.graphs.wiring import add_finalize, answering_builder, chain
from longgraph.llm import LLMProvider, default_provider
from longgraph.nodes.fit import fits_whole, route_fit
from longgraph.nodes.runtime import node_factory
from longgraph.nodes.single_pass import answer_once
from longgraph.nodes.truncate import truncate_input
from longgraph.state.baseline import BaselineState
from longgraph.state.context import Context
from longgraph.state.graph_state import GraphInputState, GraphOutputState

NAME = "auto"


def build_graph(
    llm: LLMProvider = default_provider, *, checkpointer: BaseCheckpointSaver[str] | None = None
) -> CompiledStateGraph[BaselineState, Context, GraphInputState, GraphOutputState]:
    node = node_factory(llm)
    builder = answering_builder(BaselineState)
    builder.add_node("fits_whole", node(fits_whole))
    builder.add_node("truncate", node(truncate_input))
    builder.add_node("answer", node(answer_once))
    planned = add_mapreduce(builder, node, name=NAME)
    builder.add_edge(START, "fits_whole")
    builder.add_conditional_edges("fits_whole", route_fit, {"plain": "truncate", "planned": planned})
    chain(builder, "truncate", "answer")
    add_finalize(builder, node, NAME, after=("answer",), grounded=False, path="plain", name="finalize_plain")
    return builder.compile(name=NAME, checkpointer=checkpointer)


AUTO = Strategy(
    NAME,
    build_graph,
    "Auto: one plain call when the input fits the window; else an aggregating question by records, any "
    "other by mapreduce",
    cost=CostShape("fan-out", "mapreduce", "map", plans=True, graph="mapreduce"),
)
STRATEGIES = (AUTO,)

graph = AUTO.build()
