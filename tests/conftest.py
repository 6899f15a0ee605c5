"""Shared fixtures: real filler text from the installed corpus, and documents with a planted fact."""

from __future__ import annotations

import functools

import pytest

FACT = "The secret ingredient of Grandma Olga's borscht is smoked plums."
QUESTION = "What is the secret ingredient of Grandma Olga's borscht?"


@functools.lru_cache(maxsize=1)
def essays() -> str:
    from longgraph.evals.corpora import load_paul_graham_text

    return load_paul_graham_text()


def planted(chars: int, *, at: float = 0.5, fact: str = FACT) -> str:
    """``chars`` characters of Paul Graham essays with ``fact`` as its own paragraph at depth ``at``."""
    text = essays()
    filler = (text * (chars // len(text) + 1))[:chars]
    cut = filler.rfind(" ", 0, int(len(filler) * at)) + 1
    return filler[:cut] + "\n\n" + fact + "\n\n" + filler[cut:]


@pytest.fixture
def planted_document() -> str:
    return planted(120_000)
