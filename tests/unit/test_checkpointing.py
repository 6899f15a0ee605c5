"""The SQLite checkpointer: each method one whole transaction on the saver's own thread, so the file is
never left locked or half written, however the run it served ended, and the event loop never waits on
the file.

With LangGraph's ``AsyncSqliteSaver`` a run that failed midway could leave a write cancelled between
its INSERT and its COMMIT, holding the file's write lock, and the resume in the same process waited
out the busy timeout at every checkpoint (CI: 723 s, then "database is locked").
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from longgraph.checkpointing import LatestOnlySqliteSaver, sqlite_checkpointer


def _write_locked(db: Path) -> bool:
    with closing(sqlite3.connect(db, timeout=0)) as other:
        try:
            other.execute("BEGIN IMMEDIATE")
            other.rollback()
            return False
        except sqlite3.OperationalError:
            return True


def _checkpoint(number: int) -> dict[str, Any]:
    return {"v": 1, "id": f"checkpoint-{number:03d}", "ts": "2026-11-25T00:00:00+00:00",
            "channel_values": {"step": number}, "channel_versions": {}, "versions_seen": {}}  # fmt: skip


THREAD: Any = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}


def _stored(db: Path) -> list[tuple[str, str]]:
    with closing(sqlite3.connect(db)) as reader:
        return reader.execute(
            "SELECT thread_id, checkpoint_id FROM checkpoints ORDER BY checkpoint_id"
        ).fetchall()


async def _put(saver: LatestOnlySqliteSaver, number: int) -> None:
    await saver.aput(THREAD, _checkpoint(number), {"step": number}, {})  # type: ignore[arg-type]


def test_a_checkpoint_failing_inside_its_transaction_neither_lands_nor_locks_the_file(tmp_path: Path) -> None:
    """The newer checkpoint and the deletion of the older one are one transaction: a failure in the
    deletion (a trigger stands for a full disk) takes the insert back too, and leaves no lock."""
    db = tmp_path / "checkpoints.sqlite"

    async def run() -> None:
        async with sqlite_checkpointer(str(db)) as saver:
            await _put(saver, 1)
            with closing(sqlite3.connect(db)) as other:
                other.execute(
                    "CREATE TRIGGER full BEFORE DELETE ON checkpoints BEGIN SELECT RAISE(ABORT, 'disk full'); END"
                )
                other.commit()  # fmt: skip
            with pytest.raises(sqlite3.IntegrityError, match="disk full"):
                await _put(saver, 2)
            assert not _write_locked(db)
            assert _stored(db) == [("t", "checkpoint-001")]
            with closing(sqlite3.connect(db)) as other:
                other.execute("DROP TRIGGER full")
                other.commit()
            await _put(saver, 3)
        assert _stored(db) == [("t", "checkpoint-003")]

    asyncio.run(run())
    assert not _write_locked(db)


def test_a_locked_file_is_waited_for_off_the_event_loop_and_a_cancelled_write_lands_whole(
    tmp_path: Path,
) -> None:
    """Another process holds the file: the write waits (busy timeout) on the saver's thread while the
    event loop goes on; the run is cancelled meanwhile, and closing the checkpointer still waits for
    the write it had handed over, which lands whole (the newer checkpoint, the older one gone)."""
    db = tmp_path / "checkpoints.sqlite"
    ticks: list[float] = []

    async def ticker() -> None:
        while True:
            ticks.append(time.monotonic())
            await asyncio.sleep(0.02)

    async def run() -> None:
        async with sqlite_checkpointer(str(db)) as saver:
            await _put(saver, 1)
            holder = sqlite3.connect(db, check_same_thread=False)
            holder.execute("BEGIN IMMEDIATE")
            threading.Timer(0.6, holder.rollback).start()
            ticking = asyncio.create_task(ticker())
            writing = asyncio.create_task(_put(saver, 2))
            await asyncio.sleep(0.3)
            assert not writing.done()  # waiting for the lock
            writing.cancel()
            with pytest.raises(asyncio.CancelledError):
                await writing
            ticking.cancel()
        holder.close()

    started = time.monotonic()
    asyncio.run(run())
    assert time.monotonic() - started >= 0.55  # closing waited for the write the lock held back
    assert len(ticks) >= 10  # the loop ran every 20 ms while the write waited
    assert _stored(db) == [("t", "checkpoint-002")]
    assert not _write_locked(db)


def _thread(name: str) -> Any:
    return {"configurable": {"thread_id": name, "checkpoint_ns": ""}}


async def _handed_over_together(
    saver: LatestOnlySqliteSaver, names: list[str], *, cancel: str | None = None
) -> list[BaseException | None]:
    """One checkpoint per thread in ``names``, all handed over while the worker is busy, so that
    its next commit takes them all; ``cancel``'s caller gives up before the worker gets to it."""
    release = threading.Event()
    saver.worker.submit(release.wait)  # the worker is busy: writes wait their turn together

    async def put(name: str) -> None:
        await saver.aput(_thread(name), _checkpoint(1), {"step": 1}, {})

    tasks = {name: asyncio.create_task(put(name)) for name in names}
    await asyncio.sleep(0.05)  # every write handed over
    if cancel is not None:
        tasks[cancel].cancel()
        await asyncio.sleep(0)
    release.set()
    results = await asyncio.gather(*tasks.values(), return_exceptions=True)
    return [r if isinstance(r, BaseException) else None for r in results]


def test_writes_handed_over_together_commit_together(tmp_path: Path) -> None:
    db = tmp_path / "checkpoints.sqlite"
    statements: list[str] = []

    async def run() -> list[BaseException | None]:
        async with sqlite_checkpointer(str(db)) as saver:
            saver.conn.set_trace_callback(statements.append)
            return await _handed_over_together(saver, [f"thread-{i:02d}" for i in range(20)])

    assert asyncio.run(run()) == [None] * 20
    assert [s for s in statements if s.startswith("COMMIT")] == ["COMMIT"]  # one fsync for twenty
    assert len(_stored(db)) == 20


def test_a_failing_write_fails_alone_and_a_cancelled_one_is_not_written(tmp_path: Path) -> None:
    db = tmp_path / "checkpoints.sqlite"

    async def run() -> list[BaseException | None]:
        async with sqlite_checkpointer(str(db)) as saver:
            await _put(saver, 0)  # the tables exist
            with closing(sqlite3.connect(db)) as other:
                other.execute("CREATE TRIGGER full BEFORE INSERT ON checkpoints WHEN NEW.thread_id = 'doomed' "
                              "BEGIN SELECT RAISE(ABORT, 'disk full'); END")  # fmt: skip
                other.commit()
            names = ["a", "doomed", "b", "given-up", "c"]
            return await _handed_over_together(saver, names, cancel="given-up")

    a, doomed, b, given_up, c = asyncio.run(run())
    assert (a, b, c) == (None, None, None)
    assert isinstance(doomed, sqlite3.IntegrityError) and "disk full" in str(doomed)
    assert isinstance(given_up, asyncio.CancelledError)
    assert sorted(thread for thread, _ in _stored(db)) == ["a", "b", "c", "t"]
    assert not _write_locked(db)


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
    from longgraph.testing.fakes import FakeProvider, ScriptedChatModel
    from longgraph.tests.conftest import FAKE_SETTINGS, QUESTION, planted

    document = planted(9_000)
    settings: dict[str, Any] = {"documents": [{"text": document}], **FAKE_SETTINGS, "cache_path": ""}
    reference = ask(QUESTION, llm=FakeProvider(ScriptedChatModel()), **settings)
    run = {**settings, "checkpoint_path": tmp_path / "checkpoints.sqlite", "thread_id": "t"}

    saver = LatestOnlySqliteSaver
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
