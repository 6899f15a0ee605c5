"""The grounding check: whether a model's note is evidence, and what it is worth.

One shared stage for every strategy (``ground`` after the read stage; :func:`support_in_notes` for
collapse outputs and the final answer). It exists because self-reported confidence cannot tell a
real answer from a confabulated one: measured with the embedded SmolLM2-135M on needle haystacks,
every chunk without the fact still "answered" — restating the question ("The secret code ... is a
mystery"), or copying unrelated text — with the same confidence as the one chunk that holds it. A
check against the source tells them apart.

**The check** (lexical, reproducible, no model call; words as in :mod:`longgraph.nodes.lexical`):

1. The note's quotes are located in the original documents (``nodes/provenance.py``); quotes that
   cannot be found stay in the note flagged ``verified=False`` and never count as support.
2. *New words* of the answer: its content words that are not in the question. An answer with none
   **restates the question** ("The code that opens the vault is the code that opens the vault"): not
   evidence. (A bare verdict — yes, no, true, false — is judged by the sentence that bears on it.)
3. The **supporting span** is the located quote, or the window of one to three consecutive sentences
   of the chunk, that holds the most of the new words (ties: the shortest, then most question words).
   ``support`` is the share of new words it holds, and 0 when it lacks any **number** of the answer: a
   wrong number is a wrong answer however many words around it match (measured: SmolLM2 answered
   "23.1 million dollars" from a chunk saying 433.1, and "million dollars" alone passed). Below
   :data:`MIN_SUPPORT` the answer's value is **not in the chunk** (a hallucinated value): not evidence.
4. ``relevance`` is the share of the question's content words in that span, the question's names
   counted twice (:class:`~longgraph.nodes.lexical.QuestionWords`: asked for one company's revenue, a
   sentence giving another's shares every word with the question but the name); below the context's
   ``min_relevance`` (0.2) the span **does not bear on the question** (copied unrelated text): not
   evidence. A note without an answer (a Segment+ note of quotes) is judged by its most relevant
   verified quote; one with no quote found in the chunk, by what its reasoning states (as an answer).

5. **A wrong number in a right sentence.** An answer rejected only because its number is not in the
   chunk, whose other new words (one at least: "million dollars", not a bare number or a garbled
   token) are in a sentence that holds a number and bears strongly on the question (half its weighted
   words, and two of them or one name, as for a second reading), keeps that sentence as its note,
   without the model's answer: measured with SmolLM2 on loong-synth, the chunk holding "total revenue
   of 855.7 million dollars" answered "$85.1 million" on both readings, and the run answered with
   another company's revenue. The note is a quote, judged as a note of quotes is: support the share of
   the answer's other words the sentence holds, relevance the sentence's; what reaches the final stage
   is the text's number. Where second readings are on, such a chunk still gets one.

**Confidence** out of 5, shown per chunk in the result::

    evidence   = support × (0.25 + 0.75 × relevance)
    confidence = 5 × evidence                                   (protocol without a model score)
    confidence = 5 × evidence × (0.5 + 0.5 × model_score / 5)   (protocol with one, e.g. the paper's)

so a verbatim answer in a sentence that shares every question word scores 5, support counts fully,
relevance and the model's say-so scale it, and no model score can lift an unsupported note.

Chunks whose notes fail the check are reported ``unsupported`` with the reason; nothing is dropped
silently. Free-text notes (Segment+'s "no structure" ablation) quote nothing: their new words are
looked for in the whole chunk, and their relevance is that of the note's own text.
"""

from __future__ import annotations

import asyncio
import bisect
import re
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Literal

from langgraph.types import Send

from longgraph.errors import TooManyFailures
from longgraph.nodes.kit import RunKit
from longgraph.nodes.lexical import (
    CJK,
    QuestionWords,
    content_stems,
    question_words,
    sentence_spans,
    stem,
    words_of,
)
from longgraph.nodes.provenance import documents_of, has_words, locate_quotes
from longgraph.nodes.read import question_for_chunk, question_judged
from longgraph.nodes.render import measure_notes
from longgraph.state.context import Context
from longgraph.state.contract import Chunk, ChunkPart, DocumentIn, Evidence
from longgraph.state.graph_state import RunState
from longgraph.state.notes import ChunkOutcome, ChunkRead, Note, NoteDraft, Passage
from longgraph.state.tasks import ReadTask

REREAD = "reread"
"""The label of a second reading (its reads, calls and progress events)."""

MIN_SUPPORT = 0.5
"""Share of an answer's new words its supporting span must hold for the note to be evidence."""
WINDOW = 3
"""Most consecutive sentences a supporting span may join (an answer may combine adjacent sentences)."""
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


def new_words(claim: str, wanted: frozenset[str], titles: Sequence[str] = ()) -> frozenset[str]:
    """Content stems of ``claim`` that the question does not already contain: not verdict words, nor
    the words of the document titles the model was shown (it may quote a title label with the text),
    nor the verb of a question's agent noun ("owned" for "owner", "founded" for "founder", "led" is
    not caught): "The mill is owned by the owner of the mill" restates "Who is the owner of the mill?"."""
    known = wanted | VERDICT_WORDS | LABEL_WORDS | frozenset(_agent_roots(wanted))
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


def _evidence(span: Span, chunk_id: int, documents: Sequence[DocumentIn], confidence: float) -> Evidence:
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


def _dedupe(quotes: Sequence[Evidence]) -> list[Evidence]:
    seen: set[tuple[object, ...]] = set()
    kept = []
    for q in quotes:
        key = (q.doc_index, q.start, q.end) if q.verified else ("unverified", q.chunk_id, q.text)
        if key not in seen:
            seen.add(key)
            kept.append(q)
    return kept


def _shown(stems: frozenset[str], text: str, limit: int = 6) -> str:
    """The words of ``text`` whose stems are ``stems``, as written, in order (stems where none is)."""
    written = list(dict.fromkeys(w for w in words_of(text) if stem(w) in stems))
    shown = written or sorted(stems)
    return ", ".join(shown[:limit]) + ("…" if len(shown) > limit else "")


def ground_read(
    read: ChunkRead, chunk: Chunk, documents: Sequence[DocumentIn], question: str, *, min_relevance: float
) -> tuple[ChunkOutcome, Note | None]:
    """Check one chunk's draft against the chunk: its outcome, and its note when it is evidence."""
    if read.draft is None:
        return ChunkOutcome(chunk_id=chunk.id, fate="failed", reason=read.error, raw_output=read.raw), None
    draft = read.draft
    quotes = [q.strip() for q in draft.quotes if has_words(q)]
    located = locate_quotes(quotes, chunk, documents) if quotes else []
    said = ChunkOutcome(
        chunk_id=chunk.id,
        fate="no_information",
        answer=(draft.answer or draft.reasoning) or None,
        extracted="\n".join(quotes) or None,
        model_confidence=draft.model_confidence,
    )
    wanted = question_words(question)
    if draft.no_information and not any(q.verified for q in located):
        return said, None

    verdict = _judge(draft, located, chunk, documents, wanted, min_relevance)
    if verdict.reason and draft.structured and not draft.answer and not quotes:
        # A note that quoted nothing is a no-information note (Segment+ removes notes with empty
        # evidence); its reasoning could have rescued it only by being supported by the chunk.
        reason = (
            f"its note quoted nothing, and its reasoning is not supported by the chunk ({verdict.reason})"
        )
        return said.model_copy(update={"reason": reason}), None
    outcome = said.model_copy(
        update={
            "fate": "unsupported" if verdict.reason else "noted",
            "reason": verdict.reason,
            "confidence": verdict.confidence if not verdict.reason else 0.0,
            "support": round(verdict.support.support, 3),
            "relevance": round(verdict.support.relevance, 3),
        }
    )
    if verdict.reason:
        kept = sentence_behind_wrong_number(draft, chunk, documents, wanted, min_relevance=min_relevance)
        if kept is None:
            return outcome, None
        confidence = confidence_of(kept.support, kept.relevance, draft.model_confidence)
        reason = f"{verdict.reason}: the sentence it paraphrases is kept as its note, its value dropped"
        assert kept.span is not None  # a kept sentence is a span of the chunk
        note = Note(
            sources=[chunk.id],
            reasoning=draft.reasoning,
            quotes=[_evidence(kept.span, chunk.id, documents, confidence)],
            model_confidence=draft.model_confidence,
            confidence=confidence,
            structured=draft.structured,
        )
        return outcome.model_copy(
            update={
                "fate": "noted",
                "reason": reason,
                "confidence": confidence,
                "value_dropped": True,
                "support": round(kept.support, 3),
                "relevance": round(kept.relevance, 3),
            }
        ), note
    span = verdict.support.span
    supporting = [_evidence(span, chunk.id, documents, verdict.confidence)] if span is not None else []
    others = [
        q.model_copy(update={"confidence": verdict.confidence if q.verified else None}) for q in located
    ]
    note = Note(
        sources=[chunk.id],
        answer=draft.answer,
        reasoning=draft.reasoning,
        quotes=_dedupe(supporting + others),
        model_confidence=draft.model_confidence,
        confidence=verdict.confidence,
        structured=draft.structured,
    )
    return outcome, note


@dataclass(frozen=True)
class _Verdict:
    support: Support
    confidence: float
    reason: str | None


def _judge(
    draft: NoteDraft,
    located: Sequence[Evidence],
    chunk: Chunk,
    documents: Sequence[DocumentIn],
    wanted: QuestionWords,
    min_relevance: float,
) -> _Verdict:
    """Apply steps 2–4 of the module docstring to one draft."""
    verified = quote_spans(located, documents)
    titles = [p.title for p in chunk.parts if p.title]
    if not draft.structured:  # free text: a few sentences that hold its new words, else the whole chunk
        claim = new_words(draft.reasoning, wanted, titles)
        support = best_support(claim, chunk_spans(chunk, documents), wanted, window=WINDOW)
        if support.support < MIN_SUPPORT:
            whole = [Span.of(p.doc_index, p.title, p.start, p.end, documents) for p in chunk.parts]
            support = max(support, best_support(claim, whole, wanted), key=lambda s: s.support)
        relevance = wanted.share(content_stems(draft.reasoning))
        support = Support(support.span, support.support, relevance, claim)
    elif draft.answer or (not verified and draft.reasoning.strip()):
        # The answer is the claim; a note of quotes none of which is in the chunk is judged by what its
        # reasoning states instead (a small model often leaves the quote list empty and writes the
        # sentence it read into its reasoning). A claim of several sentences (or one cut off at the
        # output limit) is judged by its best-supported sentence: one grounded statement is evidence.
        stated = draft.answer or draft.reasoning
        verdicts = [
            _judge_claim(part, verified, chunk, documents, wanted, titles) for part in _statements(stated)
        ]
        supported = [v for v in verdicts if v[1] is None]
        if not supported:
            return _best_rejection(verdicts, "answer" if draft.answer else "note")
        support = max((v[0] for v in supported), key=lambda s: (s.support, s.relevance))
    elif verified:  # quotes only (a Segment+ note): its most relevant verified quote
        support = best_support(frozenset(), verified, wanted)
    else:
        return _Verdict(
            Support(None, 0.0, 0.0, frozenset()), 0.0, f"none of its {len(located)} quote(s) is in the chunk"
        )
    if support.support < MIN_SUPPORT:
        missing = support.new_words - (support.span.stems if support.span is not None else frozenset())
        what = "answer" if draft.answer or not draft.structured else "note"
        return _Verdict(
            support,
            0.0,
            f"its {what} is not in the chunk (not found: {_shown(missing, draft.answer or draft.reasoning)})",
        )
    if support.relevance < min_relevance:
        return _Verdict(
            support,
            0.0,
            f"its supporting text does not bear on the question (relevance {support.relevance:.2f} < {min_relevance:g})",
        )
    return _Verdict(support, confidence_of(support.support, support.relevance, draft.model_confidence), None)


def sentence_behind_wrong_number(
    draft: NoteDraft,
    chunk: Chunk,
    documents: Sequence[DocumentIn],
    wanted: QuestionWords,
    *,
    min_relevance: float,
) -> Support | None:
    """Step 5 of the module docstring: the chunk's sentence that an answer with a wrong number
    paraphrases (its support and relevance), or None when there is none."""
    if not draft.structured:
        return None
    titles = [p.title for p in chunk.parts if p.title]
    claim = new_words(draft.answer or draft.reasoning, wanted, titles)
    numbers = frozenset(w for w in claim if is_number(w))
    words = claim - numbers
    if not numbers or not words:
        return None
    spans = chunk_spans(chunk, documents)
    if numbers <= frozenset().union(*(span.stems for span in spans)):
        return None  # its numbers are in the chunk: not a wrong number (rejected for another reason)
    best: Support | None = None
    for span in spans:
        if not any(is_number(w) for w in span.stems - wanted) or held_share(words, span.stems) < MIN_SUPPORT:
            continue
        relevance = wanted.share(span.stems)
        if best is None or relevance > best.relevance:
            best = Support(span, held_share(words, span.stems), relevance, claim)
    if best is None or best.relevance < min_relevance or not bears_strongly(best.relevance, wanted):
        return None
    return best


def _statements(text: str) -> list[str]:
    """The sentences of a claim (the whole claim when it is one sentence)."""
    spans = sentence_spans(text)
    parts = [text[a:b] for a, b in spans if any(ch.isalnum() for ch in text[a:b])]
    return parts if len(parts) > 1 else [text]


def _judge_claim(
    stated: str,
    verified: Sequence[Span],
    chunk: Chunk,
    documents: Sequence[DocumentIn],
    wanted: QuestionWords,
    titles: Sequence[str],
) -> tuple[Support, str | None]:
    """Steps 2-3 of the module docstring for one statement: its support, or why it is not evidence."""
    claim = new_words(stated, wanted, titles)
    if not claim and not (content_stems(stated) & VERDICT_WORDS):
        return Support(None, 0.0, 0.0, claim), "restates the question (no new word)"
    support = best_support(claim, verified, wanted) if verified else Support(None, 0.0, 0.0, claim)
    if not claim:  # a bare verdict: the sentence that bears most on the question supports it
        bearing = best_support(wanted, [*verified, *chunk_spans(chunk, documents)], wanted)
        support = Support(bearing.span, 1.0 if bearing.span else 0.0, bearing.relevance, claim)
    elif support.support < 1.0:  # not (wholly) in its quotes: look through the chunk's sentences
        wider = best_support(claim, chunk_spans(chunk, documents), wanted, window=WINDOW)
        support = max(support, wider, key=lambda s: (s.support, s.relevance))
    if support.support < MIN_SUPPORT:
        missing = support.new_words - (support.span.stems if support.span is not None else frozenset())
        return support, f"is not in the chunk (not found: {_shown(missing, stated)})"
    return support, None


def _best_rejection(verdicts: Sequence[tuple[Support, str | None]], what: str) -> _Verdict:
    """Why none of a claim's statements is evidence: the closest one's reason."""
    support, why = max(verdicts, key=lambda v: (v[0].support, v[0].relevance))
    return _Verdict(support, 0.0, f"its {what} {why}")


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
    return Support(None, support, max(wanted.share(stems[i]) for i in supporting), claim), _dedupe(
        [quotes[i] for i in supporting]
    )


REREAD_RELEVANCE = 0.5
"""A passage holding at least this share (and two) of the question's content words earns a chunk a
second reading when its first answer was not evidence."""


def best_passage(
    chunk: Chunk, documents: Sequence[DocumentIn], wanted: QuestionWords
) -> tuple[Span, float] | None:
    """The chunk's sentence that shares most of the question's words (the first of equals), with a
    sentence either side.

    Only the sentences that could beat the best so far are analysed: each sentence's share is bounded
    from above by the question words beginning a word in it (:func:`sentence_bounds`), and sentences
    are scored in descending bound until no bound can beat the best. Measured on the 1.28M-token
    needle: 0.23 s for the 64 chunks the chunk-level bound lets through, scoring every sentence; most
    sentences share nothing with the question and are never analysed now.
    """
    sentences: list[tuple[int, str, int, int]] = []
    bounds: list[float] = []
    for part in chunk.parts:
        text = documents[part.doc_index].text
        spans = sentence_spans(text, part.start, part.end)
        sentences += [(part.doc_index, part.title, start, end) for start, end in spans]
        bounds += sentence_bounds(text, spans, wanted)
    if not sentences or not wanted:
        return None

    def span(i: int) -> Span:
        return Span.of(*sentences[i], documents)

    best, best_score = -1, -1.0
    for i in sorted(range(len(sentences)), key=lambda i: (-bounds[i], i)):
        if bounds[i] < best_score or (bounds[i] == best_score and i > best):
            break  # every later sentence scores less, or as much but later
        score = wanted.share(span(i).stems)
        if score > best_score or (score == best_score and i < best):
            best, best_score = i, score
    same_document = [d for d, *_ in sentences]
    lo = best - 1 if best > 0 and same_document[best - 1] == same_document[best] else best
    hi = best + 1 if best + 1 < len(sentences) and same_document[best + 1] == same_document[best] else best
    passage = span(lo)
    for k in range(lo + 1, hi + 1):
        passage = passage.joined(span(k))
    return passage, best_score


def passage_note(
    chunk: Chunk, documents: Sequence[DocumentIn], wanted: QuestionWords, *, min_relevance: float
) -> Note | None:
    """The chunk's passage that bears most on the question, as a note of that quote alone (the text's
    own words, no answer), or None when none bears on it: what one answer worked out over several chunks
    (PECAN's) is judged against (``nodes/answer_support.py``)."""
    found = best_passage(chunk, documents, wanted)
    if found is None or found[1] <= 0.0 or found[1] < min_relevance:
        return None
    span, relevance = found
    confidence = confidence_of(1.0, relevance, None)
    return Note(
        sources=[chunk.id], quotes=[_evidence(span, chunk.id, documents, confidence)], confidence=confidence
    )


def bears_strongly(relevance: float, wanted: QuestionWords) -> bool:
    """Whether a passage of ``relevance`` bears strongly on the question: half its weighted words, and
    two question words or one name at least (names count twice in ``relevance``)."""
    weight = len(wanted) + len(wanted.named)
    return relevance >= REREAD_RELEVANCE and relevance * weight >= min(2, weight) - 1e-9


def may_bear_strongly(chunk: Chunk, documents: Sequence[DocumentIn], wanted: QuestionWords) -> bool:
    """Whether any passage of ``chunk`` could bear strongly on the question (:func:`bears_strongly`).

    A cheap upper bound, exact in what it rules out: a question word counts as present when its stem
    (without a final "y", which a stem may have gained from "-ies") begins a word anywhere in the chunk's
    casefolded text, and no sentence holds a word the whole text lacks. The per-sentence analysis of
    :func:`best_passage` then runs only where it can matter: on a 1.28M-token run it was a fifth of the
    orchestrator's CPU, mostly spent on chunks that share too little with the question."""
    text = " ".join(documents[p.doc_index].text[p.start : p.end] for p in chunk.parts).casefold()
    present = {word for word in wanted if _begins_a_word(text, word)}
    return bears_strongly(wanted.share(present), wanted)


_INSIDE_A_WORD = re.compile(rf"[^\W_{CJK}]")
"""A character that continues a word (``nodes/lexical.py``'s ``WORD``: letters and digits, not CJK)."""


def sentence_bounds(text: str, spans: Sequence[tuple[int, int]], wanted: QuestionWords) -> list[float]:
    """For each sentence ``text[start:end]`` of ``spans`` (in order), the share of the question's words
    that begin a word in it (:func:`_begins_a_word`): the most any passage centred on it can score.

    Found from where each word occurs in the casefolded stretch the sentences cover (one ``str.find``
    per occurrence) rather than sentence by sentence (a slice, a casefold and a find per word for every
    sentence: 21,900 sentences on the 1.28M-token needle, 0.06 s of the grounding stage). A stretch
    whose casefolding changes its length ("ß" becomes "ss") cannot be mapped back to sentences by
    position; it is bounded sentence by sentence, which is the definition."""
    if not spans:
        return []
    low, high = spans[0][0], spans[-1][1]
    folded = text[low:high].casefold()
    if len(folded) != high - low:
        return [
            wanted.share({word for word in wanted if _begins_a_word(text[s:e].casefold(), word)})
            for s, e in spans
        ]
    starts = [s - low for s, _ in spans]
    present: dict[int, set[str]] = {}
    for word in wanted:
        prefix = word[:-1] if word.endswith("y") else word
        at = folded.find(prefix)
        while at >= 0:
            i = bisect.bisect_right(starts, at) - 1
            inside = i >= 0 and at + len(prefix) <= spans[i][1] - low
            if inside and (not word.isascii() or at == starts[i] or not _INSIDE_A_WORD.match(folded, at - 1)):
                present.setdefault(i, set()).add(word)
            at = folded.find(prefix, at + 1)
    nothing = wanted.share(frozenset())
    return [wanted.share(present[i]) if i in present else nothing for i in range(len(spans))]


def _begins_a_word(text: str, stem: str) -> bool:
    """Whether a word with this stem may occur in ``text``: the stem (less a final "y") at a word start,
    or anywhere for a non-ASCII stem (each CJK character is a word of its own). ``str.find`` rather than
    a look-behind regex, which took 36 times as long over a 1.28M-token input (0.36 s)."""
    prefix = stem[:-1] if stem.endswith("y") else stem
    at = text.find(prefix)
    if not stem.isascii():
        return at >= 0
    while at >= 0:
        if at == 0 or not _INSIDE_A_WORD.match(text, at - 1):
            return True
        at = text.find(prefix, at + 1)
    return False


def worth_rereading(outcome: ChunkOutcome, relevance: float, wanted: QuestionWords) -> bool:
    """A strong passage the first answer did not use: no evidence, evidence far less relevant, or only
    the sentence behind a wrong number (step 5 of the module docstring)."""
    if not bears_strongly(relevance, wanted):
        return False
    if outcome.fate in ("no_information", "unsupported") or outcome.value_dropped:
        return True
    return outcome.fate == "noted" and (outcome.relevance or 0.0) + 0.25 < relevance


def _better(
    a: tuple[ChunkOutcome, Note | None], b: tuple[ChunkOutcome, Note | None]
) -> tuple[ChunkOutcome, Note | None]:
    """Of two readings of one chunk, the one that gave evidence (the more confident if both did)."""
    if (a[1] is None) != (b[1] is None):
        return a if a[1] is not None else b
    if a[1] is not None and b[1] is not None:
        return a if a[1].confidence >= b[1].confidence else b
    return a


def rereading_enabled(context: Context) -> bool:
    """Second readings are for the compact protocol (the paper's protocol is measured as written)."""
    return context.reread and context.prompt_variant == "compact"


def strongest_passage(chunk: Chunk, documents: Sequence[DocumentIn], wanted: QuestionWords) -> Passage | None:
    """The passage of ``chunk`` a second reading would read (:func:`best_passage`), when one may bear
    strongly on the question (:func:`may_bear_strongly`); else None. It depends on the chunk and the
    question only, so :func:`find_passages` looks for it while the chunk is being read."""
    if not may_bear_strongly(chunk, documents, wanted):
        return None
    found = best_passage(chunk, documents, wanted)
    if found is None:
        return None
    span, relevance = found
    return Passage(
        doc_index=span.doc_index, title=span.title, start=span.start, end=span.end, relevance=relevance
    )


def passage_worth_rereading(
    outcome: ChunkOutcome, passage: Passage | None, wanted: QuestionWords
) -> Passage | None:
    """The chunk's strongest passage (:func:`strongest_passage`) when its first reading (``outcome``)
    missed it (:func:`worth_rereading`); else None."""
    return passage if passage is not None and worth_rereading(outcome, passage.relevance, wanted) else None


async def find_passages(state: RunState, kit: RunKit) -> RunState:
    """The passage search, beside the read stage: each chunk's :func:`strongest_passage` for the
    question it is judged against, so that :func:`ground`, which waits for the last read, does not
    search (on the 1.28M-token needle: 0.07 s between the last map answer and the reduce call).
    Nothing to do when second readings are off."""
    if not rereading_enabled(kit.context):
        return {}
    chunks = state.get("input_chunks") or []
    documents = documents_of(state)

    def search() -> dict[int, Passage | None]:
        words: dict[str, QuestionWords] = {}  # per question: a plan asks each document its own
        found = {}
        for chunk in chunks:
            judged = question_judged(state, chunk.id)
            if judged not in words:
                words[judged] = question_words(judged)
            found[chunk.id] = strongest_passage(chunk, documents, words[judged])
        return found

    return {"passages": await asyncio.to_thread(search)}  # CPU work off the event loop


def settle_readings(
    graded: Sequence[tuple[ChunkOutcome, Note | None]],
) -> tuple[ChunkOutcome, Note | None, bool]:
    """A chunk's first reading and any second one (of its best passage) made one: the better, its
    reason saying what the second reading did, and whether it helped."""
    outcome, note = graded[0]
    for other in graded[1:]:
        outcome, note = _better((outcome, note), other)
    if len(graded) == 1:
        return outcome, note, False
    helped = note is not None and outcome is not graded[0][0]
    reason = (
        "answered on a second reading of its most relevant passage"
        if helped
        else (outcome.reason or "") + "; a second reading did not help"
    )
    return outcome.model_copy(update={"reason": reason}), note, helped


def enforce_failure_budget(
    failed: Sequence[int], total: int, kit: RunKit, *, stage: str, first_error: str | None
) -> None:
    """Raise :class:`~longgraph.errors.TooManyFailures` when more than ``max_failed_fraction`` of the
    ``total`` chunks read failed (ids ``failed``): an answer from the rest would mislead."""
    if total and len(failed) / total > kit.context.max_failed_fraction:
        ids = ", ".join(map(str, failed[:20]))
        raise TooManyFailures(
            f"{len(failed)} of {total} chunks failed in the {stage} stage (chunks {ids}"
            f"{'…' if len(failed) > 20 else ''}); first error: {first_error}"
        )


async def ground(state: RunState, kit: RunKit) -> RunState:
    """The grounding stage: every chunk's reading checked against the chunk, in chunk order.

    A chunk read twice (a second reading of its most relevant passage, see :func:`worth_rereading`)
    keeps the reading that gave evidence. Also enforces the failure budget: more failed chunks than
    ``max_failed_fraction`` raise :class:`~longgraph.errors.TooManyFailures` (an answer from the rest
    would mislead). Returns the chunks to read again in ``rereads`` (empty on the second pass).
    """
    by_chunk: dict[int, list[ChunkRead]] = {}
    for read in state.get("reads") or []:
        by_chunk.setdefault(read.chunk_id, []).append(read)
    first = [next((r for r in rs if r.stage != REREAD), rs[0]) for _, rs in sorted(by_chunk.items())]
    failed = [r for r in first if r.draft is None]
    enforce_failure_budget(
        [r.chunk_id for r in failed],
        len(first),
        kit,
        stage=failed[0].stage if failed else "",
        first_error=failed[0].error if failed else None,
    )
    chunks = {c.id: c for c in state.get("input_chunks") or []}
    documents = documents_of(state)
    settings = kit.context
    may_reread = rereading_enabled(settings)
    searched = state.get("passages") or {}

    def check() -> tuple[list[ChunkOutcome], list[Note], list[ReadTask], int]:
        outcomes, notes, rereads, reread_helped = [], [], [], 0
        for chunk_id, reads in sorted(by_chunk.items()):
            chunk = chunks[chunk_id]
            asked, judged = question_for_chunk(state, chunk_id), question_judged(state, chunk_id)
            wanted = question_words(judged)
            graded = [
                ground_read(r, chunk, documents, judged, min_relevance=settings.min_relevance) for r in reads
            ]
            outcome, note, helped = settle_readings(graded)
            reread_helped += helped
            if len(graded) == 1 and may_reread and reads[0].draft is not None:
                strongest = (
                    searched[chunk_id]
                    if chunk_id in searched
                    else strongest_passage(chunk, documents, wanted)
                )
                span = passage_worth_rereading(outcome, strongest, wanted)
                if span is not None:
                    text = documents[span.doc_index].text[span.start : span.end]
                    part = ChunkPart(
                        doc_index=span.doc_index, title=span.title, start=span.start, end=span.end
                    )
                    # The passage alone, without its document's title label: measured with SmolLM2 on
                    # the demo's needle, a "who" question about a passage labelled "Paul Graham essays"
                    # was answered "Paul Graham essays" at 300 and 1,500 tokens, and rightly without it.
                    passage = Chunk(id=chunk_id, parts=[part], tokens=0, text=text)
                    rereads.append(ReadTask(chunk=passage, question=asked, total=0))
            outcomes.append(outcome)
            if note is not None:
                notes.append(note)
        return (
            outcomes,
            notes,
            [ReadTask(chunk=t["chunk"], question=t["question"], total=len(rereads)) for t in rereads],
            reread_helped,
        )

    outcomes, notes, rereads, helped = await asyncio.to_thread(check)  # CPU work off the event loop
    decisions = []
    if any(r.stage == REREAD for rs in by_chunk.values() for r in rs):
        reread = sum(any(r.stage == REREAD for r in rs) for rs in by_chunk.values())
        decisions.append(
            f"{reread} chunk(s) were read a second time, their most relevant passage alone: {helped} gave evidence"
        )
    if not rereads:
        unverified = [q for n in notes for q in n.quotes if not q.verified]
        if unverified:
            where = sorted({q.chunk_id for q in unverified})
            decisions.append(
                f"{len(unverified)} quoted sentence(s) could not be found in their segment (segments "
                f"{', '.join(map(str, where))}): kept and flagged verified=false in the evidence"
            )
        unsupported = [o for o in outcomes if o.fate == "unsupported"]
        if unsupported:
            decisions.append(
                f"{len(unsupported)} chunk(s) answered without support in their text (reported 'unsupported'); "
                f"{len(notes)} note(s) passed the grounding check"
            )
    return {
        "outcomes": outcomes,
        "notes": measure_notes(notes, kit),
        "rereads": rereads,
        "rounds": 0,
        "previous_tokens": None,
        "loop_tasks": [],
        "decisions": decisions,
    }


def rereads_to(target: str) -> Callable[[RunState], list[Send] | Literal["done", "per_document"]]:
    """A router sending each chunk worth a second reading to ``target``, or going on: to combining the
    per-document answers when the question was decomposed (``nodes/decompose.py``), else ``done``."""

    def route_rereads(state: RunState) -> list[Send] | Literal["done", "per_document"]:
        rereads = state.get("rereads") or []
        if not rereads:
            return "per_document" if state.get("chunk_questions") else "done"
        return [Send(target, task) for task in rereads]

    return route_rereads
