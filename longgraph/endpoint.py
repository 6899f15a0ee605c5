"""Filling in what the user left unset about the endpoint: which server, which model, which window.

One resolution for every entry point (``longgraph.ask``, a graph served by ``langgraph dev``, the
evaluation runner): the per-run kit (``nodes/kit.py``) calls :func:`resolve_context` before the first
node runs, so the same context renders the same prompts wherever the graph runs.

* No ``base_url``: the embedded model server (when it runs), with its model name and the model's own
  tokenizer (exact counts).
* No ``model``: the first model the endpoint lists under ``/models``; no ``context_window``: that
  model's ``max_model_len`` (vLLM reports it), else 8192. Replicas are asked in turn, so one that is
  down at the start does not stop the run.

Look-ups are asynchronous (a LangGraph server's event loop must not block) and cached by the provider
per endpoint, so they happen once per process, not once per call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

import httpx

from longgraph.embedded.catalog import CATALOG, ModelProfile
from longgraph.errors import ConfigurationError, EndpointError
from longgraph.redact import redact_url
from longgraph.state.context import DEFAULT_WINDOW, Context

MODEL_PROFILES: Mapping[str, ModelProfile] = {name: model.profile for name, model in CATALOG.items()}
"""Settings measured per embedded model (``longgraph.embedded.catalog``), keyed by the name its server
answers to, used where a run leaves them unset, so that ``longgraph ask``, ``longgraph.ask``, the served
graphs and the eval runner read a document the same way."""


@dataclass(frozen=True)
class ServedModel:
    """What an endpoint says about the model it serves."""

    name: str
    max_model_len: int | None = None


@dataclass(frozen=True)
class EmbeddedEndpoint:
    base_url: str
    model: str
    tokenizer: str | None
    model_dir: str | None = None
    """The served model's own folder (weights and tokenizer), for readers of attention (PECAN)."""


def find_embedded() -> EmbeddedEndpoint | None:
    """The running embedded server, if any (reads its state file: call it off the event loop)."""
    from longgraph.embedded import find_running

    info = find_running()
    if info is None:
        return None
    folder = (
        info.tokenizer_path
        if info.tokenizer_path and (info.tokenizer_path / "config.json").is_file()
        else None
    )
    return EmbeddedEndpoint(
        info.base_url,
        info.model,
        str(info.tokenizer_path) if info.tokenizer_path else None,
        str(folder) if folder else None,
    )


async def list_models(base_urls: list[str], api_key: str, request_timeout: float) -> ServedModel:
    """The first model of the first replica that answers ``GET /models``. Each replica's answer has
    ``min(request_timeout, 30 s)`` in all (httpx's timeout bounds each read, and a server sending a
    byte at a time would pass every one of them)."""
    errors: list[str] = []
    deadline = min(request_timeout, 30.0)
    async with httpx.AsyncClient(timeout=deadline) as client:
        for url in base_urls:
            try:
                async with asyncio.timeout(deadline):
                    response = await client.get(
                        url.rstrip("/") + "/models", headers={"Authorization": f"Bearer {api_key}"}
                    )
                    response.raise_for_status()
                models = response.json().get("data") or []
            except TimeoutError:
                errors.append(f"{redact_url(url)}: no answer within {deadline:g} s")
                continue
            except (httpx.HTTPError, ValueError) as exc:
                errors.append(f"{redact_url(url)}: {type(exc).__name__}")
                continue
            if not models:
                errors.append(f"{redact_url(url)}: serves no model")
                continue
            first = models[0]
            length = first.get("max_model_len")
            return ServedModel(
                str(first["id"]), int(length) if isinstance(length, int) and length > 0 else None
            )
    raise EndpointError(
        f"could not list models ({'; '.join(errors)})", endpoint=", ".join(redact_url(u) for u in base_urls)
    )


class Describes(Protocol):
    """What :func:`resolve_context` needs of a model provider (``longgraph.llm.PerLoopProvider``):
    the model an endpoint serves and its window."""

    async def describe(self, context: Context) -> ServedModel: ...


async def resolve_context(context: Context, provider: Describes) -> Context:
    """The context with ``base_url``, ``model``, ``context_window`` and ``tokenizer`` filled in."""
    changes: dict[str, object] = {}
    if not context.base_urls:
        embedded = await asyncio.to_thread(find_embedded)
        if embedded is None:
            raise ConfigurationError(
                "no model endpoint configured (base_url / LONGGRAPH_BASE_URL) and the embedded model "
                "server is not running: start it with `longgraph model serve` or point longgraph at your vLLM"
            )
        changes["base_url"] = embedded.base_url
        if context.model is None:
            changes["model"] = embedded.model
        if context.tokenizer is None and embedded.tokenizer:
            changes["tokenizer"] = embedded.tokenizer
        if context.attention_model is None and embedded.model_dir:
            changes["attention_model"] = embedded.model_dir
    resolved = context.replace(**changes) if changes else context
    if resolved.model is None or resolved.context_window is None:
        served = await provider.describe(resolved)
        resolved = resolved.replace(
            model=resolved.model or served.name,
            context_window=resolved.context_window or served.max_model_len or DEFAULT_WINDOW,
        )
    profile = MODEL_PROFILES.get(resolved.model or "")
    if profile is not None and resolved.chunk_size is None:
        resolved = resolved.replace(chunk_size=profile.chunk_size, profile=str(resolved.model))
    if resolved.verify_answers == "auto":
        verifies = profile is None or profile.verifies
        resolved = resolved.replace(verify_answers="on" if verifies else "off")
    if resolved.plan_records == "auto":
        plans = profile is None or profile.plans
        resolved = resolved.replace(plan_records="on" if plans else "off")
    if resolved.min_note_strength is None:
        resolved = resolved.replace(
            min_note_strength=profile.min_note_strength if profile is not None else 0.0
        )
    if resolved.prompt_layout == "auto":
        first = profile is not None and profile.question_first
        resolved = resolved.replace(prompt_layout="question_first" if first else "shared_prefix")
    resolved.validate()
    return resolved
