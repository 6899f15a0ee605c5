"""A Loong-style multi-document suite built at run time: offline, contamination-free, exactly scored.

Loong (Wang et al., 2024) asks questions whose evidence is spread over several documents, in four
families: *Spotlight Locating* (one document holds the answer), *Comparison* (facts from every document
compared: the extremum, a sequential enumeration, a range), *Clustering* (documents grouped by a fact)
and *Chain of Reasoning* (one document points to the next). Its data is not installable here, so this
builder makes instances of the same families from generated facts:

* company annual reports (revenue, headquarters, chief executive) for Spotlight and Comparison;
* court case files (a verdict: convicted, acquitted or dismissed) for Clustering;
* research papers (each builds directly on one earlier study) for Chain of Reasoning.

Every name is invented (syllables, checked absent from the filler), so no model has seen the answers.
Each document is a title line and prose: the Paul Graham essays (the needle suite's filler, from a
seeded start) with the document's fact sentences at seeded sentence boundaries. Gold answers are
computed by code from the generated facts and scored exactly (:mod:`longgraph.evals.scoring.structured`):
a value, the entity named first, a set, an order, or a grouping.

Lengths follow Loong's sets (:data:`LOONG_LENGTH_SETS`): an instance's target is drawn, by seed, from its
set's range and shared among its documents. With ``window``, documents that would overflow it are
skipped as Loong's input truncation does, and every skip is recorded in ``skipped``; the gold still
counts every document, as in Loong.
"""

from __future__ import annotations

import functools
import itertools
import random
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass

from longgraph.errors import ConfigurationError
from longgraph.evals.corpora import load_paul_graham_text
from longgraph.evals.data.instance import (
    LOONG_LENGTH_SETS,
    Document,
    EvalInstance,
    fit_in_order,
    length_set_name,
    resolve_tokenizer,
)
from longgraph.evals.data.loong import LOONG_TASKS
from longgraph.evals.data.needle import filler_pieces, take_filler
from longgraph.state.records import FieldType, plan_fields
from longgraph.tokenizer import Tokenizer

SUITE = "loong-synth"
FAMILIES: tuple[str, ...] = ("spotlight", "comparison", "clustering", "chain")
FAMILY_TASK = {"spotlight": LOONG_TASKS[1], "comparison": LOONG_TASKS[2], "clustering": LOONG_TASKS[3],
               "chain": LOONG_TASKS[4]}  # fmt: skip
COMPARISONS = ("extremum", "enumeration", "range")
VERDICTS = ("convicted", "acquitted", "dismissed")
DOC_TEMPLATE = "{title}\n{text}"
SEPARATOR = "\n\n"
_YEAR = 2023

_ONSETS = ("b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "dr", "gr", "kl",
           "pr", "st", "tr", "qu", "th", "sk")  # fmt: skip
_VOWELS = ("a", "e", "i", "o", "u", "ae", "io", "ei")
_CODAS = ("", "", "n", "r", "l", "s", "m", "x", "nd", "rk", "v")
_COMPANY_KINDS = ("Foods", "Systems", "Holdings", "Logistics", "Textiles", "Robotics", "Energy", "Pharma",
                  "Shipping", "Ceramics")  # fmt: skip
_GIVEN = ("Marta", "Jonas", "Priya", "Tomasz", "Ines", "Kwame", "Lucia", "Dmitri", "Ayla", "Henrik")
_TOPICS = ("Graph Sampling", "Tidal Forecasting", "Sparse Retrieval", "Protein Folding", "Soil Chemistry",
           "Glacier Dynamics", "Query Planning", "Speech Segmentation", "Crystal Growth", "Swarm Control")  # fmt: skip


def _word(rng: random.Random) -> str:
    syllables = "".join(
        rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS) for _ in range(rng.choice((2, 3)))
    )
    return syllables.capitalize()


@functools.lru_cache(maxsize=1)
def _corpus_words() -> frozenset[str]:
    """Every word of the filler, lower-cased: an invented name must not be one of them."""
    return frozenset(re.findall(r"\w+", load_paul_graham_text().lower()))


class _Names:
    """Invented words, each used once per instance and absent from the filler corpus."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._used: set[str] = set()

    def word(self) -> str:
        while True:
            word = _word(self._rng)
            if word not in self._used and len(word) >= 5 and word.lower() not in _corpus_words():
                self._used.add(word)
                return word


@dataclass(frozen=True)
class _Doc:
    name: str
    """What the gold and the scorer call this document (a company, a case, a paper title)."""
    title: str
    facts: tuple[str, ...]
    """Sentences planted in the prose; the first opens the document."""


@dataclass(frozen=True)
class _Case:
    family: str
    subtask: str
    question: str
    docs: list[_Doc]
    gold: list[str]
    scorer: str
    label: dict[str, object]
    plan: dict[str, object] | None = None
    """The records plan a competent planner writes (``state/records.py``); None: one fact answers."""


# --------------------------------------------------------------------------------------------------
# The four families


def _companies(rng: random.Random, names: _Names, count: int) -> list[tuple[_Doc, float, str, str]]:
    kinds = rng.sample(_COMPANY_KINDS, count)
    revenues = sorted(rng.sample(range(500, 9000), count))
    rng.shuffle(revenues)
    companies = []
    for kind, tenths in zip(kinds, revenues, strict=True):
        name, city, ceo = (
            f"{names.word()} {kind}",
            f"Port {names.word()}",
            f"{rng.choice(_GIVEN)} {names.word()}",
        )
        revenue = tenths / 10
        doc = _Doc(
            name=name,
            title=f"{name}: annual report for fiscal year {_YEAR}",
            facts=(
                f"This is the annual report of {name} for fiscal year {_YEAR}.",
                f"{name} reported total revenue of {revenue:.1f} million dollars for fiscal year {_YEAR}.",
                f"The headquarters of {name} are in the city of {city}.",
                f"The chief executive officer of {name} is {ceo}.",
            ),
        )
        companies.append((doc, revenue, city, ceo))
    return companies


_REVENUES: tuple[tuple[str, FieldType], ...] = (("company", "text"), ("revenue", "number"))


def _spotlight(rng: random.Random, names: _Names, index: int) -> _Case:
    companies = _companies(rng, names, rng.randint(4, 6))
    doc, revenue, city, ceo = rng.choice(companies)
    asked = ("revenue", "city", "ceo")[index % 3]
    question, value, shown = {
        "revenue": (f"What total revenue did {doc.name} report for fiscal year {_YEAR}?", f"{revenue:.1f}",
                    f"{revenue:.1f} million dollars"),
        "city": (f"In which city are the headquarters of {doc.name}?", city, city),
        "ceo": (f"Who is the chief executive officer of {doc.name}?", ceo, ceo),
    }[asked]  # fmt: skip
    return _Case("spotlight", asked, question, [c[0] for c in companies], [shown], "structured:value",
                 {"answer": value})  # fmt: skip


def _comparison(rng: random.Random, names: _Names, index: int) -> _Case:
    companies = _companies(rng, names, rng.randint(4, 6))
    docs = [c[0] for c in companies]
    candidates = [d.name for d in docs]
    by_revenue = sorted(companies, key=lambda c: -c[1])
    kind = COMPARISONS[index % len(COMPARISONS)]
    year = f"for fiscal year {_YEAR}"
    if kind == "extremum":
        highest = rng.random() < 0.5
        pick = by_revenue[0] if highest else by_revenue[-1]
        word = "highest" if highest else "lowest"
        return _Case("comparison", kind, f"Which company reported the {word} total revenue {year}?", docs,
                     [pick[0].name], "structured:entity", {"answer": pick[0].name, "candidates": candidates},
                     plan_fields(_REVENUES, "company", "argmax" if highest else "argmin", "revenue"))  # fmt: skip
    if kind == "enumeration":
        order = [c[0].name for c in by_revenue]
        question = f"List all the companies in order of their total revenue {year}, from highest to lowest."
        return _Case("comparison", kind, question, docs, [", ".join(order)], "structured:order",
                     {"answer": order, "candidates": candidates},
                 plan_fields(_REVENUES, "company", "sort", "revenue", descending=True))  # fmt: skip
    values = sorted(c[1] for c in companies)
    low_at = rng.randrange(0, len(values) - 1)
    high_at = rng.randrange(low_at + 1, min(low_at + 3, len(values)))  # 2 or 3 companies in range
    low, high = int(values[low_at]), int(values[high_at]) + 1
    inside = [c[0].name for c in companies if low <= c[1] <= high]
    question = (
        f"Which companies reported total revenue between {low} and {high} million dollars {year}? "
        "List all of them."
    )
    return _Case("comparison", kind, question, docs, [", ".join(inside)], "structured:set",
                 {"answer": inside, "candidates": candidates},
                 plan_fields(_REVENUES, "company", "between", "revenue", low=float(low), high=float(high)))  # fmt: skip


def _clustering(rng: random.Random, names: _Names, index: int) -> _Case:
    count = rng.randint(5, 7)
    verdicts = list(VERDICTS) + [rng.choice(VERDICTS) for _ in range(count - len(VERDICTS))]
    rng.shuffle(verdicts)
    docs: list[_Doc] = []
    groups: dict[str, list[str]] = {v: [] for v in VERDICTS}
    for verdict in verdicts:
        case = f"{names.word()} v. {names.word()}"
        judge, year = f"Judge {rng.choice(_GIVEN)} {names.word()}", rng.randint(2015, 2023)
        outcome = "the case was dismissed" if verdict == "dismissed" else f"the defendant was {verdict}"
        docs.append(_Doc(case, f"Case file: {case}", (
            f"This is the case file of {case}, filed in {year}.",
            f"{case} was heard by {judge}.",
            f"The verdict in {case}: {outcome}.",
        )))  # fmt: skip
        groups[verdict].append(case)
    question = (
        "Each case file ends with a verdict: convicted, acquitted or dismissed. Group the cases by verdict: "
        "for each verdict, list the names of the cases that ended with it."
    )
    gold = "\n".join(f"{v}: {', '.join(names_)}" for v, names_ in groups.items())
    return _Case("clustering", "by verdict", question, docs, [gold], "structured:groups",
                 {"answer": groups, "candidates": [d.name for d in docs]},
                 plan_fields((("case", "text"), ("verdict", "text")), "case", "group", "verdict", labels=list(VERDICTS)))  # fmt: skip


def _chain(rng: random.Random, names: _Names, index: int) -> _Case:
    count, length = rng.randint(5, 7), rng.randint(3, 4)
    topics = [rng.choice(_TOPICS) for _ in range(2 * count)]
    titles = [f"{names.word()} {topic}" for topic in topics[:count]]
    outside = [f"{names.word()} {topic}" for topic in topics[count:]]  # cited, but not in the collection
    chain = titles[:length]
    cites = {a: b for a, b in itertools.pairwise(chain)}
    cites[chain[-1]] = outside[0]
    for k, title in enumerate(titles[length:], start=1):
        cites[title] = outside[k]
    docs = [
        _Doc(t, t, (f"This paper, {t}, is about {t.split(' ', 1)[1].lower()}.",
                    f"This paper builds directly on the earlier study {cites[t]}."))
        for t in titles
    ]  # fmt: skip
    rng.shuffle(docs)
    question = (
        f"Each paper builds directly on exactly one earlier study. Starting from the paper {chain[0]}, follow "
        "this line of work: name the study it builds on, then the study that one builds on, and so on, as "
        f"long as the study is one of the papers given. List the titles in order, starting with {chain[0]}."
    )
    return _Case("chain", f"{length}-paper chain", question, docs, [" -> ".join(chain)], "structured:order",
                 {"answer": chain, "candidates": titles + outside},
                 plan_fields((("paper", "text"), ("builds on", "text")), "paper", "chain", "builds on", start=chain[0]))  # fmt: skip


_BUILDERS: dict[str, Callable[[random.Random, _Names, int], _Case]] = {
    "spotlight": _spotlight, "comparison": _comparison, "clustering": _clustering, "chain": _chain,
}  # fmt: skip


# --------------------------------------------------------------------------------------------------
# Prose around the facts


def _document(doc: _Doc, budget: int, rng: random.Random, tok: Tokenizer) -> Document:
    """The title and about ``budget`` tokens of filler from a seeded start, the facts at seeded sentence
    boundaries (the opening fact first)."""
    pieces, counts, ratio = filler_pieces(tok)
    fact_tokens = sum(tok.count(" " + fact) for fact in doc.facts)
    taken = take_filler(
        pieces, counts, rng.randrange(len(pieces)), max(0, round((budget - fact_tokens) * ratio))
    )
    slots = (
        sorted(rng.randrange(1, len(taken) + 1) for _ in doc.facts[1:])
        if taken
        else [0] * (len(doc.facts) - 1)
    )
    parts = [doc.facts[0]]
    previous = 0
    for fact, slot in zip(doc.facts[1:], slots, strict=True):
        parts += [pieces[i] for i in taken[previous:slot]] + [" " + fact]
        previous = slot
    parts += [pieces[i] for i in taken[previous:]]
    text = " ".join(p.strip() for p in parts if p.strip())
    return {"title": doc.title, "text": text}


def build_loong_synth(
    *,
    length_set: int,
    n: int,
    seed: int,
    families: Collection[str] | None = None,
    window: int | None = None,
    tokenizer: Tokenizer | None = None,
) -> list[EvalInstance]:
    """``n`` instances per family (Loong's order) in one length set, deterministic in the seed."""
    if length_set not in LOONG_LENGTH_SETS:
        raise ConfigurationError(
            f"length set {length_set}: expected one of {', '.join(map(str, LOONG_LENGTH_SETS))}"
        )
    chosen = list(families) if families else list(FAMILIES)
    unknown = [f for f in chosen if f not in FAMILIES]
    if unknown:
        raise ConfigurationError(f"unknown famil{'y' if len(unknown) == 1 else 'ies'} {', '.join(unknown)}; "
                                 f"known: {', '.join(FAMILIES)}")  # fmt: skip
    if n < 0:
        raise ConfigurationError(f"n must be >= 0, got {n}")
    tok = resolve_tokenizer(tokenizer)
    low, high = LOONG_LENGTH_SETS[length_set]
    instances = []
    for family in (f for f in FAMILIES if f in chosen):
        for index in range(n):
            rng = random.Random(f"{SUITE}:{seed}:{length_set}:{family}:{index}")
            target = rng.randint(low, high)
            case = _BUILDERS[family](rng, _Names(rng), index + seed)
            instances.append(_instance(case, rng, tok, target, length_set, seed, index, window))
    return instances


def _instance(
    case: _Case, rng: random.Random, tok: Tokenizer, target: int, length_set: int, seed: int, index: int,
    window: int | None,
) -> EvalInstance:  # fmt: skip
    per_doc = (target - tok.count(case.question)) // len(case.docs)
    named = [(d.name, _document(d, per_doc, rng, tok)) for d in case.docs]
    skipped: list[str] = []
    if window is not None:
        costs = tok.count_batch([DOC_TEMPLATE.replace("{title}", d["title"]).replace("{text}", d["text"])
                                 for _, d in named])  # fmt: skip
        budget = window - tok.count(case.question)
        named, skipped = fit_in_order(
            named, costs, budget=budget, sep_tokens=tok.count(SEPARATOR), window=window
        )
    documents = [doc for _, doc in named]
    instance = EvalInstance(
        id=f"{SUITE}-s{seed}-set{length_set}-{case.family}-{index}",
        suite=SUITE,
        question=case.question,
        documents=documents,
        gold_answers=case.gold,
        task_family="qa",
        target_tokens=target,
        actual_tokens=0,
        metadata={
            "task": FAMILY_TASK[case.family],
            "family": case.family,
            "subtask": case.subtask,
            "set": length_set,
            "length_set": length_set_name(length_set),
            "seed": seed,
            "index": index,
            "doc_names": [name for name, _ in named],
            **({"plan": case.plan} if case.plan else {}),
        },
        skipped=skipped,
        doc_template=DOC_TEMPLATE,
        doc_separator=SEPARATOR,
        scorer=case.scorer,
        label=case.label,
    )
    return instance.model_copy(update={"actual_tokens": tok.count(instance.render_context())})
