"""The run context: environment variables, validation, and the secret never leaking."""

from __future__ import annotations

import pytest

from longgraph.errors import ConfigurationError
from longgraph.state.context import Context, coerce_context


def test_environment_variables_fill_unset_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LONGGRAPH_BASE_URL", "http://a:1/v1, http://b:2/v1")
    monkeypatch.setenv("LONGGRAPH_CONTEXT_WINDOW", "4096")
    monkeypatch.setenv("LONGGRAPH_TASK", "mc")
    ctx = coerce_context({"temperature": 0.0})
    assert ctx.base_urls == ["http://a:1/v1", "http://b:2/v1"]
    assert (ctx.context_window, ctx.task, ctx.temperature) == (4096, "mc", 0.0)
    assert coerce_context({"context_window": 2048}).context_window == 2048  # per call beats env


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"chunk_size": 0}, "chunk_size"),
        ({"chunk_size": -5}, "chunk_size"),
        ({"context_window": 0}, "context_window"),
        ({"max_output_tokens": 9000, "context_window": 8192}, "max_output_tokens"),
        ({"task": "poetry"}, "task"),
        ({"structured_output": "xml"}, "structured_output"),
        ({"max_failed_fraction": 2}, "max_failed_fraction"),
        ({"unknown_knob": 1}, "unknown context setting"),
    ],
)
def test_bad_settings_are_named(settings: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        coerce_context(settings)


def test_bad_environment_value_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LONGGRAPH_CONTEXT_WINDOW", "lots")
    with pytest.raises(ConfigurationError, match="LONGGRAPH_CONTEXT_WINDOW"):
        Context()


def test_api_key_is_not_in_repr_or_public_dict() -> None:
    ctx = Context(api_key="sk-secret-123")
    assert "sk-secret-123" not in repr(ctx)
    assert "sk-secret-123" not in str(ctx.public_dict())
