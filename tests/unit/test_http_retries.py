"""The chat path's retries and errors are the openai SDK's (``longgraph/http_retries.py``).

Each scenario scripts an endpoint's answers to successive attempts (statuses, headers, bodies,
transport errors) and runs it through the SDK's own ``post`` and through ``post_with_retries``, with
sleeping recorded instead of done and the jitter fixed; both must make the same attempts, wait the
same times, and end with the same response or the same exception (type, message, body, status).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from typing import Any, cast

import anyio
import httpx
import openai
import pytest

from longgraph.http_retries import post_with_retries

BASE = "http://endpoint.test/v1"
Step = tuple[int, dict[str, str], bytes] | type[Exception]

_ERROR = json.dumps({"error": {"message": "response_format is not supported", "type": "invalid"}}).encode()
SCENARIOS: dict[str, tuple[int, Sequence[Step]]] = {
    "answered": (2, [(200, {}, b'{"ok": 1}')]),
    "5xx twice, then answered": (3, [(500, {}, b""), (502, {}, b"bad gateway"), (200, {}, b'{"ok": 1}')]),
    "429 with retry-after": (2, [(429, {"retry-after": "2"}, b""), (200, {}, b"{}")]),
    "429 with retry-after-ms": (2, [(429, {"retry-after-ms": "1500"}, b""), (200, {}, b"{}")]),
    "429 asking for too long a wait": (2, [(429, {"retry-after": "300"}, _ERROR)]),
    "429 with an unreadable retry-after": (2, [(429, {"retry-after": "soon"}, b""), (200, {}, b"{}")]),
    "400 with an error message": (3, [(400, {}, _ERROR)]),
    "401": (3, [(401, {}, b'{"error": "no"}')]),
    "404 with a text body": (3, [(404, {}, b"not here")]),
    "409 retried": (1, [(409, {}, b""), (200, {}, b"{}")]),
    "418 not retried": (1, [(418, {}, b"teapot")]),
    "503 until retries run out": (2, [(503, {}, _ERROR)] * 3),
    "x-should-retry false on a 500": (2, [(500, {"x-should-retry": "false"}, b"")]),
    "x-should-retry true on a 400": (1, [(400, {"x-should-retry": "true"}, b""), (200, {}, b"{}")]),
    "timeouts until retries run out": (2, [httpx.ReadTimeout] * 3),
    "a connection error, then answered": (2, [httpx.ConnectError, (200, {}, b"{}")]),
    "connection errors until retries run out": (1, [httpx.ConnectError, httpx.RemoteProtocolError]),
    "no retries": (0, [(500, {}, b"")]),
}


def _endpoint(steps: Sequence[Step], attempts: list[bytes]) -> httpx.MockTransport:
    def answer(request: httpx.Request) -> httpx.Response:
        attempts.append(request.read())
        step = steps[min(len(attempts), len(steps)) - 1]
        if isinstance(step, type):
            raise step("scripted", request=request)
        status, headers, body = step
        return httpx.Response(status, headers=headers, content=body)

    return httpx.MockTransport(answer)


def _outcome(run: Any) -> tuple[object, ...]:
    try:
        response = asyncio.run(run())
    except openai.APIStatusError as exc:
        return (type(exc).__name__, str(exc), exc.body, exc.status_code)
    except openai.APIError as exc:
        return (type(exc).__name__, str(exc))
    return ("answered", response.status_code, response.content)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_attempts_waits_and_errors_are_the_sdks(scenario: str, monkeypatch: pytest.MonkeyPatch) -> None:
    max_retries, steps = SCENARIOS[scenario]
    waits: list[float] = []

    async def record(delay: float) -> None:
        waits.append(round(delay, 6))

    monkeypatch.setattr(anyio, "sleep", record)
    monkeypatch.setattr("openai._base_client.random", lambda: 0.5)
    monkeypatch.setattr("longgraph.http_retries.random.random", lambda: 0.5)
    body = {"model": "m", "messages": [{"role": "user", "content": "ça va?"}]}

    def run_with(client_kind: str) -> tuple[tuple[object, ...], list[float], list[bytes]]:
        attempts: list[bytes] = []
        waits.clear()
        http = httpx.AsyncClient(transport=_endpoint(steps, attempts), timeout=30)

        async def sdk() -> httpx.Response:
            client = openai.AsyncOpenAI(
                base_url=BASE, api_key="k", max_retries=max_retries, http_client=cast(Any, http)
            )
            return await client.post("/chat/completions", cast_to=httpx.Response, body=body)

        async def ours() -> httpx.Response:
            return await post_with_retries(
                http, f"{BASE}/chat/completions", content=json.dumps(body, ensure_ascii=False).encode(),
                headers={"Content-Type": "application/json"}, request_timeout=30, max_retries=max_retries,
            )  # fmt: skip

        return _outcome(sdk if client_kind == "sdk" else ours), list(waits), attempts

    sdk_outcome, sdk_waits, sdk_attempts = run_with("sdk")
    our_outcome, our_waits, our_attempts = run_with("ours")
    assert our_outcome == sdk_outcome
    assert our_waits == sdk_waits
    assert len(our_attempts) == len(sdk_attempts)
    assert [json.loads(a) for a in our_attempts] == [json.loads(a) for a in sdk_attempts]


def test_each_timed_out_attempt_is_reported_before_its_retry(monkeypatch: pytest.MonkeyPatch) -> None:
    """The adaptive limit hears of every attempt that got no answer in time (slowness is the only sign
    of overload on a server that queues nothing), told whether it will be retried, and a connection
    error or an error status is not a timeout."""

    async def no_wait(delay: float) -> None:
        return None

    monkeypatch.setattr(anyio, "sleep", no_wait)

    def heard(steps: Sequence[Step], max_retries: int) -> list[bool]:
        reported: list[bool] = []

        async def on_timeout(retrying: bool) -> None:
            reported.append(retrying)

        async def run() -> httpx.Response:
            http = httpx.AsyncClient(transport=_endpoint(steps, []), timeout=30)
            return await post_with_retries(
                http, f"{BASE}/chat/completions", content=b"{}", headers={}, request_timeout=30,
                max_retries=max_retries, on_timeout=on_timeout,
            )  # fmt: skip

        _outcome(run)
        return reported

    assert heard([httpx.ReadTimeout] * 3, 2) == [True, True, False]
    assert heard([httpx.ReadTimeout, httpx.PoolTimeout, (200, {}, b"{}")], 3) == [True, True]
    assert heard([httpx.ConnectError, (503, {}, b""), (200, {}, b"{}")], 3) == []


def test_an_answer_dripping_a_byte_at_a_time_runs_out_of_the_request_timeout() -> None:
    """Each read waits less than the timeout, so only a deadline on the whole attempt stops it."""

    async def drip(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n")
        try:
            for _ in range(400):
                writer.write(b" ")
                await writer.drain()
                await asyncio.sleep(0.1)
        except (ConnectionError, asyncio.CancelledError):
            pass
        writer.close()

    async def scenario() -> float:
        server = await asyncio.start_server(drip, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        started = time.monotonic()
        async with server, httpx.AsyncClient() as http:
            with pytest.raises(openai.APITimeoutError):
                await post_with_retries(
                    http,
                    f"http://127.0.0.1:{port}/v1/chat/completions",
                    content=b"{}",
                    headers={},
                    request_timeout=0.6,
                    max_retries=1,
                )
            return time.monotonic() - started

    elapsed = asyncio.run(scenario())
    assert elapsed < 0.6 * 2 + 2.0  # two attempts of 0.6 s and the retry's wait, not 40 s of dripping
