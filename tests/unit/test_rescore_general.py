"""Re-scoring general-suite records into a new file (``evals/rescore_general.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from longgraph.errors import InputError
from longgraph.evals.data.general import build_general
from longgraph.evals.rescore_general import labels_of, main, rescore


def test_records_are_scored_again_into_a_new_file_and_the_old_one_is_left_alone(tmp_path: Path) -> None:
    (one, *_) = build_general(target_tokens=2_000, n=2, seed=3, split="dev", kinds=["one"])
    gold = one.gold_answers[0]
    records = tmp_path / "records.jsonl"
    rows = [
        {
            "instance_id": one.id,
            "strategy": "mapreduce",
            "metric": "correct",
            "score": 0.0,
            "answer": f"It is {gold}.",
        },
        {
            "instance_id": one.id,
            "strategy": "tom",
            "metric": "correct",
            "score": 1.0,
            "answer": "[NO INFORMATION]",
        },
    ]
    records.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    before = records.read_bytes()
    out, changed = rescore(records)
    assert out == tmp_path / "records-rescored.jsonl" and records.read_bytes() == before
    assert len(changed) == 2 and "0.0 -> 1.0" in changed[0] and "1.0 -> 0.0" in changed[1]
    assert [json.loads(line)["score"] for line in out.read_text(encoding="utf-8").splitlines()] == [1.0, 0.0]
    with pytest.raises(InputError, match="exists"):
        rescore(records)
    with pytest.raises(SystemExit, match=r"error: .*exists"):
        main([str(records)])


def test_labels_are_rebuilt_as_the_eval_built_them_and_foreign_ids_are_refused() -> None:
    built = build_general(target_tokens=2_000, n=2, seed=1, split="test")
    assert labels_of([b.id for b in built]) == {b.id: b.label for b in built}
    with pytest.raises(InputError, match="not an id of the general suite"):
        labels_of(["needle-32000-0.5"])
