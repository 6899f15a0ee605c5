"""The lean chat client (``longgraph/openai_chat.py``): the request it sends, the answer it reads, and a
clear error for an answer that is not a chat completion."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import openai
import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from longgraph.errors import EndpointError
from longgraph.llm import Endpoint, LLMClient
from longgraph.openai_chat import ChatReply, OpenAIChat
from longgraph.state.context import Context
from longgraph.testing.fakes import FakeProvider
from longgraph.tests.conftest import FAKE_SETTINGS


def _chat(handler: Any, *, max_retries: int = 0) -> OpenAIChat:
    return OpenAIChat(
        base_url="http://endpoint.test/v1",
        api_key="sk-test",
        model="served-model",
        sampling={"temperature": 0.0, "max_tokens": 64},
        timeout=5,
        max_retries=max_retries,
        http=httpx.AsyncClient(transport=httpx.MockTransport(handler)),
    )


def test_the_request_carries_the_model_messages_sampling_schema_and_headers() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(
            200,
            json={
                "choices": [{"message": {"role": "assistant", "content": '{"answer": "plums"}'}}],
                "usage": {"prompt_tokens": 12, "completion_tokens": 5},
            },
        )

    schema = {"type": "json_schema", "json_schema": {"name": "A", "schema": {"type": "object"}}}
    reply = asyncio.run(
        _chat(handler).chat(
            [SystemMessage("Be brief."), HumanMessage("What is it?")],
            headers={"X-Longgraph-Stage": "map"},
            extra_body={"response_format": schema},
            max_tokens=32,
        )
    )
    assert reply == ChatReply(text='{"answer": "plums"}', prompt_tokens=12, completion_tokens=5)
    (request,) = seen
    assert request.url == "http://endpoint.test/v1/chat/completions"
    assert request.headers["X-Longgraph-Stage"] == "map"
    assert request.headers["Authorization"] == "Bearer sk-test"
    assert json.loads(request.content) == {
        "model": "served-model",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is it?"}],
        "temperature": 0.0,
        "max_tokens": 32,
        "response_format": schema,
    }


def test_an_answer_without_usage_or_content_reads_as_empty() -> None:
    reply = asyncio.run(
        _chat(lambda request: httpx.Response(200, json={"choices": []})).chat(
            [HumanMessage("hi")], headers={}
        )
    )
    assert reply == ChatReply(text="", prompt_tokens=0, completion_tokens=0)


def test_an_answer_that_is_not_a_chat_completion_is_an_api_error() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text="<html>gateway login</html>", headers={"content-type": "text/html"})

    with pytest.raises(openai.APIResponseValidationError, match="not a chat completion"):
        asyncio.run(_chat(handler).chat([HumanMessage("hi")], headers={}))


def test_status_errors_are_the_sdks_after_its_retries() -> None:
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        return httpx.Response(503, json={"error": {"message": "busy"}}, headers={"retry-after-ms": "1"})

    with pytest.raises(openai.InternalServerError):
        asyncio.run(_chat(handler, max_retries=2).chat([HumanMessage("hi")], headers={}))
    assert calls == 3


def test_the_client_reports_a_non_completion_as_an_endpoint_error() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text="<html>gateway login</html>", headers={"content-type": "text/html"})

    class GatewayProvider(FakeProvider):
        def build(self, context: Context) -> LLMClient:
            return self.client_for(
                context, [Endpoint(url="http://endpoint.test/v1", model=_chat(handler))], "m"
            )

    async def ask() -> None:
        client = GatewayProvider()(Context(**FAKE_SETTINGS))  # type: ignore[arg-type]
        await client.complete([HumanMessage("hi")], stage="map")

    with pytest.raises(EndpointError, match="not a chat completion"):
        asyncio.run(ask())
