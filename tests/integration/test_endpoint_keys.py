"""The server's key goes only to its own endpoint; an allowed endpoint gets its own key or none.

Two stubs, each answering only its own key (401 otherwise): the operator's (``LONGGRAPH_BASE_URL``,
``LONGGRAPH_API_KEY``) and an allowed one a run may name (``LONGGRAPH_ALLOWED_ENDPOINTS``).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from longgraph.errors import ConfigurationError
from longgraph.graphs.mapreduce import build_graph
from longgraph.llm import OpenAIProvider
from longgraph.testing.stub_server import StubConfig, run_stub_in_subprocess
from longgraph.tests.conftest import QUESTION, planted

pytestmark = pytest.mark.integration


def _served_run(base_url: str | None = None) -> Any:
    context: dict[str, Any] = {"context_window": 2048}
    if base_url is not None:
        context["base_url"] = base_url
    return asyncio.run(
        build_graph(OpenAIProvider()).ainvoke(
            {"question": QUESTION, "document": planted(3000)},
            context=context,
            config={"configurable": {"langgraph_auth_user_id": "alice"}},
        )
    )


def test_an_allowed_endpoint_gets_its_own_key_and_never_the_servers(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    with (
        run_stub_in_subprocess(StubConfig(model="stub", api_key="sk-server")) as own,
        run_stub_in_subprocess(StubConfig(model="stub", api_key="sk-replica")) as other,
    ):
        for name, value in {
            "LONGGRAPH_BASE_URL": own.base_url,
            "LONGGRAPH_API_KEY": "sk-server",
            "LONGGRAPH_MODEL": "stub",
            "LONGGRAPH_ALLOWED_ENDPOINTS": other.base_url,
            "LONGGRAPH_CACHE_PATH": str(tmp_path / "cache.sqlite"),
        }.items():
            monkeypatch.setenv(name, value)
        monkeypatch.delenv("LONGGRAPH_ENDPOINT_KEYS", raising=False)
        assert "smoked plums" in _served_run()["answer"]  # the server's own endpoint, its key
        with pytest.raises(ConfigurationError, match="rejected the API key"):
            _served_run(other.base_url)  # no key configured for it: the server's is not sent
        assert own.stats()["by_status"].get("401", 0) == 0
        monkeypatch.setenv("LONGGRAPH_ENDPOINT_KEYS", f"{other.base_url}=sk-replica")
        assert "smoked plums" in _served_run(other.base_url)["answer"]
