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
import zlib
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, closing
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
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


COMPRESSED = "zlib+"
COMPRESS_FROM = 32 * 1024


class CompressingSerializer(JsonPlusSerializer):
    """LangGraph's serializer, with large values zlib-compressed (their type tagged ``zlib+``).

    Every checkpoint holds the whole state, the document and its chunks' text included. At level 1
    the installed essays compress 2.26-fold at 9 ms per MB (3.5 ms to decompress). Values stored
    uncompressed (an older checkpoint) still load."""

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        kind, data = super().dumps_typed(obj)
        if len(data) >= COMPRESS_FROM:
            return COMPRESSED + kind, zlib.compress(data, 1)
        return kind, data

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        kind, blob = data
        if kind.startswith(COMPRESSED):
            return super().loads_typed((kind.removeprefix(COMPRESSED), zlib.decompress(blob)))
        return super().loads_typed(data)


def checkpoint_serializer() -> JsonPlusSerializer:
    """A serializer whose msgpack allowlist is longgraph's state types."""
    return CompressingSerializer(allowed_msgpack_modules=state_types())


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

    # A generous busy timeout: another process (or a reader) may hold the file for a moment; waiting
    # beats failing a long run at its next checkpoint.
    async with aiosqlite.connect(db_path, timeout=60) as connection:
        # A new file hands the pages of deleted checkpoints back (an existing one keeps its mode).
        await connection.execute("PRAGMA auto_vacuum=INCREMENTAL")
        await connection.execute("PRAGMA journal_mode=WAL")
        # Bounds what the WAL file keeps after a checkpoint of the database (it otherwise stays at its peak).
        await connection.execute(f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT}")
        # Loads exactly longgraph's state types (LangGraph warns about, and will refuse, others).
        saver = _latest_only_saver()(connection, serde=checkpoint_serializer())
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


WAL_SIZE_LIMIT = 4 * 1024 * 1024


@lru_cache(maxsize=1)
def _latest_only_saver() -> type[AsyncSqliteSaver]:
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    class LatestOnlySqliteSaver(AsyncSqliteSaver):
        """Keeps each thread's latest checkpoint only, and the writes of its unfinished step.

        A resume needs no more, and every checkpoint holds all of the run's state (the document
        included): a 1 MB input made 20 MB of checkpoints over a mapreduce run with all of them kept.
        The older ones go right after a newer one is committed, so a kill at any moment leaves a
        checkpoint to resume from. (A thread's history is therefore not kept: LangGraph's time travel
        is the served graphs' business, on the server's own checkpointer.)
        """

        async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            saved = await super().aput(config, checkpoint, metadata, new_versions)
            where = (
                str(config["configurable"]["thread_id"]),
                str(config["configurable"].get("checkpoint_ns", "")),
            )
            async with self.lock:
                for table in ("checkpoints", "writes"):
                    await self.conn.execute(
                        f"DELETE FROM {table} WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id != ?",
                        (*where, checkpoint["id"]),
                    )
                await self.conn.commit()
                # As a script: run as a statement it frees one page per step, and Python steps it once.
                await self.conn.executescript("PRAGMA incremental_vacuum;")
            return saved

        async def adelete_thread(self, thread_id: str) -> None:
            await super().adelete_thread(thread_id)
            await self.conn.executescript("PRAGMA incremental_vacuum;")  # the file shrinks

    return LatestOnlySqliteSaver


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


@dataclass(frozen=True)
class ThreadSummary:
    """A checkpointed thread as ``longgraph checkpoints list`` shows it."""

    thread_id: str
    updated: datetime
    step: int


async def list_threads(target: str | Path) -> list[ThreadSummary]:
    """Every thread of a checkpoint database, its latest write first."""
    latest: dict[str, ThreadSummary] = {}
    async with open_checkpointer(target) as saver:
        async for saved in saver.alist(None):
            thread = str(saved.config["configurable"]["thread_id"])
            summary = ThreadSummary(
                thread, datetime.fromisoformat(saved.checkpoint["ts"]), int(saved.metadata.get("step", -1))
            )
            if thread not in latest or summary.updated > latest[thread].updated:
                latest[thread] = summary
    return sorted(latest.values(), key=lambda t: t.updated, reverse=True)


async def prune_threads(
    target: str | Path, *, older_than: timedelta, now: datetime | None = None
) -> list[str]:
    """Delete the threads last written more than ``older_than`` ago; their ids."""
    cutoff = (now or datetime.now(UTC)) - older_than
    old = [t.thread_id for t in await list_threads(target) if t.updated < cutoff]
    async with open_checkpointer(target) as saver:
        for thread in old:
            await saver.adelete_thread(thread)
    return old
