"""The map stage: one call per chunk, in parallel, each producing the structured information protocol."""

from __future__ import annotations

from typing import Any

from langgraph.types import Send

from longgraph.llm import LLMProvider, call_structured
from longgraph.nodes.runtime import ContextRuntime, report_progress
from longgraph.prompts import prompts_for
from longgraph.state.mapreduce import MappedChunk, MapTask
from longgraph.state.outputs import MapOutput


def fan_out_map(state: dict[str, Any]) -> list[Send]:
    """One ``Send`` per chunk; ``max_concurrency`` (the LLM client's semaphore) bounds what runs at once."""
    chunks = state["input_chunks"]
    return [
        Send("map_chunk", MapTask(chunk=c, question=state["question"], total=len(chunks))) for c in chunks
    ]


async def map_chunk(
    task: MapTask, runtime: ContextRuntime, *, llm: LLMProvider, strategy: str = "mapreduce"
) -> dict[str, Any]:
    """Extract information, rationale, answer and calibrated confidence from one chunk.

    A parse failure (after the bounded retries) is recorded with the raw answer; a transport failure
    raises :class:`~longgraph.errors.EndpointError`, so a checkpointed run can be resumed and redo only
    the chunks that did not finish.
    """
    context = runtime.context
    chunk = task["chunk"]
    result = await call_structured(
        llm(context), prompts_for(strategy, context.prompt_variant), "map", task=context.task, schema=MapOutput,
        variables={"context": chunk.text, "question": task["question"]}, parse_retries=context.parse_retries,
        work=f"map of chunk {chunk.id} (and any map call not finished)",
    )  # fmt: skip
    report_progress("map", total=task["total"])
    outcome = MappedChunk(
        chunk_id=chunk.id, output=result.value, error=result.error, raw=None if result.value else result.raw
    )
    return {"mapped": [outcome], "usage": result.usage.as_dict()}
