"""Shared fixtures: real filler text from the installed corpus, and documents with a planted fact."""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from longgraph.state.contract import Evidence, GraphOutput
from longgraph.state.notes import Note
from longgraph.state.outputs import is_no_information
from longgraph.tests.xdist_groups import pytest_collection_modifyitems  # noqa: F401  (a hook)

FACT = "The secret ingredient of Grandma Olga's borscht is smoked plums."
QUESTION = "What is the secret ingredient of Grandma Olga's borscht?"
FAKE_SETTINGS: dict[str, object] = {
    "context_window": 2048,
    "max_output_tokens": 256,
    "structured_output": "json_schema",
    "base_url": "http://fake.invalid/v1",
    "model": "scripted",
}
"""Settings for graphs run on an injected fake provider: small windows (many chunks from a short
document), constrained JSON; ``base_url`` is never contacted, and being set it keeps the embedded
server out of the picture."""
VERB_THE_SENTENCE_LACKS = {"cloak": "made", "well-depth": "deep"}
"""Dev templates whose question asks with a word its sentence does not use, and the word: "What is the
cloak of the Chancellor of Quellin made of?" over "The Chancellor of Quellin wears a cloak of grey
wool", "How deep is the well at X?" over "… reaches a depth of 41 feet" (a noun made from the
adjective is another word to the lexicon). The words leave these to a verifier, naming the word;
every other dev right answer stands by words alone."""


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


def spread(facts: tuple[str, ...], chars: int = 24_000) -> str:
    """Essay filler with each fact as its own paragraph, spread so that they land in different chunks."""
    text = (essays() * (chars // len(essays()) + 1))[:chars]
    pieces, last = [], 0
    for i, fact in enumerate(facts, start=1):
        cut = text.rfind(" ", 0, int(len(text) * i / (len(facts) + 1))) + 1
        pieces += [text[last:cut], f"\n\n{fact}\n\n"]
        last = cut
    return "".join([*pieces, text[last:]])


def verified_notes(*texts: str, spacing: int = 0) -> list[Note]:
    """One note per text, quoting it whole as verified evidence of its own chunk (``spacing`` apart in
    one document, or all at its start): what a judge of answers reads."""
    return [
        Note(
            sources=[i],
            quotes=[
                Evidence(
                    chunk_id=i,
                    doc_index=0,
                    title="",
                    start=spacing * i,
                    end=spacing * i + len(text),
                    text=text,
                    verified=True,
                )
            ],
        )
        for i, text in enumerate(texts)
    ]


@pytest.fixture
def planted_document() -> str:
    return planted(120_000)


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A real PostgreSQL server for the session (``longgraph/testing/postgres.py``). Where its binaries
    cannot be had, tests needing it are skipped with the reason, except in CI, where they fail."""
    from longgraph.testing.postgres import PostgresUnavailable, run_postgres

    try:
        with run_postgres() as url:
            yield url
    except PostgresUnavailable as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(str(exc))


def does_not_stand(result: GraphOutput | Mapping[str, Any]) -> bool:
    """The checks' contract for an answer they do not confirm: never ``supported``; either NO
    INFORMATION (refuted, withheld, or no answer) or the model's own answer shown flagged
    ``unconfirmed`` (``on_unconfirmed`` "show")."""
    output = result.model_dump() if isinstance(result, GraphOutput) else dict(result)
    if output.get("supported") is not False or output.get("verdict") == "supported":
        return False
    return is_no_information(str(output.get("answer") or "")) or output.get("verdict") == "unconfirmed"


def own_answer(result: GraphOutput | Mapping[str, Any]) -> str | None:
    """The model's own final answer of a run whose answer did not stand: the answer itself when shown
    ``unconfirmed``, else the first candidate's (the withheld answer, ``chunk_id`` None)."""
    output = result.model_dump() if isinstance(result, GraphOutput) else dict(result)
    if output.get("verdict") == "unconfirmed" and not is_no_information(str(output.get("answer") or "")):
        return str(output["answer"])
    own = [c for c in output.get("candidates") or [] if c.get("chunk_id") is None]
    return str(own[0]["answer"]) if own else None


def why_not(result: GraphOutput | Mapping[str, Any]) -> str:
    """Why a run's answer did not stand: the verdict's reason, else the rationale (NO INFORMATION)."""
    output = result.model_dump() if isinstance(result, GraphOutput) else dict(result)
    return str(output.get("verdict_reason") or output.get("rationale") or "")
