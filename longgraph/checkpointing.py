"""Checkpoints: a serializer that knows longgraph's state types, and the SQLite checkpointer of ``aask``.

LangGraph's default serializer deserialises any class from a checkpoint with a warning ("unregistered
type"), and will refuse them in strict mode. A checkpoint database is code-execution surface, so we
allow exactly the pydantic models of ``longgraph.state`` (every strategy keeps its state types there)
and nothing else beyond LangGraph's own safe types.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import inspect
import os
import pkgutil
import re
import sqlite3
import threading
import weakref
import zlib
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractAsyncContextManager, asynccontextmanager, closing, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver
from pydantic import BaseModel

from longgraph.cache import damaged
from longgraph.errors import ConfigurationError
from longgraph.exclusive import hold_postgres_thread, hold_sqlite_thread
from longgraph.group_commit import GroupCommit
from longgraph.redact import redact_url, refuse_url_like_path, url_secrets

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

_T = TypeVar("_T")


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
async def sqlite_checkpointer(db_path: str) -> AsyncIterator[LatestOnlySqliteSaver]:
    """The SQLite checkpointer of ``aask`` and ``abatch`` on ``db_path``: :class:`LatestOnlySqliteSaver`,
    every method of it one call on a thread of its own.

    Why not LangGraph's ``AsyncSqliteSaver``: over ``aiosqlite`` every statement, fetch and commit is
    its own hop between the event loop and the connection's thread — about 230 per item of a durable
    batch, which made a batch of 100 small items take 3.8 s against 1.4 s without checkpoints. Here a
    checkpoint (serialised, inserted, the older ones deleted, one commit) or a task's writes is one
    hop, off the event loop. And a method is a whole transaction in that thread, committed or rolled
    back there: a run that fails or is cancelled cannot leave a write half done, holding the file's
    lock (with ``aiosqlite``, the resume in the same process then waited out the busy timeout at
    every checkpoint — CI: 723 s, then ``database is locked``). Closing waits for the writes
    already handed to the thread, so what a checkpoint holds is only ever what was committed, as
    after a kill.
    """
    worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="longgraph-checkpoints")
    loop = asyncio.get_running_loop()
    connection: sqlite3.Connection | None = None
    try:
        connection = await loop.run_in_executor(worker, _connect, db_path)
        saver = LatestOnlySqliteSaver(connection, serde=checkpoint_serializer(), worker=worker)
        await loop.run_in_executor(worker, saver.setup)
        _CLAIMS[saver] = functools.partial(hold_sqlite_thread, db_path)
        yield saver
    except sqlite3.DatabaseError as exc:
        if not damaged(exc):
            raise
        raise ConfigurationError(
            f"checkpoint database {db_path}: damaged ({exc}); move it aside, or give another file"
        ) from exc
    finally:
        # Queued behind every write already handed over, and finished even if this task is cancelled.
        closed = loop.run_in_executor(worker, _close, connection) if connection is not None else None
        worker.shutdown(wait=False)
        if closed is not None:
            await asyncio.shield(closed)


WAL_SIZE_LIMIT = 4 * 1024 * 1024


def _connect(db_path: str) -> sqlite3.Connection:
    # A generous busy timeout: another process (or a reader) may hold the file for a moment; waiting
    # beats failing a long run at its next checkpoint. Any thread may use the connection: the
    # saver's lock serialises them (its async methods all run on its one worker thread).
    connection = sqlite3.connect(db_path, timeout=60, check_same_thread=False)
    try:
        # The pages of deleted checkpoints go back to the file in the commit that freed them (a file
        # made with incremental vacuum switches; one made without keeps its mode). The incremental
        # vacuum after each commit was a second transaction, a second fsync per commit.
        connection.execute("PRAGMA auto_vacuum=FULL")
        connection.execute("PRAGMA journal_mode=WAL")
        # Bounds what the WAL file keeps after a checkpoint of the database (it otherwise stays at its peak).
        connection.execute(f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT}")
    except BaseException:
        connection.close()
        raise
    return connection


def _close(connection: sqlite3.Connection) -> None:
    connection.rollback()  # nothing is left open by the saver's methods; a caller's own use may have
    connection.close()


class LatestOnlySqliteSaver(SqliteSaver):
    """Keeps each thread's latest checkpoint only, and the writes of its unfinished step; the writes
    handed over together commit together.

    A resume needs no more, and every checkpoint holds all of the run's state (the document
    included): a 1 MB input made 20 MB of checkpoints over a mapreduce run with all of them kept.
    The older ones go in the transaction that commits the newer one, so a kill at any moment
    leaves exactly one checkpoint to resume from. (A thread's history is therefore not kept:
    LangGraph's time travel is the served graphs' business, on the server's own checkpointer.)

    The synchronous methods are LangGraph's ``SqliteSaver``'s. The async ones run them on ``worker``
    (one thread, so in the order they were called), and the writes (checkpoints, a task's writes,
    deleting a thread) waiting there when the thread comes to them go in one transaction
    (``longgraph/group_commit.py``): one commit, one ``fsync``, for as many writes as a busy run
    hands over meanwhile, each caller resuming once the commit holding its write is done.
    """

    def __init__(
        self, conn: sqlite3.Connection, *, serde: SerializerProtocol, worker: ThreadPoolExecutor
    ) -> None:
        super().__init__(conn, serde=serde)
        self.lock = threading.RLock()  # type: ignore[assignment]  # a transaction holds it around cursors
        self.worker = worker
        self._writes = GroupCommit(worker, self._in_one_transaction)
        self._committing_in: int | None = None  # the thread whose transaction commits its cursors' work

    @contextmanager
    def cursor(self, transaction: bool = True) -> Iterator[sqlite3.Cursor]:
        """LangGraph's, except that inside :meth:`_in_one_transaction` the commit is left to it."""
        inside = self._committing_in == threading.get_ident()
        with super().cursor(transaction=transaction and not inside) as cur:
            yield cur

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """LangGraph's, and the thread's older checkpoints deleted, in one transaction: the one under
        way on this thread (:meth:`_in_one_transaction`, a group's), else one of its own."""
        if self._committing_in != threading.get_ident():
            [saved] = self._in_one_transaction(
                [functools.partial(self.put, config, checkpoint, metadata, new_versions)]
            )
            return cast("RunnableConfig", saved)
        saved = super().put(config, checkpoint, metadata, new_versions)
        where = (
            str(config["configurable"]["thread_id"]),
            str(config["configurable"].get("checkpoint_ns", "")),
        )
        for table in ("checkpoints", "writes"):
            self.conn.execute(
                f"DELETE FROM {table} WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id != ?",
                (*where, checkpoint["id"]),
            )
        return saved

    def delete_thread(self, thread_id: str) -> None:
        self._in_one_transaction([functools.partial(super().delete_thread, thread_id)])

    def _in_one_transaction(self, writes: Sequence[Callable[[], Any]]) -> list[Any]:
        """Run ``writes`` and commit them together, or roll all of them back."""
        with self.lock:
            self._committing_in = threading.get_ident()
            try:
                done = [write() for write in writes]
                self.conn.commit()
            except BaseException:
                self.conn.rollback()
                raise
            finally:
                self._committing_in = None
        return done

    async def _on_worker(self, method: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
        call = functools.partial(method, *args, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(self.worker, call)

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await self._on_worker(self.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        def listed() -> list[CheckpointTuple]:
            return list(self.list(config, filter=filter, before=before, limit=limit))

        for saved in await self._on_worker(listed):
            yield saved

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await self._writes.write(
            functools.partial(self.put, config, checkpoint, metadata, new_versions)
        )

    async def aput_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        await self._writes.write(functools.partial(super().put_writes, config, writes, task_id, task_path))

    async def adelete_thread(self, thread_id: str) -> None:
        await self._writes.write(functools.partial(super().delete_thread, thread_id))

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        return await self._on_worker(self.get_delta_channel_history, config=config, channels=channels)


_CLAIMS: weakref.WeakKeyDictionary[
    BaseCheckpointSaver[Any], Callable[[str], AbstractAsyncContextManager[None]]
] = weakref.WeakKeyDictionary()
"""How each checkpointer this module opened holds one of its threads for a run (``longgraph/exclusive.py``)."""


def _hold_postgres(url: str, thread_id: str) -> AbstractAsyncContextManager[None]:
    return hold_postgres_thread(url, thread_id, redact_url(url))


def claim_thread(saver: BaseCheckpointSaver[Any], thread_id: str) -> AbstractAsyncContextManager[None]:
    """Hold ``thread_id`` of ``saver`` for a run: :class:`~longgraph.errors.InUse` when another run
    (another process, or this one) holds it. A checkpointer longgraph did not open is not held."""
    claim = _CLAIMS.get(saver)
    return claim(thread_id) if claim is not None else contextlib.nullcontext()


_URL_SCHEME = re.compile(r"^\s*([A-Za-z][A-Za-z0-9+.\-]*)://")


def is_postgres_url(target: str | Path) -> bool:
    """A ``postgresql://`` (or ``postgres://``) URL, whatever the scheme's case (schemes are
    case-insensitive: ``PostgreSQL://`` silently became a SQLite file named after the password)."""
    return isinstance(target, str) and target.strip().lower().startswith(("postgresql://", "postgres://"))


def checked_target(target: str | Path, option: str = "checkpoint database") -> str | Path:
    """``target`` once it is a ``postgresql://`` URL or a file path; any other URL (``mysql://``,
    ``sqlite:///``, ``postgresql+psycopg://``, an unknown scheme) is a :class:`ConfigurationError`
    instead of a local SQLite file named after the URL, credentials and all."""
    if isinstance(target, Path):
        return target
    if is_postgres_url(target):
        scheme, rest = target.strip().split(":", 1)
        return scheme.lower() + ":" + rest
    url = _URL_SCHEME.match(target)
    if url:
        raise ConfigurationError(
            f"{option} {redact_url(target)!r}: {url.group(1)!r} is not a scheme longgraph knows "
            "(give a postgresql:// URL, or a path to a SQLite file)"
        )
    if not target.strip():
        raise ConfigurationError(f"{option} is empty: give a SQLite file path or a postgresql:// URL")
    refuse_url_like_path(target, option)
    return target


@asynccontextmanager
async def open_checkpointer(target: str | Path) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """The checkpointer of a durable run: PostgreSQL for a ``postgresql://`` URL (a team's shared
    server), else a SQLite file on this machine (created with its folder)."""
    target = checked_target(target)
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
            async with await psycopg.AsyncConnection.connect(url, autocommit=True) as lock:
                await set_up_alone(saver, lock)
            _CLAIMS[saver] = functools.partial(_hold_postgres, url)
            yield saver
    except psycopg.OperationalError as exc:
        reason = " ".join(str(exc).split())
        for secret in url_secrets(url):
            reason = reason.replace(secret, "***")
        raise ConfigurationError(f"checkpoint database {redact_url(url)}: cannot be used ({reason})") from exc


_SETUP_LOCK = 0x6C6F6E6767726170  # "longgrap": the advisory lock taken around the tables' setup


async def set_up_alone(saver: Any, lock: Any) -> None:
    """``saver.setup()`` (tables, then migrations) while holding a PostgreSQL advisory lock on the
    ``lock`` connection (autocommit, idle meanwhile).

    LangGraph's setup is not safe to run twice at once: two processes opening a new database together
    (teammates starting at the same time, a server and a CLI) failed on a duplicate
    ``checkpoint_migrations`` row or type, or deadlocked in ``CREATE INDEX CONCURRENTLY``
    (``tests/integration/test_resume_postgres.py``: 3 in 3 with six at once, 4 in 9 with two)."""
    # Polled, not waited for in ``pg_advisory_lock``: a session waiting inside a statement is a
    # transaction under way, which the holder's ``CREATE INDEX CONCURRENTLY`` waits for in turn.
    from psycopg.rows import tuple_row

    async with lock.cursor(row_factory=tuple_row) as cursor:  # a pool's connections make dicts
        while True:
            row = await (await cursor.execute("SELECT pg_try_advisory_lock(%s)", (_SETUP_LOCK,))).fetchone()
            if row is not None and row[0]:
                break
            await asyncio.sleep(0.05)
        try:
            await saver.setup()
        finally:
            await cursor.execute("SELECT pg_advisory_unlock(%s)", (_SETUP_LOCK,))


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
        async with pool.connection() as lock:
            await set_up_alone(saver, lock)
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
