"""longgraph: LLMs with short context windows reading documents far longer than their window.

Divide-and-conquer methods from the literature (LLM×MapReduce, Segment+, ...) as LangGraph graphs on
any OpenAI-compatible endpoint. ``ask`` is the one-line entry point; the graphs themselves are in
``longgraph.graphs`` (``from longgraph.graphs.mapreduce import graph``).
"""

from longgraph.api import aask, ask
from longgraph.errors import (
    ConfigurationError,
    EndpointError,
    InputError,
    LonggraphError,
    StructuredOutputError,
    TooManyFailures,
)
from longgraph.state.context import Context
from longgraph.state.contract import GraphInput, GraphOutput

__all__ = [
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
    "ask",
]
__version__ = "0.1.0"
