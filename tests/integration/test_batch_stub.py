"""`longgraph batch` over real HTTP against the stub: one concurrency budget for the whole corpus (the
stub's peak of requests in flight), and a run killed part-way resumes without redoing finished items."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from longgraph.testing.stub_server import StubConfig, StubHandle, run_stub_in_thread
from longgraph.tests.conftest import FACT, QUESTION, essays
from longgraph.tests.integration.support import kill_when, run_longgraph, stub_cli_args

pytestmark = pytest.mark.integration
ITEMS = 6


@pytest.fixture
def stub() -> Iterator[StubHandle]:
    with run_stub_in_thread(StubConfig(model="stub", latency_s=0.2)) as handle:
        yield handle


def _items(path: Path, count: int = ITEMS) -> Path:
    text = essays()
    rows = []
    for i in range(count):  # distinct texts: no request of one item is also another's
        filler = text[i * 9_000 : (i + 1) * 9_000]
        cut = filler.rfind(" ", 0, len(filler) * (i + 1) // (count + 1)) + 1
        fact = FACT.replace(".", f" from orchard {i}.")  # distinct notes: distinct reduce prompts
        document = filler[:cut] + "\n\n" + fact + "\n\n" + filler[cut:]
        rows.append({"id": f"item-{i}", "question": QUESTION, "document": document})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _rows(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if line.strip()]


def _args(items: Path, out: Path, stub: StubHandle, *, concurrency: int, in_flight: int) -> list[str]:
    return ["batch", str(items), "--out", str(out), "--no-cache", "--max-concurrency", str(concurrency),
            "--items-in-flight", str(in_flight), *stub_cli_args(stub.base_url)]  # fmt: skip


def test_one_concurrency_budget_serves_every_item(stub: StubHandle, tmp_path: Path) -> None:
    items, out = _items(tmp_path / "items.jsonl"), tmp_path / "results.jsonl"
    done = run_longgraph(_args(items, out, stub, concurrency=3, in_flight=ITEMS), home=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = _rows(out)
    assert sorted(r["id"] for r in rows) == [f"item-{i}" for i in range(ITEMS)]
    assert all(r["error"] is None and "smoked plums" in r["answer"] for r in rows), rows
    stats = stub.stats()
    # Six items open at once with three slots each would reach 18; one shared budget holds it at 3.
    assert stats["max_in_flight"] == 3, stats
    assert stats["requests"] == sum(r["llm_calls"] for r in rows)
    assert f"{ITEMS} item(s): {ITEMS} answered, 0 failed, 0 skipped" in done.stderr


def test_a_killed_batch_resumes_without_redoing_finished_items(stub: StubHandle, tmp_path: Path) -> None:
    items, out = _items(tmp_path / "items.jsonl"), tmp_path / "results.jsonl"
    args = _args(items, out, stub, concurrency=2, in_flight=2)
    kill_when(
        args, home=tmp_path, done=lambda: out.exists() and out.read_text().count("\n") >= 2,
        what="no two items finished",
    )  # fmt: skip
    finished = [r["id"] for r in _rows(out)]
    assert 2 <= len(finished) < ITEMS, "the run finished before it could be killed"
    stub.reset()
    again = run_longgraph(args, home=tmp_path, timeout=300)
    assert again.returncode == 0, again.stderr
    assert f"{len(finished)} skipped (finished before)" in again.stderr
    # The records plan asks the question alone: every item with the same question sends the same one.
    rerun = {entry["messages"] for entry in stub.fault_log() if entry["stage"] != "plan"}
    rows = _rows(out)
    assert sorted(r["id"] for r in rows) == [f"item-{i}" for i in range(ITEMS)]  # each once
    assert all(r["error"] is None for r in rows)

    # The finished items' requests: the same items alone, in a fresh home.
    alone = tmp_path / "finished.jsonl"
    alone.write_text(
        "".join(line + "\n" for line in items.read_text().splitlines() if json.loads(line)["id"] in finished)
    )
    stub.reset()
    home = tmp_path / "fresh-home"
    home.mkdir()
    fresh = run_longgraph(
        _args(alone, home / "r.jsonl", stub, concurrency=2, in_flight=2), home=home, timeout=300
    )
    assert fresh.returncode == 0, fresh.stderr
    theirs = {entry["messages"] for entry in stub.fault_log() if entry["stage"] != "plan"}
    assert rerun and theirs and not rerun & theirs, (
        "the rerun redid requests of items finished before the kill"
    )
