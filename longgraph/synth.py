"""Pyramid-Align over a corpus: ``longgraph synth`` and :func:`asynth`, resumable, one concurrency budget.

Every document runs the pyramid graph (``graphs/pyramid.py``) in one event loop with one provider and
one context, so all their calls — pyramid, question, the mapreduce subgraph — share one client and its
``max_concurrency``: no document waits for another to finish before its calls start (up to
``documents_in_flight`` documents are open at once, by default four times ``max_concurrency``, so the
endpoint's budget stays full while the documents half-done at a kill stay few).

Nothing is lost by a kill: each record is appended to ``OUT`` and fsynced as it is finished (the one
JSONL writer, ``longgraph/jsonl.py``, which also drops a line torn by a kill before appending), and
each document's outcome (written, filtered with why, failed with why) to ``OUT``'s progress file
(``data.progress.jsonl`` beside ``data.jsonl``). A rerun skips documents written or filtered before and
retries failed ones; a rerun with another model, seed, prompt variant or prompt version is refused
(one dataset, one recipe). With the result cache on (the default), the calls a killed document had
finished are replayed from the cache.

Records are filtered, as the paper does, when the question or the answer holds illegal characters
(:func:`illegal_characters`), when the answer is "no information" (nothing to learn from), and when no
node gave a question (the model wrote statements: what it wrote is kept); all counted per reason in the
summary and the dataset card, and kept whole, with why, in ``data.filtered.jsonl`` (to read what the
model wrote; never training data).
"""

from __future__ import annotations

import asyncio
import logging
import re
import statistics
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from longgraph.errors import ConfigurationError, InputError, LonggraphError
from longgraph.jsonl import Appender, read_rows
from longgraph.llm import LLMProvider, default_provider
from longgraph.outputs import Recogniser, claim_output, jsonl_rows, text_starting
from longgraph.state.context import Context
from longgraph.state.outputs import is_no_information
from longgraph.state.pyramid import CATEGORIES, Record
from longgraph.state.usage import Usage

if TYPE_CHECKING:
    from longgraph.ray_batch import WorkerScope

log = logging.getLogger(__name__)

_ILLEGAL = {
    "control character": re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]"),
    "replacement character (U+FFFD)": re.compile("\ufffd"),
    "noncharacter": re.compile("[\ufdd0-\ufdef\ufffe\uffff]"),
    "lone surrogate": re.compile("[\ud800-\udfff]"),
}
"""What makes a record illegal: C0/C1 control characters other than tab and line breaks, U+FFFD (text
that was not valid UTF-8), Unicode noncharacters and lone surrogates (not encodable)."""


def illegal_characters(text: str) -> Counter[str]:
    """How many characters of each illegal kind ``text`` holds (empty when it is clean)."""
    found: Counter[str] = Counter()
    for kind, pattern in _ILLEGAL.items():
        n = len(pattern.findall(text))
        if n:
            found[kind] = n
    return found


@dataclass(frozen=True)
class Source:
    """One document of the corpus: where it came from and its text."""

    name: str
    text: str


@dataclass
class SynthSummary:
    """What a ``synth`` run did (and the dataset's files)."""

    out: Path
    progress: Path
    card: Path
    written: int = 0
    filtered: Counter[str] = field(default_factory=Counter)
    failed: dict[str, str] = field(default_factory=dict)
    skipped: int = 0
    """Documents finished by an earlier run (resumed)."""
    illegal: Counter[str] = field(default_factory=Counter)
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    cluster: dict[str, int] | None = None
    """A Ray run's figures (``longgraph/ray_batch.py``): workers, workers lost, budget, peak RSS."""

    def spent(self, calls: int, prompt_tokens: int, completion_tokens: int) -> None:
        """Count a document's cost, whatever became of it."""
        self.calls += calls
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens

    def lines(self) -> list[str]:
        done = self.written + sum(self.filtered.values()) + len(self.failed)
        lines = [f"{done} document(s) done in {self.seconds:.1f} s: {self.written} written to {self.out}"]
        lines += [f"  filtered ({reason}): {n}" for reason, n in sorted(self.filtered.items())]
        if self.illegal:
            lines.append(
                "  illegal characters found: "
                + ", ".join(f"{k} ×{n}" for k, n in sorted(self.illegal.items()))
            )
        if self.failed:
            first = next(iter(self.failed.items()))
            lines.append(f"  failed: {len(self.failed)} (rerun to retry them); first: {first[0]}: {first[1]}")
        if self.skipped:
            lines.append(f"  skipped: {self.skipped} finished by an earlier run")
        lines.append(
            f"  {self.calls} calls, {self.prompt_tokens} prompt and {self.completion_tokens} completion tokens"
        )
        lines.append(f"  dataset card: {self.card}")
        return lines


CARD_TITLE = "# Pyramid-Align dataset:"
"""The card's first line starts so: how a rerun knows the card beside a dataset is its own."""


def dataset_files(out: Path) -> tuple[Path, Path]:
    """(progress file, dataset card) of the dataset ``out``."""
    return out.with_suffix(".progress.jsonl"), out.with_suffix(".card.md")


def claim_dataset(out: Path, inputs: Sequence[Path]) -> None:
    """Refuse (before any call) a dataset path, or a file beside it, that is an input, a folder, or a
    file this command did not write (``longgraph/outputs.py``)."""
    progress, card = dataset_files(out)
    kinds: list[tuple[Path, str, Recogniser]] = [
        (out, "dataset", jsonl_rows("id", "X", "Q", "A")),
        (progress, "progress file", jsonl_rows("kind")),
        (filtered_file(out), "filtered-records file", jsonl_rows("reason", "id")),
        (card, "dataset card", text_starting(CARD_TITLE)),
    ]
    for path, kind, ours in kinds:
        claim_output(path, option="--out", kind=kind, ours=ours, inputs=inputs)


def filtered_file(out: Path) -> Path:
    """Where filtered records go, whole, with why: to read what the model wrote (never training data)."""
    return out.with_suffix(".filtered.jsonl")


def _recipe(context: Context, seed: int) -> dict[str, Any]:
    """What must not change between a run and its resumption (prompt versions included: a dataset whose
    first half was asked with other prompts is two datasets)."""
    from longgraph.prompts import prompts_for

    return {
        "model": context.model,
        "seed": seed,
        "prompt_variant": context.prompt_variant,
        "temperature": context.temperature,
        "pyramid_fan_in": context.pyramid_fan_in,
        "pyramid_question_nodes": context.pyramid_question_nodes,
        "prompts": {
            name: prompts_for(name, context.prompt_variant).version for name in ("pyramid", "mapreduce")
        },
    }


def finished_documents(out: Path, recipe: Mapping[str, Any]) -> set[str]:
    """Ids of documents an earlier run wrote or filtered; refuses a dataset made with another recipe."""
    progress, _ = dataset_files(out)
    rows = read_rows(progress, "progress row")
    header = next((r for r in rows if r.get("kind") == "recipe"), None)
    if header is not None and header.get("recipe") != dict(recipe):
        raise ConfigurationError(
            f"{out} was made with {header.get('recipe')}, not {dict(recipe)}: "
            "write to another --out, or rerun with the same settings to resume it"
        )
    done = {str(r["id"]) for r in rows if r.get("kind") == "document" and r.get("status") != "failed"}
    return done | {str(r["id"]) for r in read_rows(out, "record") if "id" in r}


def _verdict(record: Record) -> tuple[str | None, Counter[str]]:
    """Why a record is filtered (None: it is kept), and the illegal characters it holds."""
    illegal = illegal_characters(record.Q) + illegal_characters(record.A)
    if illegal:
        return "illegal characters in the question or answer", illegal
    if is_no_information(record.A):
        return "no answer (the mapreduce graph found no information)", illegal
    return None, illegal


async def asynth(
    sources: Sequence[Source],
    out: str | Path,
    *,
    seed: int = 0,
    context: Context | dict[str, Any] | None = None,
    llm: LLMProvider | None = None,
    documents_in_flight: int | None = None,
    on_document: Callable[[str, str], None] | None = None,
    start_embedded: bool = True,
    engine: str = "local",
    ray_address: str | None = None,
    workers: int | None = None,
    **settings: Any,
) -> SynthSummary:
    """Write one Pyramid-Align record per document of ``sources`` to ``out`` (JSONL), resumably.

    ``on_document(name, status)`` is called as each document finishes (for a progress bar). Returns the
    run's summary; the dataset card is (re)written from every record in ``out``. ``engine="ray"``: the
    documents run on a Ray cluster's workers, the files are written here (:func:`synth_on_ray`)."""
    from longgraph.api import prepare_context, resolved_context
    from longgraph.graphs.pyramid import build_graph

    if engine == "ray":
        return await asyncio.to_thread(
            synth_on_ray,
            sources,
            out,
            seed=seed,
            context=context,
            on_document=on_document,
            start_embedded=start_embedded,
            ray_address=ray_address,
            workers=workers,
            documents_in_flight=documents_in_flight,
            **settings,
        )
    path, progress_path, card_path = _claimed(sources, out)
    ctx = await asyncio.to_thread(
        prepare_context, context, settings, start_embedded=start_embedded and llm is None
    )
    provider = llm or default_provider
    resolved = await resolved_context(ctx, provider)
    recipe = _recipe(resolved, seed)
    summary = SynthSummary(out=path, progress=progress_path, card=card_path)
    pending = _pending(sources, path, recipe, summary)
    graph = build_graph(provider)
    gate = asyncio.Semaphore(documents_in_flight or 4 * resolved.max_concurrency)
    started = time.perf_counter()
    try:
        records, outcomes, set_aside = await asyncio.to_thread(
            lambda: (Appender(path), Appender(progress_path), Appender(filtered_file(path)))
        )
    except OSError as exc:
        raise ConfigurationError(f"--out {path}: cannot be written ({exc.strerror})") from exc
    with records, outcomes, set_aside:
        if not progress_path.stat().st_size:
            await outcomes.awrite({"kind": "recipe", "recipe": recipe})

        files = {"records": records, "outcomes": outcomes, "set_aside": set_aside}

        async def one(key: str, source: Source) -> None:
            async with gate:
                outcome = await synthesize(graph, source.text, source.name, seed, resolved)
            writes, status = settle(key, source.name, outcome, summary)
            for name, row in writes:
                await files[name].awrite(row)
            if on_document:
                on_document(source.name, status)

        await asyncio.gather(*(one(key, source) for key, source in pending))
    summary.seconds = round(time.perf_counter() - started, 3)
    card_path.write_text(dataset_card(path, resolved.tokenizer), encoding="utf-8")
    return summary


def _claimed(sources: Sequence[Source], out: str | Path) -> tuple[Path, Path, Path]:
    """The dataset, progress and card paths, once ``out`` is safe to write (``claim_dataset``)."""
    if not sources:
        raise InputError("no document to synthesise from")
    path = Path(out)
    progress_path, card_path = dataset_files(path)
    claim_dataset(path, [Path(s.name) for s in sources])
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigurationError(f"--out {path}: cannot create its folder ({exc.strerror})") from exc
    return path, progress_path, card_path


def _pending(
    sources: Sequence[Source], path: Path, recipe: Mapping[str, Any], summary: SynthSummary
) -> list[tuple[str, Source]]:
    """The documents left to do (not written or filtered before with this recipe; empty ones failed)."""
    from longgraph.nodes.pyramid import document_key

    finished = finished_documents(path, recipe)
    pending = []
    for source in sources:
        key = document_key(source.text)
        if key in finished:
            summary.skipped += 1
            continue
        if not source.text.strip():
            summary.failed[source.name] = "the document has no text"
            continue
        pending.append((key, source))
    return pending


def synth_on_ray(
    sources: Sequence[Source],
    out: str | Path,
    *,
    seed: int = 0,
    context: Context | dict[str, Any] | None = None,
    on_document: Callable[[str, str], None] | None = None,
    start_embedded: bool = True,
    ray_address: str | None = None,
    workers: int | None = None,
    documents_in_flight: int | None = None,
    **settings: Any,
) -> SynthSummary:
    """:func:`asynth` on a Ray cluster, in this thread: each document runs on a worker
    (``longgraph/ray_batch.py``: one budget, lost workers' documents rerun), and its outcome is written
    here, to the same files with the same resume rules."""
    from longgraph.api import prepare_context, resolved_context
    from longgraph.ray_batch import LOST_SPEND, run_on_ray

    path, progress_path, card_path = _claimed(sources, out)
    ctx = prepare_context(context, settings, start_embedded=start_embedded)
    resolved = asyncio.run(resolved_context(ctx, default_provider))
    recipe = _recipe(resolved, seed)
    summary = SynthSummary(out=path, progress=progress_path, card=card_path)
    pending = _pending(sources, path, recipe, summary)
    started = time.perf_counter()
    try:
        files = {
            "records": Appender(path),
            "outcomes": Appender(progress_path),
            "set_aside": Appender(filtered_file(path)),
        }
    except OSError as exc:
        raise ConfigurationError(f"--out {path}: cannot be written ({exc.strerror})") from exc
    try:
        if not progress_path.stat().st_size:
            files["outcomes"].write({"kind": "recipe", "recipe": recipe})

        def finished(unit: tuple[str, Source], outcome: dict[str, Any]) -> None:
            key, source = unit
            writes, status = settle(key, source.name, outcome, summary)
            for name, row in writes:
                files[name].write(row)
            if on_document:
                on_document(source.name, status)

        summary.cluster = (
            None
            if not pending
            else run_on_ray(
                iter(pending),
                context=resolved,
                address=ray_address,
                workers=workers,
                per_worker=documents_in_flight or 4 * resolved.max_concurrency,
                checkpoint_url=None,
                submit=lambda worker, unit: worker.run.remote(
                    synthesize_on_worker, unit[1].text, unit[1].name, seed
                ),
                finished=finished,
                lost=lambda unit, why: finished(unit, {"error": f"its worker was lost: {why}"}),
            )
        )
        if summary.cluster is not None:  # spent by workers lost under their documents
            summary.spent(*(summary.cluster.get(name, 0) for name in LOST_SPEND))
    finally:
        for appender in files.values():
            appender.close()
    summary.seconds = round(time.perf_counter() - started, 3)
    card_path.write_text(dataset_card(path, resolved.tokenizer), encoding="utf-8")
    return summary


async def synthesize_on_worker(scope: WorkerScope, text: str, name: str, seed: int) -> dict[str, Any]:
    """One document on a Ray worker (:class:`~longgraph.ray_batch.BatchWorker`), the pyramid graph
    compiled once per worker."""
    from longgraph.graphs.pyramid import build_graph

    graph = scope.memo.get("pyramid")
    if graph is None:
        graph = scope.memo["pyramid"] = build_graph(scope.provider)
    return await synthesize(graph, text, name, seed, scope.context)


async def synthesize(graph: Any, text: str, name: str, seed: int, context: Context) -> dict[str, Any]:
    """One document through the pyramid graph: its record (or the questions it rejected) and usage, or
    its error (one document's failure never stops the corpus). Plain data: a Ray worker returns it."""
    try:
        raw = await graph.ainvoke({"document": text, "seed": seed, "source": name}, context=context)
    except Exception as exc:
        reason = " ".join(str(exc).split())[:400]
        return {
            "error": reason
            if isinstance(exc, LonggraphError)
            else f"unexpected {type(exc).__name__}: {reason}"
        }
    usage: Usage = raw.get("usage") or Usage()
    return {
        "error": None,
        "record": Record.model_validate(raw["record"]).model_dump(mode="json") if raw.get("record") else None,
        "rejected": [r.model_dump(mode="json") for r in raw.get("rejected_questions") or []],
        "usage": [usage.llm_calls, usage.prompt_tokens, usage.completion_tokens],
    }


def settle(
    key: str, source: str, outcome: dict[str, Any], summary: SynthSummary
) -> tuple[list[tuple[str, dict[str, Any]]], str]:
    """What one document's outcome writes (to "records", "outcomes" or "set_aside") and its status,
    counted in ``summary``: the one place an outcome becomes rows, for one process and for Ray."""
    if outcome["error"] is not None:
        summary.failed[source] = outcome["error"]
        row = {
            "kind": "document",
            "id": key,
            "source": source,
            "status": "failed",
            "reason": outcome["error"],
        }
        return [("outcomes", row)], "failed"
    if outcome["record"] is None:  # no node gave a question: filtered with what the model wrote
        rejected = outcome["rejected"]
        no_question = f"no question (the model wrote none from {len(rejected)} node(s))"
        summary.spent(*outcome["usage"])
        summary.filtered[no_question] += 1
        return [
            (
                "set_aside",
                {"reason": no_question, "id": key, "source": source, "rejected_questions": rejected},
            ),
            (
                "outcomes",
                {
                    "kind": "document",
                    "id": key,
                    "source": source,
                    "status": "filtered",
                    "reason": no_question,
                },
            ),
        ], "filtered"
    record = Record.model_validate(outcome["record"])
    summary.spent(record.calls, record.prompt_tokens, record.completion_tokens)
    why, illegal = _verdict(record)
    summary.illegal += illegal
    writes: list[tuple[str, dict[str, Any]]] = []
    if why is None:
        writes.append(("records", record.model_dump(mode="json")))
        summary.written += 1
        status = "written"
    else:
        writes.append(("set_aside", {"reason": why, **record.model_dump(mode="json")}))
        summary.filtered[why] += 1
        status = "filtered"
    row = {"kind": "document", "id": key, "source": source, "status": status}
    writes.append(("outcomes", row | ({"reason": why, "illegal": dict(illegal)} if why else {})))
    return writes, status


def synth(sources: Sequence[Source], out: str | Path, **kwargs: Any) -> SynthSummary:
    """Synchronous :func:`asynth`."""
    from longgraph.api import _run_sync

    return _run_sync(lambda: asynth(sources, out, **kwargs), "synth")


def _stats(values: Sequence[int]) -> str:
    if not values:
        return "– | – | – | –"
    return f"{statistics.mean(values):.0f} | {statistics.median(values):.0f} | {min(values)} | {max(values)}"


def dataset_card(out: Path, tokenizer_name: str | None) -> str:
    """The dataset card (Markdown): counts per category and level, lengths in tokens, what was filtered.

    Lengths are counted with the model's own tokenizer (the paper reports LLaMA 3's)."""
    from longgraph.tokenizer import get_tokenizer

    records = [Record.model_validate(r) for r in read_rows(out, "record")]
    progress, _ = dataset_files(out)
    outcomes = [r for r in read_rows(progress, "progress row") if r.get("kind") == "document"]
    latest = {str(r["id"]): r for r in outcomes}
    filtered = Counter(str(r.get("reason")) for r in latest.values() if r.get("status") == "filtered")
    failed = sum(1 for r in latest.values() if r.get("status") == "failed")
    illegal: Counter[str] = Counter()
    for r in latest.values():
        illegal.update(r.get("illegal") or {})
    tokenizer = get_tokenizer(tokenizer_name)
    lengths = {
        "document (X)": tokenizer.count_batch([r.X for r in records]),
        "question (Q)": tokenizer.count_batch([r.Q for r in records]),
        "answer (A)": tokenizer.count_batch([r.A for r in records]),
    }
    by_category = Counter(r.category for r in records)
    by_level = Counter(r.source_level for r in records)
    models = sorted({r.model for r in records})
    seeds = sorted({r.seed for r in records})
    versions = sorted({f"{k} v{v}" for r in records for k, v in r.prompt_versions.items()})
    lines = [
        f"{CARD_TITLE} {out.name}",
        "",
        "Long-context supervised fine-tuning data written by a short-context model (LLM×MapReduce paper §5,",
        "Appendices B–C): one record `(X, Q, M, A)` per document — the document, a question generated from one",
        "seeded node of its pyramid of summaries, the mapreduce graph's map outputs and its answer.",
        "",
        f"- records: **{len(records)}**; filtered: {sum(filtered.values())}; failed (not in the file): {failed}",
        f"- model: {', '.join(models) or '–'}; seed(s): {', '.join(map(str, seeds)) or '–'}",
        f"- prompts: {', '.join(versions) or '–'}",
        f"- leaf importance: {records[0].importance if records else '–'}",
        f"- citations dropped (ids that did not exist): {sum(r.dropped_citations for r in records)}",
        f"- answers supported by a verified note: {sum(1 for r in records if r.supported)} of {len(records)}",
        "",
        "## Records per category",
        "",
        "| category | records |",
        "|---|---|",
        *[f"| {c} | {by_category.get(c, 0)} |" for c in CATEGORIES],
        "",
        "## Records per source level (0 = a leaf chunk)",
        "",
        "| level | records |",
        "|---|---|",
        *[f"| {level} | {n} |" for level, n in sorted(by_level.items())],
        "",
        f"## Lengths in tokens ({tokenizer.name})",
        "",
        "| | mean | median | min | max |",
        "|---|---|---|---|---|",
        *[f"| {what} | {_stats(values)} |" for what, values in lengths.items()],
        "",
        "## Filtered",
        "",
        *([f"- {reason}: {n}" for reason, n in sorted(filtered.items())] or ["- none"]),
        *(
            [f"- illegal characters seen: {', '.join(f'{k} ×{n}' for k, n in sorted(illegal.items()))}"]
            if illegal
            else []
        ),
        "",
    ]
    if records:
        calls = [r.calls for r in records]
        seconds = [r.seconds for r in records]
        lines += [
            "## Cost per record",
            "",
            f"- calls: mean {statistics.mean(calls):.1f} (min {min(calls)}, max {max(calls)})",
            f"- prompt tokens: mean {statistics.mean(r.prompt_tokens for r in records):.0f}; completion tokens: "
            f"mean {statistics.mean(r.completion_tokens for r in records):.0f}",
            f"- wall time per document (documents run concurrently): mean {statistics.mean(seconds):.1f} s",
            "",
        ]
    return "\n".join(lines)
