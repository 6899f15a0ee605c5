"""ROUGE-Lsum as Google's ``rouge-score`` package computes it (what 🤗 Evaluate's ``rouge`` reports).

InfiniteBench scores En.Sum with ``evaluate.load("rouge")`` and reads ``rougeLsum`` (its
``src/compute_scores.py``), which is ``rouge_score.rouge_scorer.RougeScorer(["rougeLsum"])`` with no
stemmer. Loading it would need the network (Evaluate fetches the metric script) or three more packages,
so the same computation is written here and checked against ``rouge-score`` in the tests:

* tokens: lower-cased text, every run of characters other than ``a-z0-9`` a separator (so non-Latin
  text has no tokens, as in ``rouge-score``);
* sentences: the text split on newlines, empty lines dropped (``rouge-score`` does not sentence-split
  for ``rougeLsum`` unless asked to);
* summary-level LCS: for each reference sentence, the union of its LCS with every candidate sentence;
  each union token counts as a hit once while both texts still have an unused copy of it; precision =
  hits / candidate tokens, recall = hits / reference tokens, F1 of the two.

This differs from :func:`longgraph.evals.metrics.rouge_l` (SQuAD normalisation, one sequence), which
stays what the other suites report.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def rouge_tokens(text: str) -> list[str]:
    """``rouge-score``'s default tokenizer without a stemmer."""
    return [token for token in _NON_ALNUM.sub(" ", text.lower()).split() if token]


def _sentences(text: str) -> list[list[str]]:
    return [rouge_tokens(line) for line in text.split("\n") if line]


def _lcs_table(ref: Sequence[str], can: Sequence[str]) -> list[list[int]]:
    table = [[0] * (len(can) + 1) for _ in range(len(ref) + 1)]
    for i in range(1, len(ref) + 1):
        for j in range(1, len(can) + 1):
            if ref[i - 1] == can[j - 1]:
                table[i][j] = table[i - 1][j - 1] + 1
            else:
                table[i][j] = max(table[i - 1][j], table[i][j - 1])
    return table


def _lcs_indices(ref: Sequence[str], can: Sequence[str]) -> list[int]:
    """Indices into ``ref`` of one LCS, chosen by the same backtracking rule as ``rouge-score``."""
    table = _lcs_table(ref, can)
    i, j = len(ref), len(can)
    picked: list[int] = []
    while i > 0 and j > 0:
        if ref[i - 1] == can[j - 1]:
            picked.append(i - 1)
            i, j = i - 1, j - 1
        elif table[i][j - 1] > table[i - 1][j]:
            j -= 1
        else:
            i -= 1
    return picked[::-1]


def rouge_lsum(prediction: str, reference: str) -> float:
    """Summary-level ROUGE-L F1 of ``prediction`` against ``reference`` (0.0 when either is empty)."""
    refs, cans = _sentences(reference), _sentences(prediction)
    ref_total, can_total = sum(map(len, refs)), sum(map(len, cans))
    if not ref_total or not can_total:
        return 0.0
    ref_left: Counter[str] = Counter(token for sentence in refs for token in sentence)
    can_left: Counter[str] = Counter(token for sentence in cans for token in sentence)
    hits = 0
    for ref in refs:
        union: set[int] = set()
        for can in cans:
            union.update(_lcs_indices(ref, can))
        for index in sorted(union):
            token = ref[index]
            if ref_left[token] > 0 and can_left[token] > 0:
                hits += 1
                ref_left[token] -= 1
                can_left[token] -= 1
    if not hits:
        return 0.0
    precision, recall = hits / can_total, hits / ref_total
    return 2 * precision * recall / (precision + recall)
