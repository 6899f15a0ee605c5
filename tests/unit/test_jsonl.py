"""Input JSONL files: read lazily, and every problem an error that names the file and the line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from longgraph.errors import InputError
from longgraph.jsonl import iter_objects


def test_objects_come_with_their_line_and_blank_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    path.write_text('{"a": 1}\n\n{"a": 2}\n', encoding="utf-8")
    assert list(iter_objects(path)) == [(f"{path}:1", {"a": 1}), (f"{path}:3", {"a": 2})]


def test_reading_stops_where_the_caller_stops(tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    path.write_text('{"a": 1}\nnot json at all\n', encoding="utf-8")
    rows = iter_objects(path)
    assert next(rows) == (f"{path}:1", {"a": 1})  # the broken second line is never read
    with pytest.raises(InputError, match=r"items\.jsonl:2: not JSON"):
        next(rows)


def test_a_missing_file_or_a_non_object_line_is_a_typed_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"benchmark item file .*missing\.jsonl cannot be read"):
        list(iter_objects(tmp_path / "missing.jsonl", "benchmark item"))
    path = tmp_path / "items.jsonl"
    path.write_text("[1, 2]\n", encoding="utf-8")
    with pytest.raises(
        InputError, match=r"items\.jsonl:1: not a benchmark item \(a JSON list, not an object\)"
    ):
        list(iter_objects(path, "benchmark item"))


def test_rows_written_from_many_tasks_at_once_are_whole_lines_and_the_loop_keeps_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``awrite`` runs on the appender's thread: rows big enough to be written in several pieces still
    come out one whole line each, and a slow disk (each fsync 20 ms here) does not hold the event loop."""
    import asyncio
    import json
    import os
    import time

    from longgraph.jsonl import Appender

    real_fsync = os.fsync
    fsyncs = 0
    syncing = False

    def slow_fsync(fd: int) -> None:
        nonlocal fsyncs, syncing
        fsyncs += 1
        syncing = True
        time.sleep(0.02)
        syncing = False
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", slow_fsync)
    path = tmp_path / "rows.jsonl"
    ticks_while_syncing = 0

    async def ticker() -> None:
        nonlocal ticks_while_syncing
        while True:
            ticks_while_syncing += syncing
            await asyncio.sleep(0.005)

    async def run() -> None:
        ticking = asyncio.create_task(ticker())
        with Appender(path) as appender:
            await asyncio.gather(*(appender.awrite({"i": i, "text": str(i) * 20_000}) for i in range(20)))
        ticking.cancel()

    started = time.monotonic()
    asyncio.run(run())
    elapsed = time.monotonic() - started
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert sorted(r["i"] for r in rows) == list(range(20))
    assert all(r["text"] == str(r["i"]) * 20_000 for r in rows)
    assert fsyncs in range(1, 20)  # rows that waited for a write in progress went to disk together
    assert elapsed >= fsyncs * 0.02  # the fsyncs did happen, one after the other
    assert ticks_while_syncing > 0  # the loop ran while the disk was busy (an fsync on it would block it)


def _appended_while_busy(appender: Any, rows: list[Any]) -> list[BaseException | None]:
    """``awrite`` for every row, all handed over while the appender's thread is busy."""
    import asyncio
    import threading

    async def run() -> list[BaseException | None]:
        release = threading.Event()
        appender._worker.submit(release.wait)
        tasks = [asyncio.create_task(appender.awrite(row)) for row in rows]
        await asyncio.sleep(0.05)
        release.set()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        return [r if isinstance(r, BaseException) else None for r in results]

    return asyncio.run(run())


def test_rows_handed_over_together_are_one_fsync_and_a_row_that_fails_fails_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from longgraph.jsonl import Appender, read_rows

    fsyncs: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (fsyncs.append(fd), real_fsync(fd))[1])
    path = tmp_path / "rows.jsonl"
    with Appender(path) as appender:
        assert _appended_while_busy(appender, [{"i": i} for i in range(20)]) == [None] * 20
        assert len(fsyncs) == 1  # one fsync for twenty rows
        outcomes = _appended_while_busy(appender, [{"i": 20}, {"i": object()}, {"i": 21}])
    assert outcomes[0] is None and outcomes[2] is None
    assert isinstance(outcomes[1], TypeError)  # its caller hears of it, and only its caller
    assert [row["i"] for row in read_rows(path)] == [*range(20), 20, 21]


def test_a_group_whose_fsync_fails_is_cut_back_and_written_again_row_by_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from longgraph.jsonl import Appender, read_rows

    real_fsync = os.fsync
    failures = iter([OSError(5, "Input/output error")])

    def fsync_failing_once(fd: int) -> None:
        failure = next(failures, None)
        if failure is not None:
            raise failure
        real_fsync(fd)

    path = tmp_path / "rows.jsonl"
    with Appender(path) as appender:
        appender.write({"i": "before"})
        monkeypatch.setattr(os, "fsync", fsync_failing_once)
        assert _appended_while_busy(appender, [{"i": i} for i in range(5)]) == [None] * 5
    assert [row["i"] for row in read_rows(path)] == ["before", 0, 1, 2, 3, 4]  # none twice
