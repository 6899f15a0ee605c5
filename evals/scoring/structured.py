"""Exact scores for answers that are a value, an entity, a set, an order or a grouping.

The synthetic Loong-style suite (:mod:`longgraph.evals.data.loong_synth`) computes its gold answers in
code, so its answers can be checked without a judge. A prediction is free text; what it names is read
from it by matching the instance's *candidates* (every company, case or paper title of the instance):
a candidate is named where its normalised form (:func:`longgraph.evals.metrics.normalize_answer`:
case, punctuation and articles ignored) occurs as whole tokens. Only full names count: "Quillmar" does
not name "Quillmar Foods".

* ``value``: the gold value occurs in the prediction (the needle rule);
* ``entity``: the first candidate the prediction names is the gold one;
* ``set``: the candidates named, against the gold set: F1 (primary) and exact match;
* ``order``: the candidates in order of first mention, against the gold sequence: F1 of their longest
  common subsequence (primary; order matters, partial chains get partial credit) and exact match;
* ``groups``: each named candidate is put in a group by where the group labels are: on a line with one
  label, that label ("convicted: A, B", "A: convicted"); on a line with several, the nearest label
  before it when the line opens with a label ("convicted: A; acquitted: B"), else the nearest after
  ("A was convicted and B acquitted"); on a line without a label, the last label above it, as under a
  heading. Reported: the share of gold members placed in their group and nowhere else (primary) and
  exact match (every member right and nothing placed that is not a member).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from longgraph.errors import InputError
from longgraph.evals.metrics import lcs_length, needle_match, normalize_answer


def _mentions(text: str, name: str) -> list[int]:
    """Token offsets where ``name`` occurs in the normalised ``text`` (whole tokens)."""
    tokens, target = normalize_answer(text).split(), normalize_answer(name).split()
    if not target:
        return []
    width = len(target)
    return [i for i in range(len(tokens) - width + 1) if tokens[i : i + width] == target]


def named_in_order(prediction: str, candidates: Sequence[str]) -> list[str]:
    """The candidates the prediction names, in order of first mention."""
    first: dict[str, int] = {}
    for name in candidates:
        found = _mentions(prediction, name)
        if found:
            first[name] = found[0]
    return sorted(first, key=lambda name: first[name])


def _f1(hits: int, predicted: int, gold: int) -> float:
    if not predicted or not gold or not hits:
        return 1.0 if predicted == gold == 0 else 0.0
    precision, recall = hits / predicted, hits / gold
    return 2 * precision * recall / (precision + recall)


def _label(label: Any, key: str) -> Any:
    if not isinstance(label, Mapping) or key not in label:
        raise InputError(f"structured label must be a mapping with {key!r}, got {label!r}")
    return label[key]


def score_value(prediction: str, label: Any) -> dict[str, float]:
    return {"value_match": needle_match(prediction, [str(_label(label, "answer"))])}


def score_entity(prediction: str, label: Any) -> dict[str, float]:
    named = named_in_order(prediction, _label(label, "candidates"))
    return {"accuracy": float(bool(named) and named[0] == _label(label, "answer"))}


def score_set(prediction: str, label: Any) -> dict[str, float]:
    named = set(named_in_order(prediction, _label(label, "candidates")))
    gold = set(_label(label, "answer"))
    return {"set_f1": _f1(len(named & gold), len(named), len(gold)), "exact_match": float(named == gold)}


def score_order(prediction: str, label: Any) -> dict[str, float]:
    named = named_in_order(prediction, _label(label, "candidates"))
    gold = list(_label(label, "answer"))
    common = lcs_length(named, gold) if named and gold else 0
    return {"order_f1": _f1(common, len(named), len(gold)), "exact_match": float(named == gold)}


def _placements(prediction: str, candidates: Sequence[str], groups: Sequence[str]) -> dict[str, set[str]]:
    """candidate → the groups the prediction puts it in (see the module docstring for the rule)."""
    placed: dict[str, set[str]] = {}
    heading: str | None = None
    for line in re.split(r"\n+", prediction):
        labels = sorted((at, g) for g in groups for at in _mentions(line, g))
        names = sorted((at, c) for c in candidates for at in _mentions(line, c))
        if not labels:
            for _, name in names:
                if heading is not None:
                    placed.setdefault(name, set()).add(heading)
            continue
        distinct = {g for _, g in labels}
        labels_first = not names or labels[0][0] < names[0][0]
        for at, name in names:
            if len(distinct) == 1:
                group = labels[0][1]  # "convicted: A, B" or "A: convicted"
            elif labels_first:  # "convicted: A, B; acquitted: C": the nearest label before
                group = [g for pos, g in labels if pos < at][-1]
            else:  # "A was convicted and B was acquitted": the nearest label after
                after = [g for pos, g in labels if pos > at]
                group = after[0] if after else labels[-1][1]
            placed.setdefault(name, set()).add(group)
        heading = labels[-1][1] if labels_first or len(distinct) == 1 else heading
    return placed


def score_groups(prediction: str, label: Any) -> dict[str, float]:
    gold: Mapping[str, Sequence[str]] = _label(label, "answer")
    candidates = _label(label, "candidates")
    placed = _placements(prediction, candidates, list(gold))
    members = {name: group for group, names in gold.items() for name in names}
    right = sum(placed.get(name) == {group} for name, group in members.items())
    extra = any(name not in members for name in placed)
    return {
        "group_accuracy": right / len(members) if members else 0.0,
        "exact_match": float(right == len(members) and not extra),
    }


def score_general(prediction: str, label: Any) -> dict[str, float]:
    """The generalisation suite (:mod:`longgraph.evals.data.general`): ``correct`` is 1 when the
    prediction gives the gold and nothing wrong beside it — the value and no look-alike's; NO
    INFORMATION for an absent entity (and no look-alike's value); the exact total or count among its
    numbers; the top entity named first; every listed entity and no other."""
    from longgraph.nodes.checks import numbers_in
    from longgraph.state.outputs import is_no_information

    kind = _label(label, "kind")
    silent = is_no_information(prediction)
    if kind == "absent":
        wrong = any(needle_match(prediction, [str(v)]) for v in _label(label, "lookalikes"))
        return {"correct": float(silent and not wrong), "silent": float(silent)}
    if kind == "aggregation":
        how, answer = _label(label, "how"), _label(label, "answer")
        if how in ("sum", "count"):
            right = any(abs(v - float(answer)) < 0.05 for v in numbers_in(_unit_apart(prediction)))
        elif how == "highest":
            right = named_in_order(prediction, _label(label, "candidates"))[:1] == [answer]
        else:
            right = set(named_in_order(prediction, _label(label, "candidates"))) == set(answer)
        return {"correct": float(right), "silent": float(silent)}
    value = str(_label(label, "answer"))
    right = _states(prediction, value) and not any(
        _states(prediction, str(v)) for v in _label(label, "lookalikes")
    )
    return {"correct": float(right), "silent": float(silent)}


_PLAIN_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
_HYPHENATED_UNIT = re.compile(r"(?<=\d)-(?=[a-z]{2,}\b)")


def _unit_apart(prediction: str) -> str:
    """``prediction`` with a unit hyphenated to its number set apart: "a 5,520-crown prize" states 5,520
    (measured, a second test split: PECAN's right answer was scored wrong). A code's letter
    ("QW-5361-F") is no unit: one capital letter is not set apart."""
    return _HYPHENATED_UNIT.sub(" ", prediction)


def _states(prediction: str, value: str) -> bool:
    """Whether ``prediction`` states ``value``: a plain number as a number, however written ("519.5C",
    "519.5 °C", "8770" for "8,770"; measured: the embedded model glues units on), anything else as
    whole tokens (:func:`~longgraph.evals.metrics.needle_match`)."""
    from longgraph.nodes.checks import numbers_in

    if _PLAIN_NUMBER.fullmatch(value.strip()):
        wanted = numbers_in(value)
        return bool(wanted) and any(abs(v - wanted[0]) < 1e-9 for v in numbers_in(_unit_apart(prediction)))
    day = _dates_in(value)
    if day:
        return day[0] in _dates_in(prediction)
    return bool(needle_match(prediction, [value]))


_MONTHS = "January February March April May June July August September October November December".split()  # noqa: SIM905
_MONTH = "|".join(_MONTHS)
_DATE = re.compile(
    rf"\b(?:(?P<d1>\d{{1,2}})\s+(?P<m1>{_MONTH})\s+(?P<y1>\d{{3,4}})|(?P<m2>{_MONTH})\s+(?P<d2>\d{{1,2}}),?\s+(?P<y2>\d{{3,4}}))\b"
)


def _dates_in(text: str) -> list[tuple[int, str, int]]:
    """The full dates of ``text`` as (day, month, year), written day first ("3 April 1500") or month
    first ("April 3, 1500"): either states the date."""
    return [
        (int(m["d1"] or m["d2"]), m["m1"] or m["m2"], int(m["y1"] or m["y2"])) for m in _DATE.finditer(text)
    ]
