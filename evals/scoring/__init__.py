"""Named scorers: the rule an instance is scored by when its suite defines its own.

Suites built from the shared corpora are scored by task family (:func:`longgraph.evals.metrics.score_instance`).
A benchmark with official rules (InfiniteBench) or answers with structure (the synthetic Loong-style
suite) names its scorer in :attr:`EvalInstance.scorer`; the instance's ``label`` is the gold in the
shape that scorer reads. A scorer also says which answer instructions the strategies get (the context's
``task``) and which of its metrics a report shows.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from longgraph.errors import InputError
from longgraph.evals.scoring import infinitebench, structured


@dataclass(frozen=True)
class Scorer:
    """One scoring rule: what it reports first, and how strategies are asked to answer."""

    name: str
    metric: str
    """The primary metric: the key of ``score``'s result a report averages."""
    task: str
    """The context task (``qa``, ``mc``, ``retrieval``, ``code``, ``math``, ``summary``)."""
    score: Callable[[str, Any], dict[str, float]]


def _score_real(prediction: str, label: Any) -> dict[str, float]:
    from longgraph.evals.data.real import score_real

    return score_real(prediction, label)


def _score_ruler(prediction: str, label: Any) -> dict[str, float]:
    from longgraph.evals.data.ruler import score_ruler

    return score_ruler(prediction, label)


_RULER_TASKS = (
    *(f"niah_{kind}" for kind in ("single_1", "single_2", "single_3", "multikey_1", "multikey_2")),
    *("niah_multikey_3", "niah_multivalue", "niah_multiquery", "vt", "cwe", "fwe", "qa_1", "qa_2"),
)
"""RULER's tasks (``longgraph.evals.data.ruler.TASKS``, checked equal by a test): named here so the
registry does not load the generator's wheel."""


def _ruler(task: str) -> Scorer:
    qa = task.startswith("qa_")
    metric = "string_match_part" if qa else "string_match_all"
    return Scorer(f"ruler:{task}", metric, "qa" if qa else "retrieval", _score_ruler)


def _infinitebench(task: str, metric: str, context_task: str) -> Scorer:
    def score(prediction: str, label: Any) -> dict[str, float]:
        return {metric: infinitebench.score_infinitebench(task, prediction, label)}

    return Scorer(f"infinitebench:{task}", metric, context_task, score)


_INFINITEBENCH: Mapping[str, tuple[str, str]] = {
    "passkey": ("accuracy", "retrieval"),
    "number_string": ("accuracy", "retrieval"),
    "kv_retrieval": ("accuracy", "retrieval"),
    "longdialogue_qa_eng": ("accuracy", "qa"),
    "longbook_choice_eng": ("accuracy", "mc"),
    "longbook_qa_eng": ("f1", "qa"),
    "longbook_qa_chn": ("f1", "qa"),
    "longbook_sum_eng": ("rougeLsum", "summary"),
    "code_debug": ("accuracy", "mc"),
    "code_run": ("accuracy", "code"),
    "math_find": ("accuracy", "math"),
    "math_calc": ("accuracy", "math"),
}
"""InfiniteBench task → the metric its README names and the answer instructions that fit it."""

SCORERS: Mapping[str, Scorer] = {
    **{s.name: s for s in (_infinitebench(t, m, c) for t, (m, c) in _INFINITEBENCH.items())},
    "structured:value": Scorer("structured:value", "value_match", "retrieval", structured.score_value),
    "structured:entity": Scorer("structured:entity", "accuracy", "qa", structured.score_entity),
    "structured:set": Scorer("structured:set", "set_f1", "qa", structured.score_set),
    "structured:order": Scorer("structured:order", "order_f1", "qa", structured.score_order),
    "structured:groups": Scorer("structured:groups", "group_accuracy", "qa", structured.score_groups),
    "general": Scorer("general", "correct", "qa", structured.score_general),
    "real": Scorer("real", "correct", "qa", _score_real),
    **{s.name: s for s in map(_ruler, _RULER_TASKS)},
}


def get_scorer(name: str) -> Scorer:
    try:
        return SCORERS[name]
    except KeyError:
        raise InputError(f"unknown scorer {name!r}; known: {', '.join(sorted(SCORERS))}") from None
