"""Damaged SQLite files: the result cache (on by default) is run without, said once; a damaged checkpoint
database is a one-line error naming the file. The damage is made past the header, where opening the
file still works and only reading its pages fails ("database disk image is malformed")."""

from __future__ import annotations

import logging
import random
from pathlib import Path
from typing import Any

import pytest

from longgraph.cache import ResultCache
from longgraph.errors import ConfigurationError
from longgraph.nodes.structure_store import StructureStore
from longgraph.state.contract import DocumentIn


def damage_past_the_header(path: Path) -> None:
    data = bytearray(path.read_bytes())
    noise = random.Random(7)
    data[4096:] = bytes(noise.randrange(256) for _ in range(len(data) - 4096))
    path.write_bytes(bytes(data))


def test_a_damaged_result_cache_is_run_without_and_said_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "results.sqlite"
    cache = ResultCache(path)
    for i in range(2000):
        cache.put(f"key{i}", "map", "an answer " * 20)
    assert cache.get("key5") == "an answer " * 20
    cache.close()
    damage_past_the_header(path)

    with caplog.at_level(logging.WARNING, logger="longgraph"):
        reopened = ResultCache(path)
        assert reopened.get("key5") is None  # a miss: the call is made
        reopened.put("key9999", "map", "new")  # nothing raised, nothing written
        assert reopened.get("key9999") is None
        store = StructureStore(path, "doc_trees", DocumentIn)
        assert store.get("a tree") is None
        store.put("a tree", DocumentIn(text="t"))
    said = [r.getMessage() for r in caplog.records if "damaged" in r.getMessage()]
    assert len(said) == 1 and str(path) in said[0] and "running without it" in said[0]


def test_a_damaged_checkpoint_database_is_one_line_naming_it(tmp_path: Path) -> None:
    from longgraph.api import ask
    from longgraph.testing.fakes import FakeProvider, ScriptedChatModel
    from longgraph.tests.conftest import FAKE_SETTINGS, QUESTION, planted

    db = tmp_path / "checkpoints.sqlite"
    run: dict[str, Any] = {"checkpoint_path": db, "thread_id": "t", **FAKE_SETTINGS, "cache_path": ""}
    for thread in range(12):  # enough checkpoints for pages past the first
        ask(
            QUESTION,
            planted(9_000),
            llm=FakeProvider(ScriptedChatModel()),
            **{**run, "thread_id": f"t{thread}"},
        )
    damage_past_the_header(db)
    with pytest.raises(ConfigurationError) as raised:
        ask(QUESTION, planted(9_000), llm=FakeProvider(ScriptedChatModel()), **{**run, "thread_id": "t3"})
    message = str(raised.value)
    assert f"checkpoint database {db}" in message and "damaged" in message and "\n" not in message
