"""Files a command writes: never one it did not write itself, never one of its own inputs.

Every ``--out``, ``--html`` and ``--png`` passes through :func:`claim_output` before anything is
opened for writing. A path is refused (:class:`~longgraph.errors.InputError`, one line, exit 2) when
it is a folder, when it is an input of the same command (``batch items.jsonl --out items.jsonl``
appended result rows to the items), or when it exists, holds something, and is not that command's
own kind of file (``batch --out note.txt`` replaced a note; ``synth --out docs/b.txt`` "repaired" a
102 KB document to 0 bytes). Each kind of output is recognised by what longgraph writes into it: the
rows' own keys for JSONL files, a generator mark for pages and pictures, the title line of a card.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from longgraph.errors import InputError
from longgraph.jsonl import starts_a_row

Recogniser = Callable[[Path], bool]
PAGE_MARK = '<meta name="generator" content="longgraph">'
"""In the ``<head>`` of every page longgraph writes (tree, graph, answer pages)."""
PICTURE_MARK = {"Software": "longgraph"}
"""PNG text metadata of every picture longgraph writes (matplotlib's ``savefig(metadata=...)``)."""
_SNIFF = 65536


def jsonl_rows(*keys: str) -> Recogniser:
    """A JSONL file every row of which is an object holding ``keys`` (a last line cut short by a kill
    may be the start of such a row)."""

    def recognise(path: Path) -> bool:
        try:
            with path.open("rb") as handle:
                data = handle.read()
        except OSError:
            return False
        lines = data.split(b"\n")
        torn = lines.pop() if not data.endswith(b"\n") else b""
        if torn and not starts_a_row(torn):
            return False
        for line in lines:
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError:
                return False
            if not isinstance(row, dict) or not all(k in row for k in keys):
                return False
        return True

    return recognise


def _head(path: Path, size: int = _SNIFF) -> bytes:
    """The file's first ``size`` bytes (nothing when it cannot be read: then it is not ours)."""
    try:
        with path.open("rb") as handle:
            return handle.read(size)
    except OSError:
        return b""


def text_starting(prefix: str) -> Recogniser:
    """A text file whose first line starts with ``prefix`` (a card's title line)."""
    return lambda path: _head(path).startswith(prefix.encode())


def _holds(mark: bytes) -> Recogniser:
    return lambda path: mark in _head(path)


def sqlite_file(path: Path) -> bool:
    """A SQLite database (its 16-byte header): a checkpoint or cache file."""
    return _head(path, 16) == b"SQLite format 3\x00"


longgraph_page = _holds(PAGE_MARK.encode())
longgraph_picture = _holds(b"Software\x00longgraph")


def same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file (a link or another spelling included)."""
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return a.resolve() == b.resolve()


def claim_output(
    path: Path, *, option: str, kind: str, ours: Recogniser, inputs: Iterable[Path] = ()
) -> Path:
    """``path``, once it is safe to write as ``kind`` (created, appended to or replaced), else an
    :class:`InputError` naming ``option`` and why not."""
    if path.is_dir():
        raise InputError(f"{option} {path}: a folder, not a file (name the {kind} file to write)")
    if path.exists() and not path.is_file():
        # A FIFO blocks the writer until someone reads it, a device swallows or refuses what it gets:
        # only a regular file is written.
        raise InputError(f"{option} {path}: not a regular file (a pipe or a device); name a file to write")
    for given in inputs:
        if same_file(path, Path(given)):
            raise InputError(f"{option} {path}: that is an input of this command; write the {kind} elsewhere")
    try:
        holds_something = path.exists() and path.stat().st_size > 0
    except OSError as exc:
        raise InputError(f"{option} {path}: cannot be read ({exc.strerror})") from exc
    if holds_something and not ours(path):
        raise InputError(
            f"{option} {path}: the file exists and is not a {kind} longgraph wrote; "
            "refusing to overwrite or append to it (name a new file, or move this one)"
        )
    return path
