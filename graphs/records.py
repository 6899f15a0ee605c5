"""Records: a question that aggregates, answered by code over typed records with verbatim quotes.

START → plan_records ──plan──▶ chunk ──Send per chunk──▶ extract_records → compute_records → finalize → END
plan_records ──no plan (said why)──▶ fallback (the mapreduce graph) → say_path → END

``plan_records`` writes a typed plan (fields, key, one operation; ``state/records.py``); every chunk's
records are extracted with a quote each; ``compute_records`` drops a record whose quote is not in its
chunk or whose values do not parse, reconciles the rest, and computes the answer with SQL our code
compiles from the plan (``nodes/records/``). ``finalize`` settles the computed value: ``supported``
with every record's quote as evidence, NO INFORMATION when nothing was computed. A question the plan
does not mark as aggregating, or a plan that cannot be carried out, goes to mapreduce, and the result
says which path ran and why (``stats.notes``).
"""

from __future__ import annotations

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START
from langgraph.graph.state import CompiledStateGraph

from longgraph.graphs.declare import CostShape, Strategy
from longgraph.graphs.mapreduce import build_graph as build_mapreduce
from longgraph.graphs.wiring import add_finalize, answering_builder, chain
from longgraph.llm import LLMProvider, default_provider
from longgraph.nodes.prepare import chunk_input
from longgraph.nodes.records.stages import (
    FIELDS_RESERVE,
    PROMPTS,
    compute_records,
    each_chunk_records,
    extract_records,
    plan_records,
    route_plan,
    say_path,
)
from longgraph.nodes.runtime import node_factory
from longgraph.state.context import Context
from longgraph.state.graph_state import GraphInputState, GraphOutputState
from longgraph.state.records_state import RecordsState, RecordsTask

NAME = "records"


def build_graph(
    llm: LLMProvider = default_provider, *, checkpointer: BaseCheckpointSaver[str] | None = None
) -> CompiledStateGraph[RecordsState, Context, GraphInputState, GraphOutputState]:
    node = node_factory(llm)
    builder = answering_builder(RecordsState)
    builder.add_node("plan_records", node(plan_records))
    builder.add_node(
        "chunk",
        node(chunk_input, prompts=PROMPTS, stage="extract", also_fits=("extract",), reserve=FIELDS_RESERVE),
    )
    builder.add_node("extract_records", node(extract_records), input_schema=RecordsTask)
    builder.add_node("compute_records", node(compute_records))
    builder.add_node("fallback", build_mapreduce(llm))  # a subgraph: reads the question, writes the answer
    builder.add_node("say_path", node(say_path))
    builder.add_edge(START, "plan_records")
    builder.add_conditional_edges("plan_records", route_plan, ["chunk", "fallback"])
    builder.add_conditional_edges("chunk", each_chunk_records, ["extract_records"])
    chain(builder, "extract_records", "compute_records")
    add_finalize(builder, node, NAME, after=("compute_records",))
    chain(builder, "fallback", "say_path", END)
    return builder.compile(name=NAME, checkpointer=checkpointer)


RECORDS = Strategy(
    NAME,
    build_graph,
    "Records: typed records with quotes from every chunk, the answer computed by code from a typed plan",
    cost=CostShape("fan-out", PROMPTS, "extract", plans=True),
)
STRATEGIES = (RECORDS,)

graph = RECORDS.build()
