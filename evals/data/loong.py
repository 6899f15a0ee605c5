"""Loader for the Loong benchmark (Wang et al., 2024), for users who have its data.

Loong is not redistributed with longgraph. Its release has an instances file (one JSON object a line,
fields ``id``, ``instruction``, ``question``, ``prompt_template``, ``doc`` (document names), ``answer``,
``level`` (task: 1 Spotlight Locating, 2 Comparison, 3 Clustering, 4 Chain of Reasoning), ``set``
(length set 1–4), ``type`` (``financial``, ``paper``, ``legal``), ``language``, optionally
``shuffle_doc``) and a documents folder with one sub-folder per ``type``.

Documents are found and labelled the way the released loader (``src/utils/prompt.py``) does it, because
the gold answers name documents by those labels (e.g. "判决文书5", "Judgment Document 5" in the paper's
English rendering):

* ``financial``: ``<docs>/financial/*2024-<name>*.txt`` (any year for level 4, which compares years),
  labelled ``《<company>》``. The released code takes the file stem after its last ``-``, which for the
  2024 reports (``2024-ARVANA INC-j.txt``) is the bare marker ``j``; here the label is the stem without
  its ``-j``/``-n`` marker and, outside level 4, without the ``2024-`` prefix (``《ARVANA INC》``), as
  the paper's own example renders it ("Document 1: THE ARENA GROUP HOLDINGS, INC.");
* ``paper``: ``<docs>/paper/<name>``, labelled with its first line without the leading ``#``;
* ``legal``: the ``<name>`` entry of ``<docs>/legal/legal.json`` (``content`` + ``result``; the result is
  left out for the "link the links" task, whose question hands the results over), labelled
  ``《判决文书i》`` with ``i`` the document's position in ``doc``;
* any other type, or a name that is a file path relative to the folder: the file itself, labelled
  ``《<file stem>》``.

Assembly follows the paper's *Input Truncation* rule (§4.1): documents are considered in turn, and one
whose addition would make the prompt exceed ``context_window`` tokens is skipped (the next ones are
still considered). Unlike the released code, every skip is recorded in :attr:`EvalInstance.skipped`.
``reserve_tokens`` (default 0, as in the paper) keeps room for the answer. Documents are shuffled by
seed as the released code does (``shuffle_doc``, default true).

The instance's ``question`` is the instruction followed by the question; ``metadata["prompt_template"]``
is the item's template with both filled in and ``{docs}`` left for the assembled documents, and
``metadata["judge_question"]`` is the template without the documents, which is what Loong shows its
judge as the question.
"""

from __future__ import annotations

import glob
import json
import random
import re
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from longgraph.errors import InputError
from longgraph.evals.data.instance import (
    LOONG_LENGTH_SETS,
    Document,
    EvalInstance,
    fit_in_order,
    length_set_name,
    resolve_tokenizer,
)
from longgraph.jsonl import iter_objects
from longgraph.tokenizer import Tokenizer

SUITE = "loong"
DOC_TEMPLATE = "{title}\n{text}"
SEPARATOR = "\n\n"
LOONG_TASKS: Mapping[int, str] = {
    1: "Spotlight Locating",
    2: "Comparison",
    3: "Clustering",
    4: "Chain of Reasoning",
}
LOONG_SETS: Mapping[int, str] = {number: length_set_name(number) for number in LOONG_LENGTH_SETS}
_LINK_THE_LINKS_MARKER = "阅读以上判决文书，我将给你若干份判决结果："
_REQUIRED = ("question", "prompt_template", "doc", "answer")


def _as_int(value: Any) -> int | None:
    """Levels and sets are integers in the release; tolerate ``"2"`` from hand-made files."""
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _fill_template(template: str, instruction: str, question: str) -> str:
    return template.replace("{question}", question).replace("{instruction}", instruction)


class _LegalStore:
    """``legal/legal.json`` read once per load (it holds every judgment document)."""

    def __init__(self, docs_dir: Path) -> None:
        self._path = docs_dir / "legal" / "legal.json"
        self._data: dict[str, Any] | None = None

    def get(self, name: str) -> Mapping[str, Any]:
        if self._data is None:
            try:
                self._data = json.loads(self._path.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError) as exc:
                raise InputError(f"Loong legal documents: cannot read {self._path} ({exc})") from exc
        entry = self._data.get(name) if isinstance(self._data, dict) else None
        if not isinstance(entry, Mapping):
            raise InputError(f"Loong legal document {name!r} is not in {self._path}")
        return entry


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"Loong document {path} cannot be read ({exc})") from exc


def _financial_label(stem: str, *, keep_year: bool) -> str:
    """Company label of a report file such as ``2024-ARVANA INC-j``: ``ARVANA INC`` (``2021-…`` kept
    for the temporal tasks of level 4, where the year is what tells a company's reports apart)."""
    label = re.sub(r"-[a-z]$", "", stem)
    return label if keep_year else re.sub(r"^\d{4}-", "", label)


def _resolve_document(
    item: Mapping[str, Any], name: str, position: int, docs_dir: Path, legal: _LegalStore
) -> Document:
    """One document of an item, labelled as the released Loong loader labels it."""
    doc_type = str(item.get("type", ""))
    direct = docs_dir / doc_type / name if doc_type else docs_dir / name
    if doc_type == "financial":
        level4 = _as_int(item.get("level")) == 4
        pattern = f"*{glob.escape(name)}*.txt" if level4 else f"*2024-{glob.escape(name)}*.txt"
        matches = sorted((docs_dir / "financial").glob(pattern))
        if not matches:
            raise InputError(
                f"Loong financial document {name!r}: no file {pattern} in {docs_dir / 'financial'}"
            )
        exact = [m for m in matches if _financial_label(m.stem, keep_year=False) == name]
        chosen = (exact or matches)[0]
        return {"title": f"《{_financial_label(chosen.stem, keep_year=level4)}》", "text": _read(chosen)}
    if doc_type == "paper" and direct.is_file():
        content = _read(direct)
        return {"title": content.split("\n", 1)[0].strip("#").strip(), "text": content}
    if doc_type == "legal":
        entry = legal.get(name)
        content = str(entry.get("content", ""))
        if not (
            _as_int(item.get("level")) == 4 and _LINK_THE_LINKS_MARKER in str(item.get("instruction", ""))
        ):
            content += str(entry.get("result", ""))
        return {"title": f"《判决文书{position + 1}》", "text": content}
    for candidate in (direct, docs_dir / name):
        if candidate.is_file():
            return {"title": f"《{candidate.stem}》", "text": _read(candidate)}
    raise InputError(f"Loong document {name!r} (type {doc_type or 'none'}) not found under {docs_dir}")


def load_loong(
    instances_jsonl: Path,
    docs_dir: Path,
    *,
    context_window: int,
    reserve_tokens: int = 0,
    seed: int = 0,
    sets: Collection[int] | None = None,
    levels: Collection[int] | None = None,
    types: Collection[str] | None = None,
    limit: int | None = None,
    tokenizer: Tokenizer | None = None,
) -> list[EvalInstance]:
    """Load Loong instances, assembling each one's documents under ``context_window`` tokens.

    ``sets``, ``levels`` and ``types`` keep only matching instances; ``limit`` stops after that many.
    A document that would overflow the window is skipped and the skip recorded in ``skipped``.
    """
    if context_window <= 0:
        raise InputError(f"context_window must be positive, got {context_window}")
    tok = resolve_tokenizer(tokenizer)
    legal = _LegalStore(docs_dir)
    sep_tokens = tok.count(SEPARATOR)
    instances: list[EvalInstance] = []
    for where, item in iter_objects(instances_jsonl, "Loong instance"):
        number = int(where.rsplit(":", 1)[1])  # the line: an item without an id is named after it
        if limit is not None and len(instances) >= limit:
            break
        missing = [key for key in _REQUIRED if key not in item]
        if missing:
            raise InputError(f"{where}: not a Loong instance (missing {', '.join(missing)})")
        if sets is not None and _as_int(item.get("set")) not in sets:
            continue
        if levels is not None and _as_int(item.get("level")) not in levels:
            continue
        if types is not None and item.get("type") not in types:
            continue
        instances.append(
            _assemble(item, number, docs_dir, legal, tok, context_window, reserve_tokens, seed, sep_tokens)
        )
    return instances


def _assemble(
    item: dict[str, Any],
    number: int,
    docs_dir: Path,
    legal: _LegalStore,
    tok: Tokenizer,
    context_window: int,
    reserve_tokens: int,
    seed: int,
    sep_tokens: int,
) -> EvalInstance:
    instance_id = str(item.get("id") or f"line{number}")
    instruction = str(item.get("instruction") or "")
    question = str(item.get("question") or "")
    template = _fill_template(str(item["prompt_template"]), instruction, question)
    if "{docs}" not in template:
        raise InputError(f"Loong instance {instance_id}: prompt_template has no {{docs}} placeholder")
    rng = random.Random(f"{seed}:{instance_id}")
    shuffle = bool(item.get("shuffle_doc", True))
    names = [str(name) for name in item["doc"]]
    documents = [_resolve_document(item, name, k, docs_dir, legal) for k, name in enumerate(names)]
    candidates = list(zip(names, documents, strict=True))
    if shuffle and item.get("type") == "financial":
        rng.shuffle(candidates)  # the released loader shuffles financial reports before fitting them
    rendered = [
        DOC_TEMPLATE.replace("{title}", d["title"]).replace("{text}", d["text"]) for _, d in candidates
    ]
    costs = tok.count_batch(rendered)
    budget = context_window - reserve_tokens - tok.count(template.replace("{docs}", ""))
    kept, skipped = fit_in_order(
        candidates, costs, budget=budget, sep_tokens=sep_tokens, window=context_window
    )
    if shuffle:
        rng.shuffle(kept)

    def render(docs: list[tuple[str, Document]]) -> str:
        return SEPARATOR.join(
            DOC_TEMPLATE.replace("{title}", d["title"]).replace("{text}", d["text"]) for _, d in docs
        )

    context = render(kept)
    prompt_tokens = tok.count(template.replace("{docs}", context))
    # Counted whole, the prompt can differ by a token or two from the sum of its parts; never let that
    # push it over the window.
    while kept and prompt_tokens > context_window - reserve_tokens:
        name, doc = kept.pop()
        skipped.append(
            f"document {name!r} ({doc['title']}) skipped: the assembled prompt overflowed the window"
        )
        context = render(kept)
        prompt_tokens = tok.count(template.replace("{docs}", context))
    kept_docs = [doc for _, doc in kept]
    level = _as_int(item.get("level"))
    length_set = _as_int(item.get("set"))
    answer = item["answer"]
    gold = answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)
    return EvalInstance(
        id=f"{SUITE}-{instance_id}",
        suite=SUITE,
        question="\n\n".join(part for part in (instruction.strip(), question.strip()) if part),
        documents=kept_docs,
        gold_answers=[gold],
        task_family="open",
        target_tokens=context_window,
        actual_tokens=tok.count(context),
        depth=None,
        metadata={
            "loong_id": instance_id,
            "level": level,
            "task": LOONG_TASKS.get(level, f"level {level}") if level is not None else None,
            "set": length_set,
            "length_set": LOONG_SETS.get(length_set, f"set {length_set}") if length_set is not None else None,
            "type": item.get("type"),
            "language": item.get("language"),
            "doc_names": [name for name, _ in kept],
            "prompt_template": template,
            "judge_question": template.replace("{docs}", "").strip(),
            "prompt_tokens": prompt_tokens,
            "reserve_tokens": reserve_tokens,
        },
        skipped=skipped,
        doc_template=DOC_TEMPLATE,
        doc_separator=SEPARATOR,
    )
