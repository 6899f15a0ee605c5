"""In-process fakes for unit tests: a scripted chat model and a provider that serves it.

The fake goes through the real :class:`~longgraph.llm.LLMClient` (semaphore, structured path,
cache), so unit tests exercise everything but HTTP. By default it answers like the stub server's
oracle: deterministically, from the text it is shown.
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from numpy.typing import NDArray
from pydantic import ConfigDict, Field, PrivateAttr

from longgraph.endpoint import ServedModel
from longgraph.llm import Endpoint, LLMClient, PerLoopProvider
from longgraph.state.context import Context
from longgraph.testing.answers import build_completion_content

Responder = Callable[[Sequence[Mapping[str, Any]], Mapping[str, Any]], str]
"""(messages as OpenAI-style dicts, request extras such as ``response_format``) -> answer text."""


def _role(message: BaseMessage) -> str:
    return {"human": "user", "ai": "assistant"}.get(message.type, message.type)


def oracle_responder(messages: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]) -> str:
    """Answer as the stub server's oracle does (JSON when a schema is requested, else the text protocol)."""
    content, _ = build_completion_content({"messages": list(messages), **extras})
    return content


class ScriptedChatModel(BaseChatModel):
    """A chat model whose answers come from a Python function; records every call."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    responder: Responder = Field(default=oracle_responder)
    calls: list[dict[str, Any]] = Field(default_factory=list)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _answer(self, messages: list[BaseMessage], kwargs: Mapping[str, Any]) -> ChatResult:
        plain = [{"role": _role(m), "content": m.content} for m in messages]
        extras = dict(kwargs.get("extra_body") or {})
        with self._lock:
            self.calls.append({"messages": plain, **extras, "headers": kwargs.get("extra_headers")})
        text = self.responder(plain, extras)
        prompt_tokens = sum(len(str(m["content"])) for m in plain) // 4
        message = AIMessage(
            content=text,
            usage_metadata={
                "input_tokens": prompt_tokens,
                "output_tokens": len(text) // 4,
                "total_tokens": prompt_tokens + len(text) // 4,
            },
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._answer(messages, kwargs)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._answer(messages, kwargs)


class FakeProvider(PerLoopProvider):
    """Serves one (scripted) chat model through the real LLM client."""

    def __init__(self, model: BaseChatModel | None = None, *, url: str = "fake://scripted") -> None:
        super().__init__()
        self.model = model if model is not None else ScriptedChatModel()
        self.url = url

    def build(self, context: Context) -> LLMClient:
        return self.client_for(
            context, [Endpoint(url=self.url, model=self.model)], context.model or "scripted"
        )

    async def look_up(self, context: Context) -> ServedModel:
        """A scripted model serves itself: no endpoint to ask."""
        return ServedModel(name="scripted", max_model_len=None)

    async def embed(self, texts: Sequence[str], context: Context) -> NDArray[np.float32]:
        """Deterministic bag-of-words vectors (hashed content words): similar texts, similar vectors."""
        return hashed_embeddings(texts)


def hashed_embeddings(texts: Sequence[str], dimensions: int = 256) -> NDArray[np.float32]:
    """Unit vectors of hashed content-word counts: cheap, offline and deterministic."""
    from longgraph.embeddings import unit_rows
    from longgraph.nodes.checks import content_stems

    vectors = np.zeros((len(texts), dimensions), dtype=np.float32)
    for row, text in enumerate(texts):
        for word in content_stems(text):
            vectors[row, zlib.crc32(word.encode()) % dimensions] += 1.0
    return unit_rows(vectors)
