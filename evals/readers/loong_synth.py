"""The gold of a loong-synth instance as records (:class:`~longgraph.evals.readers.gold.Gold`), from the
generator's documents, names and gold alone.

The records are the fact sentences the generator planted that the question needs, found in the
documents by their generated form: Spotlight, the one fact asked (a revenue, a city, a chief
executive); Comparison, every company's revenue sentence; Clustering, every case's verdict sentence;
Chain of Reasoning, the "builds directly on" sentence of each paper on the chain and of its last (which
names a study outside the collection: where the chain stops). A document left out by the window takes
its records with it, so the readers cannot conclude what it was needed for. Each family but Spotlight
also has the records plan a right model writes (the generator's, ``metadata["plan"]``) and each
record's field values (a paper's record names it by its title).
"""

from __future__ import annotations

import re
from collections import Counter

from longgraph.evals.data.instance import EvalInstance
from longgraph.evals.readers.gold import Gold, flat
from longgraph.evals.scoring import get_scorer

_SPOTLIGHT = {
    "revenue": r"{name} reported total revenue of [\d.]+ million dollars for fiscal year \d+\.",
    "city": r"The headquarters of {name} are in the city of [^.]+\.",
    "ceo": r"The chief executive officer of {name} is [^.]+\.",
}
_REVENUE = _SPOTLIGHT["revenue"]
_VERDICT = r"The verdict in {name}: [^.]+\."
_BUILDS_ON = re.compile(r"This paper builds directly on the earlier study [^.]+\.")


def _found(documents: list[str], form: str, names: list[str]) -> Counter[str]:
    records: Counter[str] = Counter()
    for name in names:
        pattern = re.compile(form.format(name=re.escape(name)))
        for text in documents:
            records.update(flat(m.group(0)) for m in pattern.finditer(flat(text)))
    return records


_REVENUE_OF = re.compile(r"(.+?) reported total revenue of ([\d.]+) million dollars")
_VERDICT_OF = re.compile(r"The verdict in (.+?): (?:the defendant was |the case was )?(\w+)\.")
_CITED = re.compile(r"the earlier study (.+?)\.$")


def loong_synth_gold(instance: EvalInstance) -> Gold:
    """The records, conclusion, combining need and records plan of a loong-synth instance."""
    scorer = get_scorer(str(instance.scorer))

    def right(answer: str) -> bool:
        return scorer.score(answer, instance.label)[scorer.metric] >= 1.0

    family = str(instance.metadata["family"])
    texts = [doc["text"] for doc in instance.documents]
    names = [str(n) for n in instance.label.get("candidates", [])] if isinstance(instance.label, dict) else []
    conclusion = instance.gold_answers[0]
    if family == "spotlight":
        subject = re.search(r"(?:of|did) (.+?)(?: report| for fiscal|\?)", instance.question)
        form = _SPOTLIGHT[str(instance.metadata["subtask"])]
        found = _found(texts, form, [subject.group(1)]) if subject else Counter[str]()
        return Gold(conclusion, found, right)
    if family == "comparison":
        records = _found(texts, _REVENUE, names)
        revenues = {r: list(m.groups()) for r in records if (m := _REVENUE_OF.match(r))}
        plan = instance.metadata["plan"]
        return Gold(conclusion, records, right, aggregates=True, plan=plan, rows=revenues)
    if family == "clustering":
        records = _found(texts, _VERDICT, names)
        verdicts = {r: list(m.groups()) for r in records if (m := _VERDICT_OF.match(r))}
        plan = instance.metadata["plan"]
        return Gold(conclusion, records, right, aggregates=True, plan=plan, rows=verdicts)
    chain = [str(t) for t in instance.label["answer"]]
    records = Counter[str]()
    rows: dict[str, list[str]] = {}
    for doc in instance.documents:
        if doc["title"] not in chain:
            continue
        for m in _BUILDS_ON.finditer(flat(doc["text"])):
            record = flat(m.group(0))
            records[record] += 1
            cited = _CITED.search(record)
            rows[record] = [doc["title"], cited.group(1) if cited else ""]
    plan = instance.metadata["plan"]
    return Gold(conclusion, records, right, aggregates=True, plan=plan, rows=rows)
