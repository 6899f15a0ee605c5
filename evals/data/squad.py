"""Long single-document QA from SQuAD v2: the gold paragraph hidden among paragraphs of other articles.

Each instance takes one answerable SQuAD v2 dev question, puts its paragraph at a seed-chosen position
among distractor paragraphs drawn from *other* articles (a paragraph of the same article could answer
the question too), and joins them with blank lines into one document of about ``target_tokens`` tokens.

Choices made here:

* Distractors that mention any gold answer (case-insensitive, as a whole word) are left out, so a
  correct answer can only come from the gold paragraph; the gold paragraph itself may mention it more
  than once. If the corpus runs short of clean distractors at a long target, mentioning ones are used
  and ``metadata["answer_in_distractors"]`` says so.
* The same seed draws the same questions, the same distractor order and the same relative position of
  the gold paragraph whatever the target length, so a length sweep varies only the length.
* SQuAD dev has about 180K cl100k tokens in all; a target that the other articles cannot fill raises
  :class:`~longgraph.errors.ConfigurationError` naming the limit.
"""

from __future__ import annotations

import functools
import random
import threading

from longgraph.errors import ConfigurationError
from longgraph.evals.corpora import SquadParagraph, SquadQuestion, load_squad
from longgraph.evals.data.instance import EvalInstance, count_mentions, resolve_tokenizer
from longgraph.tokenizer import Tokenizer

SUITE = "squad"
SEPARATOR = "\n\n"
_LENGTH_TOLERANCE = 0.01

_cache_lock = threading.Lock()
_count_cache: dict[str, tuple[int, ...]] = {}


def _paragraph_counts(tok: Tokenizer) -> tuple[int, ...]:
    """Token counts of every SQuAD paragraph, in corpus order, counted once per tokenizer."""
    with _cache_lock:
        counts = _count_cache.get(tok.name)
        if counts is None:
            counts = tuple(tok.count_batch([p.context for p in load_squad()]))
            _count_cache[tok.name] = counts
        return counts


@functools.lru_cache(maxsize=1)
def answerable_questions() -> tuple[tuple[int, SquadQuestion], ...]:
    """(paragraph index, question) for every answerable question whose paragraph contains an answer."""
    return tuple(
        (index, question)
        for index, paragraph in enumerate(load_squad())
        for question in paragraph.questions
        if not question.is_impossible
        and question.answers
        and any(count_mentions(paragraph.context, a) or a in paragraph.context for a in question.answers)
    )


def _fill(
    candidates: list[int], counts: tuple[int, ...], budget: int, separator_tokens: int
) -> tuple[list[int], int]:
    """Greedily take candidates (in order) whose counts fit under ``budget``; stop once nearly full."""
    chosen: list[int] = []
    total = 0
    for index in candidates:
        cost = counts[index] + separator_tokens
        if total + cost <= budget:
            chosen.append(index)
            total += cost
            if total >= budget * (1 - _LENGTH_TOLERANCE / 4):
                break
    return chosen, total


def build_squad(
    *,
    target_tokens: int,
    n: int,
    seed: int,
    tokenizer: Tokenizer | None = None,
) -> list[EvalInstance]:
    """``n`` single-document SQuAD instances of about ``target_tokens`` tokens each."""
    if n < 0:
        raise ConfigurationError(f"n must be >= 0, got {n}")
    tok = resolve_tokenizer(tokenizer)
    paragraphs = load_squad()
    counts = _paragraph_counts(tok)
    separator_tokens = max(tok.count(SEPARATOR) - 1, 0)  # "\n\n" mostly merges with the preceding "."
    pool = answerable_questions()
    if n > len(pool):
        raise ConfigurationError(f"n={n} exceeds the {len(pool)} answerable SQuAD questions")

    rng = random.Random(seed)
    picks = rng.sample(pool, n)
    instances: list[EvalInstance] = []
    for i, (gold_index, question) in enumerate(picks):
        inst_rng = random.Random(seed * 1_000_003 + i)
        gold = paragraphs[gold_index]
        others = [j for j, p in enumerate(paragraphs) if p.article_index != gold.article_index]
        gold_fraction = inst_rng.random()  # drawn first: the same relative position at every length
        inst_rng.shuffle(others)
        clean = [j for j in others if not _mentions_any(paragraphs[j], question.answers)]
        budget = target_tokens - counts[gold_index]
        available = sum(counts[j] + separator_tokens for j in others)
        if budget <= 0 or available < budget * (1 - _LENGTH_TOLERANCE):
            limit = available + counts[gold_index]
            raise ConfigurationError(
                f"SQuAD cannot fill {target_tokens} tokens around question {question.id} "
                f"(at most about {limit} tokens from other articles; "
                f"the paragraph alone has {counts[gold_index]})"
            )
        chosen, total = _fill(clean, counts, budget, separator_tokens)
        answer_in_distractors = False
        if total < budget * (1 - _LENGTH_TOLERANCE):
            taken = set(chosen)
            rest = [j for j in others if j not in taken]
            more, _ = _fill(rest, counts, budget - total, separator_tokens)
            chosen += more
            answer_in_distractors = any(_mentions_any(paragraphs[j], question.answers) for j in more)
        position = round(gold_fraction * len(chosen))
        order = [*chosen[:position], gold_index, *chosen[position:]]
        texts = [paragraphs[j].context for j in order]
        document = SEPARATOR.join(texts)
        actual = tok.count(document)
        before = SEPARATOR.join(texts[:position]) + (SEPARATOR if position else "")
        instances.append(
            EvalInstance(
                id=f"{SUITE}-s{seed}-{i}-t{target_tokens}-{question.id}",
                suite=SUITE,
                question=question.question,
                documents=[{"title": "document", "text": document}],
                gold_answers=list(question.answers),
                task_family="qa",
                target_tokens=target_tokens,
                actual_tokens=actual,
                depth=min(tok.count(before) / actual, 1.0) if actual else 0.0,
                metadata={
                    "seed": seed,
                    "index": i,
                    "question_id": question.id,
                    "article": gold.article,
                    "gold_paragraph": gold.context,
                    "gold_position": position,
                    "gold_char_offset": len(before),
                    "n_paragraphs": len(order),
                    "answer_in_distractors": answer_in_distractors,
                },
            )
        )
    return instances


def _mentions_any(paragraph: SquadParagraph, answers: tuple[str, ...]) -> bool:
    return any(count_mentions(paragraph.context, answer) for answer in answers)
