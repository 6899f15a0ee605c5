"""The question, read once into the one value every check uses."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from longgraph.nodes.checks.numbers import numbers_in
from longgraph.nodes.checks.words import content_stems

ABOUT_THE_TEXT = re.compile(
    r"\b(?:according\s+to\s+)?(?:the|this)\s+(?:texts?|documents?|passages?|articles?)\b"
    r"(?:\s+(?:gives?|says?|states?|mentions?|lists?|names?|reports?|provides?)\b)?(?!\s+of\b)"
    r"|\bhow\s+(?:many|much)\b",
    re.IGNORECASE,
)
"""Words of a question no sentence of the text says: those about the text itself ("For which companies
does *the text give* the debt?") and the "how many" that asks for a quantity. Left out of its words,
they do not weigh a sentence that mentions a text, or any "many"."""


@dataclass(frozen=True)
class Question:
    """A question as the checks read it: its text, its content words (:func:`~.words.stem` keys; not
    :data:`ABOUT_THE_TEXT`) and its numbers. An answer's words and numbers beyond these are what it claims."""

    text: str
    words: frozenset[str]
    numbers: tuple[float, ...]

    def share_of(self, words: frozenset[str] | set[str]) -> float:
        """The share of the question's content words among ``words`` (0 for a question with none): how
        much a quote bears on the question, for ranking notes only (it refuses nothing)."""
        return len(self.words & words) / len(self.words) if self.words else 0.0


@functools.lru_cache(maxsize=256)
def read_question(text: str) -> Question:
    """``text`` read as a :class:`Question` (cached: a run's stages ask for the same question)."""
    asked = ABOUT_THE_TEXT.sub(" ", text)
    return Question(" ".join(text.split()), frozenset(content_stems(asked)), tuple(numbers_in(text)))
