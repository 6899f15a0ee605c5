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
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable

from longgraph.errors import InputError
from longgraph.evals.data.instance import EvalInstance
from longgraph.evals.readers.gold import Gold, flat

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
    """The records, conclusion and combining need of a RULER instance (``metadata.task`` names it)."""
    task = str(instance.metadata["task"])
    document = instance.documents[0]["text"]
    outputs = list(instance.gold_answers)
    right = _right(instance)
    conclusion = ", ".join(outputs)
    if task.startswith("niah_"):
        records = _needles(document, outputs)
        return Gold(conclusion, records, right, aggregates=sum(records.values()) > 1)
    if task == "vt":
        asked = re.search(r"assigned the value (\d+)", instance.question)
        if asked is None:
            raise InputError(f"{instance.id}: a vt question without its value")
        return Gold(conclusion, _chain(document, asked.group(1)), right, aggregates=True)
    if task == "cwe":
        records = Counter(flat(m) for m in _ENTRY.findall(document))
        return Gold(conclusion, records, right, pattern=_ENTRY, aggregates=True)
    if task == "fwe":
        records = Counter(_CODED.findall(flat(document)))
        return Gold(conclusion, records, right, pattern=_CODED, aggregates=True)
    question = instance.question.rsplit("Question:", 1)[-1].removesuffix("Answer:").strip()
    records = _qa_records(document, question, outputs)
    return Gold(outputs[0], records, right, aggregates=len(records) > 1)
