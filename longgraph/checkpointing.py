"""Checkpoints: a serializer that knows longgraph's state types, and the SQLite checkpointer of ``aask``.

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
    """An async SQLite checkpointer on ``db_path`` that leaves the file unlocked however its run ended.

    A run that fails midway has checkpoint reads and writes in flight. A write cancelled between its
    ``INSERT`` and its ``COMMIT`` leaves the connection in an open write transaction, and a read cut
    short leaves a live statement whose cursor the exception's traceback keeps: SQLite cannot finish
    closing a connection while one of its statements is alive, so the half-closed connection keeps the
    transaction and the file's write lock for as long as the caller keeps the exception. The next run on
    the file then waits out the busy timeout at every checkpoint (CI: a resume in the same process hung
    723 s and failed with ``database is locked``; 4 failed runs in 10 locked the file, and neither
    ``gc.collect()`` nor dropping the exception freed it). So the checkpointer is closed under the
    saver's own lock (no write half done) after a rollback of whatever was left uncommitted: what a
    checkpoint holds is only ever what was committed, as after a kill.
    """
    import aiosqlite
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    # A generous busy timeout: another process (or a reader) may hold the file for a moment; waiting
    # beats failing a long run at its next checkpoint.
    async with aiosqlite.connect(db_path, timeout=60) as connection:
        await connection.execute("PRAGMA journal_mode=WAL")
        # Loads exactly longgraph's state types (LangGraph warns about, and will refuse, others).
        saver = AsyncSqliteSaver(connection, serde=checkpoint_serializer())
        try:
            yield saver
        finally:
            async with saver.lock:
                await connection.rollback()
                await connection.close()
