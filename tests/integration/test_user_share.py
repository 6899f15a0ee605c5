"""Each served user's share of the server (``longgraph/user_share.py``), over HTTP to the stub.

Served runs of the real mapreduce graph, as a LangGraph server runs them (the user and the run id in
the run's configurable): a user's run past ``LONGGRAPH_USER_RUNS`` is refused before any call while
another user's runs go on, places are given back as runs end, and a user's calls past
``LONGGRAPH_USER_CALLS`` per window wait for room — saying so in the run's notes — while another
user's calls do not.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest

from longgraph.graphs.mapreduce import build_graph
from longgraph.llm import OpenAIProvider
from longgraph.state.contract import GraphOutput
from longgraph.testing.stub_server import StubConfig, run_stub_in_subprocess
from longgraph.tests.conftest import QUESTION, planted
from longgraph.user_share import RUNS, UserShareExceeded

pytestmark = pytest.mark.integration

WAITED = "waited"
"""The word of the note a run whose calls waited for its user's window carries."""


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Any:
    for name in ("LONGGRAPH_ALLOWED_ENDPOINTS", "LONGGRAPH_MAX_CALLS", "LONGGRAPH_MAX_PROMPT_TOKENS",
                 "LONGGRAPH_MODEL", "LONGGRAPH_ALLOWED_MODELS", "LONGGRAPH_USER_CALLS"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    with run_stub_in_subprocess(StubConfig(model="stub", latency_s=0.2)) as stub:
        monkeypatch.setenv("LONGGRAPH_BASE_URL", stub.base_url)
        monkeypatch.setenv("LONGGRAPH_MODEL", "stub")
        monkeypatch.setenv("LONGGRAPH_CACHE_PATH", "")  # every run asks: nothing served from a cache
        yield build_graph(OpenAIProvider())


def _run(graph: Any, user: str, *, chars: int = 3_000) -> Any:
    config = {"configurable": {"langgraph_auth_user_id": user, "run_id": str(uuid.uuid4())}}
    return graph.ainvoke(
        {"question": QUESTION, "document": planted(chars)}, context={"context_window": 2048}, config=config
    )


def test_a_users_run_past_the_limit_is_refused_and_the_others_are_answered(
    served: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LONGGRAPH_USER_RUNS", "2")

    async def scenario() -> tuple[list[Any], Any, Any]:
        alice = await asyncio.gather(*(_run(served, "alice") for _ in range(3)), return_exceptions=True)
        again = await _run(served, "alice")  # the places are back: her runs ended
        return alice, again, RUNS.count("alice")

    async def with_bob() -> tuple[tuple[list[Any], Any, Any], Any]:
        return await asyncio.gather(scenario(), _run(served, "bob"))

    (alice, again, left), bob = asyncio.run(with_bob())
    refused = [r for r in alice if isinstance(r, UserShareExceeded)]
    answered = [GraphOutput.model_validate(r) for r in alice if isinstance(r, dict)]
    assert len(refused) == 1 and len(answered) == 2, alice
    assert "LONGGRAPH_USER_RUNS=2" in str(refused[0])
    assert all("smoked plums" in a.answer for a in answered)
    assert "smoked plums" in GraphOutput.model_validate(again).answer
    assert "smoked plums" in GraphOutput.model_validate(bob).answer
    assert left == 0


def test_a_users_calls_past_the_window_wait_and_another_users_do_not(
    served: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LONGGRAPH_USER_CALLS", "3")
    monkeypatch.setenv("LONGGRAPH_USER_WINDOW_S", "1")

    async def scenario() -> tuple[Any, Any]:
        return await asyncio.gather(_run(served, "carol", chars=12_000), _run(served, "dave", chars=1_500))

    carol, dave = (GraphOutput.model_validate(r) for r in asyncio.run(scenario()))
    assert carol.stats.llm_calls > 3  # more than one window's calls
    assert "smoked plums" in carol.answer and "smoked plums" in dave.answer
    assert any(WAITED in note and "user's share" in note for note in carol.stats.notes), carol.stats.notes
    assert dave.stats.llm_calls <= 3 and not any(WAITED in note for note in dave.stats.notes)
