"""Evaluation records on disk: one JSONL file per model label, appended as runs finish, read back to resume."""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from longgraph.errors import InputError
from longgraph.jsonl import read_rows

log = logging.getLogger("longgraph.evals")

ORACLE_LABEL = "oracle"
"""The model label of every oracle run, reserved for it."""

RECORD_FIELDS: tuple[str, ...] = (
    "instance_id",
    "suite",
    "task_family",
    "length",
    "length_set",
    "actual_tokens",
    "depth",
    "strategy",
    "model",
    "oracle",
    "question",
    "answer",
    "gold",
    "metric",
    "score",
    "scores",
    "judge_score",
    "llm_calls",
    "failed_calls",
    "prompt_tokens",
    "completion_tokens",
    "calls_by_stage",
    "completion_tokens_by_stage",
    "supported",
    "support",
    "verdict",
    "seconds",
    "build",
    "chunks",
    "notes",
    "metadata",
    "error",
    "error_type",
    "page",
    "finished_at",
)
"""Every record has exactly these keys (``judge_score`` None where no judge graded it; ``build`` None
unless the strategy builds a structure before the question, as ToM's tree: its calls, tokens and
seconds, included in the run's totals, and whether it came from the cache; ``page`` the path, from the
records' folder, of the run's page when it did not score 1, else None)."""


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def slug(label: str) -> str:
    """A model label as a file-name part (``Qwen/Qwen2.5-7B`` → ``Qwen_Qwen2.5-7B``)."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", label).strip("._")
    return cleaned or "model"


def records_path(out_dir: Path, label: str) -> Path:
    return out_dir / f"records-{slug(label)}.jsonl"


def record_key(record: Mapping[str, Any]) -> tuple[str, str, str]:
    return str(record["instance_id"]), str(record["strategy"]), str(record["model"])


def read_records(path: Path) -> list[dict[str, Any]]:
    """The records of a file, the latest per key; a torn last line (an interrupted write) is ignored."""
    latest: dict[tuple[str, str, str], dict[str, Any]] = {}
    for number, record in enumerate(read_rows(path, "evaluation record"), start=1):
        try:
            latest[record_key(record)] = record
        except (KeyError, TypeError) as exc:
            raise InputError(f"{path}: record {number} is not an evaluation record ({exc!r})") from exc
    return list(latest.values())


# --------------------------------------------------------------------------------------------------
