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

The node is a :class:`StageNode`: a plain ``Runnable`` holding both twins, untraced like LangGraph's
own function nodes (the task is the traced run), built on public API only. LangChain's
``RunnableLambda`` did the same with a signature inspection and callback managers on every call (0.30
against 0.10 ms of CPU per task over 400 ``Send`` tasks); LangGraph's own wrapper is private
(``langgraph._internal``) and an upgrade could move it.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypedDict

from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import ensure_config, set_config_context
from langgraph.config import get_stream_writer
from langgraph.runtime import get_runtime

from longgraph.concurrency import CALLER
from longgraph.llm import PerLoopProvider
from longgraph.nodes.kit import RunKit, kit_for
from longgraph.serving_policy import served_user
from longgraph.state.context import Context
from longgraph.user_share import RUNS, share_settings

SUBGRAPH_SEPARATOR = "|"
"""What separates the graphs' names in a task's ``checkpoint_ns`` (LangGraph's ``NS_SEP``): a node of a
graph run inside another node has one ("answer:<task>|finalize:<task>")."""

_ON_OWN_LOOP: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "longgraph_node_on_own_loop", default=False
)

StageFn = Callable[..., Coroutine[Any, Any, Any]]
NodeFactory = Callable[..., Runnable[Any, Any]]


def node_factory(llm: PerLoopProvider) -> NodeFactory:
    """``node(stage, **options)``: a graph node running ``stage`` with this provider's run kit.

    ``ends_run=True`` marks the node after which the run is over (``finalize``): a served run's place
    among its user's runs in flight (``longgraph/user_share.py``) is given back as it ends."""

    def node(stage: StageFn, /, *, ends_run: bool = False, **options: Any) -> Runnable[Any, Any]:
        name = getattr(stage, "__name__", "node")

        async def run_async(state: Any, config: RunnableConfig) -> Any:
            user = served_user(config.get("configurable"))
            CALLER.set(user)  # this node's task and the tasks it starts: slots shared out per user
            with _in_flight(user, config, ends_run):
                kit = await kit_for(get_runtime(Context).context, llm, user)
                return await stage(state, kit, **options)

        def run_sync(state: Any, config: RunnableConfig) -> Any:
            context = get_runtime(Context).context
            user = served_user(config.get("configurable"))
            caller = contextvars.copy_context()

            async def run() -> Any:
                _ON_OWN_LOOP.set(True)
                CALLER.set(user)
                return await stage(state, await kit_for(context, llm, user), **options)

            with (
                _in_flight(user, config, ends_run),
                ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"longgraph-{name}") as pool,
            ):
                return pool.submit(caller.run, asyncio.run, run()).result()

        return StageNode(name, stage.__doc__, run_sync, run_async)

    return node


@contextlib.contextmanager
def _in_flight(user: str | None, config: RunnableConfig, ends_run: bool) -> Iterator[None]:
    """A served run's step, counted among its user's runs in flight (refused past the user's share);
    the run's place is given back when this step ends it or fails. A graph run as a node of another
    (Pyramid-Align's ``answer`` is mapreduce's graph) shares its parent's run id: its last step does not
    end the run, whose place another run of the user could otherwise take before the parent's next
    step, which would then be refused with every call spent."""
    configurable = config.get("configurable") or {}
    run_id = configurable.get("run_id")
    if user is None or run_id is None:
        yield
        return
    RUNS.enter(user, str(run_id), share_settings().runs)
    nested = SUBGRAPH_SEPARATOR in str(configurable.get("checkpoint_ns") or "")
    ended = ends_run and not nested
    try:
        yield
    except BaseException:
        ended = True
        raise
    finally:
        RUNS.exit(user, str(run_id), ended=ended)


class StageNode(Runnable[Any, Any]):
    """A graph node with a sync and an async twin, run with the task's config as the current one (so
    ``get_runtime`` and the stream writer see the run), without a traced run of its own."""

    def __init__(
        self,
        name: str,
        doc: str | None,
        run_sync: Callable[[Any, RunnableConfig], Any],
        run_async: Callable[[Any, RunnableConfig], Coroutine[Any, Any, Any]],
    ) -> None:
        self.name = name
        self.__doc__ = doc
        self.run_sync = run_sync
        self.run_async = run_async

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        config = ensure_config(config)
        with set_config_context(config) as context:
            return context.run(self.run_sync, input, config)

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        config = ensure_config(config)
        with set_config_context(config) as context:
            return await asyncio.create_task(self.run_async(input, config), context=context)


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
