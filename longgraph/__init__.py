"""longgraph: LLMs with short context windows reading documents far longer than their window.

Divide-and-conquer methods from the literature (LLM×MapReduce, Segment+, ...) as LangGraph graphs on
any OpenAI-compatible endpoint. ``ask`` is the one-line entry point; the graphs themselves are in
``longgraph.graphs`` (``from longgraph.graphs.mapreduce import graph``).

Names are imported lazily: ``import longgraph.testing.stub_server`` (a subprocess in the tests) and
``longgraph --help`` should not pay for LangGraph's import.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from longgraph.api import Answer, aask, aask_many, ask, ask_many
    from longgraph.batch import BatchSummary, abatch, batch
    from longgraph.errors import (
        BudgetExhausted,
        ConfigurationError,
        EndpointError,
        InputError,
        LonggraphError,
        StructuredOutputError,
        TooManyFailures,
    )
    from longgraph.state.context import Context
    from longgraph.state.contract import GraphInput, GraphOutput

_EXPORTS = {
    "Answer": "longgraph.api",
    "aask": "longgraph.api",
    "aask_many": "longgraph.api",
    "ask_many": "longgraph.api",
    "ask": "longgraph.api",
    "abatch": "longgraph.batch",
    "batch": "longgraph.batch",
    "BatchSummary": "longgraph.batch",
    "BudgetExhausted": "longgraph.errors",
    "ConfigurationError": "longgraph.errors",
    "EndpointError": "longgraph.errors",
    "InputError": "longgraph.errors",
    "LonggraphError": "longgraph.errors",
    "StructuredOutputError": "longgraph.errors",
    "TooManyFailures": "longgraph.errors",
    "Context": "longgraph.state.context",
    "GraphInput": "longgraph.state.contract",
    "GraphOutput": "longgraph.state.contract",
}
__all__ = [
    "Answer",
    "BatchSummary",
    "BudgetExhausted",
    "ConfigurationError",
    "Context",
    "EndpointError",
    "GraphInput",
    "GraphOutput",
    "InputError",
    "LonggraphError",
    "StructuredOutputError",
    "TooManyFailures",
    "aask",
    "aask_many",
    "abatch",
    "ask",
    "ask_many",
    "batch",
]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'longgraph' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
