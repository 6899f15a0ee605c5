"""``longgraph model ...``: the embedded models (install, list) and their server (vLLM on the CPU).

A thin typer layer over :mod:`longgraph.embedded`: the logic (and its errors) live there so that the
test-suite and library users get the same behaviour without a CLI. Errors are printed as one line on
stderr with a non-zero exit code, never as a traceback.
"""

from __future__ import annotations

import datetime as dt
import json
import signal
import time
from pathlib import Path
from types import FrameType
from typing import Annotated, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from longgraph.embedded import (
    CATALOG,
    EmbeddedServerError,
    ServerInfo,
    ServerSettings,
    add_model,
    chosen_model,
    ensure_running,
    find_running,
    is_installed,
    is_server_process,
    known_model,
    process_tree_rss,
    recorded_server,
    start_server,
    stop_server,
)
from longgraph.errors import ConfigurationError

model_app = typer.Typer(
    name="model",
    help="Embedded models (list, add) and their server: vLLM on the CPU (`model` extra).",
    no_args_is_help=True,
    add_completion=False,
)

CacheDirOption = Annotated[
    Path | None,
    typer.Option(
        "--cache-dir",
        help="Where the converted model, logs and server state live "
        "[default: $LONGGRAPH_HOME or ~/.cache/longgraph].",
        file_okay=False,
    ),
]

# `status` exit code when no server runs: LSB's "program is not running", so scripts can test it.
EXIT_NOT_RUNNING = 3


def _out() -> Console:
    return Console()


def _fail(exc: EmbeddedServerError) -> NoReturn:
    """Print the error as one line (plus the server log's tail when there is one) and exit 1."""
    err = Console(stderr=True)
    err.print(f"[bold red]error:[/] {escape(exc.message)}")
    if exc.log_tail:
        err.print(f"[dim]{escape(exc.log_tail)}[/]", highlight=False)
    raise typer.Exit(1)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    """Turn SIGTERM/SIGHUP into KeyboardInterrupt so a foreground server is stopped on any exit."""
    raise KeyboardInterrupt


def _url_line(info: ServerInfo) -> str:
    return f"longgraph model server: {info.base_url} (model {info.model})"


@model_app.command()
def serve(
    port: Annotated[int | None, typer.Option(help="Port to listen on [default: a free one].")] = None,
    host: Annotated[
        str, typer.Option(help="Address to bind; loopback unless you mean to share it.")
    ] = "127.0.0.1",
    foreground: Annotated[
        bool, typer.Option("--foreground", help="Run until Ctrl-C, then stop the server.")
    ] = False,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for the server to answer.")] = 300.0,
    max_model_len: Annotated[int, typer.Option(help="Context length the server accepts.")] = 8192,
    reproducible: Annotated[
        bool,
        typer.Option(
            "--reproducible",
            help="Prefix caching off: with --max-concurrency 1 on ask, a rerun reads every chunk the same "
            "(measured 6 of 6 documents, against 1 of 6 with the cache; 1.22x the time).",
        ),
    ] = False,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            help="A model from `longgraph model list` [default: $LONGGRAPH_EMBEDDED_MODEL or smollm2].",
        ),
    ] = None,
    cache_dir: CacheDirOption = None,
) -> None:
    """Start the server (detached unless --foreground) and print its URL; reuse one already running.

    The model is installed first when it is not (`longgraph model add`)."""
    try:
        chosen = chosen_model(model)
    except ConfigurationError as exc:
        Console(stderr=True).print(f"[bold red]error:[/] {escape(str(exc))}")
        raise typer.Exit(2) from None
    settings = ServerSettings(
        model_name=chosen.name, max_model_len=max_model_len, prefix_caching=not reproducible
    )
    running = find_running(cache_dir)
    if running is not None and reproducible and running.prefix_caching is not False:
        _fail(
            EmbeddedServerError(
                f"a model server with prefix caching is already running at {running.base_url} (pid "
                f"{running.pid}); stop it first (longgraph model stop) to start a reproducible one"
            )
        )
    out = _out()
    try:
        if foreground:
            running = find_running(cache_dir)
            if running is not None:
                raise EmbeddedServerError(
                    f"a model server is already running at {running.base_url} (pid {running.pid}); "
                    "stop it first (longgraph model stop)"
                )
            with out.status("starting the model server (about 30 s)…"):
                info = start_server(
                    port, host, cache_dir=cache_dir, settings=settings, startup_timeout=timeout
                )
        else:
            with out.status("starting the model server (about 30 s)…"):
                info, started = ensure_running(
                    port, host, cache_dir=cache_dir, settings=settings, startup_timeout=timeout
                )
            if not started:
                out.print("[dim]already running[/]")
    except EmbeddedServerError as exc:
        _fail(exc)
    out.print(_url_line(info), highlight=False, soft_wrap=True)
    if not foreground:
        return
    out.print(f"[dim]log: {info.log_path} — Ctrl-C to stop[/]", highlight=False)
    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGHUP, _interrupt)
    try:
        while is_server_process(info.pid):
            time.sleep(1.0)
        Console(stderr=True).print(f"[bold red]error:[/] the model server exited (log: {info.log_path})")
        raise typer.Exit(1)
    except KeyboardInterrupt:
        out.print("stopping…")
    finally:
        stop_server(cache_dir)


@model_app.command()
def status(
    as_json: Annotated[bool, typer.Option("--json", help="Print the state as JSON.")] = False,
    cache_dir: CacheDirOption = None,
) -> None:
    """Show whether the server runs, its URL, pid and memory; exit code 3 when it does not run."""
    out = _out()
    try:
        info = find_running(cache_dir)
        recorded = recorded_server(cache_dir) if info is None else info
    except EmbeddedServerError as exc:
        _fail(exc)
    if info is None:
        starting = recorded is not None and is_server_process(recorded.pid)
        if as_json:
            out.print_json(json.dumps({"running": False, "starting": starting}))
        elif starting and recorded is not None:
            out.print(
                f"model server starting (pid {recorded.pid}, log: {recorded.log_path})", highlight=False
            )
        else:
            out.print("model server not running")
        raise typer.Exit(EXIT_NOT_RUNNING)
    rss = process_tree_rss(info.pid)
    if as_json:
        out.print_json(json.dumps({"running": True, **info.to_json(), "rss_bytes": rss}))
        return
    out.print(_url_line(info), highlight=False, soft_wrap=True)
    started = dt.datetime.fromisoformat(info.started_at)
    uptime = dt.timedelta(seconds=int((dt.datetime.now(dt.UTC) - started).total_seconds()))
    details = [f"pid {info.pid}", f"up {uptime}"]
    if rss is not None:
        details.append(f"memory {rss / 2**30:.1f} GiB")
    if info.dtype:
        details.append(f"{info.dtype} ({info.dtype_reason})" if info.dtype_reason else info.dtype)
    out.print(f"[dim]{', '.join(details)}; log: {info.log_path}[/]", highlight=False, soft_wrap=True)


@model_app.command()
def stop(cache_dir: CacheDirOption = None) -> None:
    """Stop the server (its whole process group)."""
    out = _out()
    try:
        stopped = stop_server(cache_dir)
    except EmbeddedServerError as exc:
        _fail(exc)
    out.print("model server stopped" if stopped else "model server not running")


@model_app.command("list")
def list_models(
    as_json: Annotated[bool, typer.Option("--json", help="Print the catalog as JSON.")] = False,
    cache_dir: CacheDirOption = None,
) -> None:
    """The embedded models longgraph can install: size, where the weights come from, installed or not."""
    out = _out()
    rows = [
        {
            "name": model.name,
            "title": model.title,
            "parameters": model.parameters,
            "installed": is_installed(model, cache_dir),
            "default": model.name == chosen_model().name,
            "gguf_bytes": model.gguf_bytes,
            "sha256": model.gguf_sha256,
            "packages": [part.requirement for part in model.parts],
            "source": model.source,
            "measured": model.measured,
        }
        for model in CATALOG.values()
    ]
    if as_json:
        out.print_json(json.dumps(rows))
        return
    table = Table(show_lines=True)
    for column in ("model", "size", "installed", "weights from", "measured here"):
        table.add_column(column, overflow="fold")
    for row in rows:
        name = f"{row['name']}{' (default)' if row['default'] else ''}\n[dim]{row['title']}[/]"
        size = f"{row['parameters']}\n[dim]{int(str(row['gguf_bytes'])) / 2**20:,.0f} MiB GGUF[/]"
        table.add_row(
            name,
            size,
            "yes" if row["installed"] else "no",
            escape(str(row["source"])),
            escape(str(row["measured"])),
        )
    out.print(table)


@model_app.command()
def add(
    name: Annotated[str, typer.Argument(help="A model from `longgraph model list`.")],
    force: Annotated[bool, typer.Option("--force", help="Install again even if installed.")] = False,
    cache_dir: CacheDirOption = None,
) -> None:
    """Install a model: fetch its pinned packages, join, check the SHA-256, convert (done once)."""
    out = _out()
    try:
        model = known_model(name)
        with out.status(f"installing {model.title} (a 0.5B model takes about 5 minutes)…"):
            path = add_model(model, cache_dir, force=force)
    except EmbeddedServerError as exc:
        _fail(exc)
    except ConfigurationError as exc:
        Console(stderr=True).print(f"[bold red]error:[/] {escape(str(exc))}")
        raise typer.Exit(2) from None
    out.print(f"model ready: {path}", highlight=False, soft_wrap=True)
