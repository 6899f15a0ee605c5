"""The grounded reading every note-taking strategy starts with, wired once (mapreduce, its Segment+
merge ablation and Segment+ used to wire it three times).

chunk ──Send per chunk──▶ read → ground ──done──▶ ``then``
ground ──Send per passage worth a second reading──▶ reread_chunk → ground

The caller wires what leads to ``chunk`` (the records route's ``plan_records``: ``graphs/wiring.py``).

``chunk`` starts each chunk's read as soon as the chunk is final (``nodes/early_calls.py``); ``ground``
checks every reading against its chunk (``nodes/read.py``, by ``nodes/checks``) and sends a chunk
that answered without quoting its text, but holds a sentence bearing on the question, to be read again
(that passage alone; compact protocol only).
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import StateGraph

from longgraph.nodes.prepare import chunk_input
from longgraph.nodes.read import REREAD, each_chunk, ground, read_chunk, rereads_to
from longgraph.nodes.runtime import NodeFactory
from longgraph.state.tasks import ReadTask


def add_grounded_reading(
    builder: StateGraph[Any, Any, Any, Any],
    node: NodeFactory,
    *,
    prompts: str,
    stage: str,
    then: str,
    chunk: str = "chunk",
    read: str = "map_chunk",
    **chunking: Any,
) -> None:
    """Add the reading nodes and edges to ``builder``, ``chunk`` and ``read`` named as the strategy's
    paper names them; ``chunking``: options of :func:`chunk_input` (``size``, ``read_early``)."""
    builder.add_node(chunk, node(chunk_input, prompts=prompts, stage=stage, **chunking))
    builder.add_node(read, node(read_chunk, prompts=prompts, stage=stage), input_schema=ReadTask)
    builder.add_node("ground", node(ground))
    builder.add_node(
        "reread_chunk", node(read_chunk, prompts=prompts, stage=stage, label=REREAD), input_schema=ReadTask
    )
    builder.add_conditional_edges(chunk, each_chunk(read), [read])
    builder.add_edge(read, "ground")
    builder.add_conditional_edges(
        "ground", rereads_to("reread_chunk"), {"reread_chunk": "reread_chunk", "done": then}
    )
    builder.add_edge("reread_chunk", "ground")
