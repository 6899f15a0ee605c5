"""Filling in what the user left unset about the endpoint: which server, which model, which tokenizer.

With no ``base_url`` the embedded model server is used (when it runs), together with its model name
and the model's own tokenizer (exact counts). With no ``model`` the endpoint's first listed model is
used. Look-ups are cached per process: they happen once per endpoint, not once per call.
"""

from __future__ import annotations

import functools

import httpx

from longgraph.errors import ConfigurationError, EndpointError
from longgraph.state.context import Context

EMBEDDED_PROMPT_VARIANT = "compact"
"""The embedded 135M model cannot follow the papers' long prompts (it copies their worked examples)."""


def _embedded() -> tuple[str, str, str | None] | None:
    from longgraph.embedded import find_running

    info = find_running()
    if info is None:
        return None
    return info.base_url, info.model, str(info.tokenizer_path) if info.tokenizer_path else None


@functools.lru_cache(maxsize=64)
def served_model_name(base_url: str, api_key: str, timeout: float) -> str:
    """The first model an OpenAI-compatible endpoint lists under ``/models``."""
    try:
        response = httpx.get(
            base_url.rstrip("/") + "/models",
            headers={"Authorization": f"Bearer {api_key}"},
            timeout=min(timeout, 30.0),
        )
        response.raise_for_status()
        models = response.json().get("data") or []
    except (httpx.HTTPError, ValueError) as exc:
        raise EndpointError(f"could not list models ({type(exc).__name__})", endpoint=base_url) from exc
    if not models:
        raise EndpointError("the endpoint serves no model", endpoint=base_url)
    return str(models[0]["id"])


def resolve_context(context: Context) -> Context:
    """Return the context with ``base_url``, ``model`` and ``tokenizer`` filled in where possible."""
    changes: dict[str, object] = {}
    if not context.base_urls:
        embedded = _embedded()
        if embedded is None:
            raise ConfigurationError(
                "no model endpoint configured (base_url / LONGGRAPH_BASE_URL) and the embedded model "
                "server is not running: start it with `longgraph model serve` or point longgraph at your vLLM"
            )
        url, model, tokenizer = embedded
        changes["base_url"] = url
        changes.setdefault("model", context.model or model)
        if context.tokenizer is None and tokenizer:
            changes["tokenizer"] = tokenizer
        if context.prompt_variant is None:
            changes["prompt_variant"] = EMBEDDED_PROMPT_VARIANT
    if context.model is None and "model" not in changes:
        first = (context.base_urls or [str(changes.get("base_url"))])[0]
        changes["model"] = served_model_name(first, context.api_key, context.request_timeout)
    return context.replace(**changes) if changes else context


def resolve_tokenizer_spec(context: Context) -> str | None:
    """The tokenizer to count with: the configured one, else the embedded model's own, else cl100k."""
    if context.tokenizer is not None or context.base_urls:
        return context.tokenizer
    embedded = _embedded()
    return embedded[2] if embedded else None
