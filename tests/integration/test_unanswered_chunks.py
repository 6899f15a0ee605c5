"""A chunk whose calls run out of the endpoint's retries is recorded as failed and the run goes on; a
resume retries it (``nodes/endpoint_health.py``, ``longgraph/api.py``).

The stub fails every request that holds one marker sentence (``fail_containing``), so one chunk can
never be read however often it is retried, while every other call is answered: a chunk unlucky with a
flaky endpoint, made deterministic. The endpoint going down mid-run still stops the run (the resume
tests and ``test_faults.py``'s dying endpoint cover that; here, the stop after calls in a row fail).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from longgraph.api import aask
from longgraph.cli.common import EXIT_PARTIAL
from longgraph.errors import EndpointError
from longgraph.nodes.endpoint_health import BREAK_AFTER
from longgraph.state.contract import GraphOutput
from longgraph.testing.stub_server import StubConfig, run_stub_in_thread
from longgraph.tests.conftest import QUESTION, planted
from longgraph.tests.integration.support import (
    STUB_SETTINGS,
    comparable,
    json_result,
    run_longgraph,
    served_strategies,
    stub_cli_args,
)

pytestmark = pytest.mark.integration

MARK = "Quixbrel-unreadable-page"


def _document() -> str:
    """The fact early on (chunk 0 or 1 of 6-8), the marker sentence at 80%: in a chunk of its own."""
    base = planted(30_000, at=0.1)
    cut = base.rfind(" ", 0, int(len(base) * 0.8)) + 1
    return base[:cut] + f"\n\n{MARK} is a page no endpoint will read.\n\n" + base[cut:]


DOCUMENT = _document()
CHUNK_READERS = served_strategies(calls="fan-out")
"""The graphs that read chunks side by side (PECAN reads batches of chunks: a failed batch's members
go up a level unchanged, see ``nodes/ip_graph.py``)."""


def _ask(base_url: str, strategy: str, **settings: Any) -> GraphOutput:
    merged = {**STUB_SETTINGS, "base_url": base_url, "strategy": strategy, "max_retries": 1, **settings}
    return asyncio.run(aask(QUESTION, DOCUMENT, start_embedded=False, **merged))


def _failed(result: GraphOutput) -> list[int]:
    return [c.id for c in result.chunks if c.status == "failed"]


@pytest.mark.parametrize("strategy", CHUNK_READERS)
def test_a_chunk_out_of_retries_is_recorded_and_the_run_answers(strategy: str) -> None:
    with run_stub_in_thread(StubConfig()) as stub:
        reference = _ask(stub.base_url, strategy)
        stub.configure(fail_containing=MARK)
        partial = _ask(stub.base_url, strategy)
        refused = stub.stats()["by_status"].get("503", 0)
    assert not _failed(reference)
    assert len(_failed(partial)) == 1, [(c.id, c.status, c.reason) for c in partial.chunks]
    failed = next(c for c in partial.chunks if c.status == "failed")
    assert failed.reason and "the endpoint failed after its retries" in failed.reason
    assert "503" in failed.reason and "a resume retries this chunk" in failed.reason
    assert refused >= 2  # the call and its retry, at least
    assert partial.answer == reference.answer  # the fact's chunk was read
    assert partial.stats.unanswered_calls >= 1


def test_resume_retries_the_failed_chunk_through_the_result_cache(tmp_path: Path) -> None:
    """The finished thread is run again: the calls answered before come from the result cache, the
    failed chunk's call reaches the endpoint, and the result is the one a healthy endpoint gives."""
    settings: dict[str, Any] = {
        "checkpoint_path": tmp_path / "checkpoints.sqlite", "thread_id": "flaky", "cache_path": tmp_path / "cache.sqlite",
    }  # fmt: skip
    with run_stub_in_thread(StubConfig()) as stub:
        reference = _ask(stub.base_url, "mapreduce", cache_path=tmp_path / "reference-cache.sqlite")
        stub.reset()
        stub.configure(fail_containing=MARK)
        partial = _ask(stub.base_url, "mapreduce", **settings)
        assert len(_failed(partial)) == 1
        stub.configure(fail_containing=None)
        stub.reset()
        resumed = _ask(stub.base_url, "mapreduce", **settings)
        retried = stub.stats()
        stub.reset()
        again = _ask(stub.base_url, "mapreduce", **settings)
        assert stub.stats()["requests"] == 0  # finished, nothing failed: its stored result
    assert retried["by_stage"].get("map") == 1, retried["by_stage"]  # the one chunk, nothing else re-read
    assert resumed.stats.resumed and any("retry its 1 failed chunk(s)" in n for n in resumed.stats.notes)
    assert comparable(resumed.model_dump()) == comparable(reference.model_dump())
    assert again.answer == resumed.answer and not _failed(again)


def test_without_the_result_cache_a_resume_says_the_chunk_was_not_retried(tmp_path: Path) -> None:
    settings: dict[str, Any] = {"checkpoint_path": tmp_path / "checkpoints.sqlite", "thread_id": "no-cache"}
    with run_stub_in_thread(StubConfig(fail_containing=MARK)) as stub:
        _ask(stub.base_url, "mapreduce", **settings)
        stub.configure(fail_containing=None)
        stub.reset()
        stored = _ask(stub.base_url, "mapreduce", **settings)
        assert stub.stats()["requests"] == 0
    assert len(_failed(stored)) == 1
    assert any("were not retried" in n and "result cache" in n for n in stored.stats.notes), (
        stored.stats.notes
    )


def test_an_endpoint_failing_every_call_still_stops_the_run() -> None:
    """Up for the first calls, then refusing everything: the run stops with the endpoint's error once a
    few calls in a row have failed, instead of recording chunk after chunk as failed."""
    long_document = planted(90_000)  # about 20 chunks
    settings = {**STUB_SETTINGS, "strategy": "mapreduce", "max_retries": 1, "max_concurrency": 1}
    with run_stub_in_thread(StubConfig(die_after=2)) as stub:
        with pytest.raises(EndpointError) as failure:
            asyncio.run(
                aask(QUESTION, long_document, base_url=stub.base_url, start_embedded=False, **settings)
            )
        stats = stub.stats()
    probes = stats["by_stage"].get("probe", 0)
    refused = stats["by_status"].get("503", 0) - probes
    assert failure.value.undone
    assert probes == 2  # one probe (and its retry) settled the doubt for the calls waiting
    # BREAK_AFTER calls and their retries, and the next one or two that left while the probe was out:
    # not the 20 chunks' 40 requests that recording each chunk as failed would have spent
    assert BREAK_AFTER * 2 <= refused <= (BREAK_AFTER + 2) * 2, refused


def test_cli_partial_answer_then_resume(tmp_path: Path) -> None:
    """The CLI: exit 4 naming the failed chunk and why, then ``--resume`` retries it: exit 0."""
    document = tmp_path / "doc.txt"
    document.write_text(DOCUMENT, encoding="utf-8")
    with run_stub_in_thread(StubConfig(fail_containing=MARK)) as stub:
        args = ["ask", str(document), "-q", QUESTION, "--retries", "1", *stub_cli_args(stub.base_url)]
        partial = run_longgraph([*args, "--resume", "job"], home=tmp_path)
        assert partial.returncode == EXIT_PARTIAL, partial.stderr
        line = next(x for x in partial.stderr.splitlines() if "answered from" in x)
        assert "1 failed" in line and "the endpoint failed after its retries" in line
        stub.configure(fail_containing=None)
        resumed = json_result(run_longgraph([*args, "--resume", "job", "--json"], home=tmp_path))
    assert not [c for c in resumed["chunks"] if c["status"] == "failed"]
    assert resumed["stats"]["resumed"]


def test_a_tree_built_with_an_unanswered_call_is_not_cached(tmp_path: Path) -> None:
    """ToM caches its tree for the next question; one missing a chunk's parse would be reused as if
    whole, so it is not kept: the next run (the endpoint healthy again) parses the document anew."""
    cache = {"cache_path": tmp_path / "cache.sqlite"}
    with run_stub_in_thread(StubConfig(fail_containing=MARK)) as stub:
        first = _ask(stub.base_url, "tom", **cache)
        stub.configure(fail_containing=None)
        second = _ask(stub.base_url, "tom", **cache)
        third = _ask(stub.base_url, "tom", **cache)
    assert first.stats.unanswered_calls and not first.stats.built_from_cache
    assert not second.stats.built_from_cache and not second.stats.unanswered_calls
    assert third.stats.built_from_cache  # a whole tree is kept
