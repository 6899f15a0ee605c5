"""The one-line convenience: ``longgraph.ask(question, document)``.

It does what a user would otherwise wire by hand: resolves the endpoint (starting the embedded model
server when none is configured), fills in the model name and tokenizer, runs the strategy graph
asynchronously with progress events, optionally checkpointed so that an interrupted run resumes,
and returns the validated :class:`~longgraph.state.contract.GraphOutput`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Callable, Coroutine, Mapping, Sequence
from contextlib import AsyncExitStack, nullcontext
from pathlib import Path
from typing import Any, Literal, TypeVar, cast, overload

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from pydantic import PrivateAttr, ValidationError

from longgraph.checkpointing import claim_thread, is_postgres_url, open_checkpointer
from longgraph.costing import CostEstimate
from longgraph.errors import ConfigurationError, EndpointError, InputError, validation_problems
from longgraph.llm import LLMProvider, default_provider
from longgraph.nodes.runtime import Progress
from longgraph.redact import redact_url
from longgraph.state.context import Context, coerce_context
from longgraph.state.contract import DocumentIn, GraphOutput, parse_input
from longgraph.state.usage import Usage
from longgraph.strategies import STRATEGIES, build_strategy

log = logging.getLogger(__name__)
ProgressCallback = Callable[[Progress], None]
R = TypeVar("R")


def prepare_context(
    context: Context | dict[str, Any] | None,
    settings: dict[str, Any],
    *,
    start_embedded: bool = True,
    on_notice: Callable[[str], None] | None = None,
) -> Context:
    """Merge settings into a context; with no endpoint configured, start the embedded server if asked.

    The context is not resolved here (model name, window, tokenizer): every graph run resolves it
    itself (``nodes/kit.py``), the same way whether it runs through ``ask`` or a LangGraph server.
    """
    ctx = coerce_context(context)
    if settings:
        ctx = coerce_context({**{k: v for k, v in vars(ctx).items()}, **settings})
    if not ctx.base_urls and start_embedded:
        from longgraph.embedded import chosen_model, ensure_running

        notice = on_notice or log.info
        notice(
            f"no endpoint configured: using the embedded model server (vLLM on CPU, {chosen_model().title})"
        )
        info, started = ensure_running()
        if started:
            notice(f"started the embedded model server at {info.base_url}")
    return ctx


async def resolved_context(context: Context, llm: LLMProvider | None = None) -> Context:
    """The context as a run will see it (endpoint, model, window and tokenizer filled in)."""
    from longgraph.endpoint import resolve_context

    return await resolve_context(context, llm or default_provider)


def run_config(context: Context, thread_id: str | None = None) -> RunnableConfig:
    """LangGraph run config: a recursion limit that fits the loops' own bounds (collapse, search).

    Requests in flight are capped by the LLM client's semaphore (``context.max_concurrency`` per
    endpoint), not by LangGraph's ``max_concurrency``: that one gates every background coroutine of
    the run, checkpoint writes included, so with more chunks than slots a finished map call's result
    would wait behind every queued map task before being saved, and a run killed mid-map would lose
    all of them.
    """
    search = 2 * max(
        context.pecan_max_nodes, context.pecan_fixed_k
    )  # PECAN: a retrieval and a Yes/No turn each
    config: RunnableConfig = {"recursion_limit": 24 + 4 * context.max_collapse_rounds + search}
    if thread_id is not None:
        config["configurable"] = {"thread_id": thread_id}
    return config


def plan_input(plan: Mapping[str, Any], strategy: str) -> dict[str, Any]:
    """A given records plan as graph input, refused for a strategy that does not plan its question (it
    would be ignored in silence) and when it cannot be carried out."""
    from longgraph.state.records import RecordPlan
    from longgraph.strategies import plans

    if not plans(strategy):
        raise ConfigurationError(
            f"strategy {strategy!r} does not plan its question: a plan cannot be given to it"
        )
    try:
        given = RecordPlan.model_validate(dict(plan))
    except ValidationError as exc:
        raise InputError(f"invalid plan: {validation_problems(exc)}") from exc
    problems = given.problems() if given.aggregates else []
    if problems:
        raise InputError(f"the given plan cannot be carried out: {'; '.join(problems)}")
    return given.model_dump()


def input_fingerprint(strategy: str, graph_input: Mapping[str, Any]) -> str:
    """A digest of what a thread was started with, stored in its checkpoints.

    Resuming a thread with another question, document or strategy would silently answer the old
    input (a resumed run ignores the new one), so a mismatch is refused instead.
    """
    blob = json.dumps({"strategy": strategy, "input": graph_input}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8", errors="surrogatepass")).hexdigest()


_FINGERPRINT_KEY = "longgraph_input"
_SETTINGS_KEY = "longgraph_settings"

RESUMABLE_CHANGES = frozenset(
    {
        "base_url",
        "api_key",
        "max_concurrency",
        "adaptive_concurrency",
        "request_timeout",
        "max_retries",
        "parse_retries",
        "max_failed_fraction",
        "max_calls",
        "max_prompt_tokens",
        "cache_path",
    }
)
"""Settings a resume may change: where and how calls are sent, and the budgets (raising a budget is
how a stopped run goes on). Any other setting changes the answer, so the calls already saved would mix
two configurations' results."""
RESOLVED_LATER = frozenset({"model", "context_window", "tokenizer", "attention_model"})
"""Settings a run fills in from the endpoint when unset: unset on either side is not a difference."""


def answer_settings(context: Context) -> dict[str, Any]:
    """The settings a checkpointed thread records, to refuse a resume that would mix configurations."""
    return {key: value for key, value in context.public_dict().items() if key not in RESUMABLE_CHANGES}


def changed_settings(stored: Mapping[str, Any], current: Mapping[str, Any]) -> list[str]:
    """``name: stored -> current`` for every recorded setting the resume changes (a setting one side
    does not know, from another longgraph version, is not compared)."""
    changes = []
    for key in sorted(set(stored) & set(current)):
        before, now = stored.get(key), current.get(key)
        if before == now or (key in RESOLVED_LATER and (before is None or now is None)):
            continue
        changes.append(f"{key}: {before!r} -> {now!r}")
    return changes


class Answer(GraphOutput):
    """A result of :func:`ask`: the output contract, and the question and documents it answers, so
    :meth:`to_html` needs no arguments (kept in private attributes: not serialised)."""

    _question: str = PrivateAttr(default="")
    _documents: list[DocumentIn] | None = PrivateAttr(default=None)

    @classmethod
    def of(cls, output: GraphOutput, question: str, documents: list[DocumentIn]) -> Answer:
        answer = cls.model_validate(output.model_dump())
        answer._question, answer._documents = question, documents
        return answer

    @property
    def source_documents(self) -> list[DocumentIn] | None:
        """The documents this answers (None: not known, as for a result loaded from JSON)."""
        return self._documents

    def to_html(self) -> str:
        """A self-contained page showing the answer in its documents and every chunk's fate
        (``longgraph/answerview.py``; for a result loaded from JSON, ``longgraph show``)."""
        from longgraph.answerview import AnswerView, html_page

        return html_page([AnswerView(self._question, self)], self._documents)


@overload
async def aask(
    question: str, document: str | None = None, *, dry_run: Literal[True], **settings: Any
) -> CostEstimate: ...
@overload
async def aask(
    question: str, document: str | None = None, *, dry_run: Literal[False] = False, **settings: Any
) -> Answer: ...
async def aask(
    question: str,
    document: str | None = None,
    *,
    documents: Sequence[DocumentIn | Mapping[str, Any] | str] | None = None,
    strategy: str = "mapreduce",
    context: Context | dict[str, Any] | None = None,
    llm: LLMProvider | None = None,
    checkpoint_path: str | Path | None = None,
    checkpoint_url: str | None = None,
    thread_id: str | None = None,
    on_progress: ProgressCallback | None = None,
    start_embedded: bool = True,
    dry_run: bool = False,
    plan: Mapping[str, Any] | None = None,
    **settings: Any,
) -> Answer | CostEstimate:
    """Answer ``question`` about ``document`` (or ``documents``) with ``strategy``.

    ``settings`` are context fields (``base_url=...``, ``context_window=...``, ``max_calls=...``). With
    ``checkpoint_path`` (a SQLite file) or ``checkpoint_url`` (``postgresql://...``, a server a team
    shares) and ``thread_id`` the run is checkpointed after every step; calling again with the same
    thread resumes it, redoing only the calls that had not finished. What a run
    would cost, without running it: ``dry_run=True`` returns a :class:`~longgraph.costing.CostEstimate`
    instead of an answer — the chunks, calls and prompt tokens the run would send (exact for the first
    reading stage, a bound for the rest), without a model call; the endpoint is resolved as a run
    resolves it (its window), so the chunks are the run's. ``plan``: a
    :class:`~longgraph.state.records.RecordPlan` (or its fields) to follow instead of planning the
    question (strategies that plan: ``longgraph strategies``); ``{"aggregates": false}`` keeps the
    strategy's own path without a planning call.
    """
    repairs: list[str] = []
    graph_input = graph_input_of(question, document, documents, repairs)
    if plan is not None:
        graph_input["plan"] = plan_input(plan, strategy)
    if dry_run:
        from longgraph.costing import estimate_run

        ctx = await asyncio.to_thread(
            prepare_context, context, settings, start_embedded=start_embedded and llm is None
        )
        if strategy not in STRATEGIES:
            build_strategy(strategy)  # raises the registry's error, naming the known strategies
        shape = STRATEGIES[strategy].cost
        if shape is None:
            raise ConfigurationError(
                f"strategy {strategy!r} declares no cost shape: a dry run cannot estimate it"
            )
        provider = llm or default_provider
        chunked_by = shape.graph or strategy
        return await estimate_run(
            graph_input,
            strategy=strategy,
            shape=shape,
            context=ctx,
            llm=provider,
            build=lambda saver: build_strategy(chunked_by, provider, checkpointer=saver),
        )
    if checkpoint_path is not None and checkpoint_url is not None:
        raise ConfigurationError("give checkpoint_path (SQLite) or checkpoint_url (PostgreSQL), not both")
    if checkpoint_url is not None and not is_postgres_url(checkpoint_url):
        raise ConfigurationError(f"checkpoint_url {redact_url(checkpoint_url)!r} is not a postgresql:// URL")
    checkpoints = checkpoint_url if checkpoint_url is not None else checkpoint_path
    if checkpoints is not None and not thread_id:
        raise ConfigurationError("a checkpointed run needs a thread_id (to resume it later)")
    try:
        ctx = await asyncio.to_thread(
            prepare_context, context, settings, start_embedded=start_embedded and llm is None
        )
    except EndpointError as exc:
        if exc.undone:
            raise
        raise EndpointError(
            str(exc).split(" (endpoint ")[0], endpoint=exc.endpoint, undone="the whole run (no call was made)"
        ) from exc
    async with AsyncExitStack() as stack:
        checkpointer = None
        if checkpoints is not None:
            checkpointer = await stack.enter_async_context(open_checkpointer(checkpoints))
        output = await run_strategy(
            graph_input,
            strategy=strategy,
            context=ctx,
            llm=llm or default_provider,
            checkpointer=checkpointer,
            thread_id=thread_id,
            where=redact_url(str(checkpoints)),
            on_progress=on_progress,
        )
    output.stats.notes = [*repairs, *output.stats.notes]
    return Answer.of(output, graph_input["question"], documents_in(graph_input))


def documents_in(graph_input: Mapping[str, Any]) -> list[DocumentIn]:
    """The documents of a validated graph input (one ``document`` is one untitled document)."""
    if graph_input.get("document") is not None:
        return [DocumentIn(text=graph_input["document"])]
    return [DocumentIn.model_validate(d) for d in graph_input.get("documents") or []]


def graph_input_of(
    question: str,
    document: str | None,
    documents: Sequence[DocumentIn | Mapping[str, Any] | str] | None,
    repairs: list[str],
) -> dict[str, Any]:
    """The graph input for a question about a document or documents, validated (an :class:`InputError`
    naming the problem otherwise), lone surrogates repaired and each repair said in ``repairs``."""
    question = _repaired(question, "the question", repairs)
    if isinstance(document, str):
        document = _repaired(document, "the document", repairs)
    listed: object = documents
    if documents is not None and not isinstance(documents, str | bytes):  # one string: parse_input says so
        listed = [_repaired_document(doc, i, repairs) for i, doc in enumerate(documents)]
    return parse_input({"question": question, "document": document, "documents": listed}).model_dump(
        exclude_none=True
    )


async def run_strategy(
    graph_input: dict[str, Any],
    *,
    strategy: str,
    context: Context,
    llm: LLMProvider,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    thread_id: str | None = None,
    where: str = "the checkpoint database",
    on_progress: ProgressCallback | None = None,
    graph: Any = None,
) -> GraphOutput:
    """Run ``strategy``'s graph on a validated input: streamed, checkpointed under ``thread_id`` when a
    ``checkpointer`` is given (resumed when that thread holds an unfinished run of the same input).

    Runs that share one ``context`` object and ``llm`` share one client and its ``max_concurrency``
    (``nodes/kit.py``): :func:`longgraph.batch.abatch` relies on it, and passes the ``graph`` it compiled
    once per strategy (compiling one takes ~19 ms of CPU: 1.9 s over 100 items)."""
    graph = graph or build_strategy(strategy, llm, checkpointer=checkpointer)
    config = run_config(context, thread_id)
    # One writer per thread: a second run of it (another process resuming it too) is refused.
    held = claim_thread(checkpointer, thread_id) if checkpointer is not None and thread_id else nullcontext()
    async with held:
        return await _run_held(
            graph, graph_input, strategy, context, checkpointer, config, thread_id, where, on_progress
        )


async def _run_held(
    graph: Any,
    graph_input: dict[str, Any],
    strategy: str,
    context: Context,
    checkpointer: BaseCheckpointSaver[Any] | None,
    config: RunnableConfig,
    thread_id: str | None,
    where: str,
    on_progress: ProgressCallback | None,
) -> GraphOutput:
    """The run itself, its thread held (:func:`run_strategy`)."""
    run_input: dict[str, Any] | None = graph_input
    resumed: list[str] = []
    if checkpointer is not None:
        fingerprint = input_fingerprint(strategy, graph_input)
        settings = answer_settings(context)
        # A JSON string: LangGraph keeps only plain values of the run's metadata in its checkpoints.
        config["metadata"] = {
            _FINGERPRINT_KEY: fingerprint,
            _SETTINGS_KEY: json.dumps(settings, sort_keys=True),
        }
        snapshot = await graph.aget_state(config)
        if snapshot.metadata is not None:
            stored = snapshot.metadata.get(_FINGERPRINT_KEY)
            if stored != fingerprint:
                raise ConfigurationError(
                    f"thread {thread_id!r} in {where} holds a run with another question, "
                    "document or strategy: resume it with the same input, or use a new thread id"
                )
            recorded = snapshot.metadata.get(_SETTINGS_KEY)  # none: a thread of an older longgraph
            changes = changed_settings(json.loads(recorded) if isinstance(recorded, str) else {}, settings)
            if changes:
                raise ConfigurationError(
                    f"thread {thread_id!r} in {where} was run with other settings ({'; '.join(changes)}): "
                    "its saved calls would mix with new ones; resume with the same settings, or use a new "
                    "thread id"
                )
            action, notes = resume_decision(snapshot, str(thread_id), cache_on=bool(context.cache_path))
            if action == "stored":
                log.info("thread %s already finished; returning its stored result", thread_id)
                result = GraphOutput.model_validate(snapshot.values)
                result.stats.notes = [*result.stats.notes, *notes]
                return result
            if action == "rerun":
                # Run the input again: every call answered before comes back from the result cache, so
                # only the failed chunks and the stages their answers change reach the endpoint.
                log.info("thread %s: running it again to retry its failed chunks", thread_id)
                await checkpointer.adelete_thread(str(thread_id))
            else:
                log.info("resuming thread %s at %s", thread_id, ", ".join(snapshot.next))
                run_input = None
            resumed = notes
    result_values: dict[str, Any] = {}
    stream = graph.astream(
        run_input,
        config,
        context=context,
        stream_mode=["custom", "values"],
        # Each step's checkpoint is written before the next step starts, so a killed run
        # loses at most the calls in flight.
        durability="sync" if checkpointer is not None else None,
    )
    async for mode, payload in stream:
        if mode == "custom" and on_progress is not None:
            on_progress(cast(Progress, payload))
        elif mode == "values":
            result_values = cast(dict[str, Any], payload)
    result = GraphOutput.model_validate(result_values)
    if resumed:
        result.stats.resumed = True
        result.stats.notes = [*result.stats.notes, *resumed]
    return result


def resume_decision(
    snapshot: Any, thread_id: str, *, cache_on: bool
) -> tuple[Literal["stored", "rerun", "continue"], list[str]]:
    """What a resume of a checkpointed thread (of the same input and settings) does, and its notes.

    * ``stored``: finished, nothing to retry — its result as stored.
    * ``rerun``: chunks failed (finished with ``failed`` chunks, or calls out of the endpoint's retries
      recorded on the way) and the result cache is on — run the input again on the same thread.
    * ``continue``: unfinished — LangGraph resumes at the steps left.

    Without the result cache a failed chunk cannot be retried without redoing every call, so the
    thread is continued or returned as it is, and a note says so.
    """
    # Finished: no task left. (``next`` alone is not enough: killed after a step's writes were saved
    # but before the next step's checkpoint, a thread has no ``next`` — those tasks have their writes —
    # yet is unfinished; seen in batch's kill test, 1 in 4 runs.)
    finished = not snapshot.next and not snapshot.tasks
    failed = unanswered_calls_in(snapshot)
    if finished:
        chunks = GraphOutput.model_validate(snapshot.values).chunks
        failed = max(failed, sum(c.status == "failed" for c in chunks))
    if failed and cache_on:
        return "rerun", [
            f"resumed thread {thread_id!r}: ran it again to retry its {failed} failed chunk(s); the calls "
            "answered before came from the result cache"
        ]
    not_retried = (
        [
            f"{failed} failed chunk(s) were not retried: retrying them needs the result cache (it holds "
            "the calls that were answered), which is off for this run"
        ]
        if failed
        else []
    )
    if finished:
        return "stored", [f"the stored result of finished thread {thread_id!r}", *not_retried]
    return "continue", [f"resumed thread {thread_id!r} from its checkpoint", *not_retried]


def unanswered_calls_in(snapshot: Any) -> int:
    """Calls of a checkpointed run that ran out of the endpoint's retries, their chunks recorded as failed
    (``usage.unanswered_calls``): in its state, and in the writes of a step that did not finish."""
    updates = [snapshot.values, *(t.result for t in snapshot.tasks if isinstance(t.result, Mapping))]
    return sum(
        usage.unanswered_calls for update in updates if isinstance(usage := update.get("usage"), Usage)
    )


QUESTIONS_IN_FLIGHT = 8
"""The most questions of one :func:`aask_many` answered at once: each holds its own chunks and notes
(the model calls themselves are bounded by ``max_concurrency``), so a thousand questions wait their turn
instead of each chunking the document at the same moment."""


async def aask_many(
    questions: Sequence[str],
    document: str | None = None,
    *,
    context: Context | dict[str, Any] | None = None,
    thread_id: str | None = None,
    questions_in_flight: int = QUESTIONS_IN_FLIGHT,
    on_answer: Callable[[int, GraphOutput], None] | None = None,
    **kwargs: Any,
) -> list[GraphOutput]:
    """Answer several ``questions`` about the same document(s): one result per question, in their order.

    The first question builds what its strategy builds once per document (ToM's tree, PECAN's graph);
    the others run after it, at most ``questions_in_flight`` at a time, and find it in the result cache,
    so each result's ``stats.build`` is the one-time cost (zero calls for every question but the first)
    apart from its own. With the cache turned off, a temporary one holds the structure for this call
    only. A question asked twice (the same words, whitespace aside) is answered once and reported at
    each place it was asked. An empty question is an :class:`InputError` naming it, before any call.
    ``thread_id`` checkpoints each question under ``<thread_id>-q<i>``; ``on_answer(i, result)`` is
    told of each question's result as soon as it is settled (a question asked twice, at each of its
    places), so a caller can show answers while the others run; other arguments are :func:`aask`'s.
    """
    import tempfile

    if not questions:
        raise InputError("no question to answer")
    empty = [i + 1 for i, q in enumerate(questions) if not isinstance(q, str) or not q.strip()]
    if empty:
        raise InputError(f"question {', '.join(map(str, empty[:10]))} of {len(questions)} is empty")
    if questions_in_flight < 1:
        raise ConfigurationError(f"questions_in_flight must be at least 1 (got {questions_in_flight})")
    keys = [" ".join(q.split()) for q in questions]  # the same words, whitespace aside
    first_asked: dict[str, int] = {}
    for i, key in enumerate(keys):
        first_asked.setdefault(key, i)
    unique = sorted(first_asked.values())
    settings = dict(kwargs)
    shared = settings.get("cache_path", coerce_context(context).cache_path)
    gate = asyncio.Semaphore(questions_in_flight)
    with tempfile.TemporaryDirectory(prefix="longgraph-") as scratch:
        if not shared:
            settings["cache_path"] = str(Path(scratch) / "structures.sqlite")

        async def run(index: int) -> Any:
            thread = f"{thread_id}-q{index}" if thread_id else None
            async with gate:
                result = await aask(questions[index], document, context=context, thread_id=thread, **settings)
            if on_answer is not None:
                for place, key in enumerate(keys):
                    if first_asked[key] == index:
                        on_answer(place, result)
            return result

        answered = {unique[0]: await run(unique[0])}
        rest = await asyncio.gather(*(run(i) for i in unique[1:]))
        answered.update(zip(unique[1:], rest, strict=True))
    return [answered[first_asked[key]] for key in keys]


def _repaired(text: str, what: str, repairs: list[str]) -> str:
    """``text`` with lone surrogates (not Unicode; they cannot be sent or stored) replaced by U+FFFD.

    They come from ``surrogateescape`` decoding or broken JSON; the CLI treats invalid UTF-8 in a
    file the same way. Surrogate pairs written as two code points are joined, not replaced.
    """
    if not isinstance(text, str):
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        fixed = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        count = fixed.count("\ufffd") - text.count("\ufffd")
        repairs.append(f"{what}: {count} lone surrogate code point(s) (invalid Unicode) replaced with U+FFFD")
        return fixed
    return text


def _repaired_document(
    doc: DocumentIn | Mapping[str, Any] | str, index: int, repairs: list[str]
) -> DocumentIn | Mapping[str, Any] | str:
    if isinstance(doc, str):
        return _repaired(doc, f"document {index} text", repairs)
    raw = doc.model_dump() if isinstance(doc, DocumentIn) else doc
    if not isinstance(raw, Mapping):
        return doc  # parse_input names the problem
    fixed = {
        key: _repaired(value, f"document {index} {key}", repairs) if key in ("title", "text") else value
        for key, value in raw.items()
    }
    return fixed if fixed != raw else doc


@overload
def ask(
    question: str, document: str | None = None, *, dry_run: Literal[True], **kwargs: Any
) -> CostEstimate: ...
@overload
def ask(
    question: str, document: str | None = None, *, dry_run: Literal[False] = False, **kwargs: Any
) -> Answer: ...
def ask(
    question: str, document: str | None = None, *, dry_run: bool = False, **kwargs: Any
) -> Answer | CostEstimate:
    """Synchronous :func:`aask` (not from inside a running event loop: await ``aask`` there)."""
    if dry_run:
        return _run_sync(lambda: aask(question, document, dry_run=True, **kwargs), "ask")
    return _run_sync(lambda: aask(question, document, dry_run=False, **kwargs), "ask")


def ask_many(questions: Sequence[str], document: str | None = None, **kwargs: Any) -> list[GraphOutput]:
    """Synchronous :func:`aask_many` (not from inside a running event loop)."""
    return _run_sync(lambda: aask_many(questions, document, **kwargs), "ask_many")


def _run_sync(make: Callable[[], Coroutine[Any, Any, R]], name: str) -> R:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    raise ConfigurationError(
        f"longgraph.{name}() was called inside a running event loop: use `await longgraph.a{name}(...)`"
    )
