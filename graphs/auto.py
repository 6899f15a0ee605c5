"""Auto, the default of ``longgraph ask``: one plain call when the input fits, else the planned path.

START → fits_whole ──fits──▶ plain (the truncate graph: the whole input in one call) → say_path → END
fits_whole ──otherwise──▶ planned (the mapreduce graph: an aggregating question by its records route,
                          any other by map-reduce) → say_path → END

A plain call beats divide-and-conquer when the input fits the window (the RLM paper's own caveat);
``fits_whole`` counts the input against what the baseline's prompt leaves for text
(``nodes/fit.py``). The result's ``path`` is ``plain``, ``records`` or ``mapreduce``, and the first of
``stats.notes`` says why.
"""

from __future__ import annotations

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START
from langgraph.graph.state import CompiledStateGraph

from longgraph.graphs.declare import CostShape, Strategy
from longgraph.graphs.mapreduce import build_graph as build_mapreduce
from longgraph.graphs.truncate import build_graph as build_plain
from longgraph.graphs.wiring import answering_builder, chain
from longgraph.llm import LLMProvider, default_provider
from longgraph.nodes.fit import fits_whole, route_fit, say_path
from longgraph.nodes.runtime import node_factory
from longgraph.state.context import Context
from longgraph.state.graph_state import GraphInputState, GraphOutputState, RunState

NAME = "auto"


def build_graph(
    llm: LLMProvider = default_provider, *, checkpointer: BaseCheckpointSaver[str] | None = None
) -> CompiledStateGraph[RunState, Context, GraphInputState, GraphOutputState]:
    node = node_factory(llm)
    builder = answering_builder(RunState)
    builder.add_node("fits_whole", node(fits_whole))
    builder.add_node("plain", build_plain(llm))  # subgraphs: read the question, write the answer
    builder.add_node("planned", build_mapreduce(llm))
    builder.add_node("say_path", node(say_path))
    builder.add_edge(START, "fits_whole")
    builder.add_conditional_edges("fits_whole", route_fit, ["plain", "planned"])
    chain(builder, "plain", "say_path")
    chain(builder, "planned", "say_path")
    builder.add_edge("say_path", END)
    return builder.compile(name=NAME, checkpointer=checkpointer)


AUTO = Strategy(
    NAME,
    build_graph,
    "Auto: one plain call when the input fits the window; else an aggregating question by records, any other by mapreduce",
    cost=CostShape("fan-out", "mapreduce", "map", plans=True, graph="mapreduce"),
)
STRATEGIES = (AUTO,)

graph = AUTO.build()
