"""One user's flood of served runs does not starve another user's run (issue: per-user share).

Two users' runs of the served mapreduce graph in one server process, against the stub as the model
server: capacity 4, shared as vLLM on CPU shares it (every request admitted, each answer slower when
more than 4 run). Alice starts four runs of 40K-token documents in 256-token chunks, each with another temperature (a
client of its own each: without one limit for the endpoint, four clients held 4 calls each, 16 in
flight); Bob then asks one short question. His run's time is compared with the same run on the idle
server, measured first.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from longgraph.graphs.mapreduce import build_graph
from longgraph.llm import OpenAIProvider
from longgraph.testing.stub_server import StubConfig, run_stub_in_subprocess
from longgraph.tests.conftest import QUESTION, planted

pytestmark = pytest.mark.integration

LATENCY_S = 0.3
SLOTS = 4


@pytest.fixture
def operator(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Any:
    for name in ("LONGGRAPH_ALLOWED_ENDPOINTS", "LONGGRAPH_MAX_CALLS", "LONGGRAPH_MAX_PROMPT_TOKENS",
                 "LONGGRAPH_CACHE_PATH", "LONGGRAPH_MODEL", "LONGGRAPH_ALLOWED_MODELS"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    with run_stub_in_subprocess(
        StubConfig(model="stub", latency_s=LATENCY_S, capacity=SLOTS, over_capacity="share")
    ) as stub:
        monkeypatch.setenv("LONGGRAPH_BASE_URL", stub.base_url)
        monkeypatch.setenv("LONGGRAPH_MODEL", "stub")
        monkeypatch.setenv("LONGGRAPH_MAX_CONCURRENCY", str(SLOTS))
        monkeypatch.setenv("LONGGRAPH_ADAPTIVE_CONCURRENCY", "false")
        monkeypatch.setenv("LONGGRAPH_CACHE_PATH", str(tmp_path / "cache.sqlite"))
        yield stub


def _run(graph: Any, user: str, document: str, **context: Any) -> Any:
    return graph.ainvoke(
        {"question": QUESTION, "document": document},
        context={"context_window": 2048, **context},
        config={"configurable": {"langgraph_auth_user_id": user}},
    )


def _spellings(url: str) -> list[str]:
    """Four spellings of one endpoint: as given, with one and two trailing slashes, the scheme in capitals."""
    return [url, f"{url}/", f"{url}//", "HTTP" + url[len("http") :]]


@pytest.mark.parametrize("respelled", [False, True], ids=["clients", "endpoint-spellings"])
def test_another_users_flood_delays_a_short_run_by_one_call_at_most(operator: Any, respelled: bool) -> None:
    """Her four runs are four clients (each another temperature) or name the endpoint four ways: the
    limit is the endpoint's, keyed on its normalised URL, so neither opens a second one."""
    graph = build_graph(OpenAIProvider())

    async def scenario() -> tuple[float, float, int]:
        await _run(graph, "bob", planted(600, at=0.7))  # the kit and the endpoint's model looked up
        started = time.perf_counter()
        await _run(graph, "bob", planted(600))
        idle = time.perf_counter() - started
        flood = [
            asyncio.create_task(
                _run(
                    graph,
                    "alice",
                    planted(160_000, at=0.1 + 0.2 * i),
                    chunk_size=256,
                    **({"base_url": spelled} if respelled else {"temperature": 0.1 * (i + 1)}),
                )
            )
            for i, spelled in enumerate(_spellings(operator.base_url))
        ]

        def flooding() -> bool:
            """Her map calls fill the slots, three rounds in: her runs' records plans come first, and her
            chunking (four 160K-character inputs) is then over, so what is measured is the slots' share,
            not two cores busy counting tokens."""
            stats = operator.stats()
            return int(stats["in_flight"]) >= SLOTS and int(stats["by_stage"].get("map", 0)) >= 3 * SLOTS

        while not flooding():  # noqa: ASYNC110 - polled: another process
            await asyncio.sleep(0.05)
        await asyncio.sleep(LATENCY_S)
        started = time.perf_counter()
        await _run(graph, "bob", planted(600, at=0.3))
        flooded = time.perf_counter() - started
        busiest = int(operator.stats()["max_in_flight"])
        for task in flood:
            task.cancel()
        await asyncio.gather(*flood, return_exceptions=True)
        return idle, flooded, busiest

    idle, flooded, busiest = asyncio.run(scenario())
    seen = (
        f"bob's run took {flooded:.2f} s beside alice's flood, {idle:.2f} s alone; {busiest} calls in flight"
    )
    assert busiest <= SLOTS, seen  # the operator's limit holds across users and clients
    # His call waits for one of alice's to end (the slots go round the users waiting), then runs at
    # full speed: before, it ran beside her 16 at a quarter of the speed (1.30 s against 0.32 s).
    assert flooded <= idle + LATENCY_S + 0.15, seen
