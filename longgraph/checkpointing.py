"""Checkpoints: a serializer that knows longgraph's state types, and the SQLite checkpointer of ``aask``.

LangGraph's default serializer deserialises any class from a checkpoint with a warning ("unregistered
type"), and will refuse them in strict mode. A checkpoint database is code-execution surface, so we
allow exactly the pydantic models of ``longgraph.state`` (every strategy keeps its state types there)
and nothing else beyond LangGraph's own safe types.
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import inspect
import pkgutil
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, closing
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
    """An async SQLite checkpointer on ``db_path``, which this process's own garbage does not keep locked.

    After a run failed midway (its in-flight tasks cancelled), CI saw the next run on the same file wait
    out the busy timeout and fail with ``database is locked``; a probe of failed PECAN runs left the
    file locked after 1 in 13, with every ``sqlite3.Connection`` closed from Python's side, and a
    ``gc.collect()`` freed it. A cancelled task's frame, kept in a reference cycle, still holds a cursor:
    SQLite cannot finish closing a connection while one of its statements is alive, and the half-closed
    connection keeps its transaction and lock until the collector frees that cursor. So before a run the
    file's write lock is tried without waiting: held, this process's garbage is collected first (another
    process's lock is waited for, as before). Collecting inside the failed run instead (right after its
    connection closed, its loop still running) made the resume hang, 1 of 1, event loop idle: not done.
    """
    import aiosqlite
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    await asyncio.to_thread(_free_locks_held_by_garbage, db_path)
    # A generous busy timeout: another process (or a reader) may hold the file for a moment; waiting
    # beats failing a long run at its next checkpoint.
    async with aiosqlite.connect(db_path, timeout=60) as connection:
        await connection.execute("PRAGMA journal_mode=WAL")
        # Loads exactly longgraph's state types (LangGraph warns about, and will refuse, others).
        yield AsyncSqliteSaver(connection, serde=checkpoint_serializer())


def _free_locks_held_by_garbage(db_path: str) -> None:
    """Try the write lock without waiting; if it is held, collect this process's garbage (see above)."""
    with closing(sqlite3.connect(db_path, timeout=0)) as probe:
        try:
            probe.execute("BEGIN IMMEDIATE")
            probe.rollback()
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc):
                gc.collect()
