"""Input JSONL files: read lazily, and every problem an error that names the file and the line."""

from __future__ import annotations

from pathlib import Path

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
    """``awrite`` runs on worker threads: rows big enough to be written in several pieces still come
    out one whole line each, and a slow disk (each fsync 20 ms here) does not hold the event loop."""
    import asyncio
    import json
    import os
    import time

    from longgraph.jsonl import Appender

    real_fsync = os.fsync

    def slow_fsync(fd: int) -> None:
        time.sleep(0.02)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", slow_fsync)
    path = tmp_path / "rows.jsonl"
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
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
    assert elapsed >= 0.4  # twenty fsyncs of 20 ms, one after the other
    assert ticks >= elapsed / 0.005 / 3  # the loop ran throughout
