"""The chunk node: validate the input, size the chunks to the window, split the documents."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from longgraph.endpoint import resolve_tokenizer_spec
from longgraph.errors import InputError
from longgraph.nodes.budget import text_budget
from longgraph.nodes.chunking import split_into_chunks
from longgraph.nodes.runtime import ContextRuntime, report_progress
from longgraph.prompts import prompts_for
from longgraph.state.contract import Chunk, GraphInput, parse_input
from longgraph.state.outputs import StructuredOutput
from longgraph.tokenizer import get_tokenizer


def chunk_budget(
    graph_input: GraphInput,
    runtime: ContextRuntime,
    *,
    strategy: str,
    stage: str,
    schema: type[StructuredOutput],
) -> tuple[int, list[str]]:
    """The chunk size: ``chunk_size`` when set and it fits, else what the window leaves."""
    context = runtime.context
    tokenizer = get_tokenizer(resolve_tokenizer_spec(context))
    fits = text_budget(
        prompts_for(strategy, context.prompt_variant), stage, context=context, question=graph_input.question, schema=schema,
        tokenizer=tokenizer,
    )  # fmt: skip
    decisions: list[str] = []
    if context.chunk_size is None:
        return fits, decisions
    if context.chunk_size > fits:
        decisions.append(
            f"chunk_size {context.chunk_size} does not fit the {context.context_window}-token window with "
            f"the prompt and output: used {fits}"
        )
        return fits, decisions
    return context.chunk_size, decisions


def _chunk_documents_blocking(
    raw_state: dict[str, Any],
    runtime: ContextRuntime,
    *,
    strategy: str,
    stage: str,
    schema: type[StructuredOutput],
    size: int | None = None,
) -> dict[str, Any]:
    """Shared by every strategy: returns ``input_chunks``, ``started_at`` and any ``decisions``."""
    started = time.time()
    graph_input = parse_input(
        {k: raw_state.get(k) for k in ("question", "document", "documents") if raw_state.get(k) is not None}
    )
    documents = graph_input.as_documents()
    if not any(doc.text.strip() for doc in documents):
        raise InputError("the document has no text (empty or whitespace only)")
    budget, decisions = chunk_budget(graph_input, runtime, strategy=strategy, stage=stage, schema=schema)
    decisions += [
        f"document {i} ({doc.title or 'untitled'}) has no text: nothing to read"
        for i, doc in enumerate(documents)
        if not doc.text.strip()
    ]
    if size is not None and size < budget:
        budget = size
    tokenizer = get_tokenizer(resolve_tokenizer_spec(runtime.context))
    chunks: list[Chunk] = split_into_chunks(documents, budget, tokenizer)
    report_progress(
        "chunk", total=len(chunks), advance=len(chunks), message=f"{len(chunks)} chunks of ≤{budget} tokens"
    )
    return {
        "input_chunks": chunks,
        "started_at": started,
        "decisions": decisions,
        "question": graph_input.question,
    }


async def chunk_documents(
    raw_state: dict[str, Any],
    runtime: ContextRuntime,
    *,
    strategy: str,
    stage: str,
    schema: type[StructuredOutput],
    size: int | None = None,
) -> dict[str, Any]:
    """Shared by every strategy: returns ``input_chunks``, ``started_at``, ``question`` and ``decisions``.

    Runs in a worker thread: tokenizing millions of tokens (and loading a vocabulary file) would stall
    a LangGraph server's event loop, which `langgraph dev` refuses as a blocking call.
    """
    return await asyncio.to_thread(
        _chunk_documents_blocking,
        raw_state,
        runtime,
        strategy=strategy,
        stage=stage,
        schema=schema,
        size=size,
    )


async def chunk_input(
    state: dict[str, Any],
    runtime: ContextRuntime,
    *,
    strategy: str = "mapreduce",
    stage: str = "map",
    schema: type[StructuredOutput] | None = None,
) -> dict[str, Any]:
    """The chunk node: chunks sized for ``stage`` of ``strategy`` (the map stage by default)."""
    from longgraph.state.outputs import MapOutput

    return await chunk_documents(state, runtime, strategy=strategy, stage=stage, schema=schema or MapOutput)
