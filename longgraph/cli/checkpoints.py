"""``longgraph checkpoints list|prune``: the threads ``--resume`` keeps, and deleting the old ones."""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer

from longgraph.cli.common import Opt, run_cli

checkpoints_app = typer.Typer(
    name="checkpoints", help="The threads --resume keeps: list them, delete old ones.", no_args_is_help=True
)

DatabaseOption = Annotated[
    str | None,
    Opt(
        "--checkpoint-db",
        help="SQLite file or postgresql:// URL (default: the one --resume uses).",
        show_default=False,
    ),
]


def _target(checkpoint_db: str | None) -> str:
    from longgraph.cache import default_checkpoint_path
    from longgraph.checkpointing import checked_target

    return (
        str(checked_target(checkpoint_db, "--checkpoint-db"))
        if checkpoint_db
        else str(default_checkpoint_path())
    )


@checkpoints_app.command("list")
def list_command(checkpoint_db: DatabaseOption = None, debug: Annotated[bool, Opt()] = False) -> None:
    """Every thread, its last write first (time in UTC, and the step it reached)."""

    def action() -> None:
        from longgraph.checkpointing import list_threads

        for thread in asyncio.run(list_threads(_target(checkpoint_db))):
            print(f"{thread.updated:%Y-%m-%d %H:%M:%S}  step {thread.step:>3}  {thread.thread_id}")

    run_cli(action, debug=debug)


@checkpoints_app.command()
def prune(
    older_than: Annotated[
        float, Opt("--older-than", help="Delete threads last written more than DAYS ago.", metavar="DAYS")
    ],
    checkpoint_db: DatabaseOption = None,
    debug: Annotated[bool, Opt()] = False,
) -> None:
    """Delete the threads nobody has written for DAYS days (a deleted thread cannot be resumed)."""

    def action() -> None:
        from datetime import timedelta

        from longgraph.checkpointing import prune_threads
        from longgraph.errors import ConfigurationError

        if older_than < 0:
            raise ConfigurationError(f"--older-than must be 0 or more days, got {older_than}")
        deleted = asyncio.run(prune_threads(_target(checkpoint_db), older_than=timedelta(days=older_than)))
        print(f"deleted {len(deleted)} thread(s)" + (f": {', '.join(deleted)}" if deleted else ""))

    run_cli(action, debug=debug)
