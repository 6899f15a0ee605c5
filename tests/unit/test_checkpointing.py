"""The SQLite checkpointer leaves its file unlocked however the run it served ended.

A run that fails midway can leave a checkpoint write cancelled between its INSERT and its COMMIT, and
a read cut short whose cursor the exception's traceback keeps alive. SQLite cannot finish closing a
connection while one of its statements is alive, so the half-closed connection kept the open
transaction and the file's write lock, and the resume in the same process waited out the busy timeout
at every checkpoint (CI: 723 s, then "database is locked"). Here that state is made on purpose inside
the checkpointer.
"""

from __future__ import annotations

import asyncio
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from longgraph.checkpointing import sqlite_checkpointer


def _write_locked(db: Path) -> bool:
    with closing(sqlite3.connect(db, timeout=0)) as other:
        try:
            other.execute("BEGIN IMMEDIATE")
            other.rollback()
            return False
        except sqlite3.OperationalError:
            return True


class RunFailed(Exception):
    pass


def test_a_write_left_uncommitted_by_a_failed_run_neither_locks_the_file_nor_lands(tmp_path: Path) -> None:
    db = tmp_path / "checkpoints.sqlite"

    async def failing_run() -> None:
        async with sqlite_checkpointer(str(db)) as saver:
            await saver.setup()
            await saver.conn.execute("CREATE TABLE t (x)")
            await saver.conn.commit()
            await saver.conn.execute("INSERT INTO t VALUES (1)")  # committed
            await saver.conn.commit()
            await saver.conn.execute("INSERT INTO t VALUES (2)")  # its COMMIT never comes
            reading = await saver.conn.execute("SELECT x FROM t")  # a read cut short: a live statement
            await reading.fetchone()
            raise RunFailed(reading)  # the exception keeps the cursor (and its statement) alive

    with pytest.raises(RunFailed) as failure:
        asyncio.run(failing_run())
    assert failure.value.args[0] is not None  # the caller still holds the cursor, as CI's test did
    assert not _write_locked(db)
    with closing(sqlite3.connect(db)) as reader:
        assert reader.execute("SELECT x FROM t").fetchall() == [(1,)]


def test_the_checkpointer_commits_what_a_finished_run_wrote(tmp_path: Path) -> None:
    db = tmp_path / "checkpoints.sqlite"

    async def run() -> None:
        async with sqlite_checkpointer(str(db)) as saver:
            await saver.setup()
            await saver.conn.execute("CREATE TABLE t (x)")
            await saver.conn.execute("INSERT INTO t VALUES (3)")
            await saver.conn.commit()

    asyncio.run(run())
    with closing(sqlite3.connect(db)) as reader:
        assert reader.execute("SELECT x FROM t").fetchall() == [(3,)]


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
