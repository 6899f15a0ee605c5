"""Dry runs: no model call; the first reading stage exactly as the real run then sends it (same calls,
same prompt tokens by the run's own count), and the whole run within the bound.

Each strategy family runs twice on the scripted fake (the oracle responder): once as a dry run, once
for real, and the fake's record of what was sent is counted with the same tokenizer and allowance.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest

from longgraph.api import aask
from longgraph.costing import CostEstimate, collapse_calls_at_most
from longgraph.errors import ConfigurationError
from longgraph.graphs.mapreduce import build_graph as build_mapreduce
from longgraph.spending import PER_MESSAGE_TOKENS
from longgraph.strategies import STRATEGIES, Strategy, register, unregister
from longgraph.testing.fakes import FakeProvider, ScriptedChatModel
from longgraph.tests.conftest import FAKE_SETTINGS, QUESTION, planted
from longgraph.tokenizer import get_tokenizer

DOCUMENT = planted(30_000, at=0.7)
CASES = {
    "mapreduce": {},
    "mapreduce-segment-merge": {},
    "segment-plus": {},
    "segment-plus-plain": {},
    "tom": {"tom_top_k": 3},
    "tom-no-aggregation": {"tom_top_k": 0},
    "pecan-no-attention": {"max_collapse_rounds": 1},  # level 2 only: every points call is first-level
    "truncate": {},
    "rag-bm25": {},
}


def prompt_tokens(call: Mapping[str, Any]) -> int:
    contents = [str(m["content"]) for m in call["messages"]]
    return sum(get_tokenizer(None).count_batch(contents)) + PER_MESSAGE_TOKENS * len(contents)


def stage_of(call: Mapping[str, Any]) -> str:
    return str((call.get("headers") or {}).get("X-Longgraph-Stage"))


def both(strategy: str, **settings: Any) -> tuple[CostEstimate, list[dict[str, Any]], int]:
    """The dry run (asserted to call nothing), then the real run's calls and chunk count."""
    model = ScriptedChatModel()
    provider = FakeProvider(model)
    merged = {**FAKE_SETTINGS, **settings}
    estimate = asyncio.run(
        aask(
            QUESTION, DOCUMENT, strategy=strategy, llm=provider, dry_run=True, start_embedded=False, **merged
        )
    )
    assert model.calls == [], "a dry run called the model"
    result = asyncio.run(
        aask(QUESTION, DOCUMENT, strategy=strategy, llm=provider, start_embedded=False, **merged)
    )
    return estimate, list(model.calls), len(result.chunks)


@pytest.mark.parametrize("strategy", sorted(CASES))
def test_first_stage_is_what_the_run_sends_and_the_run_stays_within_the_bound(strategy: str) -> None:
    estimate, calls, chunks = both(strategy, **CASES[strategy])
    shape = STRATEGIES[strategy].cost
    assert shape is not None
    assert estimate.chunks == chunks
    first = [c for c in calls if stage_of(c) == shape.first_stage]
    if shape.kind == "single-call":
        assert len(first) == 1 and estimate.exact.calls == 1
        assert prompt_tokens(first[0]) <= estimate.exact.prompt_tokens
    else:
        assert estimate.exact.calls == len(first) > 1
        sent = sum(prompt_tokens(c) for c in first)
        if estimate.exact.exact:
            assert estimate.exact.prompt_tokens == sent
        else:  # ToM with compression: which chunks are parsed needs embeddings; the bound must hold
            assert sent <= estimate.exact.prompt_tokens
    assert len(calls) <= estimate.calls_at_most
    assert sum(prompt_tokens(c) for c in calls) <= estimate.prompt_tokens_at_most


def test_the_text_table_says_what_is_exact_and_what_is_bounded() -> None:
    estimate, _, _ = both("mapreduce")
    lines = estimate.lines()
    assert lines[0].startswith("mapreduce on scripted (window 2,048")
    map_line = next(line for line in lines if line.startswith("map "))
    assert "≤" not in map_line and f"{estimate.exact.prompt_tokens:,}" in map_line
    assert lines[-1].startswith("total") and f"≤{estimate.calls_at_most:,}" in lines[-1]


def test_collapse_bound_counts_shrinking_rounds() -> None:
    assert collapse_calls_at_most(1, 5) == 0
    assert collapse_calls_at_most(2, 5) == 1
    assert collapse_calls_at_most(10, 2) == 9 + 8
    assert collapse_calls_at_most(4, 10) == 3 + 2 + 1


def test_a_strategy_without_a_cost_shape_is_refused_by_name() -> None:
    register(Strategy("no-shape", build_mapreduce, "test only"))
    try:
        with pytest.raises(ConfigurationError, match="'no-shape' declares no cost shape"):
            asyncio.run(aask(QUESTION, DOCUMENT, strategy="no-shape", llm=FakeProvider(), dry_run=True,
                             start_embedded=False, **FAKE_SETTINGS))  # fmt: skip
    finally:
        unregister("no-shape")
