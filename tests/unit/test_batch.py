"""`abatch`: every item answered or failed with why, bad input refused before any call, reruns resume."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from longgraph.batch import abatch, batch, checkpoint_file
from longgraph.errors import InputError
from longgraph.testing.fakes import FakeProvider, ScriptedChatModel
from longgraph.tests.conftest import FAKE_SETTINGS, QUESTION, planted

SETTINGS: dict[str, Any] = {**FAKE_SETTINGS, "cache_path": ""}
LONG_QUESTION = "why " * 3000 + "?"
"""Longer than the window: an item that fails when it runs (its first node), before any call."""


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _items(tmp_path: Path) -> list[dict[str, Any]]:
    (tmp_path / "doc.txt").write_text(planted(9_000, at=0.2), encoding="utf-8")
    return [
        {"id": "inline", "question": QUESTION, "document": planted(8_000), "metadata": {"gold": "smoked plums"}},
        {"id": "two-docs", "question": QUESTION, "documents": [{"title": "a", "text": planted(6_000, at=0.9)},
                                                               {"title": "b", "text": planted(5_000, at=0.1)}]},
        {"question": QUESTION, "files": ["doc.txt"], "strategy": "segment-plus"},
    ]  # fmt: skip


def test_every_item_gets_a_row_with_its_answer_and_cost(tmp_path: Path) -> None:
    items = _write(tmp_path / "items.jsonl", _items(tmp_path))
    out = tmp_path / "results.jsonl"
    model = ScriptedChatModel()
    summary = batch(items, out=out, llm=FakeProvider(model), **SETTINGS)
    rows = _rows(out)
    assert summary.total == summary.done == 3 and summary.failed == summary.skipped == 0
    assert {"inline", "two-docs"} < {r["id"] for r in rows} and len(rows) == 3
    for row in rows:
        assert row["error"] is None and "smoked plums" in row["answer"] and row["supported"] is not None
        assert row["llm_calls"] > 0 and row["chunks"]["total"] == sum(
            row["chunks"][s] for s in ("used", "no_information", "unsupported", "filtered", "failed")
        )
        assert row["evidence"] and "smoked plums" in row["evidence"][0]["text"]
    by_id = {r["id"]: r for r in rows}
    assert by_id["inline"]["metadata"] == {"gold": "smoked plums"}
    from_file = next(r for r in rows if r["id"] not in ("inline", "two-docs"))
    assert from_file["strategy"] == "segment-plus" and len(from_file["id"]) == 16  # a content digest
    assert summary.llm_calls == sum(r["llm_calls"] for r in rows) == len(model.calls)


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("not json", "not JSON"),
        ('{"question": "q", "document": "d", "colour": "red"}', "unknown key(s) colour"),
        ('{"document": "d"}', "no question"),
        ('{"question": "q"}', "exactly one of document, documents or files"),
        ('{"question": "q", "files": ["missing.txt"]}', "no such file"),
        ('{"question": "q", "document": "d", "strategy": "magic"}', "unknown strategy 'magic'"),
        ('{"id": "inline", "question": "q", "document": "d"}', "also the id of"),
    ],
)
def test_a_bad_line_is_refused_before_any_call(tmp_path: Path, line: str, problem: str) -> None:
    items = tmp_path / "items.jsonl"
    good = json.dumps({"id": "inline", "question": QUESTION, "document": planted(3_000)})
    items.write_text(good + "\n" + line + "\n", encoding="utf-8")
    model = ScriptedChatModel()
    with pytest.raises(InputError, match=re.escape(problem)) as raised:
        batch(items, out=tmp_path / "out.jsonl", llm=FakeProvider(model), **SETTINGS)
    assert "items.jsonl:2" in str(raised.value) and model.calls == []


def test_a_failing_item_is_recorded_and_the_others_answered(tmp_path: Path) -> None:
    rows = [
        {"id": "good", "question": QUESTION, "document": planted(6_000)},
        {"id": "long", "question": LONG_QUESTION, "document": planted(6_000)},
    ]
    summary = batch(rows, llm=FakeProvider(ScriptedChatModel()), **SETTINGS)
    by_id = {r["id"]: r for r in summary.rows}
    assert summary.done == 2 and summary.failed == 1
    assert by_id["long"]["error_type"] == "ConfigurationError" and "too small" in by_id["long"]["error"]
    assert "smoked plums" in by_id["good"]["answer"]
    assert any(line.startswith("first failure: item long: ConfigurationError") for line in summary.lines())


@pytest.mark.parametrize(
    ("row", "words"),
    [({"document": "   "}, "no text"), ({"documents": [{"title": "only a title"}]}, "text"),
     ({"documents": [{"title": "t", "text": " \n"}]}, "no text"), ({"documents": [3, 4]}, "documents"),
     ({"files": ["binary.bin"]}, "binary"), ({"files": ["empty.txt"]}, "no text"),
     ({"files": ["ok.txt", "binary.bin"]}, "binary"), ({"files": ["../outside.txt"]}, "outside"),
     ({"files": ["/etc/hostname"]}, "outside"), ({"files": ["link.txt"]}, "outside")],
)  # fmt: skip
def test_every_bad_item_is_found_before_the_first_call(
    tmp_path: Path, row: dict[str, Any], words: str
) -> None:
    folder = tmp_path / "items"
    folder.mkdir()
    (folder / "binary.bin").write_bytes(os.urandom(8192))
    (folder / "empty.txt").write_text("  \n")
    (folder / "ok.txt").write_text(planted(3_000))
    (tmp_path / "outside.txt").write_text("a secret of the machine")
    (folder / "link.txt").symlink_to(tmp_path / "outside.txt")
    rows = [
        {"id": "good", "question": QUESTION, "document": planted(4_000)},
        {"id": "bad", "question": QUESTION, **row},
    ]
    model = ScriptedChatModel()
    with pytest.raises(InputError, match=words) as refused:
        batch(_write(folder / "items.jsonl", rows), llm=FakeProvider(model), **SETTINGS)
    assert "items.jsonl:2" in str(refused.value)
    assert model.calls == [], "a call was made before the bad item was found"


def test_a_rerun_skips_finished_items_and_runs_edited_and_failed_ones(tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    rows = [
        {"id": "a", "question": QUESTION, "document": planted(6_000)},
        {"id": "b", "question": QUESTION, "document": planted(6_000, at=0.8)},
        {"id": "c", "question": LONG_QUESTION, "document": planted(4_000)},
    ]
    out = tmp_path / "results.jsonl"
    first = batch(_write(items, rows), out=out, llm=FakeProvider(ScriptedChatModel()), **SETTINGS)
    assert (first.done, first.failed) == (3, 1) and checkpoint_file(out).exists()
    with sqlite3.connect(checkpoint_file(out)) as db:  # finished items' checkpoints are deleted
        threads = [t for (t,) in db.execute("SELECT DISTINCT thread_id FROM checkpoints")]
    assert len(threads) == 1 and threads[0].startswith("batch-c-")  # the failed one's stay

    again_model = ScriptedChatModel()
    again = batch(items, out=out, llm=FakeProvider(again_model), **SETTINGS)
    assert (again.skipped, again.done) == (2, 1) and again.rows[0]["id"] == "c"  # the failed one, retried
    assert again_model.calls == []  # the long question fails again before any call

    rows[1]["question"] = "Which ingredient makes Grandma Olga's borscht special?"  # an edited item
    rows[2]["question"] = QUESTION  # a fixed one
    edited_model = ScriptedChatModel()
    edited = batch(_write(items, rows), out=out, llm=FakeProvider(edited_model), **SETTINGS)
    assert edited.skipped == 1 and sorted(r["id"] for r in edited.rows) == ["b", "c"]
    assert edited.failed == 0 and edited_model.calls
    last = {r["id"]: r for r in _rows(out)}  # the last row of an id is its result
    assert all(r["error"] is None for r in last.values()) and len(_rows(out)) == 6


async def test_items_run_together_on_one_client(tmp_path: Path) -> None:
    """Each item is its own run, but all share the one context object, hence one client: a second item
    starts its calls before the first has finished (not one item after another). Item A's answers wait
    (up to 10 s) for item B's first call: run one after the other, B would only start after A's last
    call (the fake answers at once, so without the wait CI once saw A finish before B had chunked)."""
    other = "Which secret ingredient does Grandma Olga put in her borscht?"
    order: list[str] = []
    b_started = asyncio.Event()

    class WaitsForB(ScriptedChatModel):
        async def _agenerate(
            self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any
        ) -> Any:
            result = self._answer(messages, kwargs)
            item = "B" if other in str(messages[-1].content) else "A"
            order.append(item)
            if item == "B":
                b_started.set()
            else:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(b_started.wait(), timeout=10)
            return result

    rows = [
        {"id": "A", "question": QUESTION, "document": planted(12_000)},
        {"id": "B", "question": other, "document": planted(12_000, at=0.3)},
    ]
    summary = await abatch(rows, llm=FakeProvider(WaitsForB()), **SETTINGS)
    assert summary.failed == 0 and order.count("A") > 2 and order.count("B") > 2
    first_b = order.index("B")
    assert "A" in order[first_b:], f"item B started only after item A's last call: {order}"


def test_a_results_file_refuses_the_rows_of_another_items_file(tmp_path: Path) -> None:
    """Both files give an item the id "a": appended, the second's row would replace the first's answer."""
    first = _write(tmp_path / "first.jsonl", [{"id": "a", "question": QUESTION, "document": planted(6_000)}])
    other = _write(tmp_path / "other.jsonl", [{"id": "a", "question": "What colour?", "document": "Blue."}])
    out = tmp_path / "results.jsonl"
    batch(first, out=out, llm=FakeProvider(ScriptedChatModel()), **SETTINGS)
    written = out.read_text(encoding="utf-8")
    assert _rows(out)[0]["items"] == str(first.resolve())
    model = ScriptedChatModel()
    with pytest.raises(InputError, match=r"holds the results of .*first\.jsonl"):
        batch(other, out=out, llm=FakeProvider(model), **SETTINGS)
    assert model.calls == [] and out.read_text(encoding="utf-8") == written
    again = batch(first, out=out, llm=FakeProvider(ScriptedChatModel()), **SETTINGS)  # its own file: resumes
    assert again.skipped == 1
