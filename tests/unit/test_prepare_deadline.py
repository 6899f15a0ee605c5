"""The preparation of an input (counting and chunking) has a deadline of its own, and large inputs are
prepared one at a time per process (``nodes/prepare.py``)."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from longgraph.errors import InputError
from longgraph.nodes import prepare
from longgraph.state.context import Context
from longgraph.strategies import build_strategy
from longgraph.testing.capable import SETTINGS
from longgraph.testing.fakes import FakeProvider, ScriptedChatModel, oracle_responder
from longgraph.tests.conftest import QUESTION, planted


def _ask(text: str, **settings: Any) -> Any:
    graph = build_strategy("mapreduce", FakeProvider(ScriptedChatModel(responder=oracle_responder)))
    given = {"question": QUESTION, "documents": [{"title": "T", "text": text}]}
    return asyncio.run(graph.ainvoke(given, context={**SETTINGS, "plan_records": "off", **settings}))


def test_an_input_not_chunked_within_the_deadline_stops_saying_how_far_it_got(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    slow = prepare.chunks_once

    def slowly(*args: Any, **kwargs: Any) -> Any:
        for chunk in slow(*args, **kwargs):
            time.sleep(0.05)  # a loaded server's counting
            yield chunk

    monkeypatch.setattr(prepare, "chunks_once", slowly)
    with pytest.raises(
        InputError, match=r"not prepared within prepare_timeout_s \(0.2 s\): [\d,]+ of [\d,]+ characters"
    ):
        _ask(planted(200_000), prepare_timeout_s=0.2)
    assert "smoked plums" in _ask(planted(20_000), prepare_timeout_s=30).get(
        "answer", ""
    )  # in time: answered


def test_a_large_input_waits_for_the_slot_and_gives_up_at_its_deadline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(prepare, "LARGE_INPUT_CHARS", 50_000)
    held = threading.Event()
    release = threading.Event()

    def another_large_input() -> None:
        with prepare._large_input_slot(60_000, None, None):
            held.set()
            release.wait(10)

    other = threading.Thread(target=another_large_input)
    other.start()
    try:
        assert held.wait(5)
        with pytest.raises(InputError, match="preparing other large inputs"):
            _ask(planted(60_000), prepare_timeout_s=0.3)
        assert "smoked plums" in _ask(planted(20_000), prepare_timeout_s=0.3).get(
            "answer", ""
        )  # small: no wait
    finally:
        release.set()
        other.join()
    assert "smoked plums" in _ask(planted(60_000), prepare_timeout_s=30).get("answer", "")  # the slot is free


def test_the_deadline_is_a_positive_number_of_seconds() -> None:
    from longgraph.errors import ConfigurationError

    for wrong in (0, -1, float("nan"), 1e9):
        with pytest.raises(ConfigurationError, match="prepare_timeout_s"):
            Context(prepare_timeout_s=wrong)
    assert Context(prepare_timeout_s=2.5).prepare_timeout_s == 2.5
