"""``longgraph synth FILES… --out data.jsonl``: Pyramid-Align records from a corpus (``longgraph/synth.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from longgraph.cli.common import (
    Opt,
    RayOption,
    WorkersOption,
    corpus_progress,
    endpoint_settings,
    print_cluster,
    ray_address,
    run_cli,
    stderr,
)
from longgraph.errors import InputError
from longgraph.files import read_document
from longgraph.inert import for_terminal

TEXT_SUFFIXES = (".txt", ".md", ".text", ".rst")
"""What a folder argument contributes: its text files, recursively, in name order."""


def expand_inputs(paths: list[str]) -> list[str]:
    """Files as given; a folder becomes its text files (a folder with none is an error naming it)."""
    files: list[str] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(
                str(p) for p in path.rglob("*") if p.is_file() and p.suffix.lower() in TEXT_SUFFIXES
            )
            if not found:
                raise InputError(f"{raw}: a folder with no text file ({', '.join(TEXT_SUFFIXES)})")
            files += found
        else:
            files.append(raw)
    return files


def synth(
    files: Annotated[list[str], typer.Argument(help="Text files or folders of them (one record per file).")],
    out: Annotated[Path, Opt(help="The dataset (JSONL); its progress file and card are written beside it.")],
    seed: Annotated[int, Opt(help="Seeds the choice of node and question category per document.")] = 0,
    base_url: Annotated[
        list[str] | None, Opt(help="OpenAI-compatible base URL(s) (default: the embedded server).")
    ] = None,
    model: Annotated[str | None, Opt()] = None,
    temperature: Annotated[float | None, Opt(help="Sampling temperature (the paper used 0.7).")] = None,
    context_window: Annotated[int | None, Opt(help="L: tokens one call may use.")] = None,
    max_output_tokens: Annotated[int | None, Opt()] = None,
    structured_output: Annotated[str | None, Opt(help="auto, json_schema or text.")] = None,
    max_concurrency: Annotated[int | None, Opt(help="Requests in flight, shared by all documents.")] = None,
    documents_in_flight: Annotated[
        int | None, Opt(help="Documents open at once (default 4 × concurrency).")
    ] = None,
    cache: Annotated[
        str | None, Opt(help="Result cache file (a rerun replays finished calls from it).")
    ] = None,
    ray: RayOption = None,
    workers: WorkersOption = None,
    debug: Annotated[bool, Opt()] = False,
) -> None:
    """Write one Pyramid-Align record (X, Q, M, A) per document; rerun the same command to resume."""

    def action() -> None:

        from longgraph.errors import InputError
        from longgraph.synth import Source, synth, synth_on_ray

        sources = []
        for path in expand_inputs(files):
            _, text, notes = read_document(path)
            for note in notes:
                stderr.print(for_terminal(f"{path}: {note}"), highlight=False, markup=False)
            sources.append(Source(name=path, text=text))
        settings: dict[str, Any] = endpoint_settings(cache, base_url, model)
        chosen = {
            "temperature": temperature,
            "context_window": context_window,
            "max_output_tokens": max_output_tokens,
            "structured_output": structured_output,
            "max_concurrency": max_concurrency,
        }
        settings.update({k: v for k, v in chosen.items() if v is not None})
        with corpus_progress(disable=not stderr.is_terminal) as progress:
            bar = progress.add_task("documents", total=len(sources))
            if ray is not None:
                summary = synth_on_ray(
                    sources,
                    out,
                    seed=seed,
                    documents_in_flight=documents_in_flight,
                    ray_address=ray_address(ray),
                    workers=workers,
                    on_document=lambda name, status: progress.advance(bar),
                    **settings,
                )
            else:
                if workers is not None:
                    raise InputError("--workers is an option of --ray")
                summary = synth(
                    sources,
                    out,
                    seed=seed,
                    documents_in_flight=documents_in_flight,
                    on_document=lambda name, status: progress.advance(bar),
                    **settings,
                )
        print_cluster(summary.cluster)
        for line in summary.lines():
            stderr.print(for_terminal(line), highlight=False, markup=False)
        if summary.failed:
            raise typer.Exit(4)

    run_cli(action, debug=debug)
