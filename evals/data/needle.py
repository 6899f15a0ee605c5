"""Needle in a haystack: one planted sentence at a chosen depth of Paul Graham essays.

The filler is the Paul Graham essay collection (about 695K cl100k tokens), cycled as often as needed,
so any length up to and beyond 1.28M tokens can be built. The corpus is cut into sentence-sized pieces
once per process and their token counts are taken in one batch and cached, so a build only sums cached
counts and tokenizes the final text once (plus the prefix before the needle, to measure its depth).

Conventions (where the needle literature leaves a choice):

* **Depth** is a fraction of *tokens*: the needle goes at the sentence boundary whose token offset is
  nearest ``depth`` times the filler length (0.0: first sentence, 1.0: last).
* **Length**: ``target_tokens`` counts the whole haystack, needle included; the filler is cut at a
  sentence boundary and the result is kept within 1% of the target (the tests allow 2%).
* **Seed**: chooses the needle and the point of the corpus where the filler starts; neither depends on
  ``target_tokens`` or ``depth``, so a sweep over lengths and depths with one seed varies only those.
* The gold answer is a made-up fact that occurs in the haystack exactly once (checked on every build);
  a needle whose answer the corpus already contains is never used.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import random
import re
import threading
from dataclasses import dataclass

from longgraph.errors import ConfigurationError
from longgraph.evals.corpora import load_paul_graham_text
from longgraph.evals.data.instance import EvalInstance, count_mentions, resolve_tokenizer
from longgraph.tokenizer import Tokenizer

SUITE = "needle"


@dataclass(frozen=True, slots=True)
class Needle:
    """A planted sentence, the question that asks for it and the answer it carries."""

    sentence: str
    question: str
    answer: str


NEEDLES: tuple[Needle, ...] = (
    Needle(
        sentence=(
            "The best thing to do in San Francisco is eat a sandwich and sit in Dolores Park on a sunny day."
        ),
        question="What is the best thing to do in San Francisco?",
        answer="eat a sandwich and sit in Dolores Park on a sunny day",
    ),
    Needle(
        sentence="The secret code that opens the old lighthouse vault in Port Averell is 7319-KESTREL.",
        question="What is the secret code that opens the old lighthouse vault in Port Averell?",
        answer="7319-KESTREL",
    ),
    Needle(
        sentence="The mayor of the town of Quillhaven is a retired cartographer named Odalys Ferreira-Lund.",
        question="Who is the mayor of the town of Quillhaven?",
        answer="Odalys Ferreira-Lund",
    ),
    Needle(
        sentence="The special magic number for the Marigold project is 4820193.",
        question="What is the special magic number for the Marigold project?",
        answer="4820193",
    ),
    Needle(
        sentence="The secret ingredient of Grandmother Ilse's plum cake is a pinch of smoked cardamom.",
        question="What is the secret ingredient of Grandmother Ilse's plum cake?",
        answer="smoked cardamom",
    ),
    Needle(
        sentence="The password to the Velmont Observatory archive is lantern-orchid-42.",
        question="What is the password to the Velmont Observatory archive?",
        answer="lantern-orchid-42",
    ),
)

# A piece ends after sentence punctuation (and any closing quotes or brackets); the whitespace that
# follows starts the next piece. The essays were scraped with paragraph breaks lost ("mistakes.If you"),
# so a capital letter right after the punctuation is a boundary too. A run of marks is tried from its
# first mark only: tried from each, 4,000 dots took 0.45 s and the time grew as the square.
_BOUNDARY_RE = re.compile(r"(?<![.!?])[.!?]+[\"'”’)\]]*(?=\s|[A-Z])")
_WRAP = "\n\n"  # between the end of the corpus and its start when the filler cycles
_LENGTH_TOLERANCE = 0.01
_MAX_ADJUSTMENTS = 4

_cache_lock = threading.Lock()
_filler_cache: dict[str, tuple[tuple[str, ...], tuple[int, ...], float]] = {}


def split_sentences(text: str) -> list[str]:
    """Cut ``text`` into sentence pieces whose concatenation is ``text`` itself."""
    pieces: list[str] = []
    start = 0
    for match in _BOUNDARY_RE.finditer(text):
        pieces.append(text[start : match.end()])
        start = match.end()
    if start < len(text):
        pieces.append(text[start:])
    return pieces


def filler_pieces(tok: Tokenizer) -> tuple[tuple[str, ...], tuple[int, ...], float]:
    """The essay pieces (the wrap separator last), their token counts, and a calibration ratio.

    Counted piece by piece, the corpus comes out slightly longer than counted whole (a few tokens merge
    across sentence boundaries); the ratio of the two converts a token budget into a budget of summed
    piece counts, so the first assembly already lands close to the target. Cached per tokenizer.
    """
    with _cache_lock:
        cached = _filler_cache.get(tok.name)
        if cached is None:
            text = load_paul_graham_text()
            pieces = [*split_sentences(text), _WRAP]
            counts = tok.count_batch(pieces)
            whole = tok.count(text + _WRAP)
            cached = (tuple(pieces), tuple(counts), sum(counts) / whole if whole else 1.0)
            _filler_cache[tok.name] = cached
        return cached


@functools.lru_cache(maxsize=1)
def usable_needles() -> tuple[Needle, ...]:
    """The built-in needles whose answer the filler corpus does not already contain."""
    corpus = load_paul_graham_text()
    return tuple(n for n in NEEDLES if count_mentions(corpus, n.answer) == 0)


def take_filler(pieces: tuple[str, ...], counts: tuple[int, ...], start: int, budget: int) -> list[int]:
    """Indices of pieces from ``start`` on (cycling) whose counts sum nearest to ``budget`` tokens."""
    taken: list[int] = []
    total = 0
    for index in itertools.cycle(range(start, start + len(pieces))):
        i = index % len(pieces)
        if total + counts[i] > budget:
            if budget - total > total + counts[i] - budget:  # overshooting by a little is closer
                taken.append(i)
            break
        taken.append(i)
        total += counts[i]
    return taken


def _assemble(
    pieces: tuple[str, ...], counts: tuple[int, ...], taken: list[int], needle: Needle, depth: float
) -> tuple[str, str, int]:
    """Join the filler with the needle at the sentence boundary nearest ``depth``.

    Returns the haystack, the text before the needle and the needle's character offset.
    """
    cumulative = [0, *itertools.accumulate(counts[i] for i in taken)]
    goal = depth * cumulative[-1]
    at = bisect.bisect_left(cumulative, goal)
    if at > 0 and (at == len(cumulative) or goal - cumulative[at - 1] <= cumulative[at] - goal):
        at -= 1
    before = "".join(pieces[i] for i in taken[:at])
    after = "".join(pieces[i] for i in taken[at:])
    needle_text = needle.sentence if not before or before[-1].isspace() else " " + needle.sentence
    if after and not after[0].isspace():
        needle_text += " "
    return before + needle_text + after, before, len(before) + (len(needle_text) - len(needle_text.lstrip()))


def build_needle(
    *,
    target_tokens: int,
    n: int,
    seed: int,
    depth: float = 0.5,
    needles: tuple[Needle, ...] | None = None,
    tokenizer: Tokenizer | None = None,
) -> list[EvalInstance]:
    """``n`` needle-in-a-haystack instances of ``target_tokens`` tokens with the needle at ``depth``."""
    if not 0.0 <= depth <= 1.0:
        raise ConfigurationError(f"needle depth must lie in [0, 1], got {depth}")
    if n < 0:
        raise ConfigurationError(f"n must be >= 0, got {n}")
    tok = resolve_tokenizer(tokenizer)
    pool = usable_needles() if needles is None else needles
    if not pool:
        raise ConfigurationError("no needle to plant: every candidate's answer already occurs in the filler")
    longest = max(tok.count(" " + nd.sentence + " ") for nd in pool)
    if target_tokens < 4 * longest:
        raise ConfigurationError(
            f"target_tokens={target_tokens} is too short for a haystack (min {4 * longest})"
        )
    pieces, counts, ratio = filler_pieces(tok)

    rng = random.Random(seed)
    order = rng.sample(pool, len(pool))
    instances: list[EvalInstance] = []
    for i in range(n):
        needle = order[i % len(order)]
        start = rng.randrange(len(pieces))
        budget = target_tokens - tok.count(" " + needle.sentence + " ")
        for _ in range(_MAX_ADJUSTMENTS):
            taken = take_filler(pieces, counts, start, round(budget * ratio))
            haystack, before, offset = _assemble(pieces, counts, taken, needle, depth)
            actual = tok.count(haystack)
            if abs(actual - target_tokens) <= _LENGTH_TOLERANCE * target_tokens:
                break
            budget += target_tokens - actual  # piece counts drift slightly from the joined text's count
        mentions = count_mentions(haystack, needle.answer)
        if mentions != 1:  # pragma: no cover - guarded by usable_needles(); kept as a hard invariant
            raise RuntimeError(f"needle answer {needle.answer!r} occurs {mentions} times in the haystack")
        needle_depth = tok.count(before) / actual if actual else 0.0
        instances.append(
            EvalInstance(
                id=f"{SUITE}-s{seed}-{i}-t{target_tokens}-d{depth:.3f}",
                suite=SUITE,
                question=needle.question,
                documents=[{"title": "Paul Graham essays", "text": haystack}],
                gold_answers=[needle.answer],
                task_family="retrieval",
                target_tokens=target_tokens,
                actual_tokens=actual,
                depth=depth,
                metadata={
                    "seed": seed,
                    "index": i,
                    "needle": needle.sentence,
                    "needle_char_offset": offset,
                    "needle_token_depth": needle_depth,
                    "filler_start_piece": start,
                    "filler_corpus_passes": len(taken) / len(pieces),
                },
            )
        )
    return instances
