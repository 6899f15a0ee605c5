"""The stub's settings and its fault schedule: which request fails how, decided by (seed, counter) alone."""

from __future__ import annotations

import enum
import random
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class StubConfig(BaseModel):
    """Fault and identity settings; changeable at runtime through ``POST /stub/config``.

    Rates are independent slices of one uniform draw per request (error, then timeout, then malformed), so
    ``error_rate=0.2`` really means 20 % of the non-rate-limited requests fail, whatever the other rates.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = Field(default="stub", description="Model name served at /v1/models and echoed in responses.")
    latency_s: float = Field(default=0.0, ge=0, description="Fixed sleep before every chat answer.")
    hold: bool = Field(
        default=False,
        description="While true, every chat answer waits (after its latency) until it is set false: a test "
        "keeps a run in the middle of a call for as long as it needs, however slow the host.",
    )
    error_rate: float = Field(default=0.0, ge=0, le=1, description="Fraction answered HTTP 500 or 503.")
    timeout_rate: float = Field(default=0.0, ge=0, le=1, description="Fraction that hang for hang_s.")
    hang_s: float = Field(
        default=3600.0, ge=0, description="How long a 'timeout' request hangs before answering."
    )
    malformed_rate: float = Field(
        default=0.0, ge=0, le=1, description="Fraction answered 200 with broken content."
    )
    rate_limit_every: int = Field(default=0, ge=0, description="Every Nth request answers 429; 0 disables.")
    retry_after_s: float = Field(default=1.0, ge=0, description="Retry-After sent with a 429.")
    die_after: int | None = Field(
        default=None, ge=0, description="After N completed answers, refuse with 503."
    )
    exit_after: int | None = Field(
        default=None,
        ge=1,
        description="After N completed answers, stop the server (os._exit in a subprocess).",
    )
    capacity: int | None = Field(
        default=None,
        ge=1,
        description="Requests served at once; the others queue or are refused. None: no limit.",
    )
    over_capacity: Literal["queue", "reject", "share"] = Field(
        default="queue",
        description="Above capacity: wait in a queue (counted at /metrics as vLLM does), answer 429, or "
        "admit every request and share the capacity among them, each answer slowed by running/capacity "
        "(vLLM on CPU: nothing queued, only slower answers); a shared request ends when its client hangs up.",
    )
    fail_containing: str | None = Field(
        default=None,
        description="Answer 503 to every chat request whose body holds this text (ASCII): a chunk whose "
        "calls run out of retries however often they are retried.",
    )
    seed: int = Field(default=0, description="Seed of the per-request fault draws.")
    max_model_len: int | None = Field(
        default=None, ge=1, description="Reported at /v1/models as the model's window, as vLLM does."
    )
    hallucinate: bool = Field(
        default=False,
        description="Answer every text that does not hold the answer with a confident wrong value "
        "(the grounding check's adversary).",
    )
    trickle_s: float | None = Field(
        default=None,
        gt=0,
        description="Send GET /models one byte every this many seconds: each read "
        "arrives within any per-read timeout, so only a whole-request deadline ends the request.",
    )
    template_tokens: int = Field(
        default=0,
        ge=0,
        description="Tokens the served chat template adds to every prompt it counts (a default system "
        "preamble, as Qwen2.5's template adds): a client budgeting prompt tokens learns it from usage.",
    )
    api_key: str | None = Field(
        default=None,
        description="Opt-in: answer 401 to chat requests whose bearer token differs, echoing the token "
        "presented in the error message as some providers do (tests that keys never leak use it).",
    )


class Fault(enum.StrEnum):
    """What the stub does to one request; decided by :func:`decide_fault` alone."""

    NONE = "none"
    RATE_LIMIT = "rate_limit"
    ERROR_500 = "error_500"
    ERROR_503 = "error_503"
    TIMEOUT = "timeout"
    MALFORMED = "malformed"


_MALFORMED_KINDS = ("truncated", "gibberish", "prose")


def _request_rng(seed: int, seq: int) -> random.Random:
    """A generator that depends only on (seed, seq): the schedule survives concurrency and restarts."""
    return random.Random(f"longgraph-stub:{seed}:{seq}")


def decide_fault(config: StubConfig, seq: int) -> Fault:
    """Return the fault for the ``seq``-th chat request (1-based) under ``config``.

    Pure: the same config and counter always give the same fault, which is what makes two runs with the
    same seed inject the same faults in the same order.
    """
    if config.rate_limit_every and seq % config.rate_limit_every == 0:
        return Fault.RATE_LIMIT
    rng = _request_rng(config.seed, seq)
    u = rng.random()
    if u < config.error_rate:
        return Fault.ERROR_500 if rng.random() < 0.5 else Fault.ERROR_503
    u -= config.error_rate
    if u < config.timeout_rate:
        return Fault.TIMEOUT
    u -= config.timeout_rate
    if u < config.malformed_rate:
        return Fault.MALFORMED
    return Fault.NONE


def malform(content: str, seed: int, seq: int) -> str:
    """Break ``content`` so that no parser can read it, a tolerant one included.

    ``longgraph.structured`` closes JSON cut off inside a value and keeps the fields before the cut, and
    reads any ``Label:`` line: so a "truncated" JSON answer is cut inside its first key (no value
    survives), a truncated text answer loses every colon (no label survives), and the other kinds carry
    neither JSON nor labels.
    """
    kind = _request_rng(seed, seq).choice(_MALFORMED_KINDS)
    if kind == "truncated" and len(content) > 2:
        stripped = content.lstrip()
        if stripped.startswith("{"):
            key_end = stripped.find('"', stripped.find('"') + 1)
            return stripped[: key_end if key_end > 0 else 1]
        return "{" + content[: max(1, len(content) // 2)].replace(":", "")
    if kind == "gibberish":
        rng = _request_rng(seed, seq + 1_000_003)
        return " ".join("".join(rng.choice("qxzjkvw~#@") for _ in range(6)) for _ in range(12))
    return "I am sorry, I cannot help with that request {"
