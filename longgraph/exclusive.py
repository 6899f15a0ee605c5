"""One writer at a time: an exclusive hold on a file or a checkpointed thread, released by a crash.

Two processes resuming the same thread both ran (30 calls instead of 19; 57 with three), and two
batches appending to one results file would interleave their rows. Each writer now holds a lock that
the operating system (a record lock on a byte of ``<checkpoints>.lock``; the JSONL writers ``flock``
their own file, ``longgraph/jsonl.py``) or the database server (a PostgreSQL session advisory lock)
drops when the holder dies, so a run killed mid-way never blocks its own resume; a second writer is
refused at once with :class:`~longgraph.errors.InUse` rather than waiting behind a run that may take
hours.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import os
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from longgraph.errors import InUse

_RANGE_FILES: dict[str, int] = {}
_RANGES_HELD: set[tuple[str, int]] = set()
_RANGES_LOCK = threading.Lock()


def hold_range(lock_path: Path, offset: int, what: str) -> None:
    """A POSIX record lock on one byte of ``lock_path`` (one lock file for every thread of a checkpoint
    database, not a file per thread: a batch has a thread per item). Record locks belong to the process
    and go when any of its descriptors of the file closes, so the file stays open for the process's life,
    and holds within this process are kept in a set."""
    key = (str(lock_path), offset)
    with _RANGES_LOCK:
        if key in _RANGES_HELD:
            raise _in_use(what)
        fd = _RANGE_FILES.get(key[0])
        if fd is None:
            fd = _RANGE_FILES[key[0]] = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, offset)
        except OSError:  # EAGAIN or EACCES: another process holds it
            raise _in_use(what) from None
        _RANGES_HELD.add(key)


def release_range(lock_path: Path, offset: int) -> None:
    key = (str(lock_path), offset)
    with _RANGES_LOCK:
        if key in _RANGES_HELD:
            fcntl.lockf(_RANGE_FILES[key[0]], fcntl.LOCK_UN, 1, offset)
            _RANGES_HELD.discard(key)


def _in_use(what: str) -> InUse:
    return InUse(
        f"{what} is in use by another run (a second writer would redo and mix its work): wait for that run "
        "to end, or use another thread id"
    )


@asynccontextmanager
async def hold_sqlite_thread(db_path: str | Path, thread_id: str) -> AsyncIterator[None]:
    """The thread held in ``<database>.lock`` beside the SQLite checkpoint file."""
    lock_path, offset = Path(f"{db_path}.lock"), thread_key(thread_id) & (2**62 - 1)
    await asyncio.to_thread(hold_range, lock_path, offset, f"thread {thread_id!r} of {db_path}")
    try:
        yield
    finally:
        release_range(lock_path, offset)


def thread_key(thread_id: str) -> int:
    """A signed 64-bit key per thread: PostgreSQL's advisory lock key, and (its low 62 bits) the byte a
    SQLite checkpoint file's lock holds (a collision only makes two threads refuse each other's runs)."""
    digest = hashlib.sha256(b"longgraph-thread:" + thread_id.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


@asynccontextmanager
async def hold_postgres_thread(url: str, thread_id: str, where: str) -> AsyncIterator[None]:
    """A session advisory lock on a connection of its own, held for the run (the server drops it when
    the connection does: a killed run's thread is free again)."""
    import psycopg

    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as session:
        cursor = await session.execute("SELECT pg_try_advisory_lock(%s)", (thread_key(thread_id),))
        row = await cursor.fetchone()
        if not row or not row[0]:
            raise _in_use(f"thread {thread_id!r} of {where}")
        yield
