"""Reading a user's text files: the one reader behind ``longgraph ask``, ``synth`` and ``batch``.

Every way a file can fail to be text gets a clear :class:`~longgraph.errors.InputError` naming the
file before any model call (no such file, a directory, binary data, an endless stream); text that is
merely damaged (invalid UTF-8, NUL padding) is read, and the damage said in the returned notes.
"""

from __future__ import annotations

import codecs
import os
import sys
from pathlib import Path
from typing import BinaryIO

from longgraph.errors import InputError

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
    for bom, codec in (
        (codecs.BOM_UTF32_LE, "utf-32"),
        (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
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
        if not file.is_file():
            # A FIFO waits for a writer that may never come; a device may never end: read `-` instead.
            raise InputError(f"{path}: not a regular file (a pipe or a device); pipe it to stdin as -")
        try:
            with file.open("rb") as stream:
                data = _read_capped(stream, path)
        except OSError as exc:
            raise InputError(f"{path}: cannot be read ({exc.strerror})") from exc
        title = file.name
    return title, _decode(data, title, path, notes), notes
