"""The one-line convenience: ``longgraph.ask(question, document)``.

It does what a user would otherwise wire by hand: resolves the endpoint (starting the embedded model
server when none is configured), fills in the model name and tokenizer, runs the strategy graph
asynchronously with progress events, optionally checkpointed so that an interrupted run resumes,
and returns the validated :class:`~longgraph.state.contract.GraphOutput`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, cast

from langchain_core.runnables import RunnableConfig

from longgraph.endpoint import resolve_context
from longgraph.errors import ConfigurationError
from longgraph.llm import LLMProvider, default_provider
from longgraph.nodes.runtime import Progress
from longgraph.state.context import Context, coerce_context
from longgraph.state.contract import DocumentIn, GraphOutput, parse_input
from longgraph.strategies import build_strategy

log = logging.getLogger(__name__)
ProgressCallback = Callable[[Progress], None]


def prepare_context(
    context: Context | dict[str, Any] | None,
    settings: dict[str, Any],
    *,
    start_embedded: bool = True,
    on_notice: Callable[[str], None] | None = None,
) -> Context:
    """Merge settings into a context and resolve the endpoint, starting the embedded server if asked."""
    ctx = coerce_context(context)
    if settings:
        ctx = coerce_context({**{k: v for k, v in vars(ctx).items()}, **settings})
    if not ctx.base_urls and start_embedded:
        from longgraph.embedded import ensure_running

        notice = on_notice or log.info
        notice("no endpoint configured: using the embedded model server (vLLM on CPU, SmolLM2-135M-Instruct)")
        info, started = ensure_running()
        if started:
            notice(f"started the embedded model server at {info.base_url}")
        ctx = ctx.replace(
            base_url=info.base_url, model=ctx.model or info.model,
            tokenizer=ctx.tokenizer or (str(info.tokenizer_path) if info.tokenizer_path else None),
        )  # fmt: skip
    return resolve_context(ctx)


def run_config(context: Context, thread_id: str | None = None) -> RunnableConfig:
    """LangGraph run config: bounded parallelism and a recursion limit that fits the collapse bound."""
    config: RunnableConfig = {
        "max_concurrency": max(1, context.max_concurrency) * max(1, len(context.base_urls)),
        "recursion_limit": 16 + 4 * context.max_collapse_rounds,
    }
    if thread_id is not None:
        config["configurable"] = {"thread_id": thread_id}
    return config


async def aask(
    question: str,
    document: str | None = None,
    *,
    documents: Sequence[DocumentIn | Mapping[str, Any]] | None = None,
    strategy: str = "mapreduce",
    context: Context | dict[str, Any] | None = None,
    llm: LLMProvider | None = None,
    checkpoint_path: str | Path | None = None,
    thread_id: str | None = None,
    on_progress: ProgressCallback | None = None,
    start_embedded: bool = True,
    **settings: Any,
) -> GraphOutput:
    """Answer ``question`` about ``document`` (or ``documents``) with ``strategy``.

    ``settings`` are context fields (``base_url=...``, ``context_window=...``). With
    ``checkpoint_path`` and ``thread_id`` the run is checkpointed to SQLite after every step; calling
    again with the same thread resumes it, redoing only the calls that had not finished.
    """
    graph_input = parse_input(
        {
            "question": question,
            "document": document,
            "documents": list(documents) if documents is not None else None,
        }
    ).model_dump(exclude_none=True)
    ctx = prepare_context(context, settings, start_embedded=start_embedded and llm is None)
    if checkpoint_path is not None and thread_id is None:
        raise ConfigurationError("a checkpointed run needs a thread_id (to resume it later)")
    async with AsyncExitStack() as stack:
        checkpointer = None
        if checkpoint_path is not None:
            from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

            checkpointer = await stack.enter_async_context(
                AsyncSqliteSaver.from_conn_string(str(checkpoint_path))
            )
        graph = build_strategy(strategy, llm or default_provider, checkpointer=checkpointer)
        config = run_config(ctx, thread_id)
        run_input: dict[str, Any] | None = graph_input
        if checkpointer is not None:
            snapshot = await graph.aget_state(config)
            if snapshot.next:  # an interrupted run: resume it instead of starting over
                log.info("resuming thread %s at %s", thread_id, ", ".join(snapshot.next))
                run_input = None
        result: dict[str, Any] = {}
        stream = graph.astream(run_input, config, context=ctx, stream_mode=["custom", "values"])
        async for mode, payload in stream:
            if mode == "custom" and on_progress is not None:
                on_progress(cast(Progress, payload))
            elif mode == "values":
                result = cast(dict[str, Any], payload)
    return GraphOutput.model_validate(result)


def ask(question: str, document: str | None = None, **kwargs: Any) -> GraphOutput:
    """Synchronous :func:`aask` (not from inside a running event loop: await ``aask`` there)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(aask(question, document, **kwargs))
    raise ConfigurationError(
        "longgraph.ask() was called inside a running event loop: use `await longgraph.aask(...)`"
    )
