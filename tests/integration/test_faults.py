"""Faults at a real HTTP endpoint, through the default ``ChatOpenAI`` provider.

Every run either completes with every chunk accounted for (each chunk reported once, failed ones with
a reason) or fails, after bounded retries, with a typed error that names the endpoint and what was
left undone. Seeds are chosen with the stub's own pure fault schedule so that each fault really
happens within the run (a 5 % rate over a dozen requests could otherwise inject nothing), and at the
run's first request, so that a graph making a single call meets it too.

Which graphs each test runs follows from their declared shape (``support.SHAPES``): a property about
one chunk failing among others, or an endpoint dying between calls, needs a ``fan-out`` graph; a
``single-call`` graph gets the form that fits it (its one call fails: the run fails). Tests of the
endpoint client alone (replicas, rate limits beyond the retries, hangs) run the default strategy: the
graph does not change what they check.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import subprocess
from typing import Any

import httpx
import pytest

from longgraph.api import aask
from longgraph.cli.common import EXIT_PARTIAL
from longgraph.errors import EndpointError, TooManyFailures
from longgraph.state.contract import GraphOutput
from longgraph.testing.stub_server import (
    EXIT_AFTER_RETURN_CODE,
    Fault,
    StubConfig,
    StubHandle,
    decide_fault,
    run_stub_in_subprocess,
    run_stub_in_thread,
)
from longgraph.tests.conftest import QUESTION, planted
from longgraph.tests.integration.support import (
    FACT_DEPTH,
    FACT_DOCUMENT_CHARS,
    STUB_SETTINGS,
    heavy_strategies,
    run_longgraph,
    served_strategies,
    stub_cli_args,
)

pytestmark = pytest.mark.integration

DOCUMENT = planted(FACT_DOCUMENT_CHARS, at=FACT_DEPTH)  # 7-8 chunks under a 2048-token window
STRATEGIES = served_strategies()
FAN_OUT = served_strategies(calls="fan-out")
SINGLE_CALL = served_strategies(calls="single-call")


def seeded(
    config: StubConfig, fault: Fault, *, at_least: int = 1, within: int = 8, at_most: int, horizon: int = 40
) -> StubConfig:
    """``config`` with the first seed whose schedule hits the very first request with ``fault``, injects
    it at least ``at_least`` times in the first ``within`` requests, and no more than ``at_most`` faults
    of any kind in the first ``horizon``.

    The first request: a graph that makes a single call meets the fault too. The upper bound: no
    request can exhaust its retries (which request draws which sequence number depends on timing, the
    schedule itself does not), so the outcome the test asserts does not depend on luck.
    """
    for seed in range(100_000):
        candidate = config.model_copy(update={"seed": seed})
        schedule = [decide_fault(candidate, seq) for seq in range(1, horizon + 1)]
        if (
            schedule[0] is fault
            and schedule[:within].count(fault) >= at_least
            and sum(f is not Fault.NONE for f in schedule) <= at_most
        ):
            return candidate
    raise AssertionError(f"no seed injects {fault} {at_least}x in {within} requests")


def ask(base_url: str | list[str], strategy: str = "mapreduce", **settings: Any) -> GraphOutput:
    merged = {**STUB_SETTINGS, "base_url": base_url, "strategy": strategy, **settings}
    return asyncio.run(aask(QUESTION, DOCUMENT, start_embedded=False, **merged))


def assert_accounted(result: GraphOutput) -> None:
    """Each chunk reported exactly once, in order; a failed one says why."""
    assert result.chunks, "no chunk reported"
    assert [c.id for c in result.chunks] == list(range(len(result.chunks)))
    for chunk in result.chunks:
        if chunk.status == "failed":
            assert chunk.reason, f"chunk {chunk.id} failed without a reason"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


# --------------------------------------------------------------------------------------------------
# Runs that complete


MAX_RETRIES = 3
FAULTY: dict[str, tuple[StubConfig, dict[str, Any], int]] = {
    # name: (stub, settings, requests to burn first so the run's first request meets the fault)
    # At most MAX_RETRIES faults in the run: no request can fail all of its attempts.
    "5xx-20%": (seeded(StubConfig(error_rate=0.2), Fault.ERROR_503, at_most=MAX_RETRIES), {}, 0),
    "timeouts-5%": (
        seeded(StubConfig(timeout_rate=0.05, hang_s=30), Fault.TIMEOUT, at_most=MAX_RETRIES),
        {"request_timeout": 1.0},
        0,
    ),
    # Every 5th request: a retry that waited Retry-After never meets four 429s in a row.
    "429-retry-after": (StubConfig(rate_limit_every=5, retry_after_s=0.5), {}, 4),
    # One malformed answer: the parse retry (parse_retries=1) always recovers it.
    "malformed-10%": (seeded(StubConfig(malformed_rate=0.1), Fault.MALFORMED, at_most=1), {}, 0),
}


def burn(stub: StubHandle, requests: int) -> None:
    """Advance the stub's request counter (its fault schedule) with requests it rejects as malformed."""
    for _ in range(requests):
        httpx.post(f"{stub.base_url}/chat/completions", json={"messages": "none"}, timeout=10)


TRANSIENT = [
    *(pytest.param(fault, strategy, id=f"{fault}-{strategy}") for fault in FAULTY for strategy in STRATEGIES),
    # A heavy graph meets one kind of fault, once: retrying is the endpoint client's, not the graph's.
    *(pytest.param("5xx-20%", strategy, id=f"5xx-20%-{strategy}") for strategy in heavy_strategies()),
]


@pytest.mark.parametrize(("fault", "strategy"), TRANSIENT)
def test_transient_faults_are_retried_and_the_run_completes(fault: str, strategy: str) -> None:
    """Every graph: a transient fault (at the run's first request, and maybe later) is retried within the
    bounds, the run completes with every chunk accounted for and the fact in the answer."""
    config, settings, skip = FAULTY[fault]
    with run_stub_in_thread(config) as stub:
        burn(stub, skip)
        result = ask(stub.base_url, strategy, max_retries=MAX_RETRIES, parse_retries=1, **settings)
        faults = stub.stats()["faults"]
    assert faults, "the stub injected no fault"
    assert_accounted(result)
    assert "smoked plums" in result.answer


UNPARSEABLE = seeded(StubConfig(malformed_rate=0.1), Fault.MALFORMED, at_least=2, within=6, at_most=3)
"""Two to three malformed answers among the first calls, the first one among them."""


def in_the_reading(config: StubConfig, fault: Fault, *, after: int, until: int, at_most: int) -> StubConfig:
    """``config`` with the first seed whose faults of the first 40 requests all fall in ``(after,
    until]``, at least two of them and at most ``at_most``: a graph whose first ``after`` calls build a
    structure (ToM: the plan, seven parses, a summary) meets them in its reading calls."""
    for seed in range(100_000):
        candidate = config.model_copy(update={"seed": seed})
        schedule = [decide_fault(candidate, seq) for seq in range(1, 41)]
        hits = [seq for seq, f in enumerate(schedule, start=1) if f is not Fault.NONE]
        if (
            2 <= len(hits) <= at_most
            and all(after < seq <= until for seq in hits)
            and schedule[hits[0] - 1] is fault
        ):
            return candidate
    raise AssertionError(f"no seed injects {fault} only between requests {after} and {until}")


UNPARSEABLE_READING = in_the_reading(
    StubConfig(malformed_rate=0.1), Fault.MALFORMED, after=10, until=16, at_most=3
)
"""For ToM: its malformed answers in the leaves' map calls (a malformed outline makes one leaf of its
chunk, by design: its text is read all the same)."""


@pytest.mark.parametrize("strategy", FAN_OUT)
def test_unparseable_answers_become_failed_chunks_with_reasons(strategy: str) -> None:
    """Fan-out graphs: without parse retries, a malformed answer fails its chunk (with the reason and
    the raw output), and the run completes from the other chunks (fewer than half failed)."""
    config = UNPARSEABLE_READING if strategy.startswith("tom") else UNPARSEABLE
    with run_stub_in_thread(config) as stub:  # up to 3 of ~9 chunks fail: a budget that allows it
        result = ask(stub.base_url, strategy, parse_retries=0, max_failed_fraction=0.5)
        assert stub.stats()["faults"].get("malformed", 0) > 0
    assert_accounted(result)
    failed = [c for c in result.chunks if c.status == "failed"]
    assert failed and all("unparseable" in (c.reason or "") for c in failed)
    assert all(c.raw_output for c in failed)


@pytest.mark.parametrize("strategy", SINGLE_CALL)
def test_an_unparseable_single_call_is_too_many_failures(strategy: str) -> None:
    """Single-call graphs: the one call's answer is malformed and, without parse retries, every chunk it
    read has failed: the run raises ``TooManyFailures`` saying why, after exactly that one call."""
    with run_stub_in_thread(UNPARSEABLE) as stub:
        with pytest.raises(TooManyFailures, match="unparseable"):
            ask(stub.base_url, strategy, parse_retries=0)
        assert stub.stats()["requests"] == 1
        assert stub.stats()["faults"] == {"malformed": 1}


def test_a_replica_takes_over_when_the_other_dies() -> None:
    """The endpoint client's replica fallback (the default strategy: the graph does not change it).

    The client breaks ties between idle replicas at random, so one run may send the dying replica
    fewer calls than it needs to die (CI saw it once in ~50 runs of nine calls). The run is repeated,
    each one checked in full, until the replica has died: the run during which it died is one of them.
    """
    results: list[GraphOutput] = []
    with (
        run_stub_in_subprocess(StubConfig(exit_after=2)) as dying,
        run_stub_in_thread(StubConfig()) as healthy,
    ):
        assert dying.process is not None
        for _ in range(6):  # P(alive after 6 runs of ~9 fair coin flips) < 1e-14
            results.append(ask([dying.base_url, healthy.base_url], max_retries=1, max_concurrency=1))
            try:
                assert dying.process.wait(timeout=2) == EXIT_AFTER_RETURN_CODE
                break
            except subprocess.TimeoutExpired:
                continue
        assert dying.process.poll() == EXIT_AFTER_RETURN_CODE, (
            f"the replica never died in {len(results)} runs"
        )
        assert healthy.stats()["completed"] > 0
    for result in results:
        assert_accounted(result)
        assert all(c.status != "failed" for c in result.chunks)
        assert "smoked plums" in result.answer


# --------------------------------------------------------------------------------------------------
# Runs that fail, with a typed error naming the endpoint and what was left undone


@pytest.mark.parametrize("strategy", FAN_OUT)
def test_endpoint_dying_mid_run_fails_naming_it_and_the_work_left(strategy: str) -> None:
    """Fan-out graphs: the endpoint process dies after three answers, with calls still to make. (A
    single-call graph has no "mid-run": its endpoint failing is the refused-connection test below.)"""
    with run_stub_in_subprocess(StubConfig(exit_after=3)) as stub:
        with pytest.raises(EndpointError) as failure:
            ask(stub.base_url, strategy, max_retries=1, max_concurrency=2)
        assert stub.process is not None and stub.process.wait(timeout=10) == EXIT_AFTER_RETURN_CODE
    assert failure.value.endpoint == stub.base_url
    assert failure.value.undone and failure.value.undone in str(failure.value)


REFUSED = [
    # Every graph, with the model named: the graph's own first call meets the refusal.
    *(pytest.param("stub", strategy, id=f"model-set-{strategy}") for strategy in STRATEGIES),
    # The model looked up at /models: the endpoint client fails before any graph runs.
    pytest.param(None, "mapreduce", id="model-looked-up"),
]


@pytest.mark.parametrize(("model", "strategy"), REFUSED)
def test_endpoint_refusing_connections_from_the_start(model: str | None, strategy: str) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(EndpointError) as failure:
        ask(url, strategy, model=model, max_retries=1)
    assert failure.value.endpoint == url
    assert failure.value.undone


def test_rate_limited_beyond_the_retries_is_an_endpoint_error() -> None:
    with (
        run_stub_in_thread(StubConfig(rate_limit_every=1, retry_after_s=0.1)) as stub,
        pytest.raises(EndpointError, match="RateLimitError") as failure,
    ):
        ask(stub.base_url, max_retries=1)
    assert failure.value.endpoint == stub.base_url and failure.value.undone


def test_hanging_endpoint_fails_after_bounded_timeouts() -> None:
    with (
        run_stub_in_thread(StubConfig(timeout_rate=1.0, hang_s=30)) as stub,
        pytest.raises(EndpointError) as failure,
    ):
        ask(stub.base_url, request_timeout=0.5, max_retries=1)
    assert failure.value.endpoint == stub.base_url and failure.value.undone


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_nothing_but_garbage_is_too_many_failures(strategy: str) -> None:
    """Every graph: when no answer can be parsed, the run fails with ``TooManyFailures``."""
    with run_stub_in_thread(StubConfig(malformed_rate=1.0)) as stub, pytest.raises(TooManyFailures):
        ask(stub.base_url, strategy, parse_retries=0)


def test_cli_endpoint_failure_is_one_line_and_exit_3(tmp_path: Any) -> None:
    document = tmp_path / "doc.txt"
    document.write_text(DOCUMENT, encoding="utf-8")
    url = f"http://127.0.0.1:{free_port()}/v1"
    done = run_longgraph(
        ["ask", str(document), "-q", QUESTION, "--retries", "0", *stub_cli_args(url)], home=tmp_path
    )
    assert done.returncode == 3
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert url in lines[0] and "left undone" in lines[0]


def test_cli_partial_answer_says_so_and_exits_4(tmp_path: Any) -> None:
    """Some chunks failed within the failure budget: the answer is printed, stderr says from how many
    chunks and which failed, and the exit code is the documented partial-result code (plain and --json)."""
    document = tmp_path / "doc.txt"
    document.write_text(DOCUMENT, encoding="utf-8")
    for extra in ([], ["--json"]):
        with run_stub_in_thread(UNPARSEABLE) as stub:
            done = run_longgraph(
                ["ask", str(document), "-q", QUESTION, "--no-cache", *extra, *stub_cli_args(stub.base_url)],
                home=tmp_path, env={"LONGGRAPH_PARSE_RETRIES": "0", "LONGGRAPH_MAX_FAILED_FRACTION": "0.5"},
            )  # fmt: skip
        assert done.returncode == EXIT_PARTIAL, done.stderr
        if extra:
            failed = [c for c in json.loads(done.stdout)["chunks"] if c["status"] == "failed"]
            assert failed
        else:
            assert done.stdout.strip()  # the answer (whatever the failed chunks held is missing from it)
            line = next(x for x in done.stderr.splitlines() if "answered from" in x)
            assert re.search(
                r"answered from \d+ of \d+ chunks; \d+ failed \(chunks [\d, ]+; first: ", line
            ), line
