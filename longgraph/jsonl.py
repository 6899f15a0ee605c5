"""JSONL files: those written as work finishes and read back to resume (eval records, synth datasets),
and input files a user hands over (benchmark items, predictions).

One writer and one reader, so every resumable output survives a kill the same way: each line is
flushed and fsynced as it is written; a line torn by a kill (the file's last, without its newline) is
dropped before the next append and ignored when reading — its work is redone — while a broken line
anywhere else is an error naming the file and line, never a silent drop.
"""

from __future__ import annotations

import fcntl
import functools
import json
import logging
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import Any

from longgraph.errors import InputError, InUse
from longgraph.group_commit import GroupCommit

log = logging.getLogger(__name__)


def _line(row: Mapping[str, Any]) -> bytes:
    return (json.dumps(row, ensure_ascii=False) + "\n").encode("utf-8")


def iter_objects(path: Path, what: str = "JSON object") -> Iterator[tuple[str, dict[str, Any]]]:
    """Each JSON object of an input file with where it is (``file:line``), read lazily, so the first
    items of a large file cost only their lines. Unlike :func:`read_rows` nothing is forgiven: an
    unreadable file, a line that is not JSON or not an object is an :class:`InputError` naming it."""
    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{what} file {path} cannot be read ({exc})") from exc
    with handle:
        for number, line in enumerate(_lines(handle, path), start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise InputError(f"{where}: not JSON ({exc})") from exc
            if not isinstance(row, dict):
                raise InputError(f"{where}: not a {what} (a JSON {type(row).__name__}, not an object)")
            yield where, row


def starts_a_row(tail: bytes) -> bool:
    """Whether a last line without its newline is the start of a row this module was writing (a kill
    cut it short: safe to drop), not text of someone else's."""
    return tail.lstrip().startswith(b"{")


def _lines(handle: Any, path: Path) -> Iterator[str]:
    """The file's lines; a byte that is not UTF-8 is an :class:`InputError` naming the line (the file
    is read as text: binary data passed as an items file)."""
    number = 0
    try:
        for number, line in enumerate(handle, start=1):  # noqa: B007 (read by the handler)
            yield line
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{path}:{number + 1}: not UTF-8 text ({exc.reason} at byte {exc.start} of a block)"
        ) from exc
    except OSError as exc:
        raise InputError(f"{path}: cannot be read ({exc.strerror})") from exc


def read_rows(path: Path, what: str = "JSON object") -> list[dict[str, Any]]:
    """Every row of ``path`` (none if it does not exist); a torn last line is ignored."""
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    rows: list[dict[str, Any]] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if not isinstance(row, dict):
                raise ValueError(f"a JSON {type(row).__name__}, not an object")
        except ValueError as exc:
            if number == len(lines):
                log.warning("%s: ignoring a torn last line (an interrupted write)", path)
                continue
            raise InputError(f"{path}:{number}: not a {what} ({exc})") from exc
        rows.append(row)
    return rows


class Appender:
    """Appends rows, one line each, on disk (flushed and fsynced) before the caller goes on: a kill
    loses no finished row.

    Async callers use :meth:`awrite`: an ``fsync`` takes 0.2 ms on this machine's SSD but tens of
    milliseconds on a spinning disk or a network filesystem. The rows run on the appender's own
    thread, and those handed over while it writes go to disk together, with one ``fsync``
    (``longgraph/group_commit.py``): a batch's rows then keep up with its calls whatever the disk.
    Each group is written whole or cut back off the file, so a failed row is never half a line."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = path.open("ab", buffering=0)
        try:  # one writer per file (before repairing: another writer's last line may be under way)
            fcntl.flock(self._file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            self._repair(path)
        except BlockingIOError:
            self._file.close()
            raise InUse(
                f"{path} is being written by another run: wait for it to end, or write elsewhere"
            ) from None
        except BaseException:
            self._file.close()
            raise
        self._lock = threading.Lock()
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="longgraph-jsonl")
        self._rows = GroupCommit(self._worker, self._on_disk_together)

    @staticmethod
    def _repair(path: Path) -> None:
        """Drop a torn last line (a write cut short by a kill): its work is redone, the file stays valid."""
        if not path.exists() or not path.stat().st_size:
            return
        data = path.read_bytes()
        if data.endswith(b"\n"):
            return
        keep = data.rfind(b"\n") + 1
        if not starts_a_row(data[keep:]):
            raise InputError(
                f"{path}: its last line is not a row longgraph was writing; refusing to cut it "
                "(name another output file)"
            )
        log.warning(
            "%s: dropping a torn last line of %d bytes (an interrupted write)", path, len(data) - keep
        )
        with path.open("r+b") as handle:
            handle.truncate(keep)

    def write(self, row: Mapping[str, Any]) -> None:
        self._on_disk_together([functools.partial(_line, row)])

    async def awrite(self, row: Mapping[str, Any]) -> None:
        """:meth:`write` on the appender's thread, with the rows handed over meanwhile; returns once
        the row is on disk."""
        await self._rows.write(functools.partial(_line, row))

    def _on_disk_together(self, lines: Sequence[Callable[[], bytes]]) -> list[None]:
        """Each row's line, appended and fsynced together; on failure the file is cut back to before them."""
        with self._lock:
            fd = self._file.fileno()
            before = os.lseek(fd, 0, os.SEEK_END)
            try:
                data = memoryview(b"".join(line() for line in lines))
                while data:
                    data = data[os.write(fd, data) :]
                os.fsync(fd)
            except BaseException:
                os.ftruncate(fd, before)
                raise
        return [None] * len(lines)

    def close(self) -> None:
        self._worker.shutdown(wait=True)  # after the rows already handed over
        with self._lock:  # after a write in progress on another thread
            self._file.close()

    def __enter__(self) -> Appender:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()
