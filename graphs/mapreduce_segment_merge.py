"""LLM×MapReduce with the Segment+ merge as its collapse stage: a stage swapped by editing wiring only.

It is ``graphs/mapreduce.py``'s wiring with another reduction loop passed in: chunk, map, ground, reduce
and finalize are the same nodes; the collapse loop is the Segment+ merge loop (the same
``ReductionLoop``, combining with ``merge_batch``: quotes kept verbatim, reasoning merged). Both stages
read and write the one note type, so no adapter sits between them.

START → plan_records ──aggregates──▶ the records route (``graphs/wiring.py``) → finalize
plan_records ──otherwise──▶ chunk ──Send per chunk──▶ map_chunk → ground → plan_merge
plan_merge ──too long──Send per batch──▶ merge_batch → gather_merge → plan_merge
plan_merge ──fits──▶ reduce → finalize → END          plan_merge ──no evidence──▶ finalize
"""

from __future__ import annotations

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph

from longgraph.graphs.declare import CostShape, Strategy
from longgraph.graphs.mapreduce import build_graph as build_mapreduce
from longgraph.llm import LLMProvider, default_provider
from longgraph.nodes.combine import merge_batch
from longgraph.nodes.reduction import ReductionLoop
from longgraph.state.context import Context
from longgraph.state.graph_state import GraphInputState, GraphOutputState
from longgraph.state.mapreduce import MapReduceState

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
    return build_mapreduce(llm, checkpointer=checkpointer, name=name, collapse=MERGE, combine=merge_batch)


SEGMENT_MERGE = Strategy(
    "mapreduce-segment-merge",
    build_graph,
    "LLM×MapReduce with the Segment+ merge as its collapse stage",
    cost=CostShape("fan-out", "mapreduce", "map", plans=True),
)
STRATEGIES = (SEGMENT_MERGE,)

graph = SEGMENT_MERGE.build()
