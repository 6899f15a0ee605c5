"""The reference bench reports what the scores are bought with: verification calls per run and the
answer checks' size (``evals/bench/reference_real.py``)."""

from __future__ import annotations

from typing import Any

from longgraph.evals.bench.reference_real import checks_size, summary, verification_calls


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


def test_the_checks_size_counts_the_package_and_the_gate() -> None:
    """The lines of every module of ``nodes/checks`` and of ``nodes/finalize.py``, within the issue's
    bounds, and the decisions the checks list."""
    from pathlib import Path

    from longgraph.nodes import checks

    size = checks_size()
    modules = sorted(Path(checks.__file__).parent.glob("*.py"))
    assert size["answer check lines"] == sum(len(m.read_text(encoding="utf-8").splitlines()) for m in modules)
    assert isinstance(size["answer check lines"], int) and size["answer check lines"] <= 1200
    assert isinstance(size["finalize lines"], int) and size["finalize lines"] <= 300
    assert size["decisions"] == len(checks.DECISIONS) > 0
