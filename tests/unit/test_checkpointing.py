"""The SQLite checkpointer frees a lock that this process's own garbage holds.

SQLite cannot finish closing a connection while one of its statements is alive: a cursor kept in a
reference cycle (a cancelled task's frame, after a failed run) leaves the closed connection holding its
open transaction, and the next run on the file waited out its busy timeout ("database is locked", once
in CI). Here that state is made on purpose, then the checkpointer is opened on the file.
"""

from __future__ import annotations

import asyncio
import gc
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

from longgraph.checkpointing import sqlite_checkpointer


def _write_locked(db: Path) -> bool:
    with closing(sqlite3.connect(db, timeout=0)) as other:
        try:
            other.execute("BEGIN IMMEDIATE")
            other.rollback()
            return False
        except sqlite3.OperationalError:
            return True


@contextmanager
def _collector_off() -> Iterator[None]:
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _closed_connection_still_holding_a_transaction(db: Path) -> None:
    connection = sqlite3.connect(db)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("CREATE TABLE t (x)")
    connection.commit()
    connection.execute("INSERT INTO t VALUES (1)")  # a write transaction, never committed
    cycle: list[Any] = [connection.execute("SELECT x FROM t")]  # a live statement, kept by a cycle
    cycle.append(cycle)
    del cycle
    connection.close()  # from Python's side; SQLite keeps the connection (and its lock) for the statement


def test_a_lock_held_by_garbage_is_freed_before_the_run(tmp_path: Path) -> None:
    db = tmp_path / "checkpoints.sqlite"

    async def write_once() -> None:
        async with sqlite_checkpointer(str(db)) as saver:
            await saver.setup()
            async with saver.conn.execute("INSERT INTO t VALUES (2)"):
                await saver.conn.commit()

    with _collector_off():
        _closed_connection_still_holding_a_transaction(db)
        assert _write_locked(db)  # the state CI ran into
        asyncio.run(asyncio.wait_for(write_once(), timeout=10))  # not the 60 s busy timeout
    with closing(sqlite3.connect(db)) as reader:
        assert reader.execute("SELECT x FROM t").fetchall() == [(2,)]  # the uncommitted 1 rolled back


def test_a_thread_killed_between_a_steps_writes_and_the_next_checkpoint_resumes(tmp_path: Path) -> None:
    """Killed after a step's writes were saved but before the next step's checkpoint, a thread's state
    has no ``next`` (its tasks have their writes) and is not finished: it must resume, not be returned
    as a stored result (seen in batch's kill test: "GraphOutput: answer Field required", 1 in 4 runs).
    The state is made exactly: a finished thread's checkpoints after the one whose task wrote are
    deleted, its pending writes kept."""
    from longgraph.api import ask
    from longgraph.testing.fakes import FakeProvider, ScriptedChatModel
    from longgraph.tests.conftest import FAKE_SETTINGS, QUESTION, planted

    db = tmp_path / "checkpoints.sqlite"
    document = planted(9_000)
    run: dict[str, Any] = {"documents": [{"text": document}], "checkpoint_path": db, "thread_id": "t",
                           **FAKE_SETTINGS, "cache_path": ""}  # fmt: skip
    first = ask(QUESTION, llm=FakeProvider(ScriptedChatModel()), **run)
    with closing(sqlite3.connect(db)) as con:
        rows = con.execute(
            "SELECT checkpoint_id, json_extract(metadata, '$.step') FROM checkpoints"
        ).fetchall()
        written = {c for (c,) in con.execute("SELECT DISTINCT checkpoint_id FROM writes")}
        steps = sorted((step, cid) for cid, step in rows)
        # the last checkpoint, before the final one, whose tasks' writes are saved
        keep_step, _ = max((s, c) for s, c in steps[:-1] if c in written)
        con.execute("DELETE FROM checkpoints WHERE json_extract(metadata, '$.step') > ?", (keep_step,))
        con.commit()
    model = ScriptedChatModel()
    again = ask(QUESTION, llm=FakeProvider(model), **run)
    assert again.answer == first.answer and "smoked plums" in again.answer
    assert not any("stored result" in note for note in again.stats.notes)  # resumed, not "finished"
