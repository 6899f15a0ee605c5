"""The answer checks: the one entry point for everything that decides what is evidence and whether
an answer stands. Nothing outside this package imports its modules; they import only ``state/`` and
libraries, and the verification call comes in as a typed callable (:data:`Verify`).

Decisions, each general: (a) a note counts only with a quote that is a verbatim span of its chunk
(:func:`ground_read`); (b) an answer whose own words stand in verified quotes is grounded (shown
when nothing confirms it), never supported by words alone; (c) a number no quote holds and no arithmetic over the quotes'
numbers gives refutes; (d, in ``nodes/finalize.py``) a value computed in code from records with
verified quotes stands; (e) anything else gets one verification call (:func:`judge`). A sentence
copied from the quotes is ``unconfirmed`` without a call. Never a rewrite: the verdict is on the
model's own answer.
"""

from longgraph.nodes.checks.notes import combined_note, confidence_of, ground_read, relevance_of
from longgraph.nodes.checks.numbers import numbers_in, same_number
from longgraph.nodes.checks.question import Question, read_question
from longgraph.nodes.checks.quotes import (
    Indexed,
    chunk_sentences,
    dedupe_quotes,
    documents_of,
    find_span,
    locate_quotes,
)
from longgraph.nodes.checks.verdict import (
    Checked,
    Judgement,
    Verify,
    checked_claims,
    judge,
    supporting_quotes,
    unframed,
)
from longgraph.nodes.checks.words import STOP_WORDS, content_stems, is_content, sentence_spans, stem, words_of

DECISIONS = (
    "(a) a note counts only with a quote that is a verbatim span of its chunk",
    "(b) an answer whose own words stand in verified quotes is grounded: shown when unconfirmed",
    "(c) a number no quote holds and no arithmetic over the quotes' numbers gives refutes",
    "(d) a value computed in code from records with verified quotes stands",
    "(e) anything else gets one verification call (claims and a verdict each)",
    "a sentence copied whole from the quotes is unconfirmed, without a call",
)
"""Every decision the checks make, as reports list them."""


__all__ = [
    "DECISIONS",
    "STOP_WORDS",
    "Checked",
    "Indexed",
    "Judgement",
    "Question",
    "Verify",
    "checked_claims",
    "chunk_sentences",
    "combined_note",
    "confidence_of",
    "content_stems",
    "dedupe_quotes",
    "documents_of",
    "find_span",
    "ground_read",
    "is_content",
    "judge",
    "locate_quotes",
    "numbers_in",
    "read_question",
    "relevance_of",
    "same_number",
    "sentence_spans",
    "stem",
    "supporting_quotes",
    "unframed",
    "words_of",
]
