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
