"""Multi-document QA from HotpotQA, LongBench style: supporting passages among many distractors.

Each instance takes one HotpotQA dev item (distractor setting), keeps its supporting passages (and, by
default, the eight distractors HotpotQA itself picked for it), adds passages of *other* items until the
rendered context reaches about ``target_tokens`` tokens, shuffles them by seed and labels them
``Passage 1`` … ``Passage k`` as LongBench does. Rendered, each passage reads
``"Passage i:\\n<wiki title>\\n<paragraph>"`` and passages are separated by blank lines.

Choices made here:

* Items answered "yes"/"no" (comparison questions) are left out by default: their answer text is not in
  the passages, so a containment-based metric could not be checked against the documents.
* Only items whose answer occurs in a supporting passage are used, so the gold is present.
* Passages from other items are deduplicated by Wikipedia title, never share a title with the item's
  own passages, and never mention the item's answer (whole word, case-insensitive), so a correct answer
  can only come from the item's own passages.
* The seed fixes the items and the order in which other items' passages are drawn, independently of
  the target length.
"""

from __future__ import annotations

import functools
import random
import threading
from collections.abc import Iterator

from longgraph.errors import ConfigurationError
from longgraph.evals.corpora import HotpotItem, HotpotPassage, load_hotpot
from longgraph.evals.data.instance import Document, EvalInstance, count_mentions, resolve_tokenizer
from longgraph.tokenizer import Tokenizer

SUITE = "hotpot"
DOC_TEMPLATE = "{title}:\n{text}"
SEPARATOR = "\n\n"
LONGBENCH_PROMPT = (
    "Answer the question based on the given passages. Only give me the answer and do not output any other "
    "words.\n\nThe following are given passages.\n{context}\n\nAnswer the question based on the given "
    "passages. Only give me the answer and do not output any other words.\n\nQuestion: {input}\nAnswer:"
)
"""LongBench's HotpotQA prompt (``{context}``: the rendered passages, ``{input}``: the question)."""

_LENGTH_TOLERANCE = 0.01
_MAX_ADJUSTMENTS = 4
_BATCH = 256

_cache_lock = threading.Lock()
_count_cache: dict[str, dict[int, int]] = {}


def passage_text(passage: HotpotPassage) -> str:
    """A passage's document text: its Wikipedia title on the first line, then the paragraph."""
    return f"{passage.title}\n{passage.text}"


@functools.lru_cache(maxsize=1)
def passage_pool() -> tuple[HotpotPassage, ...]:
    """Every distinct passage (by title) of the HotpotQA dev contexts, in corpus order."""
    seen: dict[str, HotpotPassage] = {}
    for item in load_hotpot():
        for passage in item.passages:
            if passage.text and passage.title not in seen:
                seen[passage.title] = passage
    return tuple(seen.values())


@functools.lru_cache(maxsize=2)
def eligible_items(include_yes_no: bool = False) -> tuple[HotpotItem, ...]:
    """Items whose answer occurs in one of their supporting passages (and, by default, not yes/no)."""
    return tuple(
        item
        for item in load_hotpot()
        if item.answer
        and (include_yes_no or item.answer.lower() not in {"yes", "no"})
        and any(
            count_mentions(passage_text(p), item.answer)
            for p in item.passages
            if p.title in item.supporting_titles
        )
    )


def _pool_counts(tok: Tokenizer, indices: list[int]) -> list[int]:
    """Token counts of pool passages (rendered text), counted lazily in batches and cached per tokenizer."""
    pool = passage_pool()
    with _cache_lock:
        cache = _count_cache.setdefault(tok.name, {})
        missing = [i for i in indices if i not in cache]
        if missing:
            cache.update(zip(missing, tok.count_batch([passage_text(pool[i]) for i in missing]), strict=True))
        return [cache[i] for i in indices]


def _draw(
    tok: Tokenizer, order: list[int], excluded: set[str], answer: str, budget: int, overhead: int
) -> list[int]:
    """Pool indices, in ``order``, greedily filling ``budget`` tokens with clean passages."""
    pool = passage_pool()
    chosen: list[int] = []
    total = 0

    def candidates() -> Iterator[list[int]]:
        for start in range(0, len(order), _BATCH):
            yield [
                i
                for i in order[start : start + _BATCH]
                if pool[i].title not in excluded and not count_mentions(passage_text(pool[i]), answer)
            ]

    for batch in candidates():
        for index, count in zip(batch, _pool_counts(tok, batch), strict=True):
            cost = count + overhead
            if total + cost <= budget:
                chosen.append(index)
                total += cost
        if total >= budget * (1 - _LENGTH_TOLERANCE / 4):
            break
    return chosen


def build_hotpot(
    *,
    target_tokens: int,
    n: int,
    seed: int,
    include_item_distractors: bool = True,
    include_yes_no: bool = False,
    tokenizer: Tokenizer | None = None,
) -> list[EvalInstance]:
    """``n`` multi-document HotpotQA instances of about ``target_tokens`` tokens each."""
    if n < 0:
        raise ConfigurationError(f"n must be >= 0, got {n}")
    tok = resolve_tokenizer(tokenizer)
    items = eligible_items(include_yes_no)
    if n > len(items):
        raise ConfigurationError(f"n={n} exceeds the {len(items)} usable HotpotQA items")
    pool = passage_pool()
    # Label and separator cost of one passage: "Passage 12:\n"; the blank line before it mostly merges
    # with the sentence end of the passage before (".\n\n" is one token), so it costs nothing extra.
    overhead = tok.count("Passage 10:\n")

    rng = random.Random(seed)
    picks = rng.sample(items, n)
    instances: list[EvalInstance] = []
    for i, item in enumerate(picks):
        inst_rng = random.Random(seed * 1_000_003 + i)
        order = list(range(len(pool)))
        inst_rng.shuffle(order)
        shuffle_key = inst_rng.random()
        gold = [p for p in item.passages if p.title in item.supporting_titles and p.text]
        own = [
            p
            for p in item.passages
            if p.title not in item.supporting_titles and p.text and include_item_distractors
        ]
        base = gold + own
        base_tokens = sum(tok.count_batch([passage_text(p) for p in base])) + overhead * len(base)
        if base_tokens > target_tokens:
            raise ConfigurationError(
                f"target_tokens={target_tokens} is shorter than the own passages of HotpotQA item "
                f"{item.id} ({base_tokens} tokens)"
            )
        excluded = {p.title for p in item.passages}
        budget = target_tokens - base_tokens
        for _ in range(_MAX_ADJUSTMENTS):
            chosen = _draw(tok, order, excluded, item.answer, budget, overhead)
            passages = base + [pool[j] for j in chosen]
            random.Random(shuffle_key).shuffle(passages)
            documents: list[Document] = [
                {"title": f"Passage {k}", "text": passage_text(p)} for k, p in enumerate(passages, start=1)
            ]
            context = SEPARATOR.join(
                DOC_TEMPLATE.replace("{title}", d["title"]).replace("{text}", d["text"]) for d in documents
            )
            actual = tok.count(context)
            if abs(actual - target_tokens) <= _LENGTH_TOLERANCE * target_tokens:
                break
            budget += target_tokens - actual
        else:
            if abs(actual - target_tokens) > 2 * _LENGTH_TOLERANCE * target_tokens:
                raise ConfigurationError(
                    f"HotpotQA cannot fill {target_tokens} tokens for item {item.id} (reached {actual})"
                )
        gold_labels = [
            f"Passage {k}" for k, p in enumerate(passages, start=1) if p.title in item.supporting_titles
        ]
        instances.append(
            EvalInstance(
                id=f"{SUITE}-s{seed}-{i}-t{target_tokens}-{item.id}",
                suite=SUITE,
                question=item.question,
                documents=documents,
                gold_answers=[item.answer],
                task_family="qa",
                target_tokens=target_tokens,
                actual_tokens=actual,
                depth=None,
                metadata={
                    "seed": seed,
                    "index": i,
                    "hotpot_id": item.id,
                    "type": item.type,
                    "level": item.level,
                    "supporting_titles": sorted(item.supporting_titles),
                    "gold_passages": gold_labels,
                    "n_passages": len(passages),
                    "prompt_template": LONGBENCH_PROMPT,
                },
                doc_template=DOC_TEMPLATE,
                doc_separator=SEPARATOR,
            )
        )
    return instances
