"""Checkpoint serialisation that knows longgraph's state types.

LangGraph's default serializer deserialises any class from a checkpoint with a warning ("unregistered
type"), and will refuse them in strict mode. A checkpoint database is code-execution surface, so we
allow exactly the pydantic models of ``longgraph.state`` (every strategy keeps its state types there)
and nothing else beyond LangGraph's own safe types.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from functools import lru_cache

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from pydantic import BaseModel


@lru_cache(maxsize=1)
def state_types() -> tuple[type[BaseModel], ...]:
    """Every pydantic model defined in a ``longgraph.state`` module."""
    import longgraph.state as state_package

    found: list[type[BaseModel]] = []
    for info in pkgutil.iter_modules(state_package.__path__, prefix="longgraph.state."):
        module = importlib.import_module(info.name)
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, BaseModel) and obj.__module__ == module.__name__:
                found.append(obj)
    return tuple(found)


def checkpoint_serializer() -> JsonPlusSerializer:
    """A serializer whose msgpack allowlist is longgraph's state types."""
    return JsonPlusSerializer(allowed_msgpack_modules=state_types())
