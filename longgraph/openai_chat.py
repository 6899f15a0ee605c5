"""The lean chat path for OpenAI-compatible endpoints: httpx on sharded connection pools.

Profiled against the stub (``evals/bench/README.md``, "What the profile shows"), a map call cost the
orchestrator ~6–9 ms of CPU against ~1.2 ms for a bare HTTP client doing the same requests: 56% in
the HTTP connection pool, 15% in the openai SDK, 14% in LangChain's chat-model layer (a signature
inspection, an executor hop and callback managers per call). What is left of them:

* :class:`OpenAIChat` posts the request with httpx itself, its body encoded by orjson, retried and
  raised as the openai SDK would (``longgraph/http_retries.py``: its policy for what to retry and how
  long to wait, ``Retry-After`` included, and its exception types, which ``LLMClient`` handles). The
  SDK's request path cost 0.25–0.4 ms of CPU per 30 KB call on top (options models, URL and header
  building, the stdlib JSON encoder: 0.075 ms against orjson's 0.007 for the same bytes). Injected
  LangChain chat models keep working: :class:`~longgraph.llm.Endpoint` takes either.
* :class:`ShardedTransport` spreads the connections over pools of at most :data:`SHARD_SIZE`. One
  httpcore pool scans every connection on each assignment (an anyio ``getpeername()`` per idle one),
  and requests entering in the same loop iteration are all handed the same idle connection, so with
  64 connections most assignment passes are wasted: measured, 700 passes for 200 requests.
"""

from __future__ import annotations

import functools
import itertools
import math
import ssl
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import httpx
import openai
import orjson
from langchain_core.messages import BaseMessage

from longgraph.http_retries import post_with_retries

SHARD_SIZE = 4
"""Requests in flight per connection pool (each pool holds twice as many connections). Measured with
400 calls of 30 KB, 64 in flight: 0.97–1.01 ms of CPU per call with 2 or 4, 1.07–1.19 with 8, 1.29
with 16 (httpcore checks every idle connection of a pool on each assignment)."""

_ROLES = {"system": "system", "human": "user", "ai": "assistant"}


@dataclass(frozen=True)
class ChatReply:
    text: str
    prompt_tokens: int
    completion_tokens: int


class ShardedTransport(httpx.AsyncBaseTransport):
    """``max_concurrency`` requests over ``ceil(max_concurrency / SHARD_SIZE)`` connection pools, in
    turn (see the module docstring for why several small pools beat one large one)."""

    def __init__(self, max_concurrency: int) -> None:
        count = max(1, math.ceil(max_concurrency / SHARD_SIZE))
        per_shard = math.ceil(max_concurrency / count)
        limits = httpx.Limits(max_connections=per_shard * 2, max_keepalive_connections=per_shard)
        self.shards = [
            httpx.AsyncHTTPTransport(verify=shared_ssl_context(), limits=limits) for _ in range(count)
        ]
        self._turn = itertools.cycle(self.shards)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await next(self._turn).handle_async_request(request)

    async def aclose(self) -> None:
        for shard in self.shards:
            await shard.aclose()


@functools.cache
def shared_ssl_context() -> ssl.SSLContext:
    """One TLS context for every pool and client of the process: building one reads the CA bundle
    (~18 ms, 6% of a 1.28M-token run's CPU when each of 8 pools built its own; the queue watcher's
    client built one per run too), and a context is safe to share."""
    return httpx.create_ssl_context(trust_env=True)


class OpenAIChat:
    """One OpenAI-compatible endpoint: chat completions posted with httpx under the openai SDK's retry
    policy and error types (``longgraph/http_retries.py``), without LangChain."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        model: str,
        sampling: Mapping[str, Any],
        timeout: float,
        max_retries: int,
        http: httpx.AsyncClient,
        on_timeout: Callable[[bool], Awaitable[None]] | None = None,
    ) -> None:
        self.http = http
        """Its HTTP client (benchmarks hook its events to record requests)."""
        self._model = model
        self._sampling = dict(sampling)
        base = httpx.URL(base_url)
        self._url = base.copy_with(path=base.path.rstrip("/") + "/chat/completions")
        self._headers = {
            "Authorization": f"Bearer {api_key}",
            "Content-Type": "application/json",
            "Accept": "application/json",
        }
        self._timeout = timeout
        self._max_retries = max_retries
        self._on_timeout = on_timeout

    async def aclose(self) -> None:
        """Close its connection pools."""
        await self.http.aclose()

    async def chat(
        self,
        messages: Sequence[BaseMessage],
        *,
        headers: Mapping[str, str],
        extra_body: Mapping[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> ChatReply:
        """One chat completion; raises the openai SDK's errors (as the SDK itself would), and
        ``APIResponseValidationError`` for an answer that is not a chat completion."""
        body: dict[str, Any] = {
            "model": self._model,
            "messages": [{"role": _ROLES.get(m.type, "user"), "content": str(m.content)} for m in messages],
            **self._sampling,
            **({"max_tokens": max_tokens} if max_tokens is not None else {}),
            **(extra_body or {}),
        }
        response = await post_with_retries(
            self.http,
            self._url,
            content=orjson.dumps(body),
            headers={**self._headers, **headers},
            request_timeout=self._timeout,
            max_retries=self._max_retries,
            on_timeout=self._on_timeout,
        )
        return _reply(response)


def _reply(response: httpx.Response) -> ChatReply:
    """The answer's text and token counts; an answer that is not a chat completion is an API error."""
    try:
        data = response.json()
        choices = data.get("choices") or []
        usage = data.get("usage") or {}
        text = (choices[0].get("message") or {}).get("content") if choices else ""
        return ChatReply(
            text=str(text or ""),
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
        )
    except (ValueError, AttributeError, TypeError) as exc:
        raise openai.APIResponseValidationError(
            response=cast(Any, response), body=response.text[:500], message=f"not a chat completion: {exc}"
        ) from exc
