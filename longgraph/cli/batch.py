"""``longgraph batch ITEMS.jsonl --out results.jsonl``: a corpus of questions in one run (``longgraph/batch.py``)."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Annotated, Any

import typer

from longgraph.cli.common import (
    EXIT_PARTIAL,
    Opt,
    RayOption,
    RunOptions,
    WorkersOption,
    corpus_progress,
    print_cluster,
    ray_address,
    run_cli,
    stderr,
    with_run_options,
)
from longgraph.inert import for_terminal


@with_run_options
def batch(
    items: Annotated[
        Path,
        typer.Argument(
            help="JSONL, one item a line: {question, document | documents | files, id?, strategy?, metadata?}."
        ),
    ],
    out: Annotated[Path, Opt(help="Result rows (JSONL), one per item as it finishes; rerun to resume.")],
    strategy: Annotated[
        str, Opt(help="Strategy of items that name none: see `longgraph strategies`.")
    ] = "mapreduce",
    items_in_flight: Annotated[
        int | None, Opt(help="Items open at once (default 2 × max-concurrency).")
    ] = None,
    full: Annotated[
        bool, Opt("--full", help="Also write each item's whole result (every chunk's report).")
    ] = False,
    files_outside: Annotated[
        bool,
        Opt("--files-outside", help="Let items name files outside the items file's folder (absolute, ../)."),
    ] = False,
    ray: RayOption = None,
    workers: WorkersOption = None,
    checkpoint_db: Annotated[
        str | None,
        Opt(
            help="With --ray: checkpoint running items on this postgresql:// server, shared by every node "
            "(an item whose node dies resumes from its last step).",
            show_default=False,
        ),
    ] = None,
    *,
    run: RunOptions,
    no_progress: Annotated[bool, Opt("--no-progress", help="No progress bar.")] = False,
    debug: Annotated[bool, Opt(help="Show tracebacks.")] = False,
) -> None:
    """Answer every item of ITEMS with one shared concurrency budget; rerun the same command to resume."""
    settings = run.settings()

    def action() -> None:
        from longgraph.batch import BatchSummary, batch, batch_on_ray
        from longgraph.errors import InputError

        with corpus_progress(disable=no_progress or debug or not stderr.is_terminal) as progress:
            bar = progress.add_task("items", total=None)

            def on_item(row: dict[str, Any], summary: BatchSummary) -> None:
                failed = f", {summary.failed} failed" if summary.failed else ""
                progress.update(
                    bar,
                    total=summary.total - summary.skipped,
                    completed=summary.done,
                    description=f"items{failed}",
                )

            if ray is None and (workers is not None or checkpoint_db is not None):
                raise InputError("--workers and --checkpoint-db are options of --ray")
            run = (
                batch
                if ray is None
                else partial(
                    batch_on_ray,
                    ray_address=ray_address(ray),
                    workers=workers,
                    checkpoint_url=ray_checkpoints(checkpoint_db),
                )
            )
            summary = run(
                items,
                out=out,
                strategy=strategy,
                items_in_flight=items_in_flight,
                full=full,
                on_item=on_item,
                files_outside=files_outside,
                on_notice=lambda m: stderr.print(m),
                **settings,
            )
        print_cluster(summary.cluster)
        for line in summary.lines():
            stderr.print(for_terminal(line), highlight=False, markup=False, soft_wrap=True)
        if summary.failed:
            raise typer.Exit(EXIT_PARTIAL)

    run_cli(action, debug=debug, hint=f"rerun the same command to resume: finished items in {out} are kept")


def ray_checkpoints(checkpoint_db: str | None) -> str | None:
    """``--checkpoint-db`` of a Ray run: a PostgreSQL server every node reaches (a SQLite file is one
    machine's, and one writer's)."""
    if checkpoint_db is None:
        return None
    from longgraph.checkpointing import checked_target, is_postgres_url
    from longgraph.errors import InputError

    checked_target(checkpoint_db, "--checkpoint-db")
    if not is_postgres_url(checkpoint_db):
        raise InputError("--checkpoint-db with --ray: a postgresql:// URL (every node must reach it)")
    return checkpoint_db
