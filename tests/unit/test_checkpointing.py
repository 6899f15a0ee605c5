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


class Killed(BaseException):
    """Stands for the process dying: nothing after it runs, and nothing catches it as an error."""


@pytest.mark.parametrize("kill_at", [2, 3, 4, 5, 6])
def test_a_thread_killed_at_any_checkpoint_resumes_to_the_same_answer(
    kill_at: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed while writing its ``kill_at``-th checkpoint (the tasks of the step before it have their
    writes saved, the next checkpoint is not there), a thread must resume, not be returned as a stored
    result (seen in batch's kill test: "GraphOutput: answer Field required", 1 in 4 runs), and reach
    the uninterrupted answer. Only the latest checkpoint is kept, so this is every state a kill leaves."""
    from longgraph.api import ask
    from longgraph.checkpointing import _latest_only_saver
    from longgraph.testing.fakes import FakeProvider, ScriptedChatModel
    from longgraph.tests.conftest import FAKE_SETTINGS, QUESTION, planted

    document = planted(9_000)
    settings: dict[str, Any] = {"documents": [{"text": document}], **FAKE_SETTINGS, "cache_path": ""}
    reference = ask(QUESTION, llm=FakeProvider(ScriptedChatModel()), **settings)
    run = {**settings, "checkpoint_path": tmp_path / "checkpoints.sqlite", "thread_id": "t"}

    saver = _latest_only_saver()
    write_checkpoint = saver.aput
    written = 0

    async def dying_aput(self: Any, *args: Any) -> Any:
        nonlocal written
        written += 1
        if written == kill_at:
            raise Killed
        return await write_checkpoint(self, *args)

    monkeypatch.setattr(saver, "aput", dying_aput)
    with pytest.raises(Killed):
        ask(QUESTION, llm=FakeProvider(ScriptedChatModel()), **run)
    monkeypatch.setattr(saver, "aput", write_checkpoint)
    with closing(sqlite3.connect(tmp_path / "checkpoints.sqlite")) as db:
        assert db.execute("SELECT count(*) FROM checkpoints").fetchone() == (1,)  # the latest only

    resumed = ask(QUESTION, llm=FakeProvider(ScriptedChatModel()), **run)
    assert resumed.answer == reference.answer and "smoked plums" in resumed.answer
    assert not any("stored result" in note for note in resumed.stats.notes)  # resumed, not "finished"


def test_old_threads_are_listed_and_pruned_and_the_file_shrinks(tmp_path: Path) -> None:
    import datetime as dt

    from typer.testing import CliRunner

    from longgraph.api import ask
    from longgraph.checkpointing import list_threads, prune_threads
    from longgraph.cli import app
    from longgraph.testing.fakes import FakeProvider, ScriptedChatModel
    from longgraph.tests.conftest import FAKE_SETTINGS, QUESTION, planted

    db = tmp_path / "checkpoints.sqlite"
    for thread in ("first", "second"):
        ask(QUESTION, planted(60_000), llm=FakeProvider(ScriptedChatModel()), checkpoint_path=db,
            thread_id=thread, **FAKE_SETTINGS, cache_path="")  # fmt: skip
    threads = asyncio.run(list_threads(db))
    assert [t.thread_id for t in threads] == ["second", "first"] and all(t.step > 0 for t in threads)
    listed = CliRunner().invoke(app, ["checkpoints", "list", "--checkpoint-db", str(db)])
    assert listed.exit_code == 0 and "second" in listed.stdout and "first" in listed.stdout

    assert asyncio.run(prune_threads(db, older_than=dt.timedelta(days=1))) == []  # both are recent
    size = db.stat().st_size
    later = threads[0].updated + dt.timedelta(hours=1)
    pruned = asyncio.run(prune_threads(db, older_than=dt.timedelta(minutes=30), now=later))
    assert sorted(pruned) == ["first", "second"] and asyncio.run(list_threads(db)) == []
    assert db.stat().st_size < size / 2

    refused = CliRunner().invoke(
        app, ["checkpoints", "prune", "--older-than", "-1", "--checkpoint-db", str(db)]
    )
    assert refused.exit_code == 2 and "--older-than" in refused.output
