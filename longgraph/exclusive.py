"""One writer at a time: an exclusive hold on a file or a checkpointed thread, released by a crash.

Two processes resuming the same thread both ran (30 calls instead of 19; 57 with three), and two
batches appending to one results file would interleave their rows. Each writer now holds a lock that
the operating system (a ``flock`` on a file) or the database server (a PostgreSQL session advisory lock)
drops when the holder dies, so a run killed mid-way never blocks its own resume; a second writer is
refused at once with :class:`~longgraph.errors.InUse` rather than waiting behind a run that may take
hours.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from longgraph.errors import InUse


def hold_file(lock_path: Path, what: str) -> int:
    """An exclusive ``flock`` on ``lock_path`` (created if need be), as an open descriptor to close
    when done; :class:`InUse` naming ``what`` when another holder has it. A ``flock`` belongs to the
    open file, so a second hold from this very process is refused too."""
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise InUse(
            f"{what} is in use by another run (a second writer would redo and mix its work): "
            "wait for that run to end, or write elsewhere"
        ) from None
    return fd


def release_file(fd: int) -> None:
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)


def thread_lock_file(db_path: str | Path, thread_id: str) -> Path:
    """Where a SQLite checkpoint file's thread is held: one small file per thread, beside the database
    (``checkpoints.sqlite.threads/``). Never deleted while in use; removing one is harmless once no
    run holds it."""
    folder = Path(f"{db_path}.threads")
    folder.mkdir(parents=True, exist_ok=True)
    return folder / (hashlib.sha256(thread_id.encode("utf-8", "surrogatepass")).hexdigest()[:32] + ".lock")


@asynccontextmanager
async def hold_sqlite_thread(db_path: str | Path, thread_id: str) -> AsyncIterator[None]:
    what = f"thread {thread_id!r} of {db_path}"
    fd = await asyncio.to_thread(lambda: hold_file(thread_lock_file(db_path, thread_id), what))
    try:
        yield
    finally:
        release_file(fd)


def advisory_key(thread_id: str) -> int:
    """A signed 64-bit key for ``pg_try_advisory_lock`` (a collision only makes two threads wait on each
    other's runs, one in 2^64)."""
    digest = hashlib.sha256(b"longgraph-thread:" + thread_id.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


@asynccontextmanager
async def hold_postgres_thread(url: str, thread_id: str, where: str) -> AsyncIterator[None]:
    """A session advisory lock on a connection of its own, held for the run (the server drops it when
    the connection does: a killed run's thread is free again)."""
    import psycopg

    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as session:
        cursor = await session.execute("SELECT pg_try_advisory_lock(%s)", (advisory_key(thread_id),))
        row = await cursor.fetchone()
        if not row or not row[0]:
            raise InUse(
                f"thread {thread_id!r} of {where} is in use by another run (a second writer would redo and "
                "mix its work): wait for that run to end, or use another thread id"
            )
        yield
