"""A persistent cache of model answers, so the same question on the same document costs nothing twice.

Keyed by everything that determines an answer: the rendered messages (chunk text, question, and the
template, whose version is also hashed in), the model, the sampling parameters and the output mode.
Any change of those misses. Only answers that parsed are stored. SQLite in WAL mode: safe for several
runs in one process and for several processes sharing the file.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any


def cache_key(**parts: Any) -> str:
    """A stable digest of the parts (JSON with sorted keys)."""
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResultCache:
    """``key -> raw model answer`` in one SQLite file."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, stage TEXT, raw TEXT NOT NULL, "
                "created REAL DEFAULT (unixepoch('subsec')))"
            )
            self._db.commit()

    def get(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT raw FROM answers WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def put(self, key: str, stage: str, raw: str) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO answers (key, stage, raw) VALUES (?, ?, ?)", (key, stage, raw)
            )
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM answers").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()


_OPEN: dict[Path, ResultCache] = {}
_OPEN_LOCK = threading.Lock()


def open_cache(path: str | None) -> ResultCache | None:
    """One connection per file per process (opening SQLite per call would dominate cached runs)."""
    if not path:
        return None
    resolved = Path(path).expanduser().resolve()
    with _OPEN_LOCK:
        cache = _OPEN.get(resolved)
        if cache is None:
            cache = _OPEN[resolved] = ResultCache(resolved)
        return cache
