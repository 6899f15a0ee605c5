"""Re-scoring a predictions file with InfiniteBench's official rules, as its ``compute_scores.py`` does.

A predictions file is JSONL, one ``{"id", "prediction", "ground_truth"}`` per line (the benchmark's own
files also use ``pred`` and ``label``; both are read, as the official scorer reads them). The task comes
from the file name (``preds_<task>.jsonl`` or ``<task>.jsonl``, the official layout) unless given. The
score is the mean of the per-line scores, in percent, as the benchmark's README reports it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from longgraph.errors import InputError
from longgraph.evals.scoring import SCORERS
from longgraph.evals.scoring.infinitebench import RULES, score_infinitebench
from longgraph.jsonl import iter_objects

_PREDICTION_KEYS = ("prediction", "pred")
_LABEL_KEYS = ("ground_truth", "label")


@dataclass(frozen=True)
class TaskScore:
    path: Path
    task: str
    metric: str
    n: int
    score: float
    """Mean per-line score, in percent."""


def task_of(path: Path, task: str | None = None) -> str:
    """The task a predictions file holds: ``task`` if given, else read from the file name."""
    if task is not None:
        if task not in RULES:
            raise InputError(f"unknown InfiniteBench task {task!r}; known: {', '.join(RULES)}")
        return task
    stem = path.name.removesuffix(".jsonl")
    name = stem.removeprefix("preds_")
    if name not in RULES:
        raise InputError(
            f"{path}: cannot tell the task from the file name (expected preds_<task>.jsonl or <task>.jsonl "
            f"with a task among {', '.join(RULES)}); give it with --task"
        )
    return name


def rescore(path: Path, task: str | None = None) -> TaskScore:
    """Score every line of ``path``; a line without a prediction or a label is a typed error naming it."""
    name = task_of(path, task)
    scores: list[float] = []
    for where, row in iter_objects(path, "prediction"):
        prediction = next((row[k] for k in _PREDICTION_KEYS if k in row), None)
        if prediction is None or not any(k in row for k in _LABEL_KEYS):
            raise InputError(f"{where}: a line needs a prediction and a ground_truth")
        label = next(row[k] for k in _LABEL_KEYS if k in row)
        scores.append(score_infinitebench(name, str(prediction), label))
    if not scores:
        raise InputError(f"{path}: no predictions")
    return TaskScore(
        path, name, SCORERS[f"infinitebench:{name}"].metric, len(scores), 100 * sum(scores) / len(scores)
    )
