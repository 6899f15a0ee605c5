"""The strategy registry: names users pass to ``ask``/``longgraph ask --strategy``, mapped to graph builders.

Each strategy is declared once, in its graph module (``STRATEGIES`` there, :class:`~longgraph.graphs.declare.Strategy`);
this registry lists the graph modules and collects their declarations on first use, so the CLI starts
without compiling a graph and a plug-in adds its own with :func:`register`.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Iterator, Mapping
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph

from longgraph.errors import ConfigurationError
from longgraph.graphs.declare import CostShape, Strategy
from longgraph.llm import LLMProvider, default_provider

__all__ = [
    "DATA_ENGINES",
    "GRAPH_MODULES",
    "STRATEGIES",
    "CostShape",
    "Strategy",
    "build_strategy",
    "register",
]

GRAPH_MODULES = (
    "longgraph.graphs.auto",
    "longgraph.graphs.mapreduce",
    "longgraph.graphs.segment_plus",
    "longgraph.graphs.mapreduce_segment_merge",
    "longgraph.graphs.tom",
    "longgraph.graphs.pecan",
    "longgraph.graphs.truncate",
    "longgraph.graphs.rag",
)
"""The modules whose ``STRATEGIES`` make up the registry, in the order ``longgraph strategies`` lists them."""


class _Registry(Mapping[str, Strategy]):
    """The declared strategies by name, collected from :data:`GRAPH_MODULES` on first use."""

    def __init__(self) -> None:
        self._declared: dict[str, Strategy] | None = None
        self._added: dict[str, Strategy] = {}
        self._lock = threading.Lock()

    def _all(self) -> dict[str, Strategy]:
        if self._declared is None:
            with self._lock:
                if self._declared is None:
                    declared: dict[str, Strategy] = {}
                    for module in GRAPH_MODULES:
                        for strategy in importlib.import_module(module).STRATEGIES:
                            if strategy.name in declared:
                                raise ConfigurationError(f"strategy {strategy.name!r} is declared twice")
                            declared[strategy.name] = strategy
                    self._declared = declared
        return {**self._declared, **self._added}

    def add(self, strategy: Strategy) -> None:
        self._added[strategy.name] = strategy

    def remove(self, name: str) -> None:
        """Forget a strategy added with :func:`register` (declared ones stay)."""
        self._added.pop(name, None)

    def __getitem__(self, name: str) -> Strategy:
        return self._all()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


STRATEGIES = _Registry()


DATA_ENGINES: dict[str, tuple[str, str, str]] = {
    "pyramid-align": (
        "longgraph.graphs.pyramid",
        "graph",
        "Data engine, not a reader: training records (X, Q, M, A) from documents with `longgraph synth` "
        "(LLM×MapReduce §5)",
    ),
}
"""Served graphs that answer no question: name -> (module, served attribute, description)."""
AUTH = "./longgraph/auth.py:auth"
HTTP = {"disable_meta": True, "disable_ui": True, "disable_mcp": True, "disable_a2a": True}
"""Routes the server does not serve: the meta routes (``/metrics``, ``/info``, ``/docs``,
``/openapi.json``) answer without a token, and the generative-UI, MCP and A2A routes serve nothing of
longgraph's (``/ui`` answered a request without a token with a 500). ``/ok`` stays, for health checks."""


def langgraph_config() -> dict[str, Any]:
    """What ``langgraph.json`` holds, derived from the registry (``longgraph strategies --langgraph-json``
    prints it; a test checks the file is this): every strategy and data engine served by its name."""

    def spec(module: str, attribute: str) -> str:
        return f"./{module.removeprefix('longgraph.').replace('.', '/')}.py:{attribute}"

    graphs = {s.name: spec(s.module, s.served) for s in STRATEGIES.values()}
    graphs |= {name: spec(module, attribute) for name, (module, attribute, _) in DATA_ENGINES.items()}
    return {"dependencies": ["."], "graphs": graphs, "auth": {"path": AUTH}, "http": HTTP}


def register(strategy: Strategy) -> None:
    """Add a strategy (for plug-ins and the evaluation baselines)."""
    STRATEGIES.add(strategy)


def unregister(name: str) -> None:
    """Remove a strategy added with :func:`register`."""
    STRATEGIES.remove(name)


def build_strategy(
    name: str, llm: LLMProvider = default_provider, *, checkpointer: BaseCheckpointSaver[str] | None = None
) -> CompiledStateGraph[Any, Any, Any, Any]:
    try:
        strategy = STRATEGIES[name]
    except KeyError as exc:
        raise ConfigurationError(
            f"unknown strategy {name!r}; known: {', '.join(sorted(STRATEGIES))}"
        ) from exc
    return strategy.build(llm, checkpointer=checkpointer)


def plans(name: str) -> bool:
    """Whether ``name``'s graph plans its question (the records route, ``graphs/wiring.py``): a records
    plan may be given to it."""
    strategy = STRATEGIES.get(name)
    return bool(strategy and strategy.cost and strategy.cost.plans)
