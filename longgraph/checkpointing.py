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
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import lru_cache
from typing import TYPE_CHECKING

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from pydantic import BaseModel

if TYPE_CHECKING:
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver


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


@asynccontextmanager
async def sqlite_checkpointer(db_path: str) -> AsyncIterator[AsyncSqliteSaver]:
    """An async SQLite checkpointer on ``db_path``; whatever a failed run left open is rolled back.

    CI saw the resume after a failed run wait out the busy timeout and fail with ``database is
    locked`` (PECAN, 1 run); a probe of 50 failed runs left the file locked after 3 of them, with every
    connection already closed from Python's side and no aiosqlite thread alive. The holder was not
    pinned down; the likeliest is a checkpoint write cancelled between its ``INSERT`` and its
    ``COMMIT`` (the statement already queued on the connection's thread). A rollback queued before the
    close ends any such transaction on this connection; a finished run has nothing to roll back. The
    ``PRAGMA`` cursor is closed rather than left to the garbage collector.
    """
    import aiosqlite
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    # A generous busy timeout: another process (or a reader) may hold the file for a moment; waiting
    # beats failing a long run at its next checkpoint.
    connection = await aiosqlite.connect(db_path, timeout=60)
    try:
        async with connection.execute("PRAGMA journal_mode=WAL"):
            pass
        # Loads exactly longgraph's state types (LangGraph warns about, and will refuse, others).
        yield AsyncSqliteSaver(connection, serde=checkpoint_serializer())
    finally:
        try:
            await connection.rollback()  # queued after any cancelled write, so it ends that write
        finally:
            await connection.close()
