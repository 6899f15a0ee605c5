"""Pyramid-Align (LLM×MapReduce paper §5): a long-context training record from a short-context model.

START → chunk → leaves → plan_level ──Send per group──▶ synthesise → gather_level → plan_level
plan_level ──one root, or bounded──▶ ask → answer (the mapreduce graph) → record → END
ask ──no node gave a question──▶ END (``rejected_questions`` holds what the model wrote)

``leaves`` numbers every sentence and scores it by TF-IDF; each ``synthesise`` writes an upper node from
about three lower ones, citing the sentence ids it draws on, so importance propagates up and the most
important sentences are bold in the prompts above (``nodes/pyramid.py``). ``ask`` draws one node and one
of three question categories with a seeded generator; ``answer`` is the project's ``mapreduce`` graph as
a subgraph (it reads the state's question and document, and writes the answer contract's keys); ``record`` is ``(X, Q, M, A)`` with its provenance. ``longgraph synth`` runs it
over a corpus (``longgraph/synth.py``).
"""

from __future__ import annotations

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from longgraph.graphs.mapreduce import build_graph as build_mapreduce
from longgraph.graphs.wiring import add_loop, chain
from longgraph.llm import LLMProvider, default_provider
from longgraph.nodes.pyramid import (
    PyramidConstruction,
    ask_question,
    chunk_leaves,
    make_record,
    route_question,
    start_pyramid,
    synthesise,
)
from longgraph.nodes.runtime import node_factory
from longgraph.state.context import Context
from longgraph.state.pyramid import PyramidInput, PyramidOutput, PyramidState, SynthesisTask

LEVELS = PyramidConstruction()


def build_graph(
    llm: LLMProvider = default_provider,
    *,
    checkpointer: BaseCheckpointSaver[str] | None = None,
    name: str = "pyramid-align",
) -> CompiledStateGraph[PyramidState, Context, PyramidInput, PyramidOutput]:
    node = node_factory(llm)
    builder = StateGraph(
        PyramidState, context_schema=Context, input_schema=PyramidInput, output_schema=PyramidOutput
    )
    builder.add_node("chunk", node(chunk_leaves))
    builder.add_node("leaves", node(start_pyramid))
    levels = add_loop(
        builder, node, LEVELS, step=node(synthesise), task=SynthesisTask, done="ask", stem="level"
    )
    builder.add_node("ask", node(ask_question))
    # a subgraph: reads question and documents, writes the answer keys
    builder.add_node("answer", build_mapreduce(llm))
    builder.add_node("record", node(make_record, ends_run=True))
    chain(builder, START, "chunk", "leaves", levels)
    builder.add_conditional_edges("ask", route_question, {"answer": "answer", "no_question": END})
    chain(builder, "answer", "record", END)
    return builder.compile(name=name, checkpointer=checkpointer)


graph = build_graph()
