"""``longgraph ask``, ``longgraph demo`` and ``longgraph strategies``: answering questions about files."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from longgraph.cli.common import (
    EXIT_PARTIAL,
    Opt,
    RunOptions,
    claim_page,
    coverage_line,
    progress_bars,
    run_cli,
    stderr,
    with_run_options,
)
from longgraph.cli.show import answers_page, source_records
from longgraph.cli.verdict import shown_answer, verdict_lines
from longgraph.files import read_document
from longgraph.inert import for_terminal, json_for_terminal

if TYPE_CHECKING:
    from longgraph.costing import CostEstimate
    from longgraph.state.contract import GraphOutput


def read_plan(given: str) -> dict[str, Any]:
    """``--plan``: JSON, or ``@FILE`` holding it."""
    from pathlib import Path

    from longgraph.errors import InputError

    text = given
    if given.startswith("@"):
        try:
            text = Path(given[1:]).expanduser().read_text(encoding="utf-8")
        except OSError as exc:
            raise InputError(f"--plan {given}: cannot read it ({exc.strerror or exc})") from exc
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"--plan: not JSON ({exc.msg} at character {exc.pos})") from exc
    if not isinstance(value, dict):
        raise InputError("--plan: expected a JSON object")
    return value


@with_run_options
def ask(
    files: Annotated[
        list[str], typer.Argument(help="Text files to read ('-' for stdin); several become documents.")
    ],
    question: Annotated[
        list[str],
        Opt(
            "--question",
            "-q",
            help="The question to answer; repeat it to ask several about the same files "
            "(what a strategy builds per document — ToM's tree, PECAN's graph — is built once).",
        ),
    ],
    strategy: Annotated[
        str,
        Opt(
            help="Strategy graph: see `longgraph strategies` (auto: one plain call when the input fits, else records or mapreduce)."
        ),
    ] = "auto",
    as_json: Annotated[
        bool,
        Opt(
            "--json",
            help="Print the whole result as JSON (with the question and the files it read, for `longgraph show`).",
        ),
    ] = False,
    html: Annotated[
        Path | None,
        Opt(
            "--html",
            help="Also write a self-contained page: the answer in its documents, every chunk's fate.",
            show_default=False,
        ),
    ] = None,
    *,
    run: RunOptions,
    resume: Annotated[
        str | None,
        Opt(help="Thread id: checkpoint this run; run again with the same id to resume it if interrupted."),
    ] = None,
    checkpoint_db: Annotated[
        str | None,
        Opt(
            help="Where --resume checkpoints: a SQLite file (default: checkpoints.sqlite in $LONGGRAPH_HOME "
            "or ~/.cache/longgraph) or a postgresql:// URL (a server a team shares).",
            show_default=False,
        ),
    ] = None,
    dry_run: Annotated[
        bool,
        Opt(
            "--dry-run",
            help="Print the chunks, calls and prompt tokens the run would send (exact for the first "
            "reading stage, a bound for the rest) without calling the model.",
        ),
    ] = False,
    plan: Annotated[
        str | None,
        Opt(
            help="A records plan to follow instead of planning, as JSON or @FILE: "
            '{"aggregates": true, "fields": [{"name": "case", "type": "text"}, {"name": "verdict", "type": '
            '"text"}], "key": "case", "value": "verdict", "operation": "group", "labels": ["convicted", '
            '"acquitted"]}; operations: list, count, sum, mean, min, max, argmax, argmin, sort, between, '
            'group, top_k, chain, closure. {"aggregates": false} skips planning.',
            show_default=False,
        ),
    ] = None,
    no_progress: Annotated[bool, Opt("--no-progress", help="No progress bar.")] = False,
    debug: Annotated[bool, Opt(help="Show tracebacks.")] = False,
) -> None:
    """Answer QUESTION about FILES."""
    from longgraph.api import aask, aask_many, input_fingerprint

    settings = run.settings()
    resumed: dict[str, str | None] = {}

    def action() -> None:
        import asyncio

        from longgraph.errors import InputError

        given_plan = read_plan(plan) if plan else None
        if html is not None:
            claim_page(html, files)
        documents, notes = read_documents(files)
        if dry_run:
            estimates = [
                asyncio.run(
                    aask(q, documents=documents, strategy=strategy, dry_run=True, plan=given_plan, **settings)
                )
                for q in question
            ]
            print_estimates(question, estimates, as_json=as_json)
            return
        thread = resume
        if thread is None and (run.budgeted):  # a budgeted run must be resumable
            thread = (
                "budget-" + input_fingerprint(strategy, {"questions": question, "documents": documents})[:16]
            )
        resumed["thread"] = thread
        common: dict[str, Any] = {
            "documents": documents,
            "strategy": strategy,
            **checkpoint_target(checkpoint_db, thread),
            "thread_id": thread,
            "plan": given_plan,
            **settings,
        }
        # No bars when stderr is not a terminal: a script reading it should get errors and notes only.
        with progress_bars(not no_progress and not debug and stderr.is_terminal) as on_progress:
            printed: set[int] = set()

            def on_answer(index: int, result: GraphOutput) -> None:
                """A question's answer as soon as it is settled (the others may still be running)."""
                if as_json:
                    return
                if index == 0:  # what reading the files noted goes with the first answer
                    result.stats.notes = notes + result.stats.notes
                print_result(question[index], result, many=True)
                printed.add(index)

            if len(question) == 1:
                results = [asyncio.run(aask(question[0], on_progress=on_progress, **common))]
            else:
                results = asyncio.run(
                    aask_many(question, on_progress=on_progress, on_answer=on_answer, **common)
                )
            if on_progress is not None and any(r.stats.resumed for r in results):
                on_progress.complete_from_checkpoint()
        if not printed:
            results[0].stats.notes = notes + results[0].stats.notes
        # The answer first: a page that cannot be written (a full disk, a folder gone) loses nothing.
        if not printed:  # one question, or JSON: printed whole at the end
            print_results(question, results, files, documents, as_json=as_json)
        if html is not None:
            try:
                html.write_text(answers_page(results, question), encoding="utf-8")
            except OSError as exc:
                raise InputError(
                    f"--html {html}: the page could not be written ({exc.strerror}); the answer is above"
                ) from exc
            stderr.print(f"wrote {html}")
        if any(c.status == "failed" for r in results for c in r.chunks):
            raise typer.Exit(EXIT_PARTIAL)

    def hint() -> str | None:
        thread = resumed.get("thread")
        if thread is None:
            return None
        more = " (with a larger budget)" if run.budgeted else ""
        return f"the run is checkpointed: rerun with --resume {thread}{more} to continue it"

    run_cli(action, debug=debug, hint=hint)


def read_documents(files: Sequence[str]) -> tuple[list[dict[str, str]], list[str]]:
    """Each file as a document (title, text), and what reading them noted (a decoding, a cut)."""
    documents, notes = [], []
    for path in files:
        title, text, file_notes = read_document(path)
        documents.append({"title": title, "text": text})
        notes += file_notes
    return documents, notes


def print_json(dumped: list[dict[str, Any]]) -> None:
    """One object for one question, a list for several."""
    print(
        json_for_terminal(json.dumps(dumped[0] if len(dumped) == 1 else dumped, ensure_ascii=False, indent=2))
    )


def print_estimates(question: Sequence[str], estimates: Sequence[CostEstimate], *, as_json: bool) -> None:
    """What each question's run would send (``--dry-run``)."""
    if as_json:
        print_json(
            [
                e.model_dump(mode="json")
                | {"calls_at_most": e.calls_at_most, "prompt_tokens_at_most": e.prompt_tokens_at_most}
                for e in estimates
            ]
        )
        return
    for asked, estimate in zip(question, estimates, strict=True):
        if len(estimates) > 1:
            print(for_terminal(f"Q: {asked}"))
        print(for_terminal("\n".join(estimate.lines())))


def print_results(
    question: Sequence[str],
    results: Sequence[GraphOutput],
    files: Sequence[str],
    documents: Sequence[dict[str, str]],
    *,
    as_json: bool,
) -> None:
    """The answers on stdout (as JSON with the files they read, for ``longgraph show``), notes and chunk
    coverage on stderr."""
    if as_json:
        sources = source_records(files, documents)
        print_json(
            [
                {"question": q, **r.model_dump(mode="json"), "sources": sources}
                for q, r in zip(question, results, strict=True)
            ]
        )
        return
    for asked, result in zip(question, results, strict=True):
        print_result(asked, result, many=len(results) > 1)


def print_result(asked: str, result: GraphOutput, *, many: bool) -> None:
    """One question's answer on stdout (after its question when there are ``many``), its verdict, notes
    and chunk coverage on stderr."""
    if many:
        print(for_terminal(f"Q: {asked}\nA: {shown_answer(result)}"), flush=True)
        build = result.stats.build
        cost = f"{result.stats.llm_calls - (build.llm_calls if build else 0)} call(s) for this question"
        stderr.print(
            f"note: {cost}" + (f", {build.llm_calls} to build" if build and build.llm_calls else ""),
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    else:
        print(for_terminal(shown_answer(result)), flush=True)
    for line in verdict_lines(result):
        stderr.print(for_terminal(line), highlight=False, markup=False, soft_wrap=True)
    for note in result.stats.notes:
        stderr.print(for_terminal(f"note: {note}"), highlight=False, markup=False, soft_wrap=True)
    coverage = coverage_line(result)
    if coverage:
        stderr.print(f"note: {coverage}", highlight=False, markup=False, soft_wrap=True)


def demo(
    tokens: Annotated[int, Opt(help="Length of the demo document in tokens.")] = 24_000,
    depth: Annotated[float, Opt(help="Where the planted fact sits (0 = start, 1 = end).")] = 0.6,
    strategy: Annotated[str, Opt()] = "mapreduce",
    base_url: Annotated[
        list[str] | None, Opt(help="Use this endpoint instead of the embedded server.")
    ] = None,
    chunk_size: Annotated[int, Opt(help="Tokens per chunk (small chunks suit the 135M model).")] = 1500,
    model: Annotated[
        str | None,
        Opt(
            "--model",
            help="Embedded model to start (`longgraph model list`) [default: $LONGGRAPH_EMBEDDED_MODEL or smollm2].",
        ),
    ] = None,
    seed: Annotated[int, Opt()] = 7,
    debug: Annotated[bool, Opt()] = False,
) -> None:
    """Read a long real document (Paul Graham essays with a planted fact) and answer a question about it."""
    from longgraph.api import aask

    def action() -> None:
        import asyncio
        import os

        from longgraph.embedded.catalog import MODEL_ENV, known_model

        if model is not None:
            os.environ[MODEL_ENV] = known_model(model).name

        from longgraph.evals.data.needle import build_needle

        instance = build_needle(target_tokens=tokens, n=1, seed=seed, depth=depth)[0]
        stderr.print(
            f"document: {instance.actual_tokens:,} tokens of Paul Graham essays, a fact planted at depth {depth:.0%}\n"
            f"question: {instance.question}"
        )
        settings: dict[str, Any] = {"chunk_size": chunk_size, "temperature": 0.0}
        if base_url:
            settings["base_url"] = base_url[0] if len(base_url) == 1 else base_url
        with progress_bars(not debug) as on_progress:
            result = asyncio.run(
                aask(
                    instance.question,
                    documents=instance.documents,
                    strategy=strategy,
                    on_progress=on_progress,
                    start_embedded=True,
                    **settings,
                )
            )
        used = sum(c.status == "used" for c in result.chunks)
        print(for_terminal(f"answer: {shown_answer(result)}"))
        print(f"gold:   {'; '.join(instance.gold_answers)}")
        print(
            f"{len(result.chunks)} chunks ({used} used), {result.stats.llm_calls} LLM calls, "
            f"{result.stats.prompt_tokens:,}+{result.stats.completion_tokens:,} tokens, {result.stats.seconds:.1f} s"
        )

    run_cli(action, debug=debug)


def strategies(
    langgraph_json: Annotated[
        bool, Opt("--langgraph-json", help="Print the langgraph.json that serves them all, and nothing else.")
    ] = False,
) -> None:
    """List the strategies."""
    from longgraph.strategies import DATA_ENGINES, STRATEGIES, langgraph_config

    if langgraph_json:
        print(json.dumps(langgraph_config(), indent=2, ensure_ascii=False))
        return
    for s in STRATEGIES.values():
        print(f"{s.name:<24} {s.description}")
    for name, (_, _, description) in DATA_ENGINES.items():
        print(f"{name:<24} {description}")


def checkpoint_target(checkpoint_db: str | None, thread: str | None) -> dict[str, Any]:
    """``checkpoint_url`` for a ``postgresql://`` URL, else ``checkpoint_path`` (the default file)."""
    from longgraph.cache import default_checkpoint_path
    from longgraph.checkpointing import checked_target, is_postgres_url

    if checkpoint_db is not None:
        checked_target(checkpoint_db, "--checkpoint-db")
    if thread is None:
        return {}
    if checkpoint_db and is_postgres_url(checkpoint_db):
        return {"checkpoint_url": checkpoint_db}
    return {"checkpoint_path": checkpoint_db or default_checkpoint_path()}
