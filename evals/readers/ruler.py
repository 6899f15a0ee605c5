"""The gold of a RULER instance as records (:class:`~longgraph.evals.readers.gold.Gold`), from RULER's
outputs and its document alone.

* needle tasks: the needle sentences of the queried keys ("One of the special magic numbers for K is:
  V.", RULER's needle format) — the values listed; several needles are several records to combine;
* ``vt``: the assignments of the chain from the queried value ("VAR A = 12345", "VAR B = VAR A", …) — the
  variables that end up holding it (a chain is always combined);
* ``cwe``: every entry of the numbered list ("17. tulip"): the ten most frequent words need them all;
* ``fwe``: every coded word of the text (with its count): the three most frequent need them all;
* QA: the gold's supporting sentences — SQuAD's answer sentence, HotpotQA's annotated supporting facts
  (two hops combined) — found through the corpora the generator read; a question not found there rests
  on the sentences of the document that hold a gold answer.

Each aggregating task also gets the records plan a right model writes (``state/records.py``): the
needles' values listed (for the queried key), the variables whose value leads back to the queried one
(``closure``), the most frequent words (``top_k``); and each record's field values as the document
writes them.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable

from longgraph.errors import InputError
from longgraph.evals.data.instance import EvalInstance
from longgraph.evals.readers.gold import Gold, flat
from longgraph.state.records import plan_fields

_NEEDLE = re.compile(r"One of the special magic \w+ for (\S+) is: (\S+?)\.(?=\s|$)")
_ASSIGNMENT = re.compile(r"VAR ([A-Z]+) = (VAR [A-Z]+|\d+)")
_ENTRY = re.compile(r"\b\d+\. [^\s]+")
_CODED = re.compile(r"(?<!\S)[a-z]+(?!\S)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _right(instance: EvalInstance) -> Callable[[str], bool]:
    from longgraph.evals.data.ruler import score_ruler

    metric = "string_match_part" if instance.metadata["task"].startswith("qa_") else "string_match_all"

    def right(answer: str) -> bool:
        return score_ruler(answer, instance.label)[metric] >= 1.0

    return right


def _needles(document: str, outputs: list[str]) -> Counter[str]:
    wanted = set(outputs)
    return Counter(flat(m.group(0)) for m in _NEEDLE.finditer(document) if m.group(2) in wanted)


def _chain(document: str, value: str) -> Counter[str]:
    """The assignments that pass ``value`` on, from its first assignment down every branch."""
    assignments = [(m.group(1), m.group(2), flat(m.group(0))) for m in _ASSIGNMENT.finditer(document)]
    holding = {value}
    kept: Counter[str] = Counter()
    changed = True
    while changed:
        changed = False
        for target, source, text in assignments:
            held = source if not source.startswith("VAR ") else source[4:]
            if held in holding and text not in kept:
                kept[text] = 1
                holding.add(target)
                changed = True
    return kept


@functools.cache
def _supporting(question: str) -> tuple[str, ...]:
    from longgraph.evals.data.real import SPLITS, Kind, cases

    kinds: tuple[Kind, ...] = ("squad", "hotpot-bridge", "hotpot-comparison")
    for kind in kinds:
        for case in (c for split in SPLITS for c in cases(kind, split)):
            if case["question"] == question:
                return tuple(case["facts"])
    return ()


def _qa_records(document: str, question: str, outputs: list[str]) -> Counter[str]:
    shown = flat(document)
    facts = [f for f in _supporting(question) if f in shown]
    if not facts:
        golds = [g.casefold() for g in outputs]
        facts = [s for s in _SENTENCE_END.split(shown) if any(g in s.casefold() for g in golds)][:1]
    return Counter(dict.fromkeys(facts, 1))


def ruler_gold(instance: EvalInstance) -> Gold:
    """The records, conclusion, combining need and records plan of a RULER instance (``metadata.task``
    names it)."""
    task = str(instance.metadata["task"])
    document = instance.documents[0]["text"]
    outputs = list(instance.gold_answers)
    right = _right(instance)
    conclusion = ", ".join(outputs)
    if task.startswith("niah_"):
        records = _needles(document, outputs)
        keys = sorted({m.group(1) for m in _NEEDLE.finditer(" ".join(records))})
        rows = {r: list(m.groups()) for r in records if (m := _NEEDLE.fullmatch(r))}
        several = sum(records.values()) > 1
        plan = plan_fields(
            [("key", "text"), ("value", "text")],
            "key",
            "list",
            "value",
            where=keys[0] if len(keys) == 1 else "",
        )
        return Gold(conclusion, records, right, aggregates=several, plan=plan if several else None, rows=rows)
    if task == "vt":
        asked = re.search(r"assigned the value (\d+)", instance.question)
        if asked is None:
            raise InputError(f"{instance.id}: a vt question without its value")
        records = _chain(document, asked.group(1))
        rows = {
            r: [m.group(1), m.group(2).removeprefix("VAR ")]
            for r in records
            if (m := _ASSIGNMENT.fullmatch(r))
        }
        plan = plan_fields(
            [("variable", "text"), ("value", "text")], "variable", "closure", "value", start=asked.group(1)
        )
        return Gold(conclusion, records, right, aggregates=True, plan=plan, rows=rows)
    if task in ("cwe", "fwe"):
        pattern = _ENTRY if task == "cwe" else _CODED
        records = Counter(flat(m) for m in pattern.findall(flat(document)))
        rows = {r: [r.split(". ", 1)[-1]] for r in records}
        plan = plan_fields([("word", "text")], "word", "top_k", "word", limit=len(outputs))
        return Gold(conclusion, records, right, pattern=pattern, aggregates=True, plan=plan, rows=rows)
    question = instance.question.rsplit("Question:", 1)[-1].removesuffix("Answer:").strip()
    records = _qa_records(document, question, outputs)
    return Gold(outputs[0], records, right, aggregates=len(records) > 1)
