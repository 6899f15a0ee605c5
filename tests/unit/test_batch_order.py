"""A batch runs the items on one document together (``longgraph/batch.py``: ``in_document_groups``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from longgraph.batch import BatchItem, batch, in_order, plan_batch
from longgraph.testing.fakes import FakeProvider, ScriptedChatModel
from longgraph.tests.conftest import FAKE_SETTINGS, QUESTION, planted

SETTINGS: dict[str, Any] = {**FAKE_SETTINGS, "cache_path": ""}


def _alternating(tmp_path: Path) -> list[dict[str, Any]]:
    (tmp_path / "c.txt").write_text(planted(3_000, at=0.5), encoding="utf-8")
    c = str(tmp_path / "c.txt")
    a, b = planted(2_000, at=0.1), planted(2_500, at=0.9)
    return [
        {"id": "a1", "question": QUESTION, "document": a},
        {"id": "b1", "question": QUESTION, "document": b},
        {"id": "c1", "question": QUESTION, "files": [c]},
        {"id": "a2", "question": "What else?", "document": a},
        {"id": "c2", "question": "What else?", "files": [c]},
        {"id": "b2", "question": "What else?", "document": b},
    ]


def test_items_on_one_document_are_given_out_together(tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps(r) + "\n" for r in _alternating(tmp_path)), encoding="utf-8")
    planned = plan_batch(items, None, "mapreduce", files_outside=False)
    assert [item.id for item in planned.items()] == ["a1", "a2", "b1", "b2", "c1", "c2"]


def test_a_batch_answers_them_in_that_order(tmp_path: Path) -> None:
    seen: list[str] = []
    summary = batch(
        _alternating(tmp_path),
        llm=FakeProvider(ScriptedChatModel()),
        items_in_flight=1,
        files_outside=True,
        on_item=lambda row, _: seen.append(row["id"]),
        **SETTINGS,
    )
    assert summary.failed == 0, summary.rows
    assert seen == ["a1", "a2", "b1", "b2", "c1", "c2"]


def _item(item_id: str) -> BatchItem:
    return BatchItem(id=item_id, digest=item_id, where=item_id, question="q", strategy="mapreduce")


def test_the_reordering_holds_back_at_most_its_window() -> None:
    file_order = [f"{group}{i}" for i in range(50) for group in "ab"]  # a0 b0 a1 b1 ...
    wanted = sorted(file_order, key=lambda s: (s[0], int(s[1:])))  # a0 … a49 b0 … b49
    held_most = 0

    def counted() -> Any:
        nonlocal held_most
        for given, item_id in enumerate(file_order):
            yield _item(item_id)
            held_most = max(held_most, given + 1 - len(out))

    out: list[str] = []
    for item in in_order(counted(), wanted, window=10):
        out.append(item.id)
    assert sorted(out) == sorted(file_order)  # every item once
    assert held_most <= 11
    assert out[:10] == wanted[:10]  # grouped while the window allows
    assert [item.id for item in in_order(map(_item, file_order), wanted)] == wanted  # a wide window: all
