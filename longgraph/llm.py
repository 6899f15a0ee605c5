"""The one LLM client factory, and the one structured-call path every node uses.

``LLMClient`` spreads calls over one or more OpenAI-compatible endpoints (replicas), caps requests in
flight with a semaphore, lets the ``openai`` client retry connection errors, timeouts, 429 (honouring
``Retry-After``) and 5xx with exponential backoff, fails over to another replica when one gives up,
and counts token usage. ``call_structured`` renders a prompt, asks for the schema (constrained
decoding where the endpoint supports it, the paper's text protocol otherwise), parses tolerantly,
retries a bounded number of times, and returns either a parsed value or a failure with the raw
answer: it never passes unparsed text on as an answer.

Clients are built per event loop (an HTTP connection pool belongs to the loop that opened it) and
cached for the loop's lifetime, so a graph run reuses connections across all of its nodes; they are
closed as their loop shuts down (``longgraph/loop_scope.py``).
"""

from __future__ import annotations

import abc
import asyncio
import contextvars
import logging
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, Protocol, TypeVar

import httpx
import numpy as np
import openai
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from numpy.typing import NDArray

from longgraph.cache import ResultCache, cache_key, open_cache
from longgraph.concurrency import AdaptiveLimit, QueueWatch, admitted_at
from longgraph.endpoint import ServedModel, list_models
from longgraph.errors import ConfigurationError, EndpointError, LonggraphError, StructuredOutputError
from longgraph.loop_scope import PerLoop
from longgraph.openai_chat import OpenAIChat, ShardedTransport
from longgraph.prompts import QUOTED_MARK, PromptSet
from longgraph.redact import chainable, redact_url, safe_message, url_secrets
from longgraph.serving_policy import cache_salt, endpoint_identity
from longgraph.spending import Reservation, SpendingLimit
from longgraph.state.context import Context
from longgraph.state.outputs import StructuredOutput
from longgraph.state.usage import Usage
from longgraph.structured import format_instructions, parse_structured, response_format

log = logging.getLogger(__name__)
T = TypeVar("T", bound=StructuredOutput)
ResolvedMode = Literal["json_schema", "text"]


@dataclass
class Reply:
    text: str
    prompt_tokens: int
    completion_tokens: int
    endpoint: str


@dataclass
class Spend:
    """What one unit of work (a batch item) sent: requests (each attempt at an endpoint) and the tokens
    of the replies it got. Kept whatever becomes of the unit, so a failed item's row still says what
    it cost."""

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


SPEND: contextvars.ContextVar[Spend | None] = contextvars.ContextVar("longgraph_spend", default=None)
"""The :class:`Spend` of the unit the current coroutine serves (None: nobody counts). Set once at the
unit's start; the asyncio tasks its graph starts inherit it, so every request of the unit is counted."""


class CallTally(Protocol):
    """Told of every request a client sends and every reply it gets: how a Ray worker reports what its
    running items spend as they spend it (``longgraph/ray_batch.py``), so that a worker lost mid-item
    cannot take its spend with it."""

    def sent(self) -> None: ...

    def replied(self, reply: Reply) -> None: ...


@dataclass
class Endpoint:
    """One replica: a label (its URL) and the chat model that talks to it — the lean
    :class:`~longgraph.openai_chat.OpenAIChat` (the default provider's) or any LangChain chat model."""

    url: str
    model: BaseChatModel | OpenAIChat
    in_flight: int = 0

    async def chat(
        self,
        messages: Sequence[BaseMessage],
        *,
        headers: dict[str, str],
        extra_body: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> Reply:
        if isinstance(self.model, OpenAIChat):
            answer = await self.model.chat(
                messages, headers=headers, extra_body=extra_body, max_tokens=max_tokens
            )
            return Reply(answer.text, answer.prompt_tokens, answer.completion_tokens, self.url)
        kwargs: dict[str, Any] = {"extra_headers": headers}
        if extra_body:
            kwargs["extra_body"] = extra_body
        if max_tokens is not None:
            kwargs["max_tokens"] = max_tokens
        return _reply(await self.model.ainvoke(list(messages), **kwargs), self.url)


@dataclass
class StructuredCall(Generic[T]):
    """The outcome of one structured call: a parsed value, or a failure with the raw answer and why."""

    value: T | None
    raw: str
    error: str | None
    usage: Usage = field(default_factory=Usage)
    cached: bool = False


_TRANSPORT_ERRORS: tuple[type[BaseException], ...] = (
    openai.APIConnectionError,  # includes APITimeoutError
    openai.InternalServerError,
    openai.RateLimitError,
    httpx.HTTPError,
    asyncio.TimeoutError,
    ConnectionError,
)


class LLMClient:
    """Talks to the endpoint(s) of one run configuration."""

    def __init__(
        self,
        endpoints: Sequence[Endpoint],
        *,
        model_name: str,
        max_concurrency: int,
        mode: Literal["auto", "json_schema", "text"],
        sampling: dict[str, Any],
        cache: ResultCache | None = None,
        secrets: Sequence[str] = (),
        limit: AdaptiveLimit | None = None,
        watch: QueueWatch | None = None,
        cache_scope: str = "",
        cap: AdaptiveLimit | None = None,
    ) -> None:
        if not endpoints:
            raise ConfigurationError("no model endpoint configured")
        self.endpoints = list(endpoints)
        self.cache_identity = (sorted(endpoint_identity(e.url) for e in self.endpoints), cache_scope)
        """Part of every cached answer's key: which endpoints answered, and whose cache it is (a served
        run's user, ``longgraph/serving_policy.py``). Without it an answer from one endpoint (a user's
        own, planted) came back for the same prompt asked of another."""
        # Redacted from every error message: some servers echo the presented key in a 401 body, and
        # a URL may carry credentials of its own.
        url_parts = [part for e in self.endpoints for part in url_secrets(e.url)]
        self._secrets = tuple(x for x in (*secrets, *url_parts) if len(x) >= 4 and x != "EMPTY")
        self.model_name = model_name
        self.sampling = sampling
        self.cache = cache
        self._mode_setting = mode
        self.mode: ResolvedMode = "text" if mode == "text" else "json_schema"
        self.limit = limit or AdaptiveLimit(max_concurrency)
        """Requests in flight: at most ``max_concurrency``, fewer while the server is overloaded. Shared
        by the provider's clients of the same endpoints (:class:`OpenAIProvider`), then ``cap`` holds
        this client to its own ``max_concurrency``."""
        self.cap = cap
        self._watch = watch
        self.tally: CallTally | None = None
        """Told of each request before it is sent and of its reply (None: nobody is)."""

    async def aclose(self) -> None:
        """Close what the client opened: its queue watcher and its own endpoints' connection pools (a
        LangChain chat model stays open: whoever built it owns it)."""
        if self._watch is not None:
            await self._watch.stop()
        for endpoint in self.endpoints:
            if isinstance(endpoint.model, OpenAIChat):
                await endpoint.model.aclose()

    @property
    def endpoint_label(self) -> str:
        return ", ".join(redact_url(e.url) for e in self.endpoints)

    def _pick(self, exclude: set[str]) -> Endpoint | None:
        """The least-loaded replica; ties broken at random so that short-lived clients spread too."""
        candidates = [e for e in self.endpoints if e.url not in exclude]
        return min(candidates, key=lambda e: (e.in_flight, random.random())) if candidates else None

    async def complete(
        self, messages: Sequence[BaseMessage], *, stage: str, schema: type[StructuredOutput] | None = None
    ) -> Reply:
        """One chat completion, spread over replicas with failover; raises :class:`EndpointError`."""
        extra_body: dict[str, Any] | None = None
        if schema is not None and self.mode == "json_schema":
            extra_body = {
                "response_format": response_format(schema, int(self.sampling.get("max_tokens") or 0) or None)
            }
        if self._watch is not None:
            self._watch.ensure_running()
        if self.cap is not None:
            await self.cap.acquire()
        try:
            reply = await self._complete_limited(messages, stage, extra_body)
            if (spend := SPEND.get()) is not None:
                spend.prompt_tokens += reply.prompt_tokens
                spend.completion_tokens += reply.completion_tokens
            if self.tally is not None:
                self.tally.replied(reply)
            return reply
        finally:
            if self.cap is not None:
                self.cap.release()

    async def _complete_limited(
        self, messages: Sequence[BaseMessage], stage: str, extra_body: dict[str, Any] | None
    ) -> Reply:
        tried: set[str] = set()
        last_error: BaseException | None = None
        async with self.limit:
            while (endpoint := self._pick(tried)) is not None:
                tried.add(endpoint.url)
                endpoint.in_flight += 1
                if (spend := SPEND.get()) is not None:
                    spend.requests += 1
                if self.tally is not None:
                    self.tally.sent()
                try:
                    reply = await endpoint.chat(
                        messages, headers={"X-Longgraph-Stage": stage}, extra_body=extra_body
                    )
                except openai.BadRequestError as exc:
                    if extra_body and self._mode_setting == "auto" and _rejects_schema(exc):
                        log.warning(
                            "endpoint %s rejects json_schema output; using the text protocol",
                            redact_url(endpoint.url),
                        )
                        self.mode = "text"
                        raise _ModeChanged from exc
                    raise EndpointError(
                        f"the endpoint rejected the request: {safe_message(exc, self._secrets)}",
                        endpoint=redact_url(endpoint.url),
                    ) from chainable(exc, self._secrets)
                except openai.AuthenticationError as exc:
                    raise ConfigurationError(
                        f"endpoint {redact_url(endpoint.url)} rejected the API key"
                    ) from chainable(exc, self._secrets)
                except LonggraphError:
                    raise
                except _TRANSPORT_ERRORS as exc:
                    last_error = exc
                    # Only worth a warning when a replica takes over; otherwise the error says it.
                    level = logging.WARNING if self._pick(tried) is not None else logging.INFO
                    log.log(
                        level,
                        "endpoint %s failed after retries (%s)",
                        redact_url(endpoint.url),
                        type(exc).__name__,
                    )
                    continue
                except (openai.APIStatusError, openai.APIResponseValidationError) as exc:
                    last_error = exc
                    continue
                finally:
                    endpoint.in_flight -= 1
                self.limit.succeeded()
                return reply
        assert last_error is not None
        raise EndpointError(
            f"no endpoint answered ({type(last_error).__name__}: {safe_message(last_error, self._secrets)})",
            endpoint=self.endpoint_label,
        ) from chainable(last_error, self._secrets)

    async def probe(self) -> bool:
        """Whether any replica answers a one-token chat request now: asked when a call ran out of its
        retries and no other call is under way to tell whether the endpoint is up
        (``nodes/endpoint_health.py``). Its own retries are the client's."""
        for endpoint in self.endpoints:
            try:
                await endpoint.chat(
                    [HumanMessage("Say OK.")], headers={"X-Longgraph-Stage": "probe"}, max_tokens=1
                )
            except Exception as exc:  # any failure means "not up", which is what the caller asks
                log.info("probe of %s failed (%s)", redact_url(endpoint.url), type(exc).__name__)
                continue
            return True
        return False


class _ModeChanged(Exception):
    """Internal: the endpoint refused json_schema; the caller re-renders the prompt for text mode."""


def _rejects_schema(exc: openai.BadRequestError) -> bool:
    text = str(exc).lower()
    return any(word in text for word in ("response_format", "json_schema", "structured", "guided"))


def _reply(message: BaseMessage, url: str) -> Reply:
    text = message.content if isinstance(message.content, str) else str(message.content)
    usage = message.usage_metadata if isinstance(message, AIMessage) else None
    return Reply(
        text=text,
        prompt_tokens=int(usage["input_tokens"]) if usage else 0,
        completion_tokens=int(usage["output_tokens"]) if usage else 0,
        endpoint=url,
    )


def to_messages(pairs: Sequence[tuple[str, str]]) -> list[BaseMessage]:
    kinds: dict[str, type[BaseMessage]] = {"system": SystemMessage, "assistant": AIMessage}
    return [kinds.get(role, HumanMessage)(content) for role, content in pairs if content]


def render_call(
    prompts: PromptSet,
    stage: str,
    *,
    task: str,
    schema: type[StructuredOutput],
    mode: ResolvedMode,
    variables: dict[str, str],
) -> list[BaseMessage]:
    """The messages of one stage call's first attempt (what ``call_structured`` sends and a dry run counts)."""
    return to_messages(prompts.render(stage, task, format=format_instructions(schema, mode), **variables))


def call_mode(llm: LLMClient, prompts: PromptSet, stage: str) -> ResolvedMode:
    """The protocol a stage's call uses: text when its prompt file says so, else the client's."""
    return "text" if prompts.stage(stage).mode == "text" else llm.mode


async def call_structured(
    llm: LLMClient,
    prompts: PromptSet,
    stage: str,
    *,
    task: str,
    schema: type[T],
    variables: dict[str, str],
    parse_retries: int,
    work: str = "",
    label: str | None = None,
    spending: SpendingLimit | None = None,
) -> StructuredCall[T]:
    """Render, ask, parse, retry on parse failure; consult and fill the result cache.

    ``label`` names the call in usage counts and the stage header when it differs from the prompt's
    stage.

    Transport failures propagate as :class:`EndpointError`, naming ``work`` (e.g. "map of chunk 7") as
    left undone; parse failures come back as a failed ``StructuredCall``. With ``spending``, each
    request (a parse retry too) is reserved against the run's budget first (``longgraph/spending.py``).
    """
    usage = Usage()
    attempts = parse_retries + 1
    raw, error = "", "not attempted"
    attempt = 0
    forced_text = prompts.stage(stage).mode == "text"
    while attempt < attempts:
        mode = call_mode(llm, prompts, stage)
        messages = render_call(prompts, stage, task=task, schema=schema, mode=mode, variables=variables)
        if attempt > 0:
            messages.append(
                HumanMessage(
                    f"Your previous answer could not be read ({error}). Answer again, exactly in the required format."
                )
            )
        # Hashing a ~30 KB prompt costs ~0.15 ms: only worth it when there is a cache to ask.
        key = (
            ""
            if llm.cache is None
            else cache_key(
                messages=[(m.type, m.content) for m in messages],
                prompt=prompts.key(stage),
                model=llm.model_name,
                endpoint=llm.cache_identity,
                sampling=llm.sampling,
                mode=mode,
                schema=schema.__name__,
            )
        )
        # SQLite in a worker thread: on a LangGraph server this loop serves every run at once.
        if llm.cache is not None and (hit := await llm.cache.aget(key)) is not None:
            try:
                value = parse_structured(hit, schema, mode)
                usage = usage + Usage(cached_calls=1, cached_by_stage={label or stage: 1})
                log.debug("%s: served from the result cache (%s)", label or stage, work)
                return StructuredCall(value=value, raw=hit, error=None, usage=usage, cached=True)
            except StructuredOutputError:
                pass  # a stale entry: ask again
        reserved: Reservation | None = None
        if spending is not None:
            reserved = await spending.reserve([str(m.content) for m in messages], work=work)
        reply: Reply | None = None
        try:
            reply = await llm.complete(messages, stage=label or stage, schema=None if forced_text else schema)
        except _ModeChanged:
            continue  # re-render for text mode; does not count as an attempt
        except EndpointError as exc:
            if not work or exc.undone:
                raise
            raise EndpointError(str(exc).split(" (endpoint ")[0], endpoint=exc.endpoint, undone=work) from exc
        finally:
            if spending is not None and reserved is not None:
                spending.settle(reserved, reply.prompt_tokens if reply is not None else None)
        usage = usage.counted(
            label or stage, prompt_tokens=reply.prompt_tokens, completion_tokens=reply.completion_tokens
        )
        raw = reply.text.replace(QUOTED_MARK, "")  # a line copied from the text keeps no mark of ours
        try:
            value = parse_structured(raw, schema, mode)
        except StructuredOutputError as exc:
            error = str(exc)
            usage = usage + Usage(failed_calls=1)
            attempt += 1
            log.info("%s: unparseable answer (attempt %d/%d): %s", label or stage, attempt, attempts, error)
            continue
        if llm.cache is not None:
            await llm.cache.aput(key, stage, raw)
        return StructuredCall(value=value, raw=raw, error=None, usage=usage)
    return StructuredCall(
        value=None, raw=raw, error=f"unparseable after {attempts} attempt(s): {error}", usage=usage
    )


# ---------------------------------------------------------------------------------------------------
# Providers: how a graph gets its client. Injected into the graph builders; tests pass fakes.


class PerLoopProvider(abc.ABC):
    """Caches one :class:`LLMClient` per event loop and run configuration.

    An HTTP connection pool (and a semaphore) belongs to the loop that created it; within one loop a
    graph run, and concurrent runs with the same settings, share the client and its concurrency cap.
    A provider also describes its endpoint (model name, window) for the one context resolution
    (:func:`longgraph.endpoint.resolve_context`).
    """

    def __init__(self) -> None:
        self._clients: PerLoop[tuple[Any, ...], LLMClient] = PerLoop(LLMClient.aclose)
        """Closed as their loop shuts down (``longgraph/loop_scope.py``)."""
        self._described: dict[tuple[Any, ...], ServedModel] = {}

    async def describe(self, context: Context) -> ServedModel:
        """What the context's endpoint serves (asked once per endpoint and key, then cached)."""
        key = (tuple(context.base_urls), hash(context.api_key))
        served = self._described.get(key)
        if served is None:
            served = self._described[key] = await self.look_up(context)
        return served

    async def look_up(self, context: Context) -> ServedModel:
        """Ask the endpoint (``GET /models`` on each replica in turn)."""
        return await list_models(context.base_urls, context.api_key, context.request_timeout)

    async def embed(self, texts: Sequence[str], context: Context) -> NDArray[np.float32]:
        """Unit vectors for ``texts`` (the context's embedding endpoint, or the bundled local model)."""
        from longgraph.embeddings import embed_texts

        return await embed_texts(texts, context)

    def __call__(self, context: Context) -> LLMClient:
        return self._clients.get(self.key(context), lambda: self.build(context))

    def key(self, context: Context) -> tuple[Any, ...]:
        return (
            tuple(context.base_urls),
            hash(context.api_key),
            context.model,
            context.request_timeout,
            context.max_retries,
            context.max_concurrency,
            context.temperature,
            context.max_output_tokens,
            context.structured_output,
            context.cache_path,
            context.adaptive_concurrency,
            context.cache_scope,
        )

    @abc.abstractmethod
    def build(self, context: Context) -> LLMClient:
        """Create the client for one configuration (called once per loop and configuration)."""

    @staticmethod
    def client_for(
        context: Context,
        endpoints: Sequence[Endpoint],
        model_name: str,
        *,
        limit: AdaptiveLimit | None = None,
        watch: QueueWatch | None = None,
        cap: AdaptiveLimit | None = None,
    ) -> LLMClient:
        return LLMClient(
            endpoints,
            model_name=model_name,
            max_concurrency=context.max_concurrency,
            mode=context.structured_output,
            sampling={"temperature": context.temperature, "max_tokens": context.max_output_tokens}
            | ({"frequency_penalty": context.penalty} if context.penalty else {}),
            cache=open_cache(context.cache_path),
            secrets=(context.api_key,),
            limit=limit or AdaptiveLimit(context.max_concurrency, adaptive=context.adaptive_concurrency),
            watch=watch,
            cache_scope=context.cache_scope,
            cap=cap,
        )


class OpenAIProvider(PerLoopProvider):
    """Lean openai-SDK clients (``longgraph/openai_chat.py``) for the context's endpoint(s); the context is
    resolved (``nodes/kit.py``).

    Clients that differ only in whose answers they cache (a served run's ``cache_scope`` is its user's)
    share one limit on calls in flight per endpoint and ``max_concurrency``, which shares its slots out
    between users in turn (:meth:`AdaptiveLimit.acquire`): with a limit per user, one user's four
    runs filled the model server's queue and another user's one-call run waited behind all of it."""

    def __init__(self) -> None:
        super().__init__()
        self._limits: PerLoop[tuple[Any, ...], tuple[AdaptiveLimit, QueueWatch]] = PerLoop(_stop_watch)

    def shared_limit(self, context: Context) -> tuple[AdaptiveLimit, QueueWatch]:
        """The running loop's limit (and queue watcher) for the context's endpoints: its ceiling the
        largest ``max_concurrency`` a client of them asked for (a run that lowers its own is held to it
        by its client's ``cap``, and cannot open a limit of its own beside the others'). Keyed on the
        endpoints as :func:`~longgraph.serving_policy.endpoint_identity` spells them (``U``, ``U/`` and
        ``HTTP://…`` are one endpoint, one limit) and the key, nothing a run chooses: whether the limit
        adapts is fixed when it is made (a served run may not set it; it is the operator's)."""
        key = (tuple(endpoint_identity(url) for url in context.base_urls), hash(context.api_key))

        def make() -> tuple[AdaptiveLimit, QueueWatch]:
            limit = AdaptiveLimit(context.max_concurrency, adaptive=context.adaptive_concurrency)
            api_key = context.api_key if context.api_key != "EMPTY" else ""
            return limit, QueueWatch(limit, context.base_urls, api_key)

        limit, watch = self._limits.get(key, make)
        if context.max_concurrency > limit.ceiling:
            limit.resize(context.max_concurrency, "a client of the same endpoints allows more")
        return limit, watch

    def build(self, context: Context) -> LLMClient:
        model = context.model or ""
        limit, watch = self.shared_limit(context)

        async def on_response(response: httpx.Response) -> None:
            if response.status_code in (429, 503):  # retried attempts pass here too
                limit.overloaded(
                    f"HTTP {response.status_code} from {redact_url(str(response.request.url))}",
                    admitted=admitted_at(),
                )
                # Read the (short) error body first: that hands the connection back to the pool. Waiting
                # for a slot while holding it deadlocked a run whose calls all got 503s (each waiter held
                # a connection the call admitted ahead of it needed) until the checkpoint write timed out.
                await response.aread()
                await limit.requeue()

        async def on_timeout(retrying: bool) -> None:
            # A server that admits every request (vLLM on CPU queues none) shows overload only as
            # slowness: 16 calls in flight on the 2-core embedded server left a reduce call unanswered
            # through all its retries (a eval), its /metrics queue empty throughout.
            limit.overloaded(f"no answer within {context.request_timeout:g} s", admitted=admitted_at())
            if retrying:
                await limit.requeue()

        sampling: dict[str, Any] = {
            "temperature": context.temperature,
            "max_tokens": context.max_output_tokens,
        }
        if context.penalty:
            sampling["frequency_penalty"] = context.penalty
        if salt := cache_salt(context.cache_scope):  # one client per scope: a served run's user
            sampling["cache_salt"] = salt
        endpoints = [
            Endpoint(
                url=url,
                model=OpenAIChat(
                    base_url=url,
                    api_key=context.api_key,
                    model=model,
                    sampling=sampling,
                    timeout=context.request_timeout,
                    max_retries=context.max_retries,
                    http=httpx.AsyncClient(
                        transport=ShardedTransport(context.max_concurrency),
                        timeout=context.request_timeout,
                        event_hooks={"response": [on_response]},
                    ),
                    on_timeout=on_timeout,
                ),
            )
            for url in context.base_urls
        ]
        cap = AdaptiveLimit(context.max_concurrency, adaptive=False)
        return self.client_for(context, endpoints, model, limit=limit, watch=watch, cap=cap)


async def _stop_watch(shared: tuple[AdaptiveLimit, QueueWatch]) -> None:
    await shared[1].stop()


LLMProvider = PerLoopProvider
"""What graph builders take: anything that gives a client for a context and describes its endpoint."""

default_provider = OpenAIProvider()
