"""Decision (a) on a chunk's reading: it becomes a note only with a quote that is a verbatim span of
the chunk.

The draft's quotes are located (:func:`~.quotes.locate_quotes`). Where they do not hold its answer
(the compact protocol quotes nothing; a model may quote one sentence and answer from another), its
answer, or its reasoning, is looked for too: each of its sentences in the chunk's sentences that hold
its words as one stretch, or else every content word it adds to the question's (the one sharing most
of the question's words, where several do: a bare answer's words recur); a small model adds a word of
the question ("234,394 people"). A draft with a
verified quote is a note, its unverified quotes kept and flagged; one without is ``unsupported``, with
why; one that says the text holds nothing is ``no_information``; a failed read is ``failed``. Nothing
about whether the note answers the question is decided here: that is the final answer's verdict.

Confidence (out of 5) is for ranking and reporting only: ``5 · (0.25 + 0.75 · relevance)``, where
``relevance`` is the share of the question's content words in the verified quotes, scaled by
``0.5 + 0.5 · model_confidence / 5`` when the model gave one.
"""

from __future__ import annotations

from collections.abc import Sequence

from longgraph.nodes.checks.question import Question
from longgraph.nodes.checks.quotes import chunk_sentences, dedupe_quotes, locate_quotes
from longgraph.nodes.checks.verdict import supporting_quotes, unframed
from longgraph.nodes.checks.words import content_stems, sentence_spans, words_of
from longgraph.state.contract import Chunk, DocumentIn, Evidence
from longgraph.state.notes import ChunkOutcome, ChunkRead, Note, NoteDraft


def confidence_of(relevance: float, model_confidence: float | None) -> float:
    """The formula of the module docstring, rounded to two decimals."""
    evidence = 0.25 + 0.75 * relevance
    if model_confidence is not None:
        evidence *= 0.5 + 0.5 * min(5.0, max(0.0, model_confidence)) / 5
    return round(5 * evidence, 2)


def relevance_of(quotes: Sequence[Evidence], question: Question) -> float:
    """The share of the question's content words in the verified ``quotes``."""
    return question.share_of(content_stems(" ".join(q.text for q in quotes if q.verified)))


SAYING_KEPT = 2
"""Sentences kept per piece of an answer found in several: which one the model read it in is not
known, and the one sharing most of the question's words need not be it."""


def sentences_saying(
    said: str, chunk: Chunk, documents: Sequence[DocumentIn], question: Question
) -> list[Evidence]:
    """For each sentence of ``said`` (without the words that only announce it, or a label before a
    colon that it copied from the prompt, "Original Text: …"), the chunk's sentences that hold its
    words as one stretch, or else all its content words beyond the question's: the
    :data:`SAYING_KEPT` sharing most of the question's words (stretches first, then document order),
    verified; none for a piece found nowhere."""
    pieces = sentence_spans(said) or [(0, len(said))]
    if len(pieces) > 1:  # found whole, it is one stretch of the text ("Il trovatore (] ; Italian for …")
        whole = locate_quotes([unframed(said)], chunk, documents)
        if whole and all(q.verified for q in whole):
            return whole
    found: list[Evidence] = []
    for a, b in pieces:
        piece = unframed(said[a:b])
        labelled = piece.partition(":")[2] if ":" in piece[:40] else ""
        found += _saying(piece, chunk, documents, question) or (
            _saying(labelled, chunk, documents, question) if labelled.strip() else []
        )
    return found


def _saying(piece: str, chunk: Chunk, documents: Sequence[DocumentIn], question: Question) -> list[Evidence]:
    words, own = f" {' '.join(words_of(piece))} ", content_stems(piece) - question.words
    ranked: list[tuple[bool, float, int, Evidence]] = []
    for order, sentence in enumerate(chunk_sentences(chunk, documents) if words.strip() else ()):
        stems = content_stems(sentence.text)
        stretch = words in f" {' '.join(words_of(sentence.text))} "
        if stretch or (own and own <= stems):
            ranked.append((stretch, question.share_of(stems), -order, sentence))
    ranked.sort(key=lambda r: r[:3], reverse=True)
    return [r[3] for r in ranked[:SAYING_KEPT]]


def strongest_sentence(
    chunk: Chunk, documents: Sequence[DocumentIn], question: Question
) -> tuple[float, int, list[Evidence]]:
    """The chunk's sentences, the index of the one holding the largest share of the question's content
    words (the first of equals; -1 when none holds any) and that share: what a chunk says on the
    question, whatever its reading said."""
    sentences = list(chunk_sentences(chunk, documents))
    shares = [question.share_of(content_stems(s.text)) for s in sentences]
    best = max(shares, default=0.0)
    return best, shares.index(best) if best > 0 else -1, sentences


def combined_note(draft: NoteDraft, inputs: Sequence[Note], question: Question, sources: list[int]) -> Note:
    """A combining stage's note (a collapse, a tree node's reduce or map): the model's answer as given,
    never another, carrying the verified quotes of ``inputs`` that hold its words (all of them when none
    does: ``supporting_quotes``), its confidence by the same formula as a chunk's note."""
    quotes = supporting_quotes(draft.answer, question, dedupe_quotes(q for n in inputs for q in n.quotes))
    return Note(
        sources=sources,
        answer=" ".join(draft.answer.split()),
        reasoning=draft.reasoning,
        quotes=quotes,
        model_confidence=draft.model_confidence,
        confidence=confidence_of(relevance_of(quotes, question), draft.model_confidence),
    )


def ground_read(
    read: ChunkRead, chunk: Chunk, documents: Sequence[DocumentIn], question: Question
) -> tuple[ChunkOutcome, Note | None]:
    """One chunk's reading checked against the chunk: its outcome, and its note when it is evidence."""
    if read.draft is None:
        return ChunkOutcome(chunk_id=chunk.id, fate="failed", reason=read.error, raw_output=read.raw), None
    draft = read.draft
    said = draft.answer or draft.reasoning
    located = locate_quotes(draft.quotes, chunk, documents)
    quoted = content_stems(" ".join(q.text for q in located if q.verified))
    unsaid = not quoted or not (content_stems(said) - question.words) <= quoted
    if said and not draft.no_information and unsaid:
        located = dedupe_quotes([*located, *sentences_saying(said, chunk, documents, question)])
    outcome = ChunkOutcome(
        chunk_id=chunk.id,
        fate="no_information",
        answer=said or None,
        extracted="\n".join(q.strip() for q in draft.quotes) or None,
        model_confidence=draft.model_confidence,
    )
    verified = [q for q in located if q.verified]
    if (
        draft.no_information or (draft.structured and not draft.answer and not draft.quotes)
    ) and not verified:
        return outcome, None  # a note that quotes nothing and answers nothing holds no information
    if not verified:
        why = (
            "no quote of it is in the chunk" if draft.quotes else "its words are not a sentence of the chunk"
        )
        return outcome.model_copy(update={"fate": "unsupported", "reason": why, "confidence": 0.0}), None
    relevance = relevance_of(verified, question)
    confidence = confidence_of(relevance, draft.model_confidence)
    note = Note(
        sources=[chunk.id],
        answer="" if draft.no_information else draft.answer,
        reasoning=draft.reasoning,
        quotes=[q.model_copy(update={"confidence": confidence if q.verified else None}) for q in located],
        model_confidence=draft.model_confidence,
        confidence=confidence,
        structured=draft.structured,
    )
    update = {"fate": "noted", "confidence": confidence, "support": 1.0, "relevance": round(relevance, 3)}
    return outcome.model_copy(update=update), note
