"""The result cache commits the answers of concurrent calls together, and a write it cannot make does
not cost the run its answer.

One commit per answer was one ``fsync`` per call, queued on the cache's thread: with a 30 ms
``fsync`` (a network filesystem) a 1.28M-token run took 4.2 s instead of 1.1 s.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
from contextlib import closing
from pathlib import Path

import pytest

from longgraph.cache import ResultCache


async def _put_while_busy(cache: ResultCache, keys: list[str]) -> list[BaseException | None]:
    """``aput`` for every key, all handed over while the cache's thread is busy."""
    release = threading.Event()
    cache._worker.submit(release.wait)
    tasks = [asyncio.create_task(cache.aput(key, "map", f"answer for {key}")) for key in keys]
    await asyncio.sleep(0.05)  # every write handed over
    release.set()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    return [r if isinstance(r, BaseException) else None for r in results]


def test_answers_handed_over_together_commit_together(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path / "results.sqlite")
    statements: list[str] = []
    cache._use(lambda db: db.set_trace_callback(statements.append))
    keys = [f"key-{i:02d}" for i in range(20)]

    assert asyncio.run(_put_while_busy(cache, keys)) == [None] * 20
    assert [s for s in statements if s.startswith("COMMIT")] == ["COMMIT"]  # one fsync for twenty
    assert [cache.get(key) for key in keys] == [f"answer for {key}" for key in keys]
    cache.close()


def test_an_answer_that_cannot_be_stored_is_said_once_and_the_others_are_stored(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "results.sqlite"
    cache = ResultCache(path)
    cache.put("first", "map", "made the table")
    with closing(sqlite3.connect(path)) as other:
        other.execute("CREATE TRIGGER full BEFORE INSERT ON answers WHEN NEW.key LIKE 'doomed%' "
                      "BEGIN SELECT RAISE(ABORT, 'disk full'); END")  # fmt: skip
        other.commit()

    with caplog.at_level(logging.WARNING, logger="longgraph"):
        outcomes = asyncio.run(_put_while_busy(cache, ["a", "doomed-1", "b", "doomed-2", "c"]))
    assert outcomes == [None] * 5  # no caller loses its answer to the cache
    assert [cache.get(key) for key in ("a", "b", "c")] == ["answer for a", "answer for b", "answer for c"]
    assert cache.get("doomed-1") is None and cache.get("doomed-2") is None
    said = [r.getMessage() for r in caplog.records if "not stored" in r.getMessage()]
    assert len(said) == 1 and str(path) in said[0] and "disk full" in said[0]
    cache.close()


@pytest.mark.parametrize(
    ("kind", "name", "is_damage"),
    [
        (sqlite3.DatabaseError, "SQLITE_CORRUPT", True),
        (sqlite3.DatabaseError, "SQLITE_CORRUPT_INDEX", True),  # extended codes are what Python reports
        (sqlite3.DatabaseError, "SQLITE_NOTADB", True),
        (sqlite3.IntegrityError, "SQLITE_CONSTRAINT_TRIGGER", False),  # one statement refused
        (sqlite3.OperationalError, "SQLITE_FULL", False),  # access, not contents
        (sqlite3.OperationalError, "SQLITE_BUSY", False),
    ],
)
def test_only_sqlites_verdict_on_the_contents_counts_as_damage(
    kind: type[sqlite3.DatabaseError], name: str, is_damage: bool
) -> None:
    from longgraph.cache import damaged

    error = kind("as SQLite raised it")
    error.sqlite_errorname = name
    assert damaged(error) is is_damage
