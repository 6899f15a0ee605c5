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

from longgraph.nodes.checks.notes import combined_note, confidence_of, ground_read, strongest_sentence
from longgraph.nodes.checks.numbers import numbers_in
from longgraph.nodes.checks.question import Question, read_question
from longgraph.nodes.checks.quotes import (
    Indexed,
    chunk_sentences,
    documents_of,
    find_span,
    locate_quotes,
)
from longgraph.nodes.checks.verdict import (
    Checked,
    Verify,
    checked_claims,
    judge,
)
from longgraph.nodes.checks.words import content_stems, sentence_spans, words_of

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
    "Checked",
    "Indexed",
    "Question",
    "Verify",
    "checked_claims",
    "chunk_sentences",
    "combined_note",
    "confidence_of",
    "content_stems",
    "documents_of",
    "find_span",
    "ground_read",
    "judge",
    "locate_quotes",
    "numbers_in",
    "read_question",
    "sentence_spans",
    "strongest_sentence",
    "words_of",
]
