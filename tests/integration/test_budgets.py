"""Knowing the cost before paying it, and never overrunning it, against a real HTTP endpoint: the stub
counts what was really sent.

``--dry-run`` sends no completion and predicts the map stage's calls exactly.

``max_calls`` / ``max_prompt_tokens`` stop a run before the call that would pass them; the error names
what was left undone; the run is checkpointed (automatically, from the CLI) and a rerun with a larger
budget finishes it without redoing a call that was paid for.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from longgraph.api import aask
from longgraph.batch import abatch
from longgraph.errors import BudgetExhausted
from longgraph.testing.faults import StubConfig
from longgraph.testing.stub_server import run_stub_in_thread
from longgraph.tests.conftest import QUESTION, planted
from longgraph.tests.integration.support import (
    STUB_SETTINGS,
    comparable,
    json_result,
    run_longgraph,
    stub_cli_args,
)

pytestmark = pytest.mark.integration

DOCUMENT = planted(40_000, at=0.5)  # about 9 chunks under a 2048-token window


def ask(base_url: str, **settings: Any) -> Any:
    merged = {**STUB_SETTINGS, "base_url": base_url, "max_concurrency": 3, **settings}
    return asyncio.run(aask(QUESTION, DOCUMENT, start_embedded=False, **merged))


def test_max_calls_sends_exactly_that_many_and_a_resume_redoes_none(tmp_path: Path) -> None:
    with run_stub_in_thread() as stub:
        reference = ask(stub.base_url)
        needed = stub.stats()["requests"]
        assert needed > 6, f"only {needed} calls: the budget below would not stop the run mid-way"
        stub.reset()

        checkpointed = {"checkpoint_path": tmp_path / "runs.sqlite", "thread_id": "t1"}
        with pytest.raises(BudgetExhausted, match=r"max_calls 5.*left undone: map of chunk") as caught:
            ask(stub.base_url, max_calls=5, **checkpointed)
        assert stub.stats()["requests"] == 5  # never one more, though 3 were in flight at a time
        assert caught.value.spent_calls == 5

        stub.reset()
        finished = ask(stub.base_url, **checkpointed)
        assert stub.stats()["requests"] == needed - 5  # the five paid-for answers were kept
    assert finished.answer == reference.answer
    assert [(c.id, c.status) for c in finished.chunks] == [(c.id, c.status) for c in reference.chunks]


@pytest.mark.parametrize("template_tokens", [0, 600])
def test_max_prompt_tokens_stops_before_the_call_that_would_pass_it(template_tokens: int) -> None:
    """As the server counts: with a template preamble the run's tokenizer cannot see (600 tokens a
    call, more than the per-message allowance) the limit still holds, with three calls in flight as
    soon as the run starts."""
    with run_stub_in_thread(StubConfig(template_tokens=template_tokens)) as stub:
        full = ask(stub.base_url, plan_records="off")  # the run opens on a fan-out of map calls
        budget = full.stats.prompt_tokens // 2
        stub.reset()
        with pytest.raises(BudgetExhausted, match=f"max_prompt_tokens {budget:,}") as caught:
            ask(stub.base_url, max_prompt_tokens=budget, plan_records="off")
        sent = stub.stats()["requests"]
    assert caught.value.spent_prompt_tokens <= budget
    assert 0 < sent < full.stats.llm_calls


def test_cli_budget_is_one_line_exit_5_and_resumable_with_a_larger_one(tmp_path: Path) -> None:
    (tmp_path / "doc.txt").write_text(DOCUMENT, encoding="utf-8")
    with run_stub_in_thread() as stub:
        args = ["ask", str(tmp_path / "doc.txt"), "-q", QUESTION, "--json", "--no-cache",
                *stub_cli_args(stub.base_url)]  # fmt: skip
        reference = json_result(run_longgraph(args, home=tmp_path, timeout=90))
        needed = stub.stats()["requests"]
        stub.reset()

        stopped = run_longgraph([*args, "--max-calls", "4"], home=tmp_path, timeout=90)
        assert stopped.returncode == 5, stopped.stderr
        lines = stopped.stderr.strip().splitlines()
        assert len(lines) == 1 and "budget reached: max_calls 4" in lines[0], stopped.stderr
        thread = lines[0].split("--resume ")[1].split()[0]
        assert thread.startswith("budget-") and "larger budget" in lines[0]
        assert stopped.stdout == ""
        assert stub.stats()["requests"] == 4

        stub.reset()
        resumed = json_result(run_longgraph([*args, "--resume", thread], home=tmp_path, timeout=90))
        assert stub.stats()["requests"] == needed - 4
    assert comparable(resumed) == comparable(reference)


def test_a_batch_budget_covers_the_corpus_and_a_rerun_finishes_it(tmp_path: Path) -> None:
    items = [{"id": f"d{i}", "question": QUESTION, "document": planted(12_000, at=0.2 * i)} for i in range(5)]
    out = tmp_path / "results.jsonl"
    with run_stub_in_thread() as stub:
        settings = {**STUB_SETTINGS, "base_url": stub.base_url, "max_concurrency": 2}
        stopped = asyncio.run(abatch(items, out=out, items_in_flight=2, max_calls=7, **settings))
        assert stub.stats()["requests"] == 7
        assert stopped.llm_calls == 7  # the stopped items' calls too: their rows say what they spent
        assert stopped.budget_stop is not None and "max_calls 7" in stopped.budget_stop
        assert stopped.not_started > 0 and stopped.done + stopped.not_started == 5
        assert any("not started" in line for line in stopped.lines())

        finished = asyncio.run(abatch(items, out=out, items_in_flight=2, **settings))
    assert finished.failed == 0 and finished.budget_stop is None
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    answered = {r["id"] for r in rows if r["error"] is None}
    assert answered == {item["id"] for item in items}


def test_cli_dry_run_sends_nothing_and_predicts_the_map_stage(tmp_path: Path) -> None:
    (tmp_path / "doc.txt").write_text(DOCUMENT, encoding="utf-8")
    with run_stub_in_thread() as stub:
        args = ["ask", str(tmp_path / "doc.txt"), "-q", QUESTION, "--no-cache", *stub_cli_args(stub.base_url)]
        dry = run_longgraph([*args, "--dry-run", "--json"], home=tmp_path, timeout=90)
        assert dry.returncode == 0, dry.stderr
        assert stub.stats()["requests"] == 0
        estimate = json.loads(dry.stdout)
        table = run_longgraph([*args, "--dry-run"], home=tmp_path, timeout=90)
        assert table.stdout.splitlines()[0].startswith(
            f"auto on stub (window 2,048, output ≤256): {estimate['chunks']} chunk(s)"
        )

        real = json_result(run_longgraph([*args, "--json"], home=tmp_path, timeout=90))
        by_stage = stub.stats()["by_stage"]
    assert estimate["stages"][0] == {**estimate["stages"][0], "stage": "map", "exact": True}
    assert estimate["stages"][0]["calls"] == by_stage["map"] == len(real["chunks"]) == estimate["chunks"]
    assert real["stats"]["llm_calls"] <= estimate["calls_at_most"]
