"""Turning stage functions into graph nodes: the run's kit injected, both sync and async graph APIs.

A stage is a coroutine ``stage(state, kit, **options)``: it reads its typed state and the run's
:class:`~longgraph.nodes.kit.RunKit` (resolved configuration, tokenizer, prompts, budgets, model
client). :func:`node_factory` binds a graph's model provider once, so a graph file reads
``node(read_chunk, prompts="mapreduce", stage="map")`` and tests inject a fake provider by building
the graph with it.

LangGraph refuses to run an async-only node under the sync API, so each node also gets a sync twin
that runs the coroutine on a fresh event loop in a helper thread (with the caller's context
variables, so stream writers and the runtime still work). The async path is the fast one:
``longgraph.ask`` and the CLI use it.

The node is LangGraph's own wrapper for function nodes (``RunnableCallable``, what ``add_node`` makes
of a plain function) given both twins, untraced like LangGraph's own (the task is the traced run).
LangChain's ``RunnableLambda`` did the same with a signature inspection and callback managers on every
call: 0.30 against 0.10 ms of CPU per task over 400 ``Send`` tasks, one task per chunk read. The class
lives in ``langgraph._internal``; ``tests/unit/test_runtime_nodes.py`` fails if it moves.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypedDict

from langchain_core.runnables import Runnable, RunnableConfig
from langgraph._internal._runnable import RunnableCallable
from langgraph.config import get_stream_writer
from langgraph.runtime import get_runtime

from longgraph.llm import PerLoopProvider
from longgraph.nodes.kit import RunKit, kit_for
from longgraph.serving_policy import served_user
from longgraph.state.context import Context

_ON_OWN_LOOP: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "longgraph_node_on_own_loop", default=False
)

StageFn = Callable[..., Coroutine[Any, Any, Any]]
NodeFactory = Callable[..., Runnable[Any, Any]]


def node_factory(llm: PerLoopProvider) -> NodeFactory:
    """``node(stage, **options)``: a graph node running ``stage`` with this provider's run kit."""

    def node(stage: StageFn, /, **options: Any) -> Runnable[Any, Any]:
        name = getattr(stage, "__name__", "node")

        async def run_async(state: Any, config: RunnableConfig) -> Any:
            kit = await kit_for(get_runtime(Context).context, llm, served_user(config.get("configurable")))
            return await stage(state, kit, **options)

        def run_sync(state: Any, config: RunnableConfig) -> Any:
            context = get_runtime(Context).context
            user = served_user(config.get("configurable"))
            caller = contextvars.copy_context()

            async def run() -> Any:
                _ON_OWN_LOOP.set(True)
                return await stage(state, await kit_for(context, llm, user), **options)

            with ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"longgraph-{name}") as pool:
                return pool.submit(caller.run, asyncio.run, run()).result()

        # Not functools.wraps: the wrapper reads the signature (it must see ``config``), and wraps
        # would point it at the stage's own.
        run_async.__name__ = run_sync.__name__ = name
        run_async.__doc__ = run_sync.__doc__ = stage.__doc__
        return RunnableCallable(run_sync, run_async, name=name, trace=False)

    return node


def loop_outlives_node() -> bool:
    """Whether a task started by this node can still run when the next node does: True on the async
    path (one event loop for the run), False in a sync twin (its loop closes with the node)."""
    return not _ON_OWN_LOOP.get()


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


__all__ = ["NodeFactory", "Progress", "RunKit", "loop_outlives_node", "node_factory", "report_progress"]
