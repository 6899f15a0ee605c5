"""Whole corpora in one run: ``longgraph batch INPUT.jsonl --out results.jsonl`` and :func:`abatch`.

An item is one JSON object: ``question``, and ``document`` (text), ``documents`` (texts, or objects with
``title`` and ``text``) or ``files`` (paths, relative to the input file's folder); optionally ``id``,
``strategy`` (else the run's) and ``metadata`` (copied to the result row, e.g. a gold answer). Any other
key is an error naming its line, as is a line that is not such an object, a missing file or an unknown
strategy — all found before the first model call, so line 900 cannot fail after 899 items were paid for.

**One concurrency budget.** Every item runs in one event loop with one context object and one provider,
so all their calls share one client and its ``max_concurrency`` (``nodes/kit.py``): no item waits for
another to finish before its calls start. Up to ``items_in_flight`` items are open at once (by default
twice ``max_concurrency`` per endpoint: enough to keep the endpoint's slots full while one item is between stages,
few enough that documents are read lazily and a kill leaves few items half done).

**Nothing is lost by a kill.** Each finished item is one line of ``OUT`` (appended and fsynced, the one
JSONL writer ``longgraph/jsonl.py``); each running item is checkpointed after every step in ``OUT``'s
checkpoint file (``results.checkpoints.sqlite``, one SQLite checkpointer for the run). A rerun skips the
items whose row says they finished (same ``id`` and same input digest: an edited item runs again),
resumes the interrupted ones from their checkpoints — only the calls that were in flight are made again
— and retries the failed ones. The last row of an id is its result. A finished item's checkpoints are
deleted once its row is written, so the checkpoint file holds only unfinished work.

An item's failure is its row's ``error`` (and ``error_type``); it never stops the corpus.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import logging
import time
from collections.abc import Callable, Coroutine, Iterable, Iterator, Mapping, Sequence
from contextlib import AsyncExitStack, ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from longgraph.errors import BudgetExhausted, ConfigurationError, InputError, LonggraphError
from longgraph.jsonl import Appender, iter_objects, read_rows
from longgraph.llm import SPEND, LLMProvider, Spend, default_provider
from longgraph.outputs import claim_output, jsonl_rows, sqlite_file
from longgraph.state.context import Context
from longgraph.state.contract import GraphOutput

if TYPE_CHECKING:
    from longgraph.ray_batch import WorkerScope

log = logging.getLogger(__name__)

ITEM_KEYS = frozenset({"id", "question", "document", "documents", "files", "strategy", "metadata"})
CHUNK_STATUSES = ("used", "no_information", "unsupported", "filtered", "failed")


@dataclass(frozen=True)
class BatchItem:
    """One validated item (its documents not read yet when they are ``files``)."""

    id: str
    digest: str
    where: str
    question: str
    strategy: str
    document: str | None = None
    documents: list[Any] | None = None
    files: tuple[Path, ...] = ()
    metadata: Any = None
    origin: str | None = None
    """The items file it came from (resolved), written into its row: a results file holds one file's."""


@dataclass
class BatchSummary:
    """What a batch run did (``rows``: this run's result rows, in the order they finished)."""

    total: int = 0
    skipped: int = 0
    done: int = 0
    failed: int = 0
    seconds: float = 0.0
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    out: Path | None = None
    rows: list[dict[str, Any]] = field(default_factory=list)
    cluster: dict[str, int] | None = None
    """A Ray run's figures: workers, workers lost, the budget of requests in flight, the workers' peak RSS."""
    budget_stop: str | None = None
    """Why the corpus stopped early: its ``max_calls`` / ``max_prompt_tokens`` was reached."""
    not_started: int = 0

    def count(self, row: dict[str, Any]) -> None:
        """One finished item's row, counted."""
        self.done += 1
        self.failed += row["error"] is not None
        self.llm_calls += int(row.get("llm_calls") or 0)
        self.prompt_tokens += int(row.get("prompt_tokens") or 0)
        self.completion_tokens += int(row.get("completion_tokens") or 0)
        self.rows.append(row)

    def lines(self) -> list[str]:
        rate = f" ({self.done / self.seconds:.2f} items/s)" if self.seconds and self.done else ""
        answered = self.done - self.failed
        lines = [
            f"{self.total} item(s): {answered} answered, {self.failed} failed, {self.skipped} skipped "
            f"(finished before); {self.seconds:.1f} s{rate}",
            f"{self.llm_calls:,} LLM calls, {self.prompt_tokens:,} prompt + {self.completion_tokens:,} "
            "completion tokens",
        ]
        if self.budget_stop is not None:
            lines.append(
                f"stopped: {self.budget_stop}; {self.not_started} item(s) not started and {self.failed} "
                "stopped mid-way: rerun (with a larger budget) to continue"
            )
        first = next((r for r in self.rows if r.get("error")), None)
        if first is not None and self.budget_stop is None:
            lines.append(f"first failure: item {first['id']}: {first['error_type']}: {first['error'][:300]}")
        if self.out is not None:
            lines.append(f"results: {self.out}")
        return lines


def digest_of(row: Mapping[str, Any]) -> str:
    """A digest of what an item asks (everything but its id and metadata)."""
    asked = {k: v for k, v in row.items() if k not in ("id", "metadata")}
    blob = json.dumps(asked, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8", errors="surrogatepass")).hexdigest()[:16]


def parse_item(
    row: Mapping[str, Any],
    where: str,
    *,
    base: Path,
    default_strategy: str,
    files_outside: bool = False,
    read_files: bool = False,
) -> BatchItem:
    """A validated :class:`BatchItem`, or an :class:`InputError` naming ``where`` and the problem.

    ``files`` must lie inside ``base`` (the items file's folder; links resolved) unless
    ``files_outside``: an items file from elsewhere (a shared queue, a served batch) cannot make the
    run read ``../../etc/passwd`` and send it to the endpoint. ``read_files``: each file is read and
    decoded now, so a binary or empty one fails here, before any call, not when its item runs."""
    from longgraph.strategies import STRATEGIES

    unknown = sorted(set(row) - ITEM_KEYS)
    if unknown:
        raise InputError(
            f"{where}: unknown key(s) {', '.join(unknown)} (an item has {', '.join(sorted(ITEM_KEYS))})"
        )
    question = row.get("question")
    if not isinstance(question, str) or not question.strip():
        raise InputError(f"{where}: no question (a non-empty string)")
    given = [k for k in ("document", "documents", "files") if row.get(k) is not None]
    if len(given) != 1:
        raise InputError(
            f"{where}: give exactly one of document, documents or files (got {', '.join(given) or 'none'})"
        )
    strategy = row.get("strategy") or default_strategy
    if strategy not in STRATEGIES:
        raise InputError(f"{where}: unknown strategy {strategy!r} (see `longgraph strategies`)")
    files: tuple[Path, ...] = ()
    if row.get("files") is not None:
        names = row["files"]
        if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
            raise InputError(f"{where}: files must be a non-empty list of paths")
        files = tuple(p if p.is_absolute() else base / p for p in map(Path, names))
        missing = [str(p) for p in files if not p.is_file()]
        if missing:
            raise InputError(f"{where}: no such file: {', '.join(missing[:5])}")
        if not files_outside:
            outside = [str(p) for p in files if not p.resolve().is_relative_to(base.resolve())]
            if outside:
                raise InputError(
                    f"{where}: file(s) outside the items file's folder {base}: {', '.join(outside[:5])} "
                    "(allow them with --files-outside)"
                )
        if read_files:
            _check_files(files, where)
    if row.get("document") is not None and not isinstance(row["document"], str):
        raise InputError(f"{where}: document must be a string (or use documents)")
    if row.get("documents") is not None and not isinstance(row["documents"], list):
        raise InputError(f"{where}: documents must be a list")
    if read_files and not files:
        _check_inline(question, row.get("document"), row.get("documents"), where)
    digest = digest_of(row)
    raw_id = row.get("id")
    if raw_id is not None and not isinstance(raw_id, str | int):
        raise InputError(f"{where}: id must be a string or a number")
    return BatchItem(
        id=str(raw_id) if raw_id is not None else digest,
        digest=digest,
        where=where,
        question=question,
        strategy=strategy,
        document=row.get("document"),
        documents=row.get("documents"),
        files=files,
        metadata=row.get("metadata"),
    )


def _check_files(files: Iterable[Path], where: str) -> None:
    from longgraph.files import read_document

    texts = []
    for path in files:  # every file: a binary third file must fail too
        try:
            texts.append(read_document(str(path))[1])
        except InputError as exc:
            raise InputError(f"{where}: {exc}") from exc
    if not any(text.strip() for text in texts):
        raise InputError(f"{where}: its file(s) hold no text (empty or whitespace only)")


def _check_inline(question: str, document: Any, documents: Any, where: str) -> None:
    """What the graph's first node would refuse (the input's own validation: a title-only document, a
    list of numbers, no text at all), refused now, with the item's line named."""
    from longgraph.api import graph_input_of

    try:
        graph_input_of(question, document, documents, [])
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from exc


def _validated(
    rows: Iterable[tuple[str, Mapping[str, Any]]],
    base: Path,
    strategy: str,
    *,
    files_outside: bool = False,
    read_files: bool = False,
) -> Iterator[BatchItem]:
    seen: dict[str, str] = {}
    for where, row in rows:
        item = parse_item(
            row,
            where,
            base=base,
            default_strategy=strategy,
            files_outside=files_outside,
            read_files=read_files,
        )
        if item.id in seen:
            raise InputError(f"{where}: id {item.id!r} is also the id of {seen[item.id]}")
        seen[item.id] = where
        yield item


def claim_results(out: Path, inputs: Iterable[Path]) -> None:
    """Refuse (before any call) an ``--out`` that is an input, a folder, or a file that is not a batch's
    results; and a checkpoint file beside it that is not SQLite (``longgraph/outputs.py``)."""
    claim_output(
        out, option="--out", kind="batch results file", ours=jsonl_rows("id", "input_digest"), inputs=inputs
    )
    claim_output(
        checkpoint_file(out), option="--out", kind="checkpoint file", ours=sqlite_file, inputs=inputs
    )


def checkpoint_file(out: Path) -> Path:
    """Where a batch's running items are checkpointed: ``results.checkpoints.sqlite`` beside ``results.jsonl``."""
    return out.with_name(out.stem + ".checkpoints.sqlite")


def finished_items(rows: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Id → input digest of the items whose last row (of a results file's ``rows``) is a result, not a
    failure."""
    last: dict[str, Mapping[str, Any]] = {}
    for row in rows:
        if "id" in row:
            last[str(row["id"])] = row
    return {i: str(r.get("input_digest")) for i, r in last.items() if r.get("error") is None}


@dataclass
class PlannedBatch:
    """A batch validated whole, its results file claimed, what is left to do, and how to read its items
    again (documents read lazily, one item at a time)."""

    summary: BatchSummary
    path: Path | None
    todo: set[str]
    items: Callable[[], Iterator[BatchItem]]


def plan_batch(
    items: str | Path | Iterable[Mapping[str, Any]],
    out: str | Path | None,
    strategy: str,
    files_outside: bool,
) -> PlannedBatch:
    """Every item valid (files read and decoded) before any call, the results file claimed, the items
    whose last row says they finished (same id and input digest) left out."""
    if isinstance(items, str | Path):
        source = Path(items)
        base = source.parent

        def rows() -> Iterator[tuple[str, Mapping[str, Any]]]:
            if not source.is_file():
                raise InputError(f"{source}: no such file")
            return iter_objects(source, "batch item")
    else:
        listed = [(f"item {i}", row) for i, row in enumerate(items)]
        base = Path.cwd()

        def rows() -> Iterator[tuple[str, Mapping[str, Any]]]:
            return iter(listed)

    path = Path(out) if out is not None else None
    # First pass: every item valid, before any call (documents are not kept: the second pass reads them).
    validated = list(_validated(rows(), base, strategy, files_outside=files_outside, read_files=True))
    plan = [(item.id, item.digest) for item in validated]
    if not plan:
        raise InputError("no item to answer")
    if path is not None:
        inputs = [source] if isinstance(items, str | Path) else []
        claim_results(path, [*inputs, *(f for item in validated for f in item.files)])
    order = in_document_groups(validated)
    del validated
    origin = str(Path(items).resolve()) if isinstance(items, str | Path) else None
    written = list(read_rows(path, "result row")) if path is not None else []
    if path is not None and origin is not None:
        refuse_another_items_file(path, written, origin)
    done_before = finished_items(written)
    todo = {i for i, d in plan if done_before.get(i) != d}
    summary = BatchSummary(total=len(plan), skipped=len(plan) - len(todo), out=path)

    def again() -> Iterator[BatchItem]:
        items = _validated(rows(), base, strategy, files_outside=files_outside)
        for item in in_order(items, order):
            yield dataclasses.replace(item, origin=origin)

    return PlannedBatch(summary, path, todo, again)


REORDER_WINDOW = 1_000
"""The most items :func:`in_order` holds back while it waits for an earlier one of their document."""


def document_key(item: BatchItem) -> str:
    """What an item reads, as a digest: its inline text, its documents, or its files' contents."""
    read = {"document": item.document, "documents": item.documents, "files": [str(f) for f in item.files]}
    blob = json.dumps(read, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8", errors="surrogatepass")).hexdigest()


def in_document_groups(items: Sequence[BatchItem]) -> list[str]:
    """The items' ids with every item on the same document(s) right after the first one on them, the
    groups in the order their first item comes: questions about one text run together, so the model
    server's prefix cache and the chunk memo (``nodes/chunking.chunks_once``) still hold that text."""
    first: dict[str, int] = {}
    ranked = []
    for index, item in enumerate(items):
        ranked.append((first.setdefault(document_key(item), index), index, item.id))
    return [item_id for *_, item_id in sorted(ranked)]


def in_order(
    items: Iterable[BatchItem], order: Sequence[str], window: int = REORDER_WINDOW
) -> Iterator[BatchItem]:
    """``items`` (read in file order) given out in ``order``, holding back at most ``window`` of them:
    beyond that the held item earliest in ``order`` goes first, so an items file whose documents
    alternate over thousands of lines is grouped in part, never held whole in memory. Items ``order``
    does not name come after it."""
    rank = {item_id: place for place, item_id in enumerate(order)}
    held: dict[str, BatchItem] = {}
    given: set[str] = set()
    place = 0
    for item in items:
        held[item.id] = item
        while place < len(order) and (order[place] in held or order[place] in given):
            if order[place] in held:
                yield held.pop(order[place])
            place += 1
        if len(held) > window:
            earliest = min(held, key=lambda item_id: rank.get(item_id, len(order)))
            given.add(earliest)
            yield held.pop(earliest)
    yield from sorted(held.values(), key=lambda item: rank.get(item.id, len(order)))


def refuse_another_items_file(out: Path, rows: Iterable[Mapping[str, Any]], origin: str) -> None:
    """An :class:`InputError` when ``out`` holds rows of another items file: by the last-row rule its
    rows for ids this file shares would be replaced by answers to other questions (a results file took
    another corpus's rows and exited 0). Rows that name no file (written before files were named) pass."""
    others = sorted({str(row["items"]) for row in rows if row.get("items")} - {origin})
    if others:
        raise InputError(
            f"--out {out} holds the results of {others[0]}, not of {origin}: name another --out "
            "(one results file per items file)"
        )


def batch_on_ray(
    items: str | Path | Iterable[Mapping[str, Any]],
    *,
    out: str | Path | None = None,
    strategy: str = "mapreduce",
    context: Context | dict[str, Any] | None = None,
    full: bool = False,
    on_item: Callable[[dict[str, Any], BatchSummary], None] | None = None,
    on_notice: Callable[[str], None] | None = None,
    start_embedded: bool = True,
    files_outside: bool = False,
    ray_address: str | None = None,
    workers: int | None = None,
    items_in_flight: int | None = None,
    checkpoint_url: str | None = None,
    **settings: Any,
) -> BatchSummary:
    """:func:`abatch` on a Ray cluster, in this thread (the CLI's: Ctrl-C stops it between rows)."""
    from longgraph.api import prepare_context

    planned = plan_batch(items, out, strategy, files_outside)
    if not planned.todo:
        return planned.summary
    resolved = prepare_context(context, settings, start_embedded=start_embedded, on_notice=on_notice)
    per_worker = items_in_flight or 2 * resolved.max_concurrency * max(1, len(resolved.base_urls))
    summary = planned.summary

    def todo() -> Iterator[BatchItem]:
        for item in planned.items():
            if item.id not in planned.todo:
                continue
            if summary.budget_stop is not None:  # the corpus's budget: no new item starts
                summary.not_started += 1
                continue
            yield item

    figures = answer_items_on_ray(
        todo(),
        summary=planned.summary,
        path=planned.path,
        full=full,
        on_item=on_item,
        context=resolved,
        address=ray_address,
        workers=workers,
        per_worker=per_worker,
        checkpoint_url=checkpoint_url,
    )
    summary.cluster = figures
    summary.llm_calls += figures.get("lost_calls", 0)  # spent by workers lost under their items
    summary.prompt_tokens += figures.get("lost_prompt_tokens", 0)
    summary.completion_tokens += figures.get("lost_completion_tokens", 0)
    return summary


def read_item_documents(item: BatchItem) -> tuple[str | None, list[Any] | None, list[str]]:
    if not item.files:
        return item.document, item.documents, []
    from longgraph.files import read_document

    documents, notes = [], []
    for path in item.files:
        title, text, file_notes = read_document(str(path))
        documents.append({"title": title, "text": text})
        notes += file_notes
    return None, documents, notes


def result_row(item: BatchItem, result: GraphOutput, seconds: float, *, full: bool) -> dict[str, Any]:
    """One finished item: the answer, its evidence and what it cost (``full``: the whole result too)."""
    stats = result.stats
    row: dict[str, Any] = {
        "id": item.id,
        "input_digest": item.digest,
        **({"items": item.origin} if item.origin else {}),
        "strategy": item.strategy,
        "question": item.question,
        "answer": result.answer,
        "supported": result.supported,
        "verdict": result.verdict,
        "confidence": result.confidence,
        "rationale": result.rationale,
        "evidence": [
            {
                "doc_index": e.doc_index,
                "title": e.title,
                "start": e.start,
                "end": e.end,
                "text": e.text,
                "verified": e.verified,
            }
            for e in result.evidence[:5]
        ],
        "chunks": {
            "total": len(result.chunks),
            **{s: sum(c.status == s for c in result.chunks) for s in CHUNK_STATUSES},
        },
        "llm_calls": stats.llm_calls,
        "prompt_tokens": stats.prompt_tokens,
        "completion_tokens": stats.completion_tokens,
        "seconds": round(seconds, 3),
        "notes": list(stats.notes),
        "metadata": item.metadata,
        "error": None,
        "error_type": None,
    }
    if full:
        row["result"] = result.model_dump(mode="json")
    return row


def failure_row(
    item: BatchItem, exc: BaseException, seconds: float, spend: Spend | None = None
) -> dict[str, Any]:
    """An item that failed: its error, and what it spent before it did (``spend``; none if not given)."""
    message = " ".join(str(exc).split())[:2000]
    spent = spend or Spend()
    return {
        "id": item.id,
        "input_digest": item.digest,
        **({"items": item.origin} if item.origin else {}),
        "strategy": item.strategy,
        "question": item.question,
        "answer": None,
        "llm_calls": spent.requests,
        "prompt_tokens": spent.prompt_tokens,
        "completion_tokens": spent.completion_tokens,
        "seconds": round(seconds, 3),
        "metadata": item.metadata,
        "error": message
        if isinstance(exc, LonggraphError)
        else f"unexpected {type(exc).__name__}: {message}",
        "error_type": type(exc).__name__,
    }


class ItemRunner:
    """Runs items with one resolved context and provider (one client, one concurrency budget) and a
    checkpointer, each strategy's graph compiled once: the one place an item becomes a row, for the
    local engine and for each worker of the Ray engine (``longgraph/ray_batch.py``)."""

    def __init__(
        self,
        context: Context,
        provider: LLMProvider,
        checkpointer: Any = None,
        *,
        where: str = "",
        forget_finished: bool = False,
    ) -> None:
        self.context = context
        self.forget_finished = forget_finished
        """Delete a finished item's checkpoints at once (a Ray worker's: the driver holds no checkpointer);
        the local engine deletes them once the item's row is on disk."""
        self.provider = provider
        self.checkpointer = checkpointer
        self.where = where
        self._graphs: dict[str, Any] = {}

    def _compiled(self, strategy: str) -> Any:
        from longgraph.strategies import build_strategy

        if strategy not in self._graphs:
            self._graphs[strategy] = build_strategy(strategy, self.provider, checkpointer=self.checkpointer)
        return self._graphs[strategy]

    async def answer(
        self,
        item: BatchItem,
        *,
        full: bool,
        documents: tuple[str | None, list[Any] | None, list[str]] | None = None,
    ) -> dict[str, Any]:
        """``item``'s result row, or its failure row (never raised: one item's failure never stops the
        corpus). A budget stop's row carries ``budget_stop`` (the reason) for the caller to act on.
        ``documents``: already read (a Ray worker gets them from the driver); else read here."""
        from longgraph.api import graph_input_of, run_strategy

        began = time.perf_counter()
        thread = f"batch-{item.id}-{item.digest}" if self.checkpointer is not None else None
        SPEND.set(spend := Spend())  # what this item sends, counted even if it fails
        try:
            document, texts, notes = (
                documents if documents is not None else await asyncio.to_thread(read_item_documents, item)
            )
            graph_input = graph_input_of(item.question, document, texts, list(notes))
            result = await run_strategy(
                graph_input,
                strategy=item.strategy,
                context=self.context,
                llm=self.provider,
                checkpointer=self.checkpointer,
                thread_id=thread,
                where=self.where,
                graph=self._compiled(item.strategy),
            )
            result.stats.notes = [*notes, *result.stats.notes]
            row = result_row(item, result, time.perf_counter() - began, full=full)
            if self.forget_finished and thread is not None:
                await self.checkpointer.adelete_thread(thread)
            return row
        except BudgetExhausted as exc:
            return {**failure_row(item, exc, time.perf_counter() - began, spend), "budget_stop": exc.reason}
        except Exception as exc:
            return failure_row(item, exc, time.perf_counter() - began, spend)


async def abatch(
    items: str | Path | Iterable[Mapping[str, Any]],
    *,
    out: str | Path | None = None,
    strategy: str = "mapreduce",
    context: Context | dict[str, Any] | None = None,
    llm: LLMProvider | None = None,
    items_in_flight: int | None = None,
    full: bool = False,
    on_item: Callable[[dict[str, Any], BatchSummary], None] | None = None,
    on_notice: Callable[[str], None] | None = None,
    start_embedded: bool = True,
    files_outside: bool = False,
    engine: str = "local",
    ray_address: str | None = None,
    workers: int | None = None,
    **settings: Any,
) -> BatchSummary:
    """Answer every item of ``items`` (a JSONL file, or item objects) with one shared concurrency budget.

    ``engine="ray"``: on a Ray cluster (``ray_address``, else Ray's own convention: ``RAY_ADDRESS`` or a
    local one), ``workers`` actors (default: one per CPU of the cluster), the same rows and resume rules
    (``longgraph/ray_batch.py``).

    With ``out``, each result row is appended to it as the item finishes and a rerun resumes (module
    docstring); the summary's ``rows`` are this run's. ``on_item(row, summary)`` is called as each item
    finishes (a progress bar); ``on_notice`` hears about starting the embedded server. ``files_outside``
    lets items name files outside the items file's folder (:func:`parse_item`). ``settings`` are context fields, as for :func:`longgraph.aask`.
    """
    from longgraph.api import prepare_context, resolved_context

    if engine == "ray":
        return await asyncio.to_thread(
            batch_on_ray,
            items,
            out=out,
            strategy=strategy,
            context=context,
            full=full,
            on_item=on_item,
            on_notice=on_notice,
            start_embedded=start_embedded,
            files_outside=files_outside,
            ray_address=ray_address,
            workers=workers,
            items_in_flight=items_in_flight,
            **settings,
        )
    if engine != "local":
        raise ConfigurationError(f"engine {engine!r}: expected 'local' or 'ray'")
    planned = await asyncio.to_thread(plan_batch, items, out, strategy, files_outside)
    summary, path = planned.summary, planned.path
    if not planned.todo:
        return summary
    ctx = await asyncio.to_thread(
        lambda: prepare_context(
            context, settings, start_embedded=start_embedded and llm is None, on_notice=on_notice
        )
    )
    provider = llm or default_provider
    resolved = await resolved_context(ctx, provider)  # one object: one client, one budget for every item
    in_flight = items_in_flight or 2 * resolved.max_concurrency * max(1, len(resolved.base_urls))
    started = time.perf_counter()
    async with AsyncExitStack() as stack:
        appender, checkpointer = await _open_outputs(stack, path)
        runner = ItemRunner(
            resolved, provider, checkpointer, where=str(checkpoint_file(path)) if path else ""
        )

        async def one(item: BatchItem) -> None:
            row = await runner.answer(item, full=full)
            await _record(row, item, summary, appender, checkpointer)
            if on_item is not None:
                on_item(row, summary)

        await _run_items(planned, summary, one, in_flight)
    summary.seconds = round(time.perf_counter() - started, 3)
    return summary


async def _open_outputs(stack: AsyncExitStack, path: Path | None) -> tuple[Appender | None, Any]:
    """The rows file to append to and the checkpointer beside it, opened on ``stack`` (none without
    ``out``)."""
    from longgraph.checkpointing import sqlite_checkpointer

    if path is None:
        return None, None
    try:
        appender = stack.enter_context(await asyncio.to_thread(Appender, path))
    except OSError as exc:
        raise ConfigurationError(f"--out {path}: cannot be written ({exc.strerror})") from exc
    checkpointer = await stack.enter_async_context(sqlite_checkpointer(str(checkpoint_file(path))))
    return appender, checkpointer


async def _record(
    row: dict[str, Any], item: BatchItem, summary: BatchSummary, appender: Appender | None, checkpointer: Any
) -> None:
    """One finished item: a stop on the corpus's budget noted, its row appended, its checkpoints
    dropped once the row holds its result, and counted."""
    if row.get("error_type") == "BudgetExhausted":  # the corpus's budget: no new item starts
        summary.budget_stop = summary.budget_stop or row["budget_stop"]
    row.pop("budget_stop", None)
    if appender is not None:
        await appender.awrite(row)
        if checkpointer is not None and row["error"] is None:  # its row is its result now
            await checkpointer.adelete_thread(f"batch-{item.id}-{item.digest}")
    summary.count(row)


async def _run_items(
    planned: PlannedBatch,
    summary: BatchSummary,
    one: Callable[[BatchItem], Coroutine[Any, Any, None]],
    in_flight: int,
) -> None:
    """``one`` on every item still to do, at most ``in_flight`` at a time, documents read lazily; once
    the budget stops the batch, the rest are counted as not started. Interrupted, the items in flight
    are cancelled and awaited."""
    gate = asyncio.Semaphore(in_flight)
    tasks: set[asyncio.Task[None]] = set()

    def finished(task: asyncio.Task[None]) -> None:
        tasks.discard(task)
        gate.release()

    try:
        for item in planned.items():  # the second pass: documents read lazily
            if item.id not in planned.todo:
                continue
            await gate.acquire()
            if summary.budget_stop is not None:
                gate.release()
                summary.not_started += 1
                continue
            task = asyncio.create_task(one(item))
            tasks.add(task)
            task.add_done_callback(finished)
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)


def batch(items: str | Path | Iterable[Mapping[str, Any]], **kwargs: Any) -> BatchSummary:
    """Synchronous :func:`abatch`."""
    from longgraph.api import _run_sync

    return _run_sync(lambda: abatch(items, **kwargs), "batch")


async def answer_on_worker(
    scope: WorkerScope, item: BatchItem, documents: tuple[str | None, list[Any] | None, list[str]], full: bool
) -> dict[str, Any]:
    """One item on a Ray worker (:class:`~longgraph.ray_batch.BatchWorker`): the local engine's item
    runner, built once per worker, checkpoints deleted as soon as the item is done (the driver holds
    none)."""
    runner = scope.memo.get("items")
    if runner is None:
        runner = scope.memo["items"] = ItemRunner(
            scope.context,
            scope.provider,
            scope.checkpointer,
            where="the shared checkpoints",
            forget_finished=True,
        )
    row: dict[str, Any] = await runner.answer(item, full=full, documents=documents)
    return row


def answer_items_on_ray(
    items: Iterator[BatchItem],
    *,
    summary: BatchSummary,
    path: Path | None,
    full: bool,
    on_item: Callable[[dict[str, Any], BatchSummary], None] | None,
    **cluster: Any,
) -> dict[str, int]:
    """Batch items on a Ray cluster (:func:`~longgraph.ray_batch.run_on_ray`), each row appended to
    ``path`` on this driver."""
    from longgraph.ray_batch import WorkerLost, run_on_ray

    with ExitStack() as stack:
        appender = stack.enter_context(Appender(path)) if path is not None else None

        def submit(worker: Any, item: BatchItem) -> Any:
            documents = read_item_documents(item)  # on the driver: workers need not see its files
            return worker.run.remote(answer_on_worker, item, documents, full)

        def finished(item: BatchItem, row: dict[str, Any]) -> None:
            if row.get("error_type") == "BudgetExhausted":
                summary.budget_stop = summary.budget_stop or row["budget_stop"]
            row.pop("budget_stop", None)
            if appender is not None:
                appender.write(row)
            summary.count(row)
            if on_item is not None:
                on_item(row, summary)

        def lost(item: BatchItem, why: str) -> None:
            finished(item, failure_row(item, WorkerLost(why), 0.0))

        started = time.perf_counter()
        figures = run_on_ray(items, submit=submit, finished=finished, lost=lost, **cluster)
        summary.seconds = round(time.perf_counter() - started, 3)
        return figures
