"""The stub's HTTP application: OpenAI-compatible chat and models routes plus a control plane.

``/v1/chat/completions`` answers with the oracle (``testing/answers.py``) after the fault schedule
(``testing/faults.py``) decided what to do to the request; ``/stub/stats``, ``/stub/log``,
``/stub/config`` and ``/stub/reset`` let tests count and steer it. All mutable state lives in one
:class:`_StubState` per app.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import os
import time
import uuid
from collections import Counter, deque
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from longgraph.testing.answers import build_completion_content
from longgraph.testing.faults import Fault, StubConfig, decide_fault, malform
from longgraph.testing.oracle import _message_text
from longgraph.tokenizer import get_tokenizer

EXIT_AFTER_RETURN_CODE = 3
"""Exit status of a process stopped by ``exit_after``: distinct from a crash (1) and a clean stop (0)."""

STAGE_HEADER = "X-Longgraph-Stage"
"""Header the project's client sets so the stub can count requests per pipeline stage."""


def _approx_tokens(text: str) -> int:
    return max(1, len(text) // 4)


CHATML_TOKENS_PER_MESSAGE = 5
"""``<|im_start|>``, the role, a newline, ``<|im_end|>`` and a newline around each message."""


def _prompt_tokens(messages: Any, template_tokens: int) -> int:
    """The prompt as a vLLM server counts it: the messages in a ChatML template, tokenized with the
    client's default tokenizer (the stub serves a model that shares it), the assistant's opening
    (3 tokens) and whatever preamble the template adds."""
    texts = (
        [_message_text(m) for m in messages if isinstance(m, Mapping)] if isinstance(messages, list) else []
    )
    counts = get_tokenizer().count_batch(texts)
    return sum(counts) + CHATML_TOKENS_PER_MESSAGE * len(texts) + 3 + template_tokens


def _error_body(message: str, kind: str, code: int) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def _format_seconds(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


@dataclass
class _StubState:
    """Everything mutable lives here, one instance per app: no module-level state."""

    config: StubConfig
    on_exit: Callable[[], None]
    is_stopping: Callable[[], bool] = lambda: False
    requests: int = 0
    completed: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    """The most requests in flight at once since the last reset (a shared concurrency budget's test)."""
    running: int = 0
    """Requests being answered (admitted under ``capacity``)."""
    waiting: int = 0
    max_waiting: int = 0
    waiting_seconds: float = 0.0
    """The queue's length integrated over time since the last reset: request-seconds spent queued."""
    _waiting_since: float = 0.0
    first_request_at: float | None = None
    """Wall-clock time (``time.time()``) the first chat request since the last reset arrived: a
    benchmark's "how soon did the first call leave"."""
    _slots: asyncio.Condition | None = None

    def slots(self) -> asyncio.Condition:
        """Signalled when a request ends or the capacity changes (made on the server's loop)."""
        if self._slots is None:
            self._slots = asyncio.Condition()
        return self._slots

    def has_room(self) -> bool:
        return self.config.capacity is None or self.running < self.config.capacity

    by_status: Counter[str] = field(default_factory=Counter)
    by_stage: Counter[str] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)
    log: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=10_000))
    exiting: bool = False

    def queue_changes(self, by: int) -> None:
        now = time.monotonic()
        if self._waiting_since:
            self.waiting_seconds += self.waiting * (now - self._waiting_since)
        self._waiting_since = now
        self.waiting += by
        self.max_waiting = max(self.max_waiting, self.waiting)

    def reset(self) -> None:
        self.queue_changes(0)
        self.waiting_seconds = 0.0
        self.max_waiting = self.waiting
        self.requests = 0
        self.first_request_at = None
        self.completed = 0
        self.max_in_flight = self.in_flight
        self.by_status.clear()
        self.by_stage.clear()
        self.faults.clear()
        self.log.clear()

    def refusing(self) -> bool:
        cfg = self.config
        if self.exiting or (cfg.exit_after is not None and self.completed >= cfg.exit_after):
            return True
        return cfg.die_after is not None and self.completed >= cfg.die_after

    def snapshot(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "first_request_at": self.first_request_at,
            "completed": self.completed,
            "in_flight": self.in_flight,
            "max_in_flight": self.max_in_flight,
            "running": self.running,
            "waiting": self.waiting,
            "max_waiting": self.max_waiting,
            "waiting_seconds": round(self.waiting_seconds, 3),
            "by_status": dict(self.by_status),
            "by_stage": dict(self.by_stage),
            "faults": dict(self.faults),
            "config": self.config.model_dump(),
        }


async def _hang(request: Request, seconds: float, is_stopping: Callable[[], bool]) -> str | None:
    """Sleep up to ``seconds``; end early with the reason if the client hung up or the server is stopping.

    Ending early keeps hung tasks from piling up under a benchmark and lets a shutdown finish without
    uvicorn cancelling handlers (which would log tracebacks).
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while (remaining := deadline - loop.time()) > 0:
        if await request.is_disconnected():
            return "disconnected"
        if is_stopping():
            return "stopping"
        await asyncio.sleep(min(0.2, remaining))
    return None


async def _shared_work(request: Request, work_s: float, st: _StubState) -> str | None:
    """``work_s`` seconds of the server's time, shared with the other running requests: each tick does
    ``capacity / running`` of a tick's work when more than ``capacity`` run. Ends early when the client
    hangs up (vLLM aborts a request whose client went away)."""
    loop = asyncio.get_running_loop()
    done, tick = 0.0, 0.02
    while done < work_s:
        if await request.is_disconnected():
            return "disconnected"
        if st.is_stopping():
            return "stopping"
        started = loop.time()
        await asyncio.sleep(tick)
        capacity = st.config.capacity or st.running
        done += (loop.time() - started) * min(1.0, capacity / max(st.running, 1))
    return None


class _StubApp:
    """Request handlers bound to one :class:`_StubState`."""

    def __init__(self, state: _StubState) -> None:
        self.state = state

    async def health(self, request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def models(self, request: Request) -> Response:
        return self._maybe_trickled(
            {
                "object": "list",
                "data": [
                    {
                        "id": self.state.config.model,
                        "object": "model",
                        "created": 0,
                        "owned_by": "longgraph-stub",
                        **(
                            {"max_model_len": self.state.config.max_model_len}
                            if self.state.config.max_model_len
                            else {}
                        ),
                    }
                ],
            }
        )

    def _maybe_trickled(self, body: dict[str, Any]) -> Response:
        """``body`` as JSON, at once or (``trickle_s``) one byte at a time."""
        pause = self.state.config.trickle_s
        if pause is None:
            return JSONResponse(body)
        data = json.dumps(body).encode()
        is_stopping = self.state.is_stopping

        async def trickle() -> AsyncIterator[bytes]:
            for i in range(len(data)):
                if is_stopping():
                    return
                yield data[i : i + 1]
                await asyncio.sleep(pause)

        return StreamingResponse(trickle(), media_type="application/json")

    async def metrics(self, request: Request) -> Response:
        """Prometheus text with vLLM's queue gauges (what a client watching for overload reads)."""
        st, model = self.state, self.state.config.model
        text = (
            "# TYPE vllm:num_requests_running gauge\n"
            f'vllm:num_requests_running{{model_name="{model}"}} {float(st.running)}\n'
            "# TYPE vllm:num_requests_waiting gauge\n"
            f'vllm:num_requests_waiting{{model_name="{model}"}} {float(st.waiting)}\n'
            "# TYPE vllm:num_requests_waiting_by_reason gauge\n"
            f'vllm:num_requests_waiting_by_reason{{model_name="{model}",reason="capacity"}} {float(st.waiting)}\n'
            f'vllm:num_requests_waiting_by_reason{{model_name="{model}",reason="deferred"}} 0.0\n'
        )
        return Response(text, media_type="text/plain; version=0.0.4")

    async def stats(self, request: Request) -> Response:
        return JSONResponse(self.state.snapshot())

    async def fault_log(self, request: Request) -> Response:
        return JSONResponse({"log": list(self.state.log)})

    async def reset(self, request: Request) -> Response:
        self.state.reset()
        return JSONResponse(self.state.snapshot())

    async def configure(self, request: Request) -> Response:
        try:
            update = await request.json()
            if not isinstance(update, dict):
                raise ValueError("body must be a JSON object")
            self.state.config = StubConfig.model_validate({**self.state.config.model_dump(), **update})
        except (ValueError, ValidationError) as exc:
            return JSONResponse(_error_body(str(exc), "invalid_request_error", 400), status_code=400)
        slots = self.state.slots()
        async with slots:  # a larger capacity admits queued requests now
            slots.notify_all()
        return JSONResponse(self.state.config.model_dump())

    def _finish(
        self, status: int | str, seq: int, fault: Fault | str, stage: str, digest: str = "", salt: Any = None
    ) -> None:
        st = self.state
        st.by_status[str(status)] += 1
        if fault != Fault.NONE:
            st.faults[str(fault)] += 1
        entry = {"seq": seq, "fault": str(fault), "status": status, "stage": stage, "messages": digest}
        if salt is not None:  # vLLM's per-tenant prefix-cache salt, as the request carried it
            entry["cache_salt"] = salt
        st.log.append(entry)

    def _exit_task(self) -> BackgroundTask:
        """Stop the server shortly after this (last) response has been handed to the transport."""
        loop = asyncio.get_running_loop()
        self.state.exiting = True
        return BackgroundTask(loop.call_later, 0.05, self.state.on_exit)

    async def chat(self, request: Request) -> Response:
        st = self.state
        st.requests += 1
        if st.first_request_at is None:
            st.first_request_at = time.time()
        seq = st.requests
        stage = request.headers.get(STAGE_HEADER, "unknown")
        st.by_stage[stage] += 1
        st.in_flight += 1
        st.max_in_flight = max(st.max_in_flight, st.in_flight)
        try:
            return await self._chat(request, seq, stage)
        finally:
            st.in_flight -= 1

    async def _chat(self, request: Request, seq: int, stage: str) -> Response:
        st = self.state
        cfg = st.config
        if cfg.api_key is not None:
            presented = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
            if presented != cfg.api_key:
                self._finish(401, seq, "unauthorized", stage)
                refusal = f"Incorrect API key provided: {presented}"
                return JSONResponse(_error_body(refusal, "invalid_request_error", 401), status_code=401)
        if st.refusing():
            self._finish(503, seq, "refused", stage)
            return JSONResponse(_error_body("stub server is down", "server_error", 503), status_code=503)
        if cfg.fail_containing is not None and cfg.fail_containing.encode() in await request.body():
            self._finish(503, seq, "fail_containing", stage)
            refusal = "stub: requests holding this text always fail"
            return JSONResponse(_error_body(refusal, "server_error", 503), status_code=503)
        fault = decide_fault(cfg, seq)
        slots = st.slots()
        async with slots:
            if cfg.capacity is not None and st.running >= cfg.capacity and cfg.over_capacity != "share":
                if cfg.over_capacity == "reject":
                    fault = Fault.RATE_LIMIT
                else:
                    st.queue_changes(+1)
                    try:
                        await slots.wait_for(st.has_room)
                    finally:
                        st.queue_changes(-1)
            st.running += 1
        try:
            return await self._answer(request, seq, stage, fault)
        finally:
            async with slots:
                st.running -= 1
                slots.notify_all()

    async def _answer(self, request: Request, seq: int, stage: str, fault: Fault) -> Response:
        st = self.state
        cfg = st.config
        if fault is Fault.RATE_LIMIT:
            self._finish(429, seq, fault, stage)
            wait = cfg.retry_after_s
            headers = {"Retry-After": _format_seconds(wait), "retry-after-ms": str(int(wait * 1000))}
            return JSONResponse(
                _error_body("rate limited by stub", "rate_limit_error", 429), status_code=429, headers=headers
            )
        try:
            body = await request.json()
            if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
                raise ValueError("body must be a JSON object with a 'messages' list")
        except ValueError as exc:
            self._finish(400, seq, fault, stage)
            return JSONResponse(_error_body(str(exc), "invalid_request_error", 400), status_code=400)
        # What the request asked, as a digest: tests compare what two clients sent for the same work.
        digest = hashlib.sha256(json.dumps(body["messages"], sort_keys=True).encode()).hexdigest()[:16]
        if cfg.latency_s > 0 and cfg.capacity is not None and cfg.over_capacity == "share":
            ended = await _shared_work(request, cfg.latency_s, st)
            if ended == "disconnected":
                self._finish("disconnected", seq, fault, stage)
                return Response(status_code=499)
            if ended == "stopping":  # as a hung request ends on shutdown
                self._finish(503, seq, fault, stage)
                return JSONResponse(_error_body("stub server stopping", "server_error", 503), status_code=503)
        elif cfg.latency_s > 0:
            await asyncio.sleep(cfg.latency_s)
        while st.config.hold and not st.is_stopping():  # noqa: ASYNC110 - released by POST /stub/config
            await asyncio.sleep(0.02)
        if fault in (Fault.ERROR_500, Fault.ERROR_503):
            code = 500 if fault is Fault.ERROR_500 else 503
            self._finish(code, seq, fault, stage)
            return JSONResponse(_error_body(f"injected {code}", "server_error", code), status_code=code)
        if fault is Fault.TIMEOUT:
            ended = await _hang(request, cfg.hang_s, st.is_stopping)
            if ended == "disconnected":
                self._finish("disconnected", seq, fault, stage)
                return Response(status_code=499)
            if ended == "stopping":
                self._finish(503, seq, fault, stage)
                return JSONResponse(_error_body("stub server stopping", "server_error", 503), status_code=503)
        content, tool = build_completion_content(body, hallucinate=cfg.hallucinate)
        if fault is Fault.MALFORMED:
            content = malform(content, cfg.seed, seq)
        if st.refusing():  # another request reached die_after/exit_after while this one slept
            self._finish(503, seq, "refused", stage)
            return JSONResponse(_error_body("stub server is down", "server_error", 503), status_code=503)
        st.completed += 1
        self._finish(200, seq, fault, stage, digest, body.get("cache_salt"))
        background = None
        if st.config.exit_after is not None and st.completed >= st.config.exit_after:
            background = self._exit_task()
        prompt_tokens = _prompt_tokens(body["messages"], cfg.template_tokens)
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": _approx_tokens(content),
            "total_tokens": prompt_tokens + _approx_tokens(content),
        }
        completion_id = f"chatcmpl-stub-{seq}-{uuid.uuid4().hex[:8]}"
        created = int(time.time())
        if body.get("stream"):
            options = body.get("stream_options")
            include_usage = not (isinstance(options, Mapping) and options.get("include_usage") is False)
            chunks = _sse_chunks(
                completion_id, created, cfg.model, content, tool, usage if include_usage else None
            )
            return StreamingResponse(chunks, media_type="text/event-stream", background=background)
        message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
        finish_reason = "stop"
        if tool is not None:
            message["content"] = None
            message["tool_calls"] = [_tool_call(seq, tool, content)]
            finish_reason = "tool_calls"
        payload = {
            "id": completion_id,
            "object": "chat.completion",
            "created": created,
            "model": cfg.model,
            "system_fingerprint": "longgraph-stub",
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}],
            "usage": usage,
        }
        return JSONResponse(payload, background=background)


def _tool_call(seq: int, tool: Mapping[str, Any], arguments: str) -> dict[str, Any]:
    return {
        "id": f"call_stub_{seq}",
        "type": "function",
        "function": {"name": str(tool.get("name", "tool")), "arguments": arguments},
    }


async def _sse_chunks(
    completion_id: str,
    created: int,
    model: str,
    content: str,
    tool: Mapping[str, Any] | None,
    usage: dict[str, int] | None,
) -> AsyncIterator[str]:
    """OpenAI-style SSE: a role chunk, the content in a few pieces, a finish chunk, usage, ``[DONE]``."""

    def chunk(delta: dict[str, Any], finish: str | None) -> str:
        data = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"

    yield chunk({"role": "assistant", "content": ""}, None)
    if tool is not None:
        call = _tool_call(0, tool, content)
        yield chunk({"tool_calls": [{"index": 0, **call}]}, None)
        yield chunk({}, "tool_calls")
    else:
        step = max(1, math.ceil(len(content) / 4))
        for i in range(0, len(content), step):
            yield chunk({"content": content[i : i + step]}, None)
        yield chunk({}, "stop")
    if usage is not None:
        final = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [],
            "usage": usage,
        }
        yield f"data: {json.dumps(final)}\n\n"
    yield "data: [DONE]\n\n"


def _hard_exit() -> None:
    os._exit(EXIT_AFTER_RETURN_CODE)


def create_app(
    config: StubConfig | None = None,
    on_exit: Callable[[], None] | None = None,
    is_stopping: Callable[[], bool] | None = None,
) -> Starlette:
    """Build the Starlette app.

    ``on_exit`` is what ``exit_after`` triggers (default: ``os._exit``); ``is_stopping`` tells hanging
    requests that the server is shutting down so they answer 503 instead of being cancelled.
    """
    state = _StubState(config=config or StubConfig(), on_exit=on_exit or _hard_exit)
    if is_stopping is not None:
        state.is_stopping = is_stopping
    handlers = _StubApp(state)
    routes = [
        Route("/v1/chat/completions", handlers.chat, methods=["POST"]),
        Route("/chat/completions", handlers.chat, methods=["POST"]),
        Route("/v1/models", handlers.models, methods=["GET"]),
        Route("/health", handlers.health, methods=["GET"]),
        Route("/metrics", handlers.metrics, methods=["GET"]),
        Route("/stub/stats", handlers.stats, methods=["GET"]),
        Route("/stub/log", handlers.fault_log, methods=["GET"]),
        Route("/stub/config", handlers.configure, methods=["POST"]),
        Route("/stub/reset", handlers.reset, methods=["POST"]),
    ]
    app = Starlette(routes=routes)
    app.state.stub = state
    return app
