"""The reference bench reports what the scores are bought with: verification calls per run and the
answer checks' size (``evals/bench/reference_real.py``)."""

from __future__ import annotations

from typing import Any

from longgraph.evals.bench.reference_real import CHECK_MODULES, checks_size, summary, verification_calls


def _record(kind: str, correct: bool, calls: int) -> dict[str, Any]:
    return {
        "tokens": 8000, "wording": "bare", "kind": kind, "correct": correct, "supported": correct,
        "verdict": "supported" if correct else "unconfirmed", "answer": "x", "verify_calls": calls,
    }  # fmt: skip


def test_verification_calls_are_a_mean_per_run() -> None:
    assert verification_calls([_record("squad", True, 1), _record("squad", True, 0)]) == "0.50"
    assert verification_calls([]) == "0.00"


def test_the_summary_ends_with_the_calls_row() -> None:
    lines = summary([_record("squad", True, 2), _record("hotpot-bridge", False, 1)])
    assert lines[-1] == "| verification calls per run | 1.50 |"


def test_the_checks_size_counts_every_module_it_names() -> None:
    size = checks_size()
    assert size["answer check modules"] == len(CHECK_MODULES)
    assert isinstance(size["answer check lines"], int) and size["answer check lines"] > 100 * len(
        CHECK_MODULES
    )
    assert isinstance(size["named rules"], int) and size["named rules"] > 0
