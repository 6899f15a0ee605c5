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
import datetime as dt
import json
import logging
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from longgraph.errors import ConfigurationError, InputError
from longgraph.evals.data.instance import EvalInstance
from longgraph.evals.metrics import score_instance
from longgraph.llm import LLMProvider, default_provider, to_messages
from longgraph.state.context import Context
from longgraph.strategies import STRATEGIES

log = logging.getLogger(__name__)

Suite = Literal["needle", "squad", "hotpot", "loong"]
SUITES: tuple[str, ...] = get_args(Suite)
ORACLE_LABEL = "oracle"
"""The model label of every oracle run, reserved for it."""

FAMILY_TASK: Mapping[str, str] = {"qa": "qa", "mc": "mc", "retrieval": "retrieval", "open": "qa"}
"""Instance task family → the context's task (which picks the prompts' answer instructions)."""

PRIMARY_METRIC: Mapping[str, str] = {
    "qa": "f1",
    "mc": "accuracy",
    "retrieval": "needle_match",
    "open": "judge",
}
"""The one number a report shows per task family (all metrics stay in the record)."""

RECORD_FIELDS: tuple[str, ...] = (
    "instance_id", "suite", "task_family", "length", "length_set", "actual_tokens", "depth", "strategy",
    "model", "oracle", "question", "answer", "gold", "metric", "score", "scores", "judge_score",
    "llm_calls", "failed_calls", "prompt_tokens", "completion_tokens", "seconds", "chunks", "notes",
    "metadata", "error", "error_type", "finished_at",
)  # fmt: skip
"""Every record has exactly these keys (``judge_score`` None where no judge graded it)."""


@dataclass(frozen=True)
class LoongSource:
    """Where the user's copy of the Loong benchmark is (it is not redistributed)."""

    instances: Path
    docs: Path
    sets: tuple[int, ...] | None = None
    window: int = 10_000_000
    """Assembly cap (Loong's input truncation): large by default, so a divide-and-conquer strategy
    reads every document; set it to a model's window to reproduce the paper's truncated inputs."""


@dataclass
class EvalConfig:
    """One evaluation: what to run, against which model, and where the records go."""

    suite: Suite
    strategies: tuple[str, ...]
    out_dir: Path
    lengths: tuple[int, ...] = (32_000,)
    depths: tuple[float, ...] = (0.5,)
    """Needle depths (fractions of the haystack); other suites ignore them."""
    n: int = 1
    """Instances per length (and per depth for the needle; per length set for Loong)."""
    seed: int = 0
    model_settings: dict[str, Any] = field(default_factory=dict)
    """Context fields for the model under test (base_url, model, context_window, tokenizer, ...)."""
    judge_settings: dict[str, Any] | None = None
    """Context fields for the judge of open answers (Loong); None: no judge, F1 as a labelled proxy."""
    label: str | None = None
    """The model label of the records; None: the served model name (``oracle`` with ``oracle``)."""
    concurrency: int = 2
    """(instance, strategy) runs at once; LLM calls are further capped by ``max_concurrency``."""
    oracle: bool = False
    """Use the stub server's scripted oracle as the model (plumbing checks at full length)."""
    retry_failed: bool = False
    loong: LoongSource | None = None
    start_embedded: bool = True
    """With no base_url: start (or reuse) the embedded model server."""

    def validate(self) -> None:
        if self.suite not in SUITES:
            raise ConfigurationError(f"suite {self.suite!r}: expected one of {', '.join(SUITES)}")
        if not self.strategies:
            raise ConfigurationError("no strategy to evaluate")
        unknown = [s for s in self.strategies if s not in STRATEGIES]
        if unknown:
            raise ConfigurationError(
                f"unknown strateg{'y' if len(unknown) == 1 else 'ies'} {', '.join(unknown)}; known: "
                f"{', '.join(sorted(STRATEGIES))}"
            )
        if len(set(self.strategies)) != len(self.strategies):
            raise ConfigurationError("a strategy is listed twice")
        if self.suite != "loong" and (not self.lengths or any(n <= 0 for n in self.lengths)):
            raise ConfigurationError(f"lengths must be positive token counts, got {self.lengths}")
        if self.suite == "needle" and (not self.depths or any(not 0 <= d <= 1 for d in self.depths)):
            raise ConfigurationError(f"needle depths must lie in [0, 1], got {self.depths}")
        if self.n <= 0 or self.concurrency <= 0:
            raise ConfigurationError("n and concurrency must be positive")
        if self.suite == "loong" and self.loong is None:
            raise ConfigurationError(
                "the loong suite needs the benchmark's instances file and documents folder"
            )
        if self.label == ORACLE_LABEL and not self.oracle:
            raise ConfigurationError(f"the model label {ORACLE_LABEL!r} is reserved for --oracle runs")
        if self.oracle and self.label not in (None, ORACLE_LABEL):
            raise ConfigurationError(f"oracle runs are always labelled {ORACLE_LABEL!r}")


@dataclass
class EvalSummary:
    """What one invocation did."""

    records_path: Path
    label: str
    planned: int = 0
    skipped: int = 0
    """Already recorded by an earlier invocation (resumed)."""
    done: int = 0
    failed: int = 0
    seconds: float = 0.0


RecordCallback = Callable[[dict[str, Any], int, int], None]
"""Called with each new record, how many are done and how many this invocation runs."""


# --------------------------------------------------------------------------------------------------
# Files


def slug(label: str) -> str:
    """A model label as a file-name part (``Qwen/Qwen2.5-7B`` → ``Qwen_Qwen2.5-7B``)."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", label).strip("._")
    return cleaned or "model"


def records_path(out_dir: Path, label: str) -> Path:
    return out_dir / f"records-{slug(label)}.jsonl"


def record_key(record: Mapping[str, Any]) -> tuple[str, str, str]:
    return str(record["instance_id"]), str(record["strategy"]), str(record["model"])


def read_records(path: Path) -> list[dict[str, Any]]:
    """The records of a file, the latest per key; a torn last line (an interrupted write) is ignored."""
    if not path.exists():
        return []
    latest: dict[tuple[str, str, str], dict[str, Any]] = {}
    lines = path.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            latest[record_key(record)] = record
        except (ValueError, KeyError, TypeError) as exc:
            if number == len(lines):
                log.warning("%s: ignoring a torn last line (an interrupted write)", path)
                continue
            raise InputError(f"{path}:{number}: not an evaluation record ({exc})") from exc
    return list(latest.values())


class _Appender:
    """Appends records, one line each, flushed at once (a kill loses no finished record)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._repair(path)
        self._file = path.open("a", encoding="utf-8")

    @staticmethod
    def _repair(path: Path) -> None:
        """Drop a torn last line (a write cut short by a kill): its run is redone, the file stays valid."""
        if not path.exists() or not path.stat().st_size:
            return
        data = path.read_bytes()
        if data.endswith(b"\n"):
            return
        keep = data.rfind(b"\n") + 1
        log.warning(
            "%s: dropping a torn last line of %d bytes (an interrupted write)", path, len(data) - keep
        )
        with path.open("r+b") as handle:
            handle.truncate(keep)

    def write(self, record: Mapping[str, Any]) -> None:
        self._file.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()


# --------------------------------------------------------------------------------------------------
# Instances


def format_tokens(n: int) -> str:
    """32000 → ``32K``, 1280000 → ``1.28M`` (decimal, as the papers write lengths)."""
    if n >= 1_000_000:
        return f"{n / 1_000_000:g}M"
    if n >= 1_000:
        return f"{n / 1_000:g}K"
    return str(n)


def parse_tokens(text: str) -> int:
    """``32K`` → 32000, ``1.28M`` → 1280000, ``128000`` → 128000."""
    raw = text.strip().upper().replace("_", "").replace(",", "")
    scale = 1
    if raw.endswith("K"):
        scale, raw = 1_000, raw[:-1]
    elif raw.endswith("M"):
        scale, raw = 1_000_000, raw[:-1]
    try:
        value = float(raw) * scale
    except ValueError as exc:
        raise ConfigurationError(f"{text!r} is not a token count (e.g. 32000, 32K, 1.28M)") from exc
    if value <= 0 or value != int(value):
        raise ConfigurationError(f"{text!r} is not a positive whole number of tokens")
    return int(value)


def build_instances(config: EvalConfig) -> list[EvalInstance]:
    """The suite's instances, deterministic in the seed (built in the same order every time)."""
    # The builders count with the project's default tokenizer, so lengths compare across models.
    if config.suite == "needle":
        from longgraph.evals.data.needle import build_needle

        return [
            instance
            for length in config.lengths
            for depth in config.depths
            for instance in build_needle(target_tokens=length, n=config.n, seed=config.seed, depth=depth)
        ]
    if config.suite == "squad":
        from longgraph.evals.data.squad import build_squad

        return [
            i
            for length in config.lengths
            for i in build_squad(target_tokens=length, n=config.n, seed=config.seed)
        ]
    if config.suite == "hotpot":
        from longgraph.evals.data.hotpot import build_hotpot

        return [
            i
            for length in config.lengths
            for i in build_hotpot(target_tokens=length, n=config.n, seed=config.seed)
        ]
    from longgraph.evals.data.loong import load_loong

    assert config.loong is not None
    loaded = load_loong(
        config.loong.instances, config.loong.docs, context_window=config.loong.window, seed=config.seed,
        sets=config.loong.sets,
    )  # fmt: skip
    per_set: dict[Any, int] = {}
    chosen: list[EvalInstance] = []
    for instance in loaded:  # the first n of each length set, in file order
        key = instance.metadata.get("set")
        if per_set.get(key, 0) < config.n:
            per_set[key] = per_set.get(key, 0) + 1
            chosen.append(instance)
    return chosen


def length_set(instance: EvalInstance) -> str:
    """The length bucket a report groups by: the target length, or Loong's length set."""
    if instance.suite == "loong":
        return str(instance.metadata.get("length_set") or format_tokens(instance.actual_tokens))
    return format_tokens(instance.target_tokens)


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


def _base_record(instance: EvalInstance, strategy: str, label: str, oracle: bool) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        k: instance.metadata[k]
        for k in ("needle_token_depth", "task", "length_set", "level", "set", "type", "language")
        if k in instance.metadata
    }
    if instance.skipped:
        metadata["skipped_documents"] = len(instance.skipped)
    return {
        "instance_id": instance.id, "suite": instance.suite, "task_family": instance.task_family,
        "length": instance.actual_tokens if instance.suite == "loong" else instance.target_tokens,
        "length_set": length_set(instance),
        "actual_tokens": instance.actual_tokens, "depth": instance.depth, "strategy": strategy,
        "model": label, "oracle": oracle, "question": instance.question, "answer": "",
        "gold": list(instance.gold_answers), "metric": PRIMARY_METRIC[instance.task_family], "score": None,
        "scores": {}, "judge_score": None, "llm_calls": 0, "failed_calls": 0, "prompt_tokens": 0,
        "completion_tokens": 0, "seconds": 0.0,
        "chunks": {"total": 0, "used": 0, "no_information": 0, "unsupported": 0, "filtered": 0, "failed": 0},
        "notes": list(instance.skipped), "metadata": metadata, "error": None, "error_type": None,
        "finished_at": None,
    }  # fmt: skip


async def evaluate(
    instance: EvalInstance,
    strategy: str,
    *,
    context: Context,
    label: str,
    oracle: bool = False,
    llm: LLMProvider | None = None,
    judge: _Judge | None = None,
) -> dict[str, Any]:
    """Run one strategy on one instance and score it; any failure becomes the record's ``error``."""
    from longgraph.api import aask

    record = _base_record(instance, strategy, label, oracle)
    task = FAMILY_TASK[instance.task_family]
    started = time.perf_counter()
    try:
        result = await aask(
            instance.question, documents=instance.documents, strategy=strategy,
            context=context.replace(task=task), llm=llm or default_provider, start_embedded=False,
        )  # fmt: skip
    except Exception as exc:  # recorded, not raised: one bad instance must not stop an evaluation
        record.update(
            seconds=round(time.perf_counter() - started, 3), error=" ".join(str(exc).split())[:2000],
            error_type=type(exc).__name__, finished_at=_now(),
        )  # fmt: skip
        return record
    record["seconds"] = round(time.perf_counter() - started, 3)
    stats = result.stats
    counts = {
        status: sum(c.status == status for c in result.chunks)
        for status in ("used", "no_information", "unsupported", "filtered", "failed")
    }
    scores = score_instance(instance.task_family, result.answer, instance.gold_answers)
    record.update(
        answer=result.answer, scores=scores, llm_calls=stats.llm_calls, failed_calls=stats.failed_calls,
        prompt_tokens=stats.prompt_tokens, completion_tokens=stats.completion_tokens,
        chunks={"total": len(result.chunks), **counts}, notes=record["notes"] + list(stats.notes),
    )  # fmt: skip
    metric = record["metric"]
    if instance.task_family == "open":
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
    record["finished_at"] = _now()
    return record


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


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
    """Records are kept per label: the model, plus the prompt variant when it is not the default."""
    if config.oracle:
        return ORACLE_LABEL
    label = config.label or context.model or "model"
    if context.prompt_variant != "compact" and not config.label:
        label += f"-{context.prompt_variant}"
    return label


def _warm_up(config: EvalConfig, context: Context) -> None:
    """Load what the first run of a strategy would otherwise pay for inside its timing."""
    if "rag-embed" in config.strategies and not context.embedding_url:
        from longgraph.nodes.retrieval import local_embedder

        local_embedder(context.embedding_model)


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
        "finished_at": _now(),
    }
    path = config.out_dir / f"run-{slug(label)}-{config.suite}.json"
    path.write_text(json.dumps(info, ensure_ascii=False, indent=2, default=str) + "\n", encoding="utf-8")


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
    appender = _Appender(path)

    async def run_one(instance: EvalInstance, strategy: str) -> None:
        async with semaphore:
            record = await evaluate(
                instance, strategy, context=context, label=label, oracle=config.oracle, llm=llm, judge=judge
            )
        appender.write(record)
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
