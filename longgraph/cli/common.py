"""What every ``longgraph`` command shares: the error line and exit codes, progress bars, reading files.

Errors are one line on stderr and a non-zero exit (see :data:`EXIT_CODES`), never a traceback
(``--debug`` shows one). Progress goes to stderr as ``rich`` bars; results go to stdout, so they can be
piped. Nothing here imports a command module, so the command groups import this freely.
"""

from __future__ import annotations

import codecs
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from longgraph.errors import EndpointError, InputError, LonggraphError
from longgraph.nodes.runtime import Progress as ProgressEvent
from longgraph.state.contract import GraphOutput

T = TypeVar("T")
Opt = typer.Option
stderr = Console(stderr=True)


MAX_INPUT_BYTES = int(os.environ.get("LONGGRAPH_MAX_INPUT_BYTES", 512 * 1024 * 1024))
"""The largest file (or stdin) ``ask`` reads: an endless input such as ``/dev/zero`` is refused with a
clear error instead of exhausting memory. ``LONGGRAPH_MAX_INPUT_BYTES`` raises it."""


def _read_capped(stream: BinaryIO, path: str) -> bytes:
    data = stream.read(MAX_INPUT_BYTES + 1)
    if len(data) > MAX_INPUT_BYTES:
        raise InputError(
            f"{path}: larger than {MAX_INPUT_BYTES:,} bytes (set LONGGRAPH_MAX_INPUT_BYTES to read more)"
        )
    return data


def _decode(data: bytes, title: str, path: str, notes: list[str]) -> str:
    """UTF-16/32 by their byte-order mark, else UTF-8 (bad bytes replaced, and said); binary data anywhere
    (a PDF renamed .txt) refused before any model call; NUL padding dropped, and said."""
    for bom, codec in ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
                       (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16")):  # fmt: skip
        if data.startswith(bom):
            try:
                return data.decode(codec)
            except UnicodeDecodeError as exc:
                raise InputError(
                    f"{path}: starts as {codec.upper()} but is not valid {codec.upper()} ({exc.reason})"
                ) from exc
    binary = _binary_block(data)
    if binary is not None:
        raise InputError(f"{path}: looks like binary data from byte {binary:,} on (control bytes), not text")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        notes.append(
            f"{title}: invalid UTF-8 at byte {exc.start}; undecodable bytes were replaced with U+FFFD"
        )
        text = data.decode("utf-8-sig", errors="replace")
    if "\x00" in text:
        notes.append(f"{title}: {text.count(chr(0)):,} NUL byte(s) (padding) were dropped")
    return text.replace("\x00", "")


_CONTROL = bytes(range(1, 9)) + bytes(range(14, 32))
"""Control bytes no text file holds (tab, newlines, form feed and NUL padding excepted)."""
_BLOCK = 4096


def _binary_block(data: bytes) -> int | None:
    """Where the first 4 KB block with over 1% control bytes starts — binary data, wherever it begins
    (a PDF renamed .txt is text for its first kilobytes) — or None."""
    for start in range(0, len(data), _BLOCK):
        block = data[start : start + _BLOCK]
        if len(block) - len(block.translate(None, _CONTROL)) > max(1, len(block) // 100):
            return start
    return None


def read_document(path: str) -> tuple[str, str, list[str]]:
    """(title, text, notes) for a path or ``-`` (stdin); a clear :class:`InputError` otherwise."""
    notes: list[str] = []
    if path == "-":
        data = _read_capped(sys.stdin.buffer, "stdin")
        title = "stdin"
    else:
        file = Path(path)
        if not file.exists():
            raise InputError(f"{path}: no such file")
        if file.is_dir():
            raise InputError(f"{path}: is a directory, not a file")
        try:
            with file.open("rb") as stream:
                data = _read_capped(stream, path)
        except OSError as exc:
            raise InputError(f"{path}: cannot be read ({exc.strerror})") from exc
        title = file.name
    return title, _decode(data, title, path, notes), notes


class _Bars:
    """A rich progress bar per stage, fed by the graph's custom stream events."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.tasks: dict[str, TaskID] = {}

    def __call__(self, event: ProgressEvent) -> None:
        stage = event.get("stage", "?")
        label = stage if not event.get("message") or stage != "collapse" else f"{stage} ({event['message']})"
        if stage not in self.tasks:
            self.tasks[stage] = self.progress.add_task(label, total=event.get("total", 1))
        task = self.tasks[stage]
        self.progress.update(task, total=event.get("total"), description=label)
        self.progress.advance(task, event.get("advance", 1))


@contextmanager
def progress_bars(enabled: bool) -> Iterator[Callable[[ProgressEvent], None] | None]:
    if not enabled:
        yield None
        return
    with Progress(
        TextColumn("[bold]{task.description:<22}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=stderr, transient=False,
    ) as progress:  # fmt: skip
        yield _Bars(progress)


EXIT_PARTIAL = 4
"""The run answered, but some chunks failed (within the failure budget): the answer may miss what
they held. The answer is printed as usual; stderr says which chunks."""


def coverage_line(result: GraphOutput) -> str | None:
    """ "answered from U of N chunks; …" when any chunk failed or was set aside, else None."""
    total = len(result.chunks)
    failed = [c for c in result.chunks if c.status == "failed"]
    filtered = [c for c in result.chunks if c.status == "filtered"]
    if not failed and not filtered:
        return None
    parts = []
    if failed:
        ids = ", ".join(str(c.id) for c in failed[:10]) + ("…" if len(failed) > 10 else "")
        parts.append(
            f"{len(failed)} failed (chunks {ids}; first: {' '.join((failed[0].reason or '').split())[:200]})"
        )
    if filtered:
        parts.append(f"{len(filtered)} set aside (reasons per chunk with --json)")
    return f"answered from {total - len(failed) - len(filtered)} of {total} chunks; " + "; ".join(parts)


def run_cli(action: Callable[[], T], *, debug: bool, hint: str | None = None) -> T:
    """Run ``action``; turn every failure into one line and an exit code.

    ``hint`` is appended to endpoint failures (e.g. how to resume a checkpointed run).
    """
    try:
        return action()
    except LonggraphError as exc:
        if debug:
            raise
        message = " ".join(str(exc).split())
        if hint and isinstance(exc, EndpointError):
            message += f"; {hint}"
        stderr.print(f"[red]error:[/red] {escape(message)}", highlight=False, markup=True, soft_wrap=True)
        raise typer.Exit(exc.exit_code) from None
    except typer.Exit:
        raise  # a command's own exit code (e.g. EXIT_PARTIAL)
    except KeyboardInterrupt:
        stderr.print("interrupted")
        raise typer.Exit(130) from None
    except Exception as exc:
        if debug:
            raise
        message = " ".join(str(exc).split())[:400]
        stderr.print(
            f"[red]error:[/red] unexpected {type(exc).__name__}: {escape(message)} (rerun with --debug)",
            soft_wrap=True,
        )
        raise typer.Exit(1) from None


def build_structure(
    files: list[str], graph: Any, *, settings: dict[str, Any], what: str, progress: bool
) -> dict[str, Any]:
    """Run a structure-building graph (ToM's tree, PECAN's graph) over FILES with a progress bar; its
    final state. ``settings`` are context fields (the embedded server is started when none is given)."""
    import asyncio

    from longgraph.api import prepare_context

    documents = []
    for path in files:
        title, text, _ = read_document(path)
        documents.append({"title": title, "text": text})
    context = prepare_context(None, settings, on_notice=lambda m: stderr.print(m))
    values: dict[str, Any] = {}

    async def run() -> None:
        with progress_bars(progress and stderr.is_terminal) as on_progress:
            async for mode, payload in graph.astream(
                {"question": f"({what})", "documents": documents},
                context=context,
                stream_mode=["custom", "values"],
            ):
                if mode == "custom" and on_progress is not None:
                    on_progress(payload)
                elif mode == "values":
                    values.update(payload)

    asyncio.run(run())
    values["documents"] = documents
    return values


def endpoint_settings(cache: str | None, base_url: list[str] | None, model: str | None) -> dict[str, Any]:
    """The settings `tree show` and `graph show` share: the result cache (default file), the endpoint."""
    from longgraph.cache import default_cache_path

    settings: dict[str, Any] = {"cache_path": cache or str(default_cache_path()), "temperature": 0.0}
    if base_url:
        settings["base_url"] = base_url[0] if len(base_url) == 1 else base_url
    if model:
        settings["model"] = model
    return settings
