"""The per-run kit: the resolved configuration and what every node derives from it, built once.

Before, each node re-derived the tokenizer, the prompt set and the token budgets from the raw
context, and served graphs skipped the resolution ``longgraph.ask`` did (so the same context rendered
different prompts). Now the first node of a run resolves the context once
(:func:`longgraph.endpoint.resolve_context`: endpoint, model name, the model's window, tokenizer) and
every node of that run gets the same :class:`RunKit`: the resolved context, the tokenizer, the prompt
sets, budgets (cached per stage and question), the model client and one stage-call helper.

Kits are cached by the run's context object (LangGraph hands every node of a run the same one), so
building one costs a single resolution per run.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from longgraph.endpoint import resolve_context
from longgraph.errors import ConfigurationError, EndpointError
from longgraph.llm import LLMClient, PerLoopProvider, StructuredCall, call_structured
from longgraph.nodes.budget import text_budget
from longgraph.nodes.early_calls import EarlyCalls
from longgraph.nodes.endpoint_health import EndpointHealth, unanswered_failure
from longgraph.prompts import NoteLabels, PromptSet, all_prompt_sets, ask_first, prompts_for, widest_labels
from longgraph.serving_policy import mark_screened, screen_served_context
from longgraph.spending import SpendingLimit, spending_limit
from longgraph.state.context import Context
from longgraph.state.outputs import SCHEMAS, StructuredOutput
from longgraph.state.usage import Usage
from longgraph.tokenizer import Tokenizer, get_tokenizer
from longgraph.user_share import call_window, share_settings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunKit:
    """Everything a node needs besides its state."""

    context: Context
    """Resolved: ``base_url``, ``model``, ``context_window`` and ``tokenizer`` are set."""
    tokenizer: Tokenizer
    provider: PerLoopProvider
    widest_labels: NoteLabels
    spending: SpendingLimit | None = field(default=None, compare=False)
    """The run's ``max_calls`` / ``max_prompt_tokens`` (``longgraph/spending.py``); None: no limit."""
    endpoint_health: EndpointHealth = field(default_factory=EndpointHealth, compare=False)
    """Whether a call out of retries stops the run or fails its chunk only (``record_unanswered``)."""
    early_calls: EarlyCalls[StructuredCall[StructuredOutput]] = field(
        default_factory=EarlyCalls, compare=False
    )
    """Calls started ahead of their node (``start_call``), taken by the identical ``call``."""
    _budgets: dict[tuple[str, str, str], int] = field(default_factory=dict, compare=False, repr=False)

    @property
    def window(self) -> int:
        return self.context.window

    def prompts(self, strategy: str) -> PromptSet:
        return prompts_for(strategy, self.context.prompt_variant)

    def schema(self, strategy: str, stage: str) -> type[StructuredOutput]:
        """The output schema the prompt file names for ``stage``."""
        name = self.prompts(strategy).stage(stage).schema
        try:
            return SCHEMAS[name]
        except KeyError as exc:
            raise ConfigurationError(f"prompts/{strategy}/{stage}: unknown schema {name!r}") from exc

    def budget(self, strategy: str, stage: str, question: str) -> int:
        """Tokens of text one ``stage`` call can take with this question (raises when none fit)."""
        key = (strategy, stage, question)
        budget = self._budgets.get(key)
        if budget is None:
            budget = self._budgets[key] = text_budget(
                self.prompts(strategy),
                stage,
                context=self.context,
                question=question,
                schema=self.schema(strategy, stage),
                tokenizer=self.tokenizer,
            )
        return budget

    def client(self) -> LLMClient:
        return self.provider(self.context)

    async def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Unit vectors for ``texts`` from the provider's embedder (endpoint, bundled model or a fake)."""
        return await self.provider.embed(texts, self.context)

    async def call(
        self,
        strategy: str,
        stage: str,
        *,
        text: str,
        question: str,
        work: str,
        label: str | None = None,
        record_unanswered: bool = False,
        join_started: bool = True,
        **extra: str,
    ) -> StructuredCall[StructuredOutput]:
        """One stage call: render the stage's prompt, ask for its schema, parse, retry, cache.

        ``label`` counts the call under another name than its prompt's stage.
        ``record_unanswered`` (a chunk's reading): a call that runs out of the endpoint's retries comes
        back failed, counted in ``usage.unanswered_calls``, instead of stopping the run — unless the
        endpoint looks down (``nodes/endpoint_health.py``). The same call started earlier by
        :meth:`start_call` is joined, not asked again (``join_started``: False for that call itself)."""
        if join_started and self.early_calls:
            key = _request(strategy, stage, text, question, label, record_unanswered, extra)
            started = self.early_calls.take(key)
            if started is not None:
                return await started
        health = self.endpoint_health
        health.started()
        answered = False
        try:
            result = await call_structured(
                self.client(),
                self.prompts(strategy),
                stage,
                task=self.context.task,
                schema=self.schema(strategy, stage),
                variables={
                    "context": text,
                    "question": question,
                    "ask_first": ask_first(self.context.prompt_layout, question),
                    **extra,
                },
                parse_retries=self.context.parse_retries,
                work=work,
                label=label,
                spending=self.spending,
            )
            answered = result.usage.llm_calls > 0
        except EndpointError as exc:
            if not record_unanswered:
                health.settled(answered=False)
                raise
            if not await health.may_record_failure(probe=self.client().probe):
                raise
            reason = unanswered_failure(str(exc).split(" (endpoint ")[0] + f" (endpoint {exc.endpoint})")
            log.info("%s: %s", work, reason)
            return StructuredCall(value=None, raw="", error=reason, usage=Usage(unanswered_calls=1))
        except BaseException:
            health.settled(answered=False)
            raise
        health.settled(answered=answered)
        return result

    def start_call(self, **request: Any) -> asyncio.Task[StructuredCall[StructuredOutput]]:
        """Start :meth:`call` with ``request`` now, on the running loop, for a later node's identical
        ``call`` to take (``nodes/early_calls.py``)."""
        bound = _CALL.bind(self, **request)
        bound.apply_defaults()
        args = bound.arguments
        key = _request(
            args["strategy"],
            args["stage"],
            args["text"],
            args["question"],
            args["label"],
            args["record_unanswered"],
            args["extra"],
        )
        task = asyncio.get_running_loop().create_task(self.call(**request, join_started=False))
        self.early_calls.add(key, task)
        return task


def _request(
    strategy: str,
    stage: str,
    text: str,
    question: str,
    label: str | None,
    record: bool,
    extra: dict[str, str],
) -> tuple[object, ...]:
    """What makes two :meth:`RunKit.call` requests the same call (``work`` only describes it)."""
    return (strategy, stage, text, question, label, record, tuple(sorted(extra.items())))


_CALL = inspect.signature(RunKit.call)


_KITS: OrderedDict[tuple[int, int], tuple[Context, PerLoopProvider, RunKit]] = OrderedDict()
_BUILDING: dict[tuple[int, int], tuple[Context, PerLoopProvider, concurrent.futures.Future[RunKit]]] = {}
_KITS_LOCK = threading.Lock()
_KITS_KEPT = 256


async def kit_for(context: Context, provider: PerLoopProvider, served_user: str | None = None) -> RunKit:
    """The run's kit: built on the first call for this context object, reused after.

    ``served_user``: the run is a LangGraph server's, for that user; its context is screened by the
    operator's policy (``longgraph/serving_policy.py``) before anything is resolved or requested.

    Built once even when several runs sharing a context start together (``longgraph batch``): each
    kit holds run state — the spending limit, the calls started ahead (``early_calls``), the endpoint's
    health — so a second kit built by a concurrent first call split it. Measured: a batch's chunk
    nodes started their map calls in one kit and its map nodes looked in another, asking 3 of 16
    chunks twice."""
    key = (id(context), id(provider))
    while True:
        with _KITS_LOCK:
            entry = _KITS.get(key)
            if entry is not None and entry[0] is context and entry[1] is provider:
                _KITS.move_to_end(key)
                return entry[2]
            building = _BUILDING.get(key)
            if building is None or building[0] is not context or building[1] is not provider:
                pending: concurrent.futures.Future[RunKit] = concurrent.futures.Future()
                _BUILDING[key] = (context, provider, pending)
                break
        try:
            return await asyncio.wrap_future(building[2])
        except _BuildAbandoned:
            continue  # its builder was cancelled: build it here
    try:
        screened = context if served_user is None else screen_served_context(context, served_user)
        kit = await build_kit(screened, provider, served_user)
        if served_user is not None:
            mark_screened(kit.context)
    except BaseException as exc:
        with _KITS_LOCK:
            _BUILDING.pop(key, None)
        pending.set_exception(_BuildAbandoned() if isinstance(exc, asyncio.CancelledError) else exc)
        pending.exception()  # seen: the waiters (if any) re-raise it
        raise
    with _KITS_LOCK:
        _BUILDING.pop(key, None)
        _KITS[key] = (context, provider, kit)
        while len(_KITS) > _KITS_KEPT:
            _KITS.popitem(last=False)
        others = [entry[2] for entry in _KITS.values() if entry[2] is not kit]
    for other in others:  # runs that ended, or were interrupted, get no other chance to let go
        other.early_calls.sweep()
    pending.set_result(kit)
    return kit


class _BuildAbandoned(Exception):
    """The run building a kit was cancelled: a run waiting for that kit builds it itself."""


async def build_kit(context: Context, provider: PerLoopProvider, served_user: str | None = None) -> RunKit:
    """Resolve the context and load what the nodes need (file reads off the event loop); a served
    user's run counts its calls against the user's window (``longgraph/user_share.py``)."""
    try:
        resolved = await resolve_context(context, provider)
    except EndpointError as exc:
        if exc.undone:
            raise
        message = str(exc).split(" (endpoint ")[0]
        raise EndpointError(
            message, endpoint=exc.endpoint, undone="the whole run (no call was made)"
        ) from exc
    tokenizer, _ = await asyncio.gather(
        asyncio.to_thread(get_tokenizer, resolved.tokenizer), asyncio.to_thread(all_prompt_sets)
    )
    spending = spending_limit(
        resolved.max_calls,
        resolved.max_prompt_tokens,
        lambda texts: sum(tokenizer.count_batch(list(texts))),
        call_window(served_user, share_settings()) if served_user is not None else None,
    )
    return RunKit(
        context=resolved,
        tokenizer=tokenizer,
        provider=provider,
        widest_labels=widest_labels(),
        spending=spending,
    )
