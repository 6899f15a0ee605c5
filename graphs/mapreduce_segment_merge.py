"""LLM×MapReduce with the Segment+ merge as its collapse stage: a stage swapped by editing wiring only.

Compare with ``graphs/mapreduce.py``: chunk, map, ground, reduce and finalize are the same nodes; the
collapse loop is the Segment+ merge loop (the same ``ReductionLoop``, combining with ``merge_batch``:
quotes kept verbatim, reasoning merged). Both stages read and write the one note type, so no
adapter sits between them.

START → chunk → plan_question ──Send per chunk──▶ map_chunk → ground → plan_merge
plan_question ──beside the reads──▶ find_passages → ground
ground ──Send per passage worth a second reading──▶ reread_chunk → ground
ground ──question decomposed──▶ aggregate → finalize (per-document answers combined in code)
plan_merge ──too long──Send per batch──▶ merge_batch → gather_merge → plan_merge
plan_merge ──fits──▶ reduce → finalize → END          plan_merge ──no evidence──▶ finalize
"""

from __future__ import annotations

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, StateGraph
from langgraph.graph.state import CompiledStateGraph

from longgraph.graphs.declare import CostShape, Strategy
from longgraph.graphs.reading import add_grounded_reading
from longgraph.llm import LLMProvider, default_provider
from longgraph.nodes.aggregate import aggregate
from longgraph.nodes.answer import answer_from_notes
from longgraph.nodes.combine import merge_batch
from longgraph.nodes.finalize import finalize
from longgraph.nodes.reduction import ReductionLoop
from longgraph.nodes.runtime import node_factory
from longgraph.state.context import Context
from longgraph.state.graph_state import GraphInputState, GraphOutputState
from longgraph.state.mapreduce import MapReduceState
from longgraph.state.tasks import GroupTask

MERGE = ReductionLoop(
    name="merge",
    combine_node="merge_batch",
    combine_prompts="segment_plus",
    combine_stage="merge",
    final_prompts="mapreduce",
    final_stage="reduce",
    keeps_quotes=True,
)


def build_graph(
    llm: LLMProvider = default_provider,
    *,
    checkpointer: BaseCheckpointSaver[str] | None = None,
    name: str = "mapreduce-segment-merge",
) -> CompiledStateGraph[MapReduceState, Context, GraphInputState, GraphOutputState]:
    node = node_factory(llm)
    builder = StateGraph(
        MapReduceState, context_schema=Context, input_schema=GraphInputState, output_schema=GraphOutputState
    )
    add_grounded_reading(
        builder,
        node,
        prompts="mapreduce",
        stage="map",
        then="plan_merge",
        per_document="aggregate",
        read_early="unless planned",
    )
    builder.add_node("plan_merge", node(MERGE.plan))
    builder.add_node(
        "merge_batch", node(merge_batch, prompts="segment_plus", stage="merge"), input_schema=GroupTask
    )
    builder.add_node("gather_merge", node(MERGE.gather))
    builder.add_node("reduce", node(answer_from_notes, prompts="mapreduce", stage="reduce"))
    builder.add_node("aggregate", node(aggregate))
    builder.add_node("finalize", node(finalize, strategy=name))

    builder.add_conditional_edges(
        "plan_merge", MERGE.route, {"merge_batch": "merge_batch", "done": "reduce", "empty": "finalize"}
    )
    builder.add_edge("merge_batch", "gather_merge")
    builder.add_edge("gather_merge", "plan_merge")
    builder.add_edge("reduce", "finalize")
    builder.add_edge("aggregate", "finalize")
    builder.add_edge("finalize", END)
    return builder.compile(name=name, checkpointer=checkpointer)


SEGMENT_MERGE = Strategy(
    "mapreduce-segment-merge",
    build_graph,
    "LLM×MapReduce with the Segment+ merge as its collapse stage",
    cost=CostShape("fan-out", "mapreduce", "map", plans=True),
)
STRATEGIES = (SEGMENT_MERGE,)

graph = SEGMENT_MERGE.build()
