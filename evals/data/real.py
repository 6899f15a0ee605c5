"""Real human-written questions in long documents: SQuAD v2 and HotpotQA planted in essay filler.

The templated suite (:mod:`longgraph.evals.data.general`) is written by the project; an answer layer can
come to fit its sentences. This suite asks questions people wrote about text people wrote:

* ``squad``: an answerable SQuAD v2 dev question; its paragraph is planted whole;
* ``squad-unanswerable``: a SQuAD v2 dev question written to look answerable from its paragraph and
  not be (right answer: NO INFORMATION); its paragraph is planted whole;
* ``hotpot-bridge`` and ``hotpot-comparison``: a HotpotQA dev question (distractor setting): both gold
  paragraphs and three of the item's own distractor paragraphs, each planted on its own, apart.

Every planted paragraph sits at a seed-chosen depth in its own stretch of Paul Graham essay filler
(the document is cut into as many equal stretches as there are paragraphs, in a seed-shuffled order),
so the paragraphs of a two-hop question are never next to one another.

**Gold evidence.** Each instance names the sentences a reader needs (``metadata["facts"]``): for SQuAD
the sentence of the paragraph that holds the first annotated answer (by its ``answer_start``), for
HotpotQA the annotated supporting facts. The reference reader (:mod:`longgraph.evals.readers.real`) is
built from these and the gold answers alone.

**Splits**, fixed once: a SQuAD question's split is its article's, a HotpotQA question's is its id's,
by a SHA-256 hash (:func:`split_of`); about a third is ``test``. The test split is for reporting only:
nothing is tuned on it and nothing moves from it into dev. Every instance records its split.

Choices: HotpotQA items whose answer (other than yes/no) is not in a supporting sentence, or whose
supporting facts point past their paragraph, are left out, so the gold evidence is present and
complete. Filler that mentions a gold answer (whole word) is drawn again from another start; if twenty
starts all do, ``metadata["answer_in_filler"]`` says so. Scored by :func:`score_real` (SQuAD's official
normalisation).
"""

from __future__ import annotations

import functools
import hashlib
import random
from collections.abc import Sequence
from typing import Any, Literal, get_args

from longgraph.errors import ConfigurationError
from longgraph.evals.corpora import HotpotItem, load_hotpot, load_paul_graham_text, load_squad
from longgraph.evals.data.instance import EvalInstance, count_mentions, resolve_tokenizer
from longgraph.evals.data.needle import split_sentences
from longgraph.evals.metrics import exact_match, token_f1, tokenize
from longgraph.tokenizer import Tokenizer

SUITE = "real"
Kind = Literal["squad", "squad-unanswerable", "hotpot-bridge", "hotpot-comparison"]
KINDS: tuple[Kind, ...] = get_args(Kind)
Split = Literal["dev", "test"]
SPLITS: tuple[Split, ...] = get_args(Split)
NO_INFORMATION = "NO INFORMATION"
HOTPOT_DISTRACTORS = 3
"""Distractor paragraphs planted beside a HotpotQA question's two gold paragraphs (its own, in order)."""
_FILLER_TRIES = 20


def split_of(key: str) -> Split:
    """The split of an article title (SQuAD) or a question id (HotpotQA): fixed by a hash, never moved."""
    digest = hashlib.sha256(f"longgraph-real-split:{key}".encode()).digest()
    return "test" if digest[0] % 3 == 0 else "dev"


def _flat(text: str) -> str:
    return " ".join(text.split())


@functools.lru_cache(maxsize=1)
def _squad_pool() -> dict[Kind, tuple[dict[str, Any], ...]]:
    """Every usable SQuAD question as a case: its paragraph, its gold and its evidence sentence."""
    answerable: list[dict[str, Any]] = []
    unanswerable: list[dict[str, Any]] = []
    for paragraph in load_squad():
        sentences = split_sentences(paragraph.context)
        for q in paragraph.questions:
            base = {
                "id": q.id,
                "key": paragraph.article,
                "question": q.question,
                "paragraphs": [paragraph.context],
                "source": f"SQuAD v2 dev, article {paragraph.article!r}",
            }
            if q.is_impossible:
                unanswerable.append({**base, "gold": [NO_INFORMATION], "facts": []})
                continue
            if not q.answers or not q.answer_starts:
                continue
            start = q.answer_starts[0]
            end = start + len(q.answers[0])
            if paragraph.context[start:end] != q.answers[0]:
                continue  # an annotation whose offset does not point at its text
            facts, at = [], 0
            for sentence in sentences:
                if at < end and at + len(sentence) > start:
                    facts.append(sentence)
                at += len(sentence)
            answerable.append({**base, "gold": list(q.answers), "facts": [_flat("".join(facts))]})
    return {"squad": tuple(answerable), "squad-unanswerable": tuple(unanswerable)}


def _hotpot_case(item: HotpotItem) -> dict[str, Any] | None:
    by_title = {p.title: p for p in item.passages}
    gold_titles = sorted(item.supporting_titles, key=[p.title for p in item.passages].index)
    facts: list[str] = []
    for title, index in item.supporting_facts:
        passage = by_title.get(title)
        if passage is None or not 0 <= index < len(passage.sentences):
            return None
        facts.append(_flat(passage.sentences[index]))
    yes_no = item.answer.lower() in ("yes", "no")
    if not item.answer or (not yes_no and not any(count_mentions(f, item.answer) for f in facts)):
        return None
    distractors = [p for p in item.passages if p.title not in item.supporting_titles][:HOTPOT_DISTRACTORS]
    return {
        "id": item.id,
        "key": item.id,
        "question": item.question,
        "paragraphs": [f"{by_title[t].title}\n{by_title[t].text}" for t in gold_titles]
        + [f"{p.title}\n{p.text}" for p in distractors],
        "gold": [item.answer],
        "facts": list(dict.fromkeys(facts)),
        "source": f"HotpotQA dev (distractor), {item.type}, {item.level}",
    }


@functools.lru_cache(maxsize=1)
def _hotpot_pool() -> dict[Kind, tuple[dict[str, Any], ...]]:
    pools: dict[Kind, list[dict[str, Any]]] = {"hotpot-bridge": [], "hotpot-comparison": []}
    for item in load_hotpot():
        case = _hotpot_case(item)
        kind: Kind = "hotpot-comparison" if item.type == "comparison" else "hotpot-bridge"
        if case is not None:
            pools[kind].append(case)
    return {k: tuple(v) for k, v in pools.items()}


def cases(kind: Kind, split: Split) -> tuple[dict[str, Any], ...]:
    """The cases of one kind and split, in a fixed order independent of corpus order (by id hash)."""
    pool = (_squad_pool() if kind.startswith("squad") else _hotpot_pool())[kind]
    chosen = [c for c in pool if split_of(c["key"]) == split]
    return tuple(sorted(chosen, key=lambda c: hashlib.sha256(c["id"].encode()).hexdigest()))


def _filler(rng: random.Random, tokens: int, tok: Tokenizer, avoid: Sequence[str]) -> tuple[list[str], bool]:
    """Essay sentence pieces of about ``tokens`` tokens from a seeded start, mentioning none of ``avoid``
    when twenty starts allow; and whether a mention was left in."""
    pieces = split_sentences(load_paul_graham_text())
    chosen: list[str] = []
    for _ in range(_FILLER_TRIES):
        start = rng.randrange(len(pieces))
        chosen, used = [], 0
        for piece in pieces[start:] + pieces[:start]:
            if used >= tokens:
                break
            chosen.append(piece)
            used += max(len(piece) // 4, 1)  # a cheap estimate; the whole is counted exactly below
        text = "".join(chosen)
        if not any(count_mentions(text, a) for a in avoid):
            return chosen, False
    return chosen, True


def _plant(
    case: dict[str, Any], target: int, rng: random.Random, tok: Tokenizer
) -> tuple[str, list[float], bool]:
    """The document: filler with each paragraph planted at a seeded depth in its own stretch."""
    paragraphs = list(case["paragraphs"])
    budget = max(target - sum(tok.count(p) + 4 for p in paragraphs), 200)
    avoid = [g for g in case["gold"] if g not in (NO_INFORMATION, "yes", "no")]
    state = rng.getstate()
    pieces, leaked = _filler(rng, budget, tok, avoid)
    # The filler's length was estimated; counted once, the budget is scaled so the document lands near
    # its target, and the same draws are made again.
    counted = max(tok.count("".join(pieces)), 1)
    rng.setstate(state)
    pieces, leaked = _filler(rng, round(budget * budget / counted), tok, avoid)
    order = list(range(len(paragraphs)))
    rng.shuffle(order)
    stretch = len(pieces) / len(paragraphs)
    cuts = sorted(round(stretch * (i + rng.uniform(0.1, 0.9))) for i in range(len(paragraphs)))
    parts: list[str] = []
    last = 0
    offsets: list[int] = []
    for cut, which in zip(cuts, order, strict=True):
        parts += pieces[last:cut]
        offsets.append(sum(len(p) for p in parts))
        parts.append(f"\n\n{paragraphs[which]}\n\n")
        last = cut
    parts += pieces[last:]
    text = "".join(parts)
    return text, [round(o / max(len(text), 1), 3) for o in offsets], leaked


def build_real(
    *,
    target_tokens: int,
    n: int,
    seed: int,
    split: Split | None = None,
    kinds: Sequence[str] | None = None,
    tokenizer: Tokenizer | None = None,
) -> list[EvalInstance]:
    """``n`` instances per kind of ``split`` (both when None), ``target_tokens`` long; seed ``s`` takes
    the ``s``-th run of ``n`` cases of each kind's fixed order, so seeds never share a question."""
    unknown = [k for k in kinds or () if k not in KINDS]
    if unknown:
        raise ConfigurationError(
            f"unknown kind(s) {', '.join(unknown)} (the real suite has {', '.join(KINDS)})"
        )
    if target_tokens < 2_000:
        raise ConfigurationError(f"target_tokens={target_tokens} is too short for the real suite (min 2000)")
    if n < 0 or seed < 0:
        raise ConfigurationError(f"n and seed must be >= 0, got n={n}, seed={seed}")
    tok = resolve_tokenizer(tokenizer)
    instances: list[EvalInstance] = []
    for which in (split,) if split else SPLITS:
        for kind in (k for k in KINDS if kinds is None or k in kinds):
            pool = cases(kind, which)
            for i in range(n):
                case = pool[(seed * n + i) % len(pool)]
                rng = random.Random(f"{seed}:{which}:{kind}:{i}:{case['id']}")
                text, depths, leaked = _plant(case, target_tokens, rng, tok)
                instances.append(
                    EvalInstance(
                        id=f"{SUITE}-{which}-{kind}-s{seed}-{i}-t{target_tokens}-{case['id']}",
                        suite=SUITE,
                        question=case["question"],
                        documents=[{"title": "document", "text": text}],
                        gold_answers=list(case["gold"]),
                        task_family="qa",
                        target_tokens=target_tokens,
                        actual_tokens=tok.count(text),
                        depth=depths[0],
                        scorer="real",
                        label={"kind": kind, "answers": list(case["gold"])},
                        metadata={
                            "split": which,
                            "kind": kind,
                            "question_id": case["id"],
                            "source": case["source"],
                            "facts": case["facts"],
                            "depths": depths,
                            "answer_in_filler": leaked,
                            "seed": seed,
                            "index": i,
                        },
                    )
                )
    return instances


def score_real(prediction: str, label: Any) -> dict[str, float]:
    """``correct``: NO INFORMATION for an unanswerable question; for yes/no the one verdict and not the
    other; else a gold answer, normalised as SQuAD's official script does, as whole tokens in the
    normalised prediction (a right answer in a sentence counts). ``em`` and ``f1`` are SQuAD's own
    (against NO INFORMATION for an unanswerable question); ``silent``: the answer is NO INFORMATION."""
    from longgraph.state.outputs import is_no_information

    golds = [str(g) for g in label["answers"]]
    silent = is_no_information(prediction)
    if golds == [NO_INFORMATION]:
        return {"correct": float(silent), "em": float(silent), "f1": float(silent), "silent": float(silent)}
    said = tokenize(prediction)
    if golds[0].lower() in ("yes", "no"):
        verdict, other = golds[0].lower(), "no" if golds[0].lower() == "yes" else "yes"
        right = verdict in said and other not in said
    else:
        right = any(_holds(said, tokenize(g)) for g in golds)
    return {
        "correct": float(right and not silent),
        "em": exact_match(prediction, golds),
        "f1": token_f1(prediction, golds),
        "silent": float(silent),
    }


def _holds(said: Sequence[str], gold: Sequence[str]) -> bool:
    width = len(gold)
    return bool(width) and any(list(said[i : i + width]) == list(gold) for i in range(len(said) - width + 1))
