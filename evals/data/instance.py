"""The one record every evaluation builder returns: :class:`EvalInstance`.

One shape for every suite lets the runner, the metrics and the reports treat a needle test, a SQuAD
question and a Loong case alike. An instance carries its documents (never a pre-rendered prompt), so each
strategy chunks them its own way; :meth:`EvalInstance.render_context` gives the one canonical rendering,
and ``actual_tokens`` is the token count of exactly that rendering, so reported lengths are reproducible.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from typing_extensions import TypedDict

from longgraph.errors import InputError, validation_problems
from longgraph.tokenizer import Tokenizer, get_tokenizer

TaskFamily = Literal["qa", "mc", "retrieval", "open"]
"""How an instance is scored (see :func:`longgraph.evals.metrics.score_instance`):

* ``qa``: short extractive answers: exact match, token F1, ROUGE-L;
* ``mc``: multiple choice: accuracy of the extracted option letter;
* ``retrieval``: find a planted fact (needle): the gold must appear in the prediction;
* ``open``: free-form answers graded by the LLM judge (Loong); F1 and ROUGE-L are only a proxy.
"""


class Document(TypedDict):
    """One input document, the same ``{"title", "text"}`` shape the graphs take."""

    title: str
    text: str


class EvalInstance(BaseModel):
    """One evaluation case: question, documents, gold answers and how it was built."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    suite: str
    question: str
    documents: list[Document]
    gold_answers: list[str]
    task_family: TaskFamily
    target_tokens: int = Field(ge=0)
    actual_tokens: int = Field(ge=0)
    depth: float | None = Field(default=None, ge=0.0, le=1.0)
    metadata: dict[str, Any] = Field(default_factory=dict)
    skipped: list[str] = Field(default_factory=list)
    """Why any part of the input was left out (e.g. a Loong document that would overflow the window)."""
    doc_template: str = "{text}"
    """How one document is rendered in :meth:`render_context`: ``{title}`` and ``{text}`` are replaced."""
    doc_separator: str = "\n\n"
    scorer: str | None = None
    """A named rule from :data:`longgraph.evals.scoring.SCORERS` (an official benchmark's, or an exact
    rule for structured answers); None: scored by ``task_family``."""
    label: Any = None
    """The gold in the shape ``scorer`` reads (InfiniteBench's own label, a set with its candidates...);
    ``gold_answers`` keeps a readable form for reports."""

    def render_context(self) -> str:
        """The documents as one text, the way a single-pass baseline would see them.

        ``str.replace`` (not ``str.format``) so that braces inside the documents are left alone.
        """
        return self.doc_separator.join(
            self.doc_template.replace("{title}", doc["title"]).replace("{text}", doc["text"])
            for doc in self.documents
        )

    def graph_input(self) -> dict[str, Any]:
        """The input a longgraph strategy graph takes: ``{"question", "documents"}``."""
        return {"question": self.question, "documents": [dict(doc) for doc in self.documents]}


def write_jsonl(instances: Iterable[EvalInstance], path: Path) -> int:
    """Write instances one per line (UTF-8, non-ASCII kept); returns how many were written."""
    count = 0
    with path.open("w", encoding="utf-8") as handle:
        for instance in instances:
            handle.write(json.dumps(instance.model_dump(mode="json"), ensure_ascii=False) + "\n")
            count += 1
    return count


def read_jsonl(path: Path) -> list[EvalInstance]:
    """Read instances written by :func:`write_jsonl`, naming the line of any malformed record."""
    instances: list[EvalInstance] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                instances.append(EvalInstance.model_validate_json(line))
            except ValidationError as exc:
                problems = validation_problems(exc)
                raise InputError(f"{path}:{number}: not an evaluation instance ({problems})") from exc
    return instances


def fit_in_order(
    candidates: Sequence[tuple[str, Document]],
    costs: Sequence[int],
    *,
    budget: int,
    sep_tokens: int,
    window: int,
) -> tuple[list[tuple[str, Document]], list[str]]:
    """Loong's input truncation (paper §4.1): documents are taken in turn, one whose addition would pass
    ``budget`` tokens is skipped (later ones are still tried), and every skip is said, never silent.

    ``candidates`` are (name, document) pairs, ``costs`` their rendered token counts; returns the kept
    pairs and one sentence per skipped document.
    """
    kept: list[tuple[str, Document]] = []
    skipped: list[str] = []
    used = 0
    for (name, doc), cost in zip(candidates, costs, strict=True):
        extra = cost + (sep_tokens if kept else 0)
        if used + extra > budget:
            skipped.append(
                f"document {name!r} ({doc['title']}, {cost} tokens) skipped: it would overflow the "
                f"{window}-token window ({max(used, 0)} of {max(budget, 0)} document tokens used)"
            )
            continue
        kept.append((name, doc))
        used += extra
    return kept, skipped


LOONG_LENGTH_SETS: Mapping[int, tuple[int, int]] = {
    1: (10_000, 50_000),
    2: (50_000, 100_000),
    3: (100_000, 200_000),
    4: (200_000, 250_000),
}
"""Loong's length sets (paper §3): set number → (lowest, highest) tokens."""


def length_set_name(number: int) -> str:
    """``1`` → ``10K-50K``."""
    low, high = LOONG_LENGTH_SETS[number]
    return f"{low // 1000}K-{high // 1000}K"


def length_bucket(tokens: int) -> str:
    """The Loong length set ``tokens`` falls in, with ``<10K`` and ``>250K`` around them, so every suite
    that does not fix its lengths reports in the same buckets."""
    for number, (low, high) in LOONG_LENGTH_SETS.items():
        if low <= tokens < high or (number == max(LOONG_LENGTH_SETS) and tokens == high):
            return length_set_name(number)
    return "<10K" if tokens < 10_000 else ">250K"


def resolve_tokenizer(tokenizer: Tokenizer | None) -> Tokenizer:
    """The tokenizer to count with: the one given, else the project default (offline cl100k_base)."""
    return tokenizer if tokenizer is not None else get_tokenizer(None)


_CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def count_mentions(text: str, answer: str) -> int:
    """How often ``answer`` occurs in ``text``, ignoring case, not as part of a longer word.

    "France" in "Frances" is no mention; Chinese text has no word boundaries, so an answer with CJK
    characters is counted as a plain substring.
    """
    if not answer:
        return 0
    if _CJK_RE.search(answer):
        return text.lower().count(answer.lower())
    return len(re.findall(r"(?<!\w)" + re.escape(answer) + r"(?!\w)", text, flags=re.IGNORECASE))
