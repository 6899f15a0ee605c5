"""Standard decoding, the baseline: the whole input if it fits the window, else its longest prefix.

START → truncate → answer → finalize → END

``truncate`` chunks the input with the one chunker and keeps what one call can read (cutting the last
chunk at the exact token where the window runs out, and saying where); ``answer`` asks once;
``finalize`` reports every chunk, those past the cut as ``filtered`` with the cut as the reason.
"""

from __future__ import annotations

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import START
from langgraph.graph.state import CompiledStateGraph

from longgraph.graphs.declare import CostShape, Strategy
from longgraph.graphs.wiring import add_finalize, answering_builder, chain
from longgraph.llm import LLMProvider, default_provider
from longgraph.nodes.runtime import node_factory
from longgraph.nodes.single_pass import answer_once
from longgraph.nodes.truncate import truncate_input
from longgraph.state.baseline import BaselineState
from longgraph.state.context import Context
from longgraph.state.graph_state import GraphInputState, GraphOutputState

NAME = "truncate"


def build_graph(
    llm: LLMProvider = default_provider, *, checkpointer: BaseCheckpointSaver[str] | None = None
) -> CompiledStateGraph[BaselineState, Context, GraphInputState, GraphOutputState]:
    node = node_factory(llm)
    builder = answering_builder(BaselineState)
    builder.add_node("truncate", node(truncate_input))
    builder.add_node("answer", node(answer_once))
    chain(builder, START, "truncate", "answer")
    add_finalize(builder, node, NAME, after=("answer",), grounded=False)
    return builder.compile(name=NAME, checkpointer=checkpointer)


TRUNCATE = Strategy(
    "truncate",
    build_graph,
    "Baseline: the whole input in one call if it fits, else its prefix that fits (cut recorded)",
    cost=CostShape("single-call", "baseline", "answer"),
)
STRATEGIES = (TRUNCATE,)

graph = TRUNCATE.build()
