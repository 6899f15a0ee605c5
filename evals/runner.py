"""The evaluation runner: suites × strategies × lengths (× depths) against one model, resumable.

One JSONL record per (instance, strategy) is appended to ``records-<model label>.jsonl`` as soon as it
finishes, so an interrupted run loses at most the runs in flight, and running the same command again
redoes nothing that finished: the key of a record is (instance id, strategy, model label) and instance
ids are deterministic in the suite, seed, length and depth. A run that fails (an endpoint down, too many
failed chunks, anything) is recorded with its error instead of stopping the evaluation; such records
are redone only with ``retry_failed``.

Records of different models never share a file, and the scripted oracle (the stub server's
deterministic "model", for checking the plumbing at full length) is always labelled ``oracle``: the
label is reserved for it, so oracle numbers cannot end up in a real model's table.

Timing: ``seconds`` is the wall time of one strategy run as the runner saw it. Runs overlap when
``concurrency`` > 1 and then share the endpoint, so measure latency with ``concurrency=1``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from longgraph.errors import ConfigurationError, InputError
from longgraph.evals.config import (
    FAMILY_TASK,
    PRIMARY_METRIC,
    SUITES,
    EvalConfig,
    EvalSummary,
    LoongSource,
    RecordCallback,
    Suite,
)
from longgraph.evals.data.instance import EvalInstance
from longgraph.evals.instances import build_instances, format_tokens, length_set, parse_tokens
from longgraph.evals.metrics import score_instance
from longgraph.evals.records import (
    ORACLE_LABEL,
    RECORD_FIELDS,
    now,
    read_records,
    record_key,
    records_path,
    slug,
)
from longgraph.evals.scoring import get_scorer
from longgraph.jsonl import Appender
from longgraph.llm import LLMProvider, default_provider, to_messages
from longgraph.outputs import claim_output, jsonl_rows, longgraph_page, text_starting
from longgraph.state.context import Context
from longgraph.state.contract import Stats
from longgraph.strategies import plans

if TYPE_CHECKING:
    from longgraph.api import Answer

log = logging.getLogger(__name__)

__all__ = [
    "FAMILY_TASK",
    "ORACLE_LABEL",
    "PRIMARY_METRIC",
    "RECORD_FIELDS",
    "SUITES",
    "EvalConfig",
    "EvalSummary",
    "LoongSource",
    "RecordCallback",
    "Suite",
    "build_instances",
    "evaluate",
    "format_tokens",
    "length_set",
    "oracle_endpoint",
    "parse_tokens",
    "read_records",
    "record_key",
    "records_path",
    "run_eval",
    "run_eval_sync",
    "slug",
]

# --------------------------------------------------------------------------------------------------
# One run


@dataclass
class _Judge:
    context: Context
    llm: LLMProvider


async def _judge(judge: _Judge, instance: EvalInstance, answer: str) -> tuple[float | None, str]:
    """The Loong judge's 0–100 score of ``answer`` (None when its verdict does not parse) and its reply."""
    from longgraph.evals.judge import build_judge_messages, parse_judge_score

    question = str(instance.metadata.get("judge_question") or instance.question)
    messages = build_judge_messages(question, instance.gold_answers[0], answer)
    client = judge.llm(judge.context)
    reply = await client.complete(to_messages([(m["role"], m["content"]) for m in messages]), stage="judge")
    return parse_judge_score(reply.text), reply.text


def primary_metric(instance: EvalInstance) -> str:
    """The metric a record's ``score`` holds: its scorer's, else its task family's."""
    return get_scorer(instance.scorer).metric if instance.scorer else PRIMARY_METRIC[instance.task_family]


def _base_record(instance: EvalInstance, strategy: str, label: str, oracle: bool) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        k: instance.metadata[k]
        for k in (
            "needle_token_depth",
            "task",
            "subtask",
            "length_set",
            "level",
            "set",
            "type",
            "language",
            "split",
            "kind",
            "template",
            "corpus",
        )
        if k in instance.metadata
    }
    if instance.skipped:
        metadata["skipped_documents"] = len(instance.skipped)
    return {
        "instance_id": instance.id,
        "suite": instance.suite,
        "task_family": instance.task_family,
        "length": instance.actual_tokens if instance.suite == "loong" else instance.target_tokens,
        "length_set": length_set(instance),
        "actual_tokens": instance.actual_tokens,
        "depth": instance.depth,
        "strategy": strategy,
        "model": label,
        "oracle": oracle,
        "question": instance.question,
        "answer": "",
        "gold": list(instance.gold_answers),
        "metric": primary_metric(instance),
        "score": None,
        "scores": {},
        "judge_score": None,
        "llm_calls": 0,
        "failed_calls": 0,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "calls_by_stage": {},
        "completion_tokens_by_stage": {},
        "supported": None,
        "support": None,
        "verdict": None,
        "seconds": 0.0,
        "build": None,
        "chunks": {"total": 0, "used": 0, "no_information": 0, "unsupported": 0, "filtered": 0, "failed": 0},
        "notes": list(instance.skipped),
        "metadata": metadata,
        "error": None,
        "error_type": None,
        "page": None,
        "finished_at": None,
    }


async def evaluate(
    instance: EvalInstance,
    strategy: str,
    *,
    context: Context,
    label: str,
    oracle: bool = False,
    llm: LLMProvider | None = None,
    judge: _Judge | None = None,
    plan: dict[str, Any] | None = None,
    pages: Path | None = None,
) -> dict[str, Any]:
    """Run one strategy on one instance and score it; any failure becomes the record's ``error``.
    ``plan``: the question plan to give the strategy (recorded as ``metadata.given_plan``). ``pages``: a
    folder for the page of each run that did not score 1 (``longgraph/answerview.py``), so a failure is
    one click from its cause; the record's ``page`` is its path relative to the folder's parent."""
    from longgraph.api import aask

    record = _base_record(instance, strategy, label, oracle)
    if plan is not None:
        record["metadata"]["given_plan"] = True
    task = get_scorer(instance.scorer).task if instance.scorer else FAMILY_TASK[instance.task_family]
    started = time.perf_counter()
    try:
        result = await aask(
            instance.question,
            documents=instance.documents,
            strategy=strategy,
            context=context.replace(task=task),
            llm=llm or default_provider,
            start_embedded=False,
            plan=plan,
        )
    except Exception as exc:  # recorded, not raised: one bad instance must not stop an evaluation
        record.update(
            seconds=round(time.perf_counter() - started, 3),
            error=" ".join(str(exc).split())[:2000],
            error_type=type(exc).__name__,
            finished_at=now(),
        )
        return record
    record["seconds"] = round(time.perf_counter() - started, 3)
    stats = result.stats
    counts = {
        status: sum(c.status == status for c in result.chunks)
        for status in ("used", "no_information", "unsupported", "filtered", "failed")
    }
    scores = (
        get_scorer(instance.scorer).score(result.answer, instance.label)
        if instance.scorer
        else score_instance(instance.task_family, result.answer, instance.gold_answers)
    )
    withheld = next((c for c in result.candidates if c.chunk_id is None), None)
    if withheld is not None and instance.scorer and "correct" in scores:
        # The model's own final answer that the checks did not let stand: scored too, so a report can
        # say how many right answers a gate withheld (never counted as the run's answer).
        scores["withheld_correct"] = get_scorer(instance.scorer).score(withheld.answer, instance.label)[
            "correct"
        ]
    record.update(
        answer=result.answer,
        scores=scores,
        llm_calls=stats.llm_calls,
        failed_calls=stats.failed_calls,
        prompt_tokens=stats.prompt_tokens,
        completion_tokens=stats.completion_tokens,
        calls_by_stage=dict(stats.calls_by_stage),
        completion_tokens_by_stage=dict(stats.completion_tokens_by_stage),
        supported=result.supported,
        support=result.support,
        verdict=result.verdict,
        build=_build_figures(stats),
        chunks={"total": len(result.chunks), **counts},
        notes=record["notes"] + list(stats.notes),
    )
    metric = record["metric"]
    if instance.task_family == "open" and not instance.scorer:
        if judge is None:
            record["metric"] = "f1_proxy"
            record["score"] = scores["f1"]
        else:
            try:
                judged, reply = await _judge(judge, instance, result.answer)
            except Exception as exc:
                record["notes"].append(f"the judge failed: {type(exc).__name__}: {exc}")
                judged, reply = None, ""
            record["judge_score"] = judged
            record["scores"]["judge_raw"] = reply[:2000]
            record["score"] = None if judged is None else judged / 100.0
    else:
        record["score"] = scores[metric]
    if pages is not None and (record["score"] is None or record["score"] < 1):
        try:
            record["page"] = await asyncio.to_thread(write_page, pages, record, result)
        except (InputError, OSError) as exc:  # a file that is not ours is left alone; the run still counts
            record["notes"].append(f"no page written: {exc}")
    record["finished_at"] = now()
    return record


def write_page(pages: Path, record: Mapping[str, Any], result: Answer) -> str:
    """The run's page in ``pages``, named after its instance and strategy; its path from ``pages``' parent
    (the eval's output folder, where the report is)."""
    pages.mkdir(parents=True, exist_ok=True)
    name = re.sub(r"[^\w.-]+", "_", f"{record['instance_id']}--{record['strategy']}")[:180] + ".html"
    claim_output(pages / name, option="--out", kind="page", ours=longgraph_page)
    (pages / name).write_text(result.to_html(), encoding="utf-8")
    return f"{pages.name}/{name}"


# --------------------------------------------------------------------------------------------------
# The whole evaluation


async def _model_context(
    config: EvalConfig, llm: LLMProvider | None, on_notice: Callable[[str], None] | None
) -> Context:
    """The model under test's context, resolved as its runs will see it (for the label and run file)."""
    from longgraph.api import prepare_context, resolved_context

    settings = {"temperature": 0.0, **config.model_settings}
    prepared = await asyncio.to_thread(
        prepare_context,
        None,
        settings,
        start_embedded=config.start_embedded and llm is None,
        on_notice=on_notice,
    )
    return await resolved_context(prepared, llm)


def model_label(config: EvalConfig, context: Context) -> str:
    """Records are kept per label: the model (``reference-<wording>``/``extractor-<wording>`` for a
    scripted reader), plus the prompt variant when it is not the default, plus ``-given-plan`` when the
    instances' reference plans are given."""
    if config.reader != "model":
        label = f"{config.reader}-{config.wording}"
    else:
        label = ORACLE_LABEL if config.oracle else config.label or context.model or "model"
    if (
        context.prompt_variant != "compact"
        and not config.label
        and not config.oracle
        and config.reader == "model"
    ):
        label += f"-{context.prompt_variant}"
    if config.given_plans:  # always: these records must never mix with (or skip) planned runs
        label += "-given-plan"
    return label


def _warm_up(config: EvalConfig, context: Context) -> None:
    """Load what the first run of a strategy would otherwise pay for inside its timing."""
    if "rag-embed" in config.strategies and not context.embedding_url:
        from longgraph.embeddings import local_embedder

        local_embedder(context.embedding_model, context.embedding_precision)


def _write_run_file(config: EvalConfig, context: Context, label: str, summary: EvalSummary) -> None:
    info = {
        "model": label,
        "oracle": config.oracle,
        "suite": config.suite,
        "strategies": list(config.strategies),
        "lengths": list(config.lengths),
        "depths": list(config.depths),
        "n": config.n,
        "seed": config.seed,
        "concurrency": config.concurrency,
        "context": context.public_dict(),
        "judge": {k: v for k, v in (config.judge_settings or {}).items() if k != "api_key"} or None,
        "planned": summary.planned,
        "resumed_skipped": summary.skipped,
        "done": summary.done,
        "failed": summary.failed,
        "seconds": round(summary.seconds, 3),
        "finished_at": now(),
    }
    path = run_info_path(config, label)
    path.write_text(json.dumps(info, ensure_ascii=False, indent=2, default=str) + "\n", encoding="utf-8")


def run_info_path(config: EvalConfig, label: str) -> Path:
    return config.out_dir / f"run-{slug(label)}-{config.suite}.json"


async def run_eval(
    config: EvalConfig,
    *,
    llm: LLMProvider | None = None,
    judge_llm: LLMProvider | None = None,
    instances: Sequence[EvalInstance] | None = None,
    on_record: RecordCallback | None = None,
    on_notice: Callable[[str], None] | None = None,
) -> EvalSummary:
    """Run (or resume) an evaluation; returns what was done. ``llm``/``instances`` are for tests;
    ``on_notice`` hears about slow set-up steps (starting the embedded model server)."""
    config.validate()
    started = time.perf_counter()
    if config.reader != "model":
        config = _reader_config(config)
        if llm is None:
            llm = _reader_provider(None, config)
    context = await _model_context(config, llm, on_notice)
    label = model_label(config, context)
    judge = None
    if config.judge_settings is not None:
        from longgraph.api import prepare_context, resolved_context

        judge_context = prepare_context(
            None, {"temperature": 0.0, **config.judge_settings}, start_embedded=False
        )
        judge_context = await resolved_context(judge_context, judge_llm)
        judge = _Judge(judge_context, judge_llm or default_provider)
    path = records_path(config.out_dir, label)
    claim_output(path, option="--out", kind="eval records file", ours=jsonl_rows("instance_id", "strategy"))
    claim_output(run_info_path(config, label), option="--out", kind="run summary", ours=text_starting("{"))
    finished = {
        record_key(r) for r in read_records(path) if not (config.retry_failed and r.get("error") is not None)
    }
    chosen = list(instances) if instances is not None else await asyncio.to_thread(build_instances, config)
    plan = [(i, s) for i in chosen for s in config.strategies]
    todo = [(i, s) for i, s in plan if (i.id, s, label) not in finished]
    summary = EvalSummary(records_path=path, label=label, planned=len(plan), skipped=len(plan) - len(todo))
    if todo:
        await asyncio.to_thread(_warm_up, config, context)
    semaphore = asyncio.Semaphore(config.concurrency)
    appender = Appender(path)

    async def run_one(instance: EvalInstance, strategy: str) -> None:
        async with semaphore:
            given = instance.metadata.get("plan") if config.given_plans and plans(strategy) else None
            record = await evaluate(
                instance,
                strategy,
                context=context,
                label=label,
                oracle=config.oracle,
                llm=_reader_provider(instance, config) if config.reader != "model" else llm,
                judge=judge,
                plan=given,
                pages=config.out_dir / f"pages-{slug(label)}" if config.pages else None,
            )
        await appender.awrite(record)
        summary.done += 1
        summary.failed += record["error"] is not None
        if on_record is not None:
            on_record(record, summary.done, len(todo))

    try:
        await asyncio.gather(*(run_one(i, s) for i, s in todo))
    finally:
        appender.close()
        summary.seconds = time.perf_counter() - started
        _write_run_file(config, context, label, summary)
    return summary


def _reader_config(config: EvalConfig) -> EvalConfig:
    """A scripted reader's run: the capable reader's settings (constrained JSON, no cache, an endpoint
    never contacted) under the user's own (``--context-window`` and the like)."""
    from longgraph.testing.capable import SETTINGS

    return dataclasses.replace(
        config, model_settings={**SETTINGS, **config.model_settings}, start_embedded=False, label=None
    )


def _reader_provider(instance: EvalInstance | None, config: EvalConfig) -> LLMProvider:
    """The scripted reader of ``instance`` as the model (``None``: one that only answers set-up)."""
    from longgraph.evals.readers import responder_for
    from longgraph.testing.fakes import FakeProvider, ScriptedChatModel, oracle_responder

    if instance is None:
        return FakeProvider(ScriptedChatModel(responder=oracle_responder))
    budget = int(config.model_settings.get("max_output_tokens") or 256)
    responder = responder_for(instance, config.reader, config.wording, max_output_tokens=budget)  # type: ignore[arg-type]
    return FakeProvider(ScriptedChatModel(responder=responder))


@contextlib.contextmanager
def oracle_endpoint() -> Iterator[str]:
    """The stub server's scripted oracle in a subprocess; yields its base URL."""
    try:
        from longgraph.testing.stub_server import StubConfig, run_stub_in_subprocess
    except ImportError as exc:
        raise ConfigurationError("--oracle needs the `dev` extra (starlette, uvicorn)") from exc
    with run_stub_in_subprocess(StubConfig(model=ORACLE_LABEL)) as stub:
        yield stub.base_url


def run_eval_sync(
    config: EvalConfig,
    *,
    on_record: RecordCallback | None = None,
    on_notice: Callable[[str], None] | None = None,
) -> EvalSummary:
    """:func:`run_eval` from synchronous code, serving the oracle for the run's duration if asked."""
    if not config.oracle:
        return asyncio.run(run_eval(config, on_record=on_record, on_notice=on_notice))
    with oracle_endpoint() as url:
        settings = {**config.model_settings, "base_url": url, "model": ORACLE_LABEL}
        oracle_config = dataclasses.replace(config, model_settings=settings, label=ORACLE_LABEL)
        return asyncio.run(run_eval(oracle_config, on_record=on_record))


def _build_figures(stats: Stats) -> dict[str, Any] | None:
    """What building the strategy's structure cost (ToM's tree, PECAN's graph), apart from answering the
    question; for a searched structure also how it was weighed (PECAN: ``edges`` is ``attention`` or
    ``embedding-similarity``, never one passed off as the other) and how many nodes the search visited."""
    if stats.build is None:
        return None
    figures: dict[str, Any] = {
        "llm_calls": stats.build.llm_calls,
        "prompt_tokens": stats.build.prompt_tokens,
        "completion_tokens": stats.build.completion_tokens,
        "seconds": stats.build_seconds,
        "from_cache": bool(stats.built_from_cache),
    }
    if stats.structure:
        figures.update(
            {key: stats.structure.get(key) for key in ("edges", "relevance", "levels", "retrieved")}
        )
    return figures
