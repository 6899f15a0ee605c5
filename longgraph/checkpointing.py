"""Checkpoints: a serializer that knows longgraph's state types, and the SQLite checkpointer of ``aask``.

LangGraph's default serializer deserialises any class from a checkpoint with a warning ("unregistered
type"), and will refuse them in strict mode. A checkpoint database is code-execution surface, so we
allow exactly the pydantic models of ``longgraph.state`` (every strategy keeps its state types there)
and nothing else beyond LangGraph's own safe types.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import os
import pkgutil
import sqlite3
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, closing
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from pydantic import BaseModel

from longgraph.cache import damaged
from longgraph.errors import ConfigurationError
from longgraph.redact import redact_url, url_secrets

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver
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
        except sqlite3.DatabaseError as exc:
            if not damaged(exc):
                raise
            raise ConfigurationError(
                f"checkpoint database {db_path}: damaged ({exc}); move it aside, or give another file"
            ) from exc
        finally:
            async with saver.lock:
                await connection.rollback()
                await connection.close()


def is_postgres_url(target: str | Path) -> bool:
    return isinstance(target, str) and target.startswith(("postgresql://", "postgres://"))


@asynccontextmanager
async def open_checkpointer(target: str | Path) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """The checkpointer of a durable run: PostgreSQL for a ``postgresql://`` URL (a team's shared
    server), else a SQLite file on this machine (created with its folder)."""
    if is_postgres_url(target):
        async with postgres_checkpointer(str(target)) as saver:
            yield saver
    else:
        path = await asyncio.to_thread(open_sqlite_path, target, "checkpoint database")
        async with sqlite_checkpointer(path) as sqlite_saver:
            yield sqlite_saver


def open_sqlite_path(path: str | Path, what: str) -> str:
    """Create the folder of a SQLite file and reject a path that cannot hold one, naming it."""
    file = Path(path).expanduser()
    if file.is_dir():
        raise ConfigurationError(f"{what} {file}: is a directory, not a file")
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        if file.exists():
            with closing(sqlite3.connect(file)) as db:  # reading the schema fails on a non-database
                db.execute("SELECT name FROM sqlite_master LIMIT 1").fetchall()
    except (OSError, sqlite3.Error) as exc:
        raise ConfigurationError(f"{what} {file}: cannot be used ({exc})") from exc
    return str(file)


@asynccontextmanager
async def postgres_checkpointer(url: str) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """LangGraph's own Postgres checkpointer on ``url``, its tables created (or migrated) first."""
    try:
        import psycopg
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    except ImportError as exc:
        raise ConfigurationError(
            "a postgresql:// checkpoint database needs the postgres extra: pip install 'longgraph[postgres]'"
        ) from exc
    try:
        async with AsyncPostgresSaver.from_conn_string(url, serde=checkpoint_serializer()) as saver:
            await saver.setup()
            yield saver
    except psycopg.OperationalError as exc:
        reason = " ".join(str(exc).split())
        for secret in url_secrets(url):
            reason = reason.replace(secret, "***")
        raise ConfigurationError(f"checkpoint database {redact_url(url)}: cannot be used ({reason})") from exc


CHECKPOINT_URL_ENV = "LONGGRAPH_CHECKPOINT_URL"


def served_checkpointer() -> AbstractAsyncContextManager[BaseCheckpointSaver[Any]]:
    """The checkpointer of the served graphs on PostgreSQL: name it in ``langgraph.json``
    (``"checkpointer": {"backend": "custom", "path": "./longgraph/checkpointing.py:served_checkpointer"}``)
    and set ``LONGGRAPH_CHECKPOINT_URL`` in the server's environment. Its connections come from a pool,
    as a server runs many graphs at once."""
    url = os.environ.get(CHECKPOINT_URL_ENV, "")
    if not is_postgres_url(url):
        raise ConfigurationError(
            f"{CHECKPOINT_URL_ENV} must be a postgresql:// URL for the served checkpointer, got {redact_url(url)!r}"
        )
    return _pooled_postgres_checkpointer(url)


@asynccontextmanager
async def _pooled_postgres_checkpointer(url: str) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg.rows import dict_row
    from psycopg_pool import AsyncConnectionPool

    connection = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
    async with AsyncConnectionPool(url, kwargs=connection, max_size=20, open=False) as pool:
        saver = AsyncPostgresSaver(pool, serde=checkpoint_serializer())  # type: ignore[arg-type]
        await saver.setup()
        yield saver
