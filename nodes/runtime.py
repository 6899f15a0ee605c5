"""Turning stage functions into graph nodes that run under both ``invoke`` and ``ainvoke``.

Stages are written once, as coroutines (the LLM calls are async). LangGraph refuses to run an
async-only node under the sync API, so each node also gets a sync twin that runs the coroutine on a
fresh event loop in a helper thread (with the caller's context variables, so stream writers and the
runtime still work). The async path is the fast one: ``longgraph.ask`` and the CLI use it.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypedDict

from langchain_core.runnables import RunnableConfig, RunnableLambda
from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime, get_runtime

from longgraph.state.context import Context

StageFn = Callable[..., Coroutine[Any, Any, Any]]


def as_node(stage: StageFn, /, **injected: Any) -> RunnableLambda[Any, Any]:
    """Wrap ``stage(state, runtime, **injected)`` as a node usable from sync and async graph APIs."""
    name = getattr(stage, "__name__", "node")

    async def run_async(state: Any, config: RunnableConfig) -> Any:
        return await stage(state, get_runtime(Context), **injected)

    def run_sync(state: Any, config: RunnableConfig) -> Any:
        runtime = get_runtime(Context)
        caller = contextvars.copy_context()
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"longgraph-{name}") as pool:
            coroutine = stage(state, runtime, **injected)
            return pool.submit(caller.run, _run_coroutine, coroutine).result()

    # Not functools.wraps: RunnableLambda reads the signature (it must see ``config``), and wraps
    # would point it at the stage's own.
    run_async.__name__ = run_sync.__name__ = name
    run_async.__doc__ = run_sync.__doc__ = stage.__doc__
    return RunnableLambda(run_sync, afunc=run_async, name=name)


def _run_coroutine(coroutine: Coroutine[Any, Any, Any]) -> Any:
    return asyncio.run(coroutine)


class Progress(TypedDict, total=False):
    """A custom stream event: ``advance`` items of ``total`` done in ``stage``."""

    stage: str
    total: int
    advance: int
    message: str


def report_progress(stage: str, *, total: int, advance: int = 1, message: str = "") -> None:
    """Emit a progress event on the ``custom`` stream (a no-op when nobody streams)."""
    event: Progress = {"stage": stage, "total": total, "advance": advance}
    if message:
        event["message"] = message
    try:
        writer = get_stream_writer()
    except RuntimeError:  # called outside a graph run (e.g. a unit test of a stage)
        return
    writer(event)


ContextRuntime = Runtime[Context]
