"""``longgraph eval``: run an evaluation suite against a model, and ``longgraph eval report DIR``.

A thin typer layer over :mod:`longgraph.evals.runner` and :mod:`longgraph.evals.report`, where the
logic and its errors live. Records go to ``OUT/records-<model label>.jsonl`` as runs finish; running the
same command again resumes (finished records are not redone); the report files are written at the end.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from longgraph.cli.common import run_cli, stderr
from longgraph.errors import ConfigurationError
from longgraph.inert import for_terminal

if TYPE_CHECKING:
    from longgraph.evals.runner import LoongSource

eval_app = typer.Typer(
    name="eval",
    help=(
        "Evaluate strategies on long-context suites (needle, squad, hotpot, loong, loong-synth, "
        "infinitebench, ruler); `eval report DIR`; `eval score PREDICTIONS...`."
    ),
    add_completion=False,
    no_args_is_help=False,
)
Opt = typer.Option


def _split(raw: str) -> list[str]:
    return [part.strip() for part in raw.split(",") if part.strip()]


def _sets(raw: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in _split(raw))
    except ValueError:
        raise ConfigurationError(f"--loong-sets {raw!r}: expected a comma list of 1-4") from None


def _setting(raw: str) -> tuple[str, Any]:
    """``KEY=VALUE`` for any context field; VALUE is read as JSON when it parses (numbers, null...)."""
    key, sep, value = raw.partition("=")
    if not sep or not key.strip():
        raise ConfigurationError(f"--set {raw!r}: expected KEY=VALUE (a context field, e.g. chunk_size=1500)")
    try:
        parsed: Any = json.loads(value)
    except ValueError:
        parsed = value
    return key.strip(), parsed


@eval_app.callback(invoke_without_command=True)
def run(
    ctx: typer.Context,
    suite: Annotated[
        str,
        Opt(
            help="needle, squad, hotpot, general, real, ruler, loong, loong-synth (built offline) or "
            "infinitebench."
        ),
    ] = "needle",
    strategies: Annotated[
        str, Opt(help="Comma list, e.g. mapreduce,truncate,rag-bm25,rag-embed.")
    ] = "mapreduce",
    lengths: Annotated[str, Opt(help="Comma list of lengths in tokens (32000, 32K, 1.28M).")] = "32K",
    depths: Annotated[str, Opt(help="Needle depths, comma list of fractions (0 = start).")] = "0.5",
    n: Annotated[
        int,
        Opt(
            "--n",
            help="Instances per length (× depth); per length set for Loong; per family × set for "
            "loong-synth; the first N per task for InfiniteBench.",
        ),
    ] = 1,
    seed: Annotated[int, Opt()] = 0,
    out: Annotated[Path, Opt(help="Results folder (records, reports, plots).")] = Path("eval-results"),
    oracle: Annotated[
        bool, Opt("--oracle", help="Use the stub server's scripted oracle as the model (label 'oracle').")
    ] = False,
    reader: Annotated[
        str,
        Opt(
            help="model (the endpoint), or a scripted reader instead: oracle (as --oracle), reference (reads "
            "and combines perfectly) or extractor (reads perfectly, never combines); built from the gold "
            "of the real, general, ruler and loong-synth suites."
        ),
    ] = "model",
    wording: Annotated[
        str, Opt(help="How a reference or extractor reader words answers: bare, sentence, chatty.")
    ] = "bare",
    concurrency: Annotated[int, Opt(help="Runs (instance × strategy) at once.")] = 2,
    retry_failed: Annotated[bool, Opt("--retry-failed", help="Redo records that ended in an error.")] = False,
    base_url: Annotated[
        list[str] | None, Opt(help="Model endpoint(s) (default: the embedded server).")
    ] = None,
    model: Annotated[str | None, Opt(help="Served model name (default: the endpoint's first).")] = None,
    api_key: Annotated[
        str | None, Opt(envvar="LONGGRAPH_API_KEY", help="Bearer token.", show_default=False)
    ] = None,
    label: Annotated[
        str | None, Opt(help="Model label in records and file names (default: model name).")
    ] = None,
    context_window: Annotated[int | None, Opt(help="L: tokens one call may use.")] = None,
    tokenizer: Annotated[str | None, Opt(help="Path to the model's tokenizer (default cl100k_base).")] = None,
    max_output_tokens: Annotated[int | None, Opt()] = None,
    temperature: Annotated[float, Opt(help="Sampling temperature (0: reproducible).")] = 0.0,
    max_concurrency: Annotated[int | None, Opt(help="LLM requests in flight per endpoint.")] = None,
    chunk_size: Annotated[int | None, Opt(help="Tokens per chunk (default: derived from L).")] = None,
    structured_output: Annotated[str | None, Opt(help="auto, json_schema or text.")] = None,
    request_timeout: Annotated[float | None, Opt("--timeout", help="Seconds per request.")] = None,
    rag_top_k: Annotated[int | None, Opt(help="RAG: chunks shown.")] = None,
    rag_chunk_tokens: Annotated[int | None, Opt(help="RAG: tokens per chunk.")] = None,
    embedding_url: Annotated[
        str | None, Opt(help="RAG: an /embeddings endpoint (default: bundled MiniLM).")
    ] = None,
    embedding_model: Annotated[str | None, Opt(help="RAG: the embedding model.")] = None,
    setting: Annotated[
        list[str] | None, Opt("--set", help="Any other context field, KEY=VALUE (repeatable).")
    ] = None,
    judge_base_url: Annotated[str | None, Opt(help="Judge endpoint for open answers (Loong).")] = None,
    judge_model: Annotated[str | None, Opt(help="Judge model name.")] = None,
    judge_api_key: Annotated[str | None, Opt(envvar="LONGGRAPH_JUDGE_API_KEY", show_default=False)] = None,
    judge_context_window: Annotated[int | None, Opt()] = None,
    loong_instances: Annotated[Path | None, Opt(help="Loong: the instances JSONL.")] = None,
    loong_docs: Annotated[Path | None, Opt(help="Loong: the documents folder.")] = None,
    loong_sets: Annotated[
        str | None, Opt(help="Loong and loong-synth: length sets, comma list of 1–4 (loong-synth: 1).")
    ] = None,
    data: Annotated[Path | None, Opt(help="InfiniteBench: the folder of its task files.")] = None,
    split: Annotated[
        str | None,
        Opt(
            help="general and real suites: dev (to work on) or test (to report, never tuned on); default both."
        ),
    ] = None,
    tasks: Annotated[
        str | None,
        Opt(
            help="InfiniteBench tasks, loong-synth families, general or real kinds, RULER tasks (vt,cwe,…), "
            "comma list (default: all)."
        ),
    ] = None,
    loong_window: Annotated[
        int, Opt(help="Loong: assembly cap in tokens (documents past it are skipped).")
    ] = 10_000_000,
    given_plans: Annotated[
        bool,
        Opt(
            "--given-plans",
            help="loong-synth: give strategies that plan their question each instance's reference "
            "records plan (records labelled <model>-given-plan).",
        ),
    ] = False,
    plain: Annotated[
        bool,
        Opt(
            "--plain/--no-plain",
            help="Run the plain pass (truncate: one call over the document, its prefix past the window) "
            "beside the strategies.",
        ),
    ] = True,
    no_report: Annotated[bool, Opt("--no-report", help="Do not write the report files.")] = False,
    debug: Annotated[bool, Opt(help="Show tracebacks.")] = False,
) -> None:
    """Run an evaluation (resumable: rerun the same command to continue an interrupted one)."""
    if ctx.invoked_subcommand is not None:
        return
    from longgraph.evals.report import write_reports
    from longgraph.evals.runner import EvalConfig, parse_tokens, run_eval_sync

    def action() -> None:
        settings: dict[str, Any] = {
            "base_url": (base_url[0] if len(base_url) == 1 else base_url) if base_url else None,
            "model": model,
            "api_key": api_key,
            "context_window": context_window,
            "tokenizer": tokenizer,
            "max_output_tokens": max_output_tokens,
            "temperature": temperature,
            "max_concurrency": max_concurrency,
            "chunk_size": chunk_size,
            "structured_output": structured_output,
            "request_timeout": request_timeout,
            "rag_top_k": rag_top_k,
            "rag_chunk_tokens": rag_chunk_tokens,
            "embedding_url": embedding_url,
            "embedding_model": embedding_model,
        }
        settings = {k: v for k, v in settings.items() if v is not None}
        settings.update(_setting(raw) for raw in setting or [])
        if reader not in ("model", "oracle", "reference", "extractor"):
            raise ConfigurationError(f"--reader {reader!r}: expected model, oracle, reference or extractor")
        if wording not in ("bare", "sentence", "chatty"):
            raise ConfigurationError(f"--wording {wording!r}: expected bare, sentence or chatty")
        use_oracle = oracle or reader == "oracle"
        scripted = reader in ("reference", "extractor")
        if (use_oracle or scripted) and (base_url or model):
            raise ConfigurationError("a scripted reader is its own model: drop --base-url/--model")
        judge = judge_settings(judge_base_url, judge_model, judge_api_key, judge_context_window)
        loong = suite_source(suite, loong_instances, loong_docs, loong_sets, loong_window)
        check_suite_options(suite, data=data, tasks=tasks, split=split)
        config = EvalConfig(
            suite=suite,  # type: ignore[arg-type]  # validated by EvalConfig.validate
            strategies=with_plain_pass(_split(strategies), plain),
            out_dir=out,
            lengths=tuple(parse_tokens(x) for x in _split(lengths)),
            depths=tuple(float(x) for x in _split(depths)),
            n=n,
            seed=seed,
            model_settings=settings,
            judge_settings=judge,
            label=label,
            concurrency=concurrency,
            oracle=use_oracle,
            reader=reader if scripted else "model",  # type: ignore[arg-type]  # checked above
            wording=wording,  # type: ignore[arg-type]  # checked above
            retry_failed=retry_failed,
            loong=loong,
            data_dir=data,
            tasks=tuple(_split(tasks)) if tasks else None,
            length_sets=_sets(loong_sets) if loong_sets and suite == "loong-synth" else (1,),
            window=loong_window if suite == "loong-synth" and loong_window != 10_000_000 else None,
            given_plans=given_plans,
            split=split,  # type: ignore[arg-type]  # checked above
        )
        config.validate()

        summary = run_eval_sync(
            config, on_record=show_record, on_notice=lambda message: stderr.print(message, highlight=False)
        )
        stderr.print(
            f"{summary.label}: {summary.done} run(s) done ({summary.failed} failed), {summary.skipped} already "
            f"recorded, in {summary.seconds:.1f} s → {summary.records_path}",
            highlight=False,
        )
        if not no_report:
            for path in write_reports(out).get(summary.label, []):
                print(path)

    run_cli(action, debug=debug)


def with_plain_pass(strategies: list[str], plain: bool) -> tuple[str, ...]:
    """The strategies to run: the given ones, and the plain pass (``truncate``) after them when asked."""
    from longgraph.evals.report import PLAIN_PASS

    if plain and PLAIN_PASS not in strategies:
        return (*strategies, PLAIN_PASS)
    return tuple(strategies)


def judge_settings(
    base_url: str | None, model: str | None, api_key: str | None, context_window: int | None
) -> dict[str, Any] | None:
    """The judge model's endpoint settings (``--judge-*``), or None: no judge."""
    if not base_url:
        return None
    judge = {"base_url": base_url, "model": model, "api_key": api_key, "context_window": context_window}
    return {k: v for k, v in judge.items() if v is not None}


def suite_source(
    suite: str, instances: Path | None, docs: Path | None, sets: str | None, window: int
) -> LoongSource | None:
    """Loong's own files (``--suite loong``); refused for any other suite."""
    from longgraph.evals.runner import LoongSource

    if suite == "loong":
        if instances is None or docs is None:
            raise ConfigurationError("--suite loong needs --loong-instances and --loong-docs")
        return LoongSource(instances, docs, sets=_sets(sets) if sets else None, window=window)
    if (instances or docs) is not None:
        raise ConfigurationError("--loong-instances/--loong-docs are for --suite loong")
    return None


def check_suite_options(suite: str, *, data: Path | None, tasks: str | None, split: str | None) -> None:
    """Options that belong to one suite, refused with any other."""
    if data is not None and suite != "infinitebench":
        raise ConfigurationError("--data is the InfiniteBench folder: use it with --suite infinitebench")
    if tasks is not None and suite not in ("infinitebench", "loong-synth", "general", "real", "ruler"):
        raise ConfigurationError(
            "--tasks chooses InfiniteBench tasks, loong-synth families, general or real kinds, or RULER tasks"
        )
    if split is not None and (suite not in ("general", "real") or split not in ("dev", "test")):
        raise ConfigurationError("--split is dev or test, for --suite general or real")


def show_record(record: dict[str, Any], done: int, total: int) -> None:
    """One progress line per finished run."""
    from longgraph.evals.runner import format_tokens

    outcome = (
        f"[red]error[/red] {escape(for_terminal(record['error_type'] + ': ' + record['error'][:160]))}"
        if record["error"]
        else f"{record['metric']} {record['score'] if record['score'] is not None else '–'}"
    )
    stderr.print(
        f"[{done}/{total}] {record['suite']} {format_tokens(record['length'])} "
        f"{record['strategy']}: {outcome}, {record['llm_calls']} calls, {record['seconds']:.1f} s",
        highlight=False,
        soft_wrap=True,
    )


@eval_app.command("report")
def report(
    directory: Annotated[Path, typer.Argument(help="A results folder written by `longgraph eval`.")],
    debug: Annotated[bool, Opt(help="Show tracebacks.")] = False,
) -> None:
    """Write the Markdown, JSON and PNG reports of every model's records in DIRECTORY."""
    from longgraph.errors import InputError
    from longgraph.evals.report import write_reports

    def action() -> None:
        if not directory.is_dir():
            raise InputError(f"{directory}: no such folder")
        written = write_reports(directory)
        if not written:
            raise InputError(f"{directory}: no records-*.jsonl to report on")
        for paths in written.values():
            for path in paths:
                print(path)

    run_cli(action, debug=debug)


@eval_app.command("score")
def score(
    predictions: Annotated[
        list[Path], typer.Argument(help="Predictions files: {id, prediction, ground_truth} per line.")
    ],
    task: Annotated[
        str | None, Opt(help="InfiniteBench task (default: from each file name, preds_<task>.jsonl).")
    ] = None,
    as_json: Annotated[bool, Opt("--json", help="Print the table as JSON.")] = False,
    debug: Annotated[bool, Opt(help="Show tracebacks.")] = False,
) -> None:
    """Re-score predictions with InfiniteBench's official rules and print the per-task table."""
    from longgraph.evals.rescore import rescore

    def action() -> None:
        results = [rescore(path, task) for path in predictions]
        if as_json:
            rows = [
                {
                    "file": str(r.path),
                    "task": r.task,
                    "metric": r.metric,
                    "n": r.n,
                    "score": round(r.score, 2),
                }
                for r in results
            ]
            print(json.dumps(rows, indent=2))
            return
        print("| task | metric | n | score (%) |")
        print("| --- | --- | ---: | ---: |")
        for r in results:
            print(f"| {r.task} | {r.metric} | {r.n} | {r.score:.2f} |")

    run_cli(action, debug=debug)
