"""How well a stretch of the text supports a claim: the measures the grounding check
(``nodes/grounding.py``) and the final answer's check (``nodes/answer_support.py``) are made of.

Words as in :mod:`longgraph.nodes.lexical`. A claim's *new words* are its content words the question
does not hold; ``support`` is the share of them a span holds (0 when it lacks a number of the claim);
``relevance`` is the share of the question's words in the span, its names counted twice.

**Confidence** out of 5, shown per chunk in the result::

    evidence   = support × (0.25 + 0.75 × relevance)
    confidence = 5 × evidence                                   (protocol without a model score)
    confidence = 5 × evidence × (0.5 + 0.5 × model_score / 5)   (protocol with one, e.g. the paper's)

so a verbatim answer in a sentence that shares every question word scores 5, support counts fully,
relevance and the model's say-so scale it, and no model score can lift an unsupported note.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from longgraph.nodes.lexical import (
    WORD,
    QuestionWords,
    content_stems,
    is_content,
    question_words,
    sentence_spans,
    stem,
    words_of,
)
from longgraph.state.contract import Chunk, DocumentIn, Evidence
from longgraph.state.notes import Note

MIN_SUPPORT = 0.5
"""Share of an answer's new words its supporting span must hold for the note to be evidence."""


VERDICT_WORDS = frozenset({"yes", "no", "true", "false", "correct", "incorrect"})


@dataclass(frozen=True)
class Span:
    """A stretch of one original document, with its content stems."""

    doc_index: int
    title: str
    start: int
    end: int
    stems: frozenset[str]

    @classmethod
    def of(cls, doc_index: int, title: str, start: int, end: int, documents: Sequence[DocumentIn]) -> Span:
        return cls(
            doc_index, title, start, end, frozenset(content_stems(documents[doc_index].text[start:end]))
        )

    def joined(self, other: Span) -> Span:
        """This span extended to the end of ``other`` (a later span of the same document)."""
        return Span(self.doc_index, self.title, self.start, other.end, self.stems | other.stems)


@dataclass(frozen=True)
class Support:
    """How well one span supports a claim about a question."""

    span: Span | None
    support: float
    relevance: float
    new_words: frozenset[str]


def confidence_of(support: float, relevance: float, model_confidence: float | None) -> float:
    """The documented formula (module docstring), out of 5, rounded to two decimals."""
    evidence = support * (0.25 + 0.75 * relevance)
    if model_confidence is not None:
        evidence *= 0.5 + 0.5 * min(5.0, max(0.0, model_confidence)) / 5
    return round(5 * evidence, 2)


LABEL_WORDS = frozenset(content_stems("[Document: ]"))
"""Words of the label that heads each document's text in a chunk (``nodes/chunking.py``)."""

ANSWER_FRAME = frozenset(content_stems("answer"))
"""An answer's word for itself ("The answer is 234,394"): not a claim about the text. Measured with
SmolLM2-135M (ToM): "The population of the town of X is 234,394. The answer is 234,394." was
refused because "answer" is in no note, and the run went silent."""


def is_number(word: str) -> bool:
    """Whether a word of :func:`~longgraph.nodes.lexical.words_of` is a number (or holds digits: "3rd")."""
    return any(ch.isdigit() for ch in word)


def held_share(claim_words: frozenset[str], stems: AbstractSet[str]) -> float:
    """The share of ``claim_words`` in ``stems``; 0 when a number of the claim is missing (step 3)."""
    if not claim_words:
        return 1.0
    if any(is_number(w) and w not in stems for w in claim_words):
        return 0.0
    return len(claim_words & stems) / len(claim_words)


def misspelt_names(claim: str, stems: AbstractSet[str]) -> list[tuple[str, str]]:
    """The capitalised words of ``claim`` that ``stems`` (the text's) lack but nearly hold, each with the
    text's word: one or two letters changed, added, dropped or swapped, the first letter kept. A name
    misspelt is another name, as a number with a changed digit is another number, and half the answer's
    words in the text does not make it the text's name. Measured with SmolLM2-135M on a dev paraphrase:
    "Odeil X" for "Odile X", marked supported because "X" was in the sentence."""
    found = []
    for word in (m.group() for m in WORD.finditer(claim)):
        folded = word.casefold()
        if not word[:1].isupper() or len(word) < 4 or not word.isalpha() or not is_content(folded):
            continue
        written = stem(folded)
        if written in stems:
            continue
        near = sorted(
            t
            for t in stems
            if t[:1] == written[:1] and abs(len(t) - len(written)) <= 2 and _edits(written, t) <= 2
        )
        if near:
            found.append((word, near[0]))
    return found


def _edits(a: str, b: str) -> int:
    """Letters changed, added, dropped or swapped (next to each other) to turn ``a`` into ``b``."""
    previous, row = list(range(len(b) + 1)), [0] * (len(b) + 1)
    before: list[int] = []
    for i, x in enumerate(a, 1):
        row = [i] + [0] * len(b)
        for j, y in enumerate(b, 1):
            row[j] = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (x != y))
            if i > 1 and j > 1 and x == b[j - 2] and a[i - 2] == y:
                row[j] = min(row[j], before[j - 2] + 1)
        before, previous = previous, row
    return previous[-1]


def new_words(claim: str, wanted: frozenset[str], titles: Sequence[str] = ()) -> frozenset[str]:
    """Content stems of ``claim`` that the question does not already contain: not verdict words, nor
    the answer's word for itself (:data:`ANSWER_FRAME`), nor the words of the document titles the model was shown (it may quote a title label with the text),
    nor the verb of a question's agent noun ("owned" for "owner", "founded" for "founder", "led" is
    not caught): "The mill is owned by the owner of the mill" restates "Who is the owner of the mill?"."""
    known = wanted | VERDICT_WORDS | LABEL_WORDS | ANSWER_FRAME | frozenset(_agent_roots(wanted))
    for title in titles:
        known |= content_stems(title)
    return frozenset(content_stems(claim) - known)


def _agent_roots(wanted: frozenset[str]) -> list[str]:
    """The stem an agent noun is made from ("own" of "owner", "direct" of "director")."""
    return [stem(w[:-2]) for w in wanted if len(w) >= 5 and w.endswith(("er", "or"))]


def best_support(
    claim_words: frozenset[str], spans: Sequence[Span], wanted: QuestionWords, *, window: int = 1
) -> Support:
    """The span (or window of up to ``window`` consecutive spans of one document) that best supports
    ``claim_words``: most of them, then the shortest window that holds them, then most question words.

    (A window grows only when that adds support: an unrelated sentence must not borrow relevance
    from its neighbour.)"""
    best = Support(None, 0.0, 0.0, claim_words)
    best_key: tuple[float, int, float] = (-1.0, -(window + 1), -1.0)
    for i, first in enumerate(spans):
        merged = first
        for width in range(1, window + 1):
            if width > 1:
                if i + width - 1 >= len(spans) or spans[i + width - 1].doc_index != first.doc_index:
                    break
                merged = merged.joined(spans[i + width - 1])
            support = held_share(claim_words, merged.stems)
            relevance = wanted.share(merged.stems)
            key = (round(support, 6), -width, round(relevance, 6))
            if key > best_key:
                best_key, best = key, Support(merged, support, relevance, claim_words)
    return best


def chunk_spans(chunk: Chunk, documents: Sequence[DocumentIn]) -> list[Span]:
    """The sentences of a chunk, as spans of their original documents."""
    spans: list[Span] = []
    for part in chunk.parts:
        text = documents[part.doc_index].text
        spans.extend(
            Span.of(part.doc_index, part.title, s, e, documents)
            for s, e in sentence_spans(text, part.start, part.end)
        )
    return spans


def quote_spans(quotes: Sequence[Evidence], documents: Sequence[DocumentIn]) -> list[Span]:
    """The verified quotes as spans of their original documents (their located text, not the model's)."""
    return [Span.of(q.doc_index, q.title, q.start, q.end, documents) for q in quotes if q.verified]


def evidence_of(span: Span, chunk_id: int, documents: Sequence[DocumentIn], confidence: float) -> Evidence:
    return Evidence(
        chunk_id=chunk_id,
        doc_index=span.doc_index,
        title=span.title,
        start=span.start,
        end=span.end,
        text=documents[span.doc_index].text[span.start : span.end],
        confidence=confidence,
        verified=True,
    )


def dedupe_quotes(quotes: Iterable[Evidence]) -> list[Evidence]:
    """Each quote once: a verified one by where it is, an unverified one by its chunk and text."""
    seen: set[tuple[object, ...]] = set()
    kept = []
    for q in quotes:
        key = (q.doc_index, q.start, q.end) if q.verified else ("unverified", q.chunk_id, q.text)
        if key not in seen:
            seen.add(key)
            kept.append(q)
    return kept


def shown_words(stems: frozenset[str], text: str, limit: int = 6) -> str:
    """The words of ``text`` whose stems are ``stems``, as written, in order (stems where none is)."""
    written = list(dict.fromkeys(w for w in words_of(text) if stem(w) in stems))
    shown = written or sorted(stems)
    return ", ".join(shown[:limit]) + ("…" if len(shown) > limit else "")


def support_in_notes(answer: str, notes: Sequence[Note], question: str) -> tuple[Support, list[Evidence]]:
    """How well the verified quotes of ``notes`` support ``answer``, and the quotes that do.

    Used for collapse outputs (a combined note keeps the input quotes that support it, so citations
    survive every round) and for the final answer (which must rest on a verified note). The answer may
    draw on several quotes: support counts its new words over all of them; relevance is that of the
    most relevant supporting quote. A verified quote's text matched its source word for word, so its
    words are the source's.
    """
    wanted = question_words(question)
    quotes = [q for n in notes for q in n.verified_quotes]
    claim = new_words(answer, wanted, sorted({q.title for q in quotes if q.title}))
    stems = [frozenset(content_stems(q.text)) for q in quotes]

    if not quotes:
        return Support(None, 0.0, 0.0, claim), []
    if not claim:
        if not (content_stems(answer) & VERDICT_WORDS):
            return Support(None, 0.0, 0.0, claim), []  # restates the question
        best = max(range(len(quotes)), key=lambda i: wanted.share(stems[i]))
        return Support(None, 1.0, wanted.share(stems[best]), claim), [quotes[best]]
    supporting = [i for i, s in enumerate(stems) if claim & s]
    if not supporting:
        return Support(None, 0.0, 0.0, claim), []
    covered = frozenset().union(*(stems[i] for i in supporting))
    support = held_share(claim, covered)
    return Support(None, support, max(wanted.share(stems[i]) for i in supporting), claim), dedupe_quotes(
        [quotes[i] for i in supporting]
    )
