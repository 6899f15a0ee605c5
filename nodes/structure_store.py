"""Per-document structures kept in the result cache's SQLite file: build once, ask many times.

ToM's DocTree (table ``doc_trees``) and PECAN's information-point graph (table ``ip_graphs``) are
built once per document, model, prompt version and settings and reused by every later question. One
store serves both: a table per kind, rows of (cache key, the structure's JSON).
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from longgraph.cache import damaged, warn_damaged
from longgraph.errors import ConfigurationError
from longgraph.nodes.endpoint_health import built_with_unanswered_calls
from longgraph.nodes.runtime import report_progress
from longgraph.state.graph_state import RunState

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")
S = TypeVar("S", bound=RunState)


class StructureStore(Generic[M]):
    """Structures of one kind (``model``) in ``table`` of the SQLite file at ``path``."""

    _lock = threading.Lock()

    def __init__(self, path: str | Path, table: str, model: type[M]) -> None:
        if not table.isidentifier():
            raise ValueError(f"not a table name: {table!r}")
        self.path = Path(path).expanduser()
        self.table = table
        self.model = model

    def _connect(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=30)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(f"CREATE TABLE IF NOT EXISTS {self.table} (key TEXT PRIMARY KEY, tree TEXT NOT NULL)")
        except (OSError, sqlite3.Error) as exc:
            if damaged(exc):
                raise
            raise ConfigurationError(f"result cache {self.path}: cannot hold {self.table} ({exc})") from exc
        return db

    def get(self, key: str) -> M | None:
        """The stored structure, or None (also for an entry of an older, unreadable shape, and in a
        damaged file: said once, and the structure is built again)."""
        row = self._with_db(
            lambda db: db.execute(f"SELECT tree FROM {self.table} WHERE key = ?", (key,)).fetchone()
        )
        if row is None:
            return None
        try:
            return self.model.model_validate_json(row[0])
        except ValidationError:
            return None

    def put(self, key: str, structure: M) -> None:
        def write(db: sqlite3.Connection) -> None:
            db.execute(
                f"INSERT OR REPLACE INTO {self.table} (key, tree) VALUES (?, ?)",
                (key, structure.model_dump_json()),
            )
            db.commit()

        self._with_db(write)

    def _with_db(self, use: Callable[[sqlite3.Connection], T]) -> T | None:
        """``use`` on a fresh connection; None in a damaged file (said once: it is the result cache's)."""
        with self._lock:
            try:
                db = self._connect()
                try:
                    return use(db)
                finally:
                    db.close()
            except sqlite3.DatabaseError as exc:
                if not damaged(exc):
                    raise
                warn_damaged(self.path, exc)
                return None


async def find_built(
    store: StructureStore[M] | None, key: str, update: S, *, stage: str, saved: str
) -> M | None:
    """The structure kept under ``key`` (None: build it). Writes into ``update`` how the build starts —
    or, when it was found, that it came from the cache: progress ``stage`` complete and the decision
    ``saved`` (what was not called). The build's clock starts here (``build_started``, read by
    :func:`keep_finished`)."""
    update["built_from_cache"], update["build_seconds"], update["build_started"] = False, 0.0, time.time()
    found = await asyncio.to_thread(store.get, key) if store is not None else None
    if found is not None:
        report_progress(stage, total=1, message="from the cache")
        update["built_from_cache"], update["decisions"] = True, [saved]
    return found


async def keep_finished(
    store: StructureStore[M] | None, key: str, structure: M, state: Mapping[str, Any]
) -> float:
    """Put a finished build in ``store`` (when there is one) for the next question, and return the
    seconds the build took (since ``build_started``).

    Not kept: a structure read from the store (``built_from_cache``), and one whose construction lost a
    call to the endpoint (missing points or summaries), so a resume or the next question builds it whole.
    """
    if store is not None and not state.get("built_from_cache") and not built_with_unanswered_calls(state):
        await asyncio.to_thread(store.put, key, structure)
    return round(time.time() - float(state.get("build_started", time.time())), 3)
