"""The persistent result cache, counted at the stub: asking again is free, and any change that could
change an answer (question, prompt version, model, sampling) misses instead of serving a stale one."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from longgraph.api import aask
from longgraph.prompts import PromptSet
from longgraph.state.contract import GraphOutput
from longgraph.testing.stub_server import StubConfig, StubHandle, run_stub_in_thread
from longgraph.tests.conftest import FACT, QUESTION, essays, planted
from longgraph.tests.integration.support import (
    STUB_SETTINGS,
    comparable,
    heavy_strategies,
    json_result,
    run_longgraph,
    served_strategies,
    shape_of,
    stub_cli_args,
)

pytestmark = pytest.mark.integration

QUESTION_FREE_STAGES = {"parse", "summarize", "points"}
"""Stages of the served strategies whose prompt does not hold the question (checked against the prompt
files below, with Pyramid-Align's, which asks no question: it writes them)."""
ABLATIONS = {"tom-no-aggregation", "tom-no-confidence", "segment-plus-no-filter", "segment-plus-no-structure"}
"""Ablations whose every call has the same cache key path as their base graph's (``tom``,
``segment-plus``): the six changes that must miss are run on the base graph only (ToM's take minutes)."""
PYRAMID_STAGES = {"synthesise", "question_causal", "question_extraction", "question_summary"}


@pytest.fixture(scope="module")
def stub() -> Iterator[StubHandle]:
    with run_stub_in_thread(StubConfig()) as handle:
        yield handle


def _ask(
    stub: StubHandle, cache: Path, question: str = QUESTION, document: str = "", **settings: Any
) -> GraphOutput:
    stub.reset()
    merged = {**STUB_SETTINGS, "base_url": stub.base_url, "cache_path": str(cache), **settings}
    return asyncio.run(aask(question, document or planted(60_000), start_embedded=False, **merged))


def _requests(stub: StubHandle) -> int:
    return int(stub.stats()["requests"])


def _assert_replayed(first: GraphOutput, again: GraphOutput, requests: int) -> None:
    """The second identical run made no request: every call is replayed from the cache, save a
    structure's build (ToM's tree, PECAN's graph), which is cached whole; and the result is the same."""
    assert requests == 0
    built = first.stats.build
    assert bool(again.stats.built_from_cache) == (built is not None)
    replayed = first.stats.llm_calls + first.stats.cached_calls
    if built is not None:
        replayed -= built.llm_calls + built.cached_calls
    assert again.stats.cached_calls == replayed
    assert comparable(again.model_dump()) == comparable(first.model_dump())


@pytest.mark.parametrize("strategy", served_strategies())
def test_asking_again_costs_no_call_and_any_change_misses(
    strategy: str, stub: StubHandle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every graph (one call or many): the second identical run is served from the cache, and each
    change that could change an answer makes its calls again."""
    cache = tmp_path / "results.sqlite"
    first = _ask(stub, cache, strategy=strategy)
    cold_requests = _requests(stub)
    # Every call reaches the stub, save a prompt repeated within the run (ToM: two inner nodes whose only
    # evidence is one note and whose title and summary are the same ask the same question twice).
    assert cold_requests > 0 and cold_requests == first.stats.llm_calls
    assert first.stats.cached_calls == 0 or strategy.startswith("tom")

    again = _ask(stub, cache, strategy=strategy)
    _assert_replayed(first, again, _requests(stub))
    if strategy in ABLATIONS:
        return  # its calls go through the same kit and cache keys as its base graph's, checked there

    variants: dict[str, dict[str, Any]] = {
        "question": {"question": "What does Grandma Olga put in her borscht?"},
        "model": {"model": "stub-v2"},
        "temperature": {"temperature": 0.5},
        "max_output_tokens": {"max_output_tokens": 300},
    }
    for name, change in variants.items():
        changed = _ask(stub, cache, strategy=strategy, **change)
        assert _requests(stub) > 0
        in_run: dict[str, int] = {}
        if first.stats.cached_calls:  # prompts repeated within a run: a fresh cache serves them too
            in_run = _ask(
                stub, tmp_path / f"fresh-{name}.sqlite", strategy=strategy, **change
            ).stats.cached_by_stage
        reused = {
            k: n - in_run.get(k, 0) for k, n in changed.stats.cached_by_stage.items() if n > in_run.get(k, 0)
        }
        # A stage whose prompt has no question (ToM: a chunk's parse, a cluster's summary) is rightly reused.
        allowed = QUESTION_FREE_STAGES if name == "question" else set()
        assert set(reused) <= allowed, f"a change of {name} was served from the cache: {reused}"

    # A prompt version bump (the version is what PromptSet.key hashes in) misses too.
    monkeypatch.setattr(PromptSet, "key", lambda self, stage: f"{self.strategy}/{stage}@bumped")
    bumped = _ask(stub, cache, strategy=strategy)
    assert bumped.stats.cached_by_stage == first.stats.cached_by_stage and _requests(stub) == cold_requests


@pytest.mark.parametrize("strategy", heavy_strategies())
def test_heavy_graph_asked_again_costs_no_call(strategy: str, stub: StubHandle, tmp_path: Path) -> None:
    """A heavy graph asked twice (the test above runs each graph seven times): the second run makes no
    call and gives the same result. What a change misses is the same code path as for any graph."""
    cache = tmp_path / "results.sqlite"
    first = _ask(stub, cache, strategy=strategy)
    assert first.stats.cached_calls == 0
    calls = shape_of(strategy).calls  # its declared shape, checked here as it runs here
    if calls == "single-call":
        assert _requests(stub) == first.stats.llm_calls == 1
    elif calls == "fan-out":  # one call per chunk, then more
        assert _requests(stub) > len(first.chunks)
    else:  # graph-search: one call per batch of chunks per level, then search turns and an answer
        assert _requests(stub) == first.stats.llm_calls > 2
    again = _ask(stub, cache, strategy=strategy)
    _assert_replayed(first, again, _requests(stub))


def test_collapse_results_are_cached_too(stub: StubHandle, tmp_path: Path) -> None:
    """A fact in every chunk gives more notes than the reduce prompt holds: the collapse stage runs
    (mapreduce's own stage; the test above covers every graph's calls)."""
    filler = essays()[:1000]
    document = "".join(f"{filler}\n\n{FACT}\n\n" for _ in range(40))
    cache = tmp_path / "results.sqlite"
    # The paper's protocol: its notes (extraction, rationale, answer, score) overflow the reduce prompt.
    first = _ask(stub, cache, document=document, chunk_size=300, prompt_variant="paper")
    assert stub.stats()["by_stage"].get("collapse", 0) > 0, "the document did not need a collapse"
    again = _ask(stub, cache, document=document, chunk_size=300, prompt_variant="paper")
    assert _requests(stub) == 0
    assert again.answer == first.answer and again.stats.collapse_rounds == first.stats.collapse_rounds


def test_cli_caches_by_default_and_no_cache_opts_out(stub: StubHandle, tmp_path: Path) -> None:
    document = tmp_path / "doc.txt"
    document.write_text(planted(40_000), encoding="utf-8")
    args = ["ask", str(document), "-q", QUESTION, "--json", *stub_cli_args(stub.base_url)]

    stub.reset()
    first = json_result(run_longgraph(args, home=tmp_path))
    assert _requests(stub) > 0
    assert (tmp_path / "results.sqlite").is_file()  # under LONGGRAPH_HOME, not the working folder

    stub.reset()
    second = json_result(run_longgraph(args, home=tmp_path))
    assert _requests(stub) == 0 and second["stats"]["cached_calls"] == first["stats"]["llm_calls"]
    assert second["answer"] == first["answer"]

    stub.reset()
    fresh = json_result(run_longgraph([*args, "--no-cache"], home=tmp_path))
    assert _requests(stub) == first["stats"]["llm_calls"] and fresh["stats"]["cached_calls"] == 0

    elsewhere = tmp_path / "other" / "cache.sqlite"
    stub.reset()
    json_result(run_longgraph(args, home=tmp_path, env={"LONGGRAPH_CACHE_PATH": str(elsewhere)}))
    assert _requests(stub) == first["stats"]["llm_calls"] and elsewhere.is_file()


def test_unusable_cache_path_is_one_clear_error(stub: StubHandle, tmp_path: Path) -> None:
    document = tmp_path / "doc.txt"
    document.write_text(planted(10_000), encoding="utf-8")
    args = ["ask", str(document), "-q", QUESTION, "--cache", str(tmp_path), *stub_cli_args(stub.base_url)]
    done = run_longgraph(args, home=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "result cache" in done.stderr


def test_the_question_free_stages_are_the_prompts_without_the_question() -> None:
    """What the cache test above lets another question reuse is exactly the stages whose prompt, in
    every prompt file, does not hold the question."""
    from longgraph.prompts import all_prompt_sets

    free = {
        name
        for prompt_set in all_prompt_sets()
        for name, stage in prompt_set.stages.items()
        if "{question}" not in stage.system + stage.user
    }
    assert free == QUESTION_FREE_STAGES | PYRAMID_STAGES
