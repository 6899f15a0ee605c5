"""Whether an answer stands on notes: read in their quotes, worked out from them, and about what was asked.

One judge (:func:`judge_answer`) for every place an answer meets the notes it came from: a collapse
group's answer (``nodes/combine.py``), a ToM tree node's reduce (``nodes/tree_reason.py``), PECAN's
answer over the passages its search reached (``nodes/graph_search.py``) and the final answer
(``nodes/finalize.py``). The kinds of support:

* ``extractive``: the answer's new words, numbers included, are in the notes' verified quotes
  (:func:`~longgraph.nodes.grounding.support_in_notes`);
* ``derived``: it is worked out from them — a count, sum, difference, extremum or mean of their numbers
  (``nodes/derivation.py``), or a verdict (yes/no) on the notes that bear on the question — its other
  words in the notes;
* ``none``: neither, or not **about what the question names**: every name the question holds must be
  in the quotes the answer rests on, or in a quote linked to them by a shared name (a chain). Asked
  for one entity's value, a note giving a look-alike's is not evidence; asked about an entity the text
  never mentions, nothing is.

Why: the grounding check alone, built to catch a 135M model's confabulations, overruled a capable
reader's reasoning (a computed total became a note sentence, "No" was a "restated question") and let
a look-alike's value through for an entity that was not there.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from longgraph.nodes.derivation import has_numbers, numbers_in, unexplained_numbers
from longgraph.nodes.grounding import (
    MIN_SUPPORT,
    VERDICT_WORDS,
    held_share,
    is_number,
    new_words,
    support_in_notes,
)
from longgraph.nodes.lexical import WORD, content_stems, names_in, question_words, stem, words_of
from longgraph.state.contract import Evidence
from longgraph.state.notes import Note
from longgraph.state.outputs import is_no_information

SupportKind = Literal["extractive", "derived", "none"]
FRAME_NAMES = frozenset(
    content_stems("document documents text passage chapter section article paragraph figure table page")
)
"""Capitalised words a question uses for the text itself ("According to the Document"): not entities."""


@dataclass(frozen=True)
class Judged:
    """How the final answer stands on the verified notes: the kind of support, the quotes it rests on,
    and why it does not stand (``kind`` "none")."""

    kind: SupportKind
    quotes: list[Evidence]
    why: str = ""
    support: float = 0.0
    """Share of the answer's new words its quotes hold (1.0 for a derived answer)."""
    relevance: float = 0.0
    """The question's share in the quotes it rests on (names counted twice)."""


def asked_names(question: str) -> frozenset[str]:
    """The names the question asks about (capitalised words inside it, not words for the text itself)."""
    return question_words(question).named - FRAME_NAMES


def unbound_names(
    names: frozenset[str], quotes: Sequence[Evidence], notes: Sequence[Note]
) -> tuple[frozenset[str], list[Evidence]]:
    """The asked names that neither ``quotes`` nor a quote linked to them mention, and those linked quotes.

    An answer is about what the question asks only if its quotes name it: asked for the Rowan bridge's
    length, a note giving the Birch bridge's shares every other word with the question. A chain counts: a
    quote that names the asked entity and shares a name with the answer's quotes ("Acme was founded by
    Pell Darrow" beside "Pell Darrow was born in Ostrava") binds them to it."""
    covered = frozenset().union(*(content_stems(q.text) for q in quotes)) if quotes else frozenset()
    missing = names - covered
    if not missing:
        return missing, []
    linked: list[Evidence] = []
    bridges = frozenset().union(*(names_in(q.text) for q in quotes)) - names if quotes else frozenset()
    for other in (q for n in notes for q in n.verified_quotes if q not in quotes):
        stems = content_stems(other.text)
        if stems & missing and (not quotes or names_in(other.text) & bridges):
            linked.append(other)
            missing -= stems
    return missing, linked


def is_verdict(answer: str) -> bool:
    """A yes/no/true/false answer ("No." or "No, the Wolves scored more"): "no" is a stop word, so its
    content words alone would call it a restated question."""
    words = words_of(answer)
    return bool(words) and words[0] in VERDICT_WORDS


def shown_names(question: str, stems: Iterable[str]) -> str:
    """The question's own spelling of the named stems ("Harriers, Wolves", not "harrier, wolv")."""
    wanted = set(stems)
    spelled = [w for w in dict.fromkeys(WORD.findall(question)) if stem(w.casefold()) in wanted]
    return ", ".join(spelled) or ", ".join(sorted(wanted))


def judge_answer(answer: str, notes: Sequence[Note], question: str) -> Judged:
    """Whether ``answer`` is read in the verified notes (extractive), worked out from them (derived:
    ``nodes/derivation.py``), or neither, and about what the question names (module docstring)."""
    verified = [n for n in notes if n.verified_quotes]
    if not answer or is_no_information(answer):
        return Judged("none", [], "no readable answer")
    wanted = question_words(question)
    all_quotes = [q for n in verified for q in n.verified_quotes]
    claim = new_words(answer, wanted, sorted({q.title for q in all_quotes if q.title}))
    words = frozenset(w for w in claim if not is_number(w))
    stems = frozenset().union(*(content_stems(q.text) for q in all_quotes))
    if words and held_share(words, stems) < MIN_SUPPORT:
        missing = ", ".join(sorted(words - stems)[:6])
        return Judged("none", [], f"its words are in no verified note (not found: {missing})")
    groups = [numbers_in(" ".join(q.text for q in n.verified_quotes)) for n in verified]
    numbered = has_numbers(answer, question)
    unexplained = unexplained_numbers(answer, question, groups) if numbered else []
    if unexplained:
        shown = ", ".join(f"{v:g}" for v in unexplained[:4])
        return Judged("none", [], f"its number(s) {shown} are in no verified note and follow from none")
    support, quotes = support_in_notes(answer, verified, question)
    quoted = frozenset(v for q in quotes for v in numbers_in(q.text))
    asked = frozenset(numbers_in(question))
    verbatim = all(v in quoted for v in numbers_in(answer) if v not in asked)
    if claim and support.support >= MIN_SUPPORT and quotes and verbatim:
        kind: SupportKind = "extractive"
        basis = (support.support, support.relevance)
    elif not claim and not is_verdict(answer):
        return Judged("none", [], "it restates the question")
    else:  # a verdict, or a value worked out: it rests on the notes that bear on the question
        kind = "derived"
        bearing = [
            q for n, numbers in zip(verified, groups, strict=True) if not numbered or numbers
            for q in n.verified_quotes if wanted.share(content_stems(q.text)) > 0
        ]  # fmt: skip
        quotes = _dedupe_quotes([*quotes, *bearing])
        basis = (1.0, max((wanted.share(content_stems(q.text)) for q in quotes), default=0.0))
    missing_names, linked = unbound_names(asked_names(question), quotes, verified)
    if missing_names:
        shown = shown_names(question, missing_names)
        return Judged(
            "none", [], f"the notes it rests on do not mention {shown}, which the question asks about"
        )
    return Judged(kind, _dedupe_quotes([*quotes, *linked]), support=basis[0], relevance=basis[1])


def _dedupe_quotes(quotes: Iterable[Evidence]) -> list[Evidence]:
    seen: set[tuple[object, ...]] = set()
    out = []
    for q in quotes:
        key = (q.doc_index, q.start, q.end, q.text)
        if key not in seen:
            seen.add(key)
            out.append(q)
    return out
