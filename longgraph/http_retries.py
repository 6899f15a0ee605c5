"""Posting to an OpenAI-compatible endpoint with the openai SDK's retry policy and error types.

The chat path (``longgraph/openai_chat.py``) posts with httpx itself: the SDK's request machinery
(option models, URL and header building, its JSON encoder) cost 0.25–0.4 ms of CPU per 30 KB call,
a sixth of the orchestrator's event-loop work per call on a 1.28M-token run. What a caller relied on
the SDK for is kept, as the installed SDK (openai 3.x) does it, and ``tests/unit/test_http_retries.py``
runs the same scripted faults through both and compares attempts, waits and errors:

* **what is retried**: a timeout, a connection error, or a response with status 408, 409, 429 or 5xx,
  unless an ``x-should-retry`` header says otherwise, and not when the server asks to wait longer than
  :data:`MAX_RETRY_AFTER_S`; ``max_retries`` retries at most;
* **how long to wait**: the server's ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date)
  when it is within (0, :data:`MAX_RETRY_AFTER_S`], else 0.5 s doubling per retry up to 8 s, less a
  random quarter;
* **what is raised**: ``openai.APITimeoutError``, ``openai.APIConnectionError``, or the
  ``openai.APIStatusError`` subclass of the status (``RateLimitError``, ``BadRequestError``, ...)
  with the SDK's message ("Error code: 429 - <the error's message>") and body.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import math
import random
import ssl
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, cast

import anyio
import httpx
import openai

log = logging.getLogger(__name__)

INITIAL_DELAY_S = 0.5
MAX_DELAY_S = 8.0
MAX_RETRY_AFTER_S = 120.0
"""A server asking for a longer wait than this is not retried (the SDK's limit)."""

_CONNECTION_ERRORS = (httpx.RequestError, ssl.SSLError, anyio.EndOfStream)
_STATUS_ERRORS: dict[int, type[openai.APIStatusError]] = {
    400: openai.BadRequestError,
    401: openai.AuthenticationError,
    403: openai.PermissionDeniedError,
    404: openai.NotFoundError,
    409: openai.ConflictError,
    422: openai.UnprocessableEntityError,
    429: openai.RateLimitError,
}
_INFINITY = frozenset({"inf", "+inf", "infinity", "+infinity"})


async def post_with_retries(
    http: httpx.AsyncClient,
    url: httpx.URL | str,
    *,
    content: bytes,
    headers: Mapping[str, str],
    request_timeout: float,
    max_retries: int,
    on_timeout: Callable[[bool], Awaitable[None]] | None = None,
) -> httpx.Response:
    """POST ``content`` to ``url``; the response of a successful attempt (its body read), or the
    SDK's error for the last one (see the module docstring). ``request_timeout`` bounds each attempt's
    connect, write, read and pool waits, as the SDK's ``timeout`` does, and the whole attempt too, body
    and all: an endpoint sending a valid answer a byte a second never let a read wait run out, and
    ``ask --timeout 10 --retries 1`` ran past 150 s. ``on_timeout`` hears of each
    attempt that timed out (with whether it will be retried) before the retry's wait: a server that
    answers too slowly is as overloaded as one that answers 429 (``longgraph/concurrency.py``)."""
    for retries_taken in range(max_retries + 1):
        retries_left = max_retries - retries_taken
        request = http.build_request("POST", url, content=content, headers=headers, timeout=request_timeout)
        try:
            async with asyncio.timeout(request_timeout):
                response = await http.send(request)
        except (httpx.TimeoutException, TimeoutError) as exc:
            if on_timeout is not None:
                await on_timeout(retries_left > 0)
            if retries_left > 0:
                await _wait(retries_taken, max_retries, None)
                continue
            raise openai.APITimeoutError(request=cast(Any, request)) from exc
        except _CONNECTION_ERRORS as exc:
            if retries_left > 0:
                await _wait(retries_taken, max_retries, None)
                continue
            raise openai.APIConnectionError(request=cast(Any, request)) from exc
        if not response.is_error:
            return response
        if retries_left > 0 and should_retry(response.headers, response.status_code):
            await response.aclose()
            await _wait(retries_taken, max_retries, response.headers)
            continue
        if not response.is_closed:
            await response.aread()
        raise status_error(response) from None
    raise AssertionError("unreachable: the last attempt returns or raises")


async def _wait(retries_taken: int, max_retries: int, headers: httpx.Headers | None) -> None:
    delay = retry_delay(retries_taken, headers)
    log.info("retrying request in %.2f s (retry %d of %d)", delay, retries_taken + 1, max_retries)
    await anyio.sleep(delay)


def retry_after_s(headers: httpx.Headers | None) -> float | None:
    """The wait the server asks for: ``retry-after-ms``, else ``retry-after`` in seconds or as an
    HTTP date; None when it asks for none (or says it unreadably)."""
    if headers is None:
        return None
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            delay = float(value)
        except ValueError:
            continue
        if delay == math.inf and value.strip().lower() not in _INFINITY:
            return MAX_RETRY_AFTER_S + 1  # a number too large to represent: too long, not malformed
        return delay / divisor
    date = headers.get("retry-after")
    try:
        parsed = email.utils.parsedate_tz(date)
        if parsed is None:
            return None
        return float(email.utils.mktime_tz(parsed) - time.time())
    except (TypeError, ValueError, OverflowError, OSError):
        return None


def should_retry(headers: httpx.Headers, status: int) -> bool:
    """Whether a response with this status and these headers is worth another attempt."""
    wait = retry_after_s(headers)
    if wait is not None and math.isfinite(wait) and wait > MAX_RETRY_AFTER_S:
        return False
    said: str | None = headers.get("x-should-retry")
    if said in ("true", "false"):
        return said == "true"
    return status in (408, 409, 429) or status >= 500


def retry_delay(retries_taken: int, headers: httpx.Headers | None) -> float:
    """Seconds to wait before retry number ``retries_taken + 1``."""
    wait = retry_after_s(headers)
    if wait is not None and math.isfinite(wait) and 0 < wait <= MAX_RETRY_AFTER_S:
        return wait
    backoff = min(INITIAL_DELAY_S * 2.0 ** min(retries_taken, 1000), MAX_DELAY_S)
    return max(backoff * (1 - 0.25 * random.random()), 0.0)


def status_error(response: httpx.Response) -> openai.APIStatusError:
    """The SDK's exception for an error response whose body has been read."""
    message = f"Error code: {response.status_code}"
    body: object = None
    if not (response.is_closed and not response.is_stream_consumed):
        text = response.text.strip()
        body = text
        try:
            body = json.loads(text)
        except ValueError:
            pass
        else:
            error = body.get("error", body) if isinstance(body, Mapping) else None
            detail = error.get("message") if isinstance(error, Mapping) else None
            if isinstance(detail, str) and detail:
                message += f" - {detail}"
    data = body.get("error", body) if isinstance(body, Mapping) else body
    status = response.status_code
    kind = _STATUS_ERRORS.get(status, openai.InternalServerError if status >= 500 else openai.APIStatusError)
    return kind(message, response=cast(Any, response), body=data)
