"""Answer metrics: exact match, token F1, ROUGE-L, multiple-choice accuracy and needle match.

Normalisation follows SQuAD and LongBench, so numbers are comparable with published ones: lower-case,
drop punctuation (ASCII and Unicode), drop the English articles *a*, *an*, *the*, collapse whitespace.
Tokens are words, except that Chinese, Japanese and Korean characters are one token each (LongBench
scores Chinese at character level for ROUGE; doing the same for F1 avoids depending on a word
segmenter). Mixed text works: "GDP增长了5%" gives ``["gdp", "增", "长", "了", "5"]``.

Every scorer takes a list of gold answers and returns the best score over them, as SQuAD does.
ROUGE-L is implemented here (LCS over the same tokens, F1 of LCS precision and recall, i.e. beta = 1 as
in the ``rouge`` package LongBench uses), so no scorer downloads anything.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from collections.abc import Sequence

from longgraph.errors import InputError

_ARTICLES = frozenset({"a", "an", "the"})
_CJK = (
    "\u2e80-\u2fdf"  # CJK radicals
    "\u3040-\u30ff"  # hiragana, katakana
    "\u3100-\u312f"  # bopomofo
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uac00-\ud7af"  # hangul syllables
    "\uf900-\ufaff"  # CJK compatibility ideographs
)
_TOKEN_RE = re.compile(rf"[{_CJK}]|[^\s{_CJK}]+")
_ASCII_PUNCT = frozenset(string.punctuation)


def _is_punctuation(char: str) -> bool:
    return char in _ASCII_PUNCT or unicodedata.category(char).startswith("P")


def tokenize(text: str) -> list[str]:
    """Normalised tokens of ``text``: lower-cased, no punctuation or articles, CJK one char per token."""
    lowered = "".join(" " if _is_punctuation(c) else c for c in text.lower())
    return [token for token in _TOKEN_RE.findall(lowered) if token not in _ARTICLES]


def normalize_answer(text: str) -> str:
    """The normalised form of an answer, tokens joined by single spaces."""
    return " ".join(tokenize(text))


def _golds(golds: Sequence[str] | str) -> list[str]:
    return [golds] if isinstance(golds, str) else list(golds)


def exact_match(prediction: str, golds: Sequence[str] | str) -> float:
    """1.0 if the normalised prediction equals any normalised gold answer, else 0.0."""
    pred = tokenize(prediction)
    return 1.0 if any(pred == tokenize(gold) for gold in _golds(golds)) else 0.0


def _overlap_f1(pred: list[str], gold: list[str], common: int) -> float:
    """F1 of a prediction against a gold answer sharing ``common`` tokens (both empty: a match)."""
    if not pred or not gold:
        return 1.0 if pred == gold else 0.0
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(gold)
    return 2 * precision * recall / (precision + recall)


def _f1(pred: list[str], gold: list[str]) -> float:
    return _overlap_f1(pred, gold, sum((Counter(pred) & Counter(gold)).values()))


def token_f1(prediction: str, golds: Sequence[str] | str) -> float:
    """SQuAD token F1 (bag-of-tokens overlap), the best over the gold answers."""
    pred = tokenize(prediction)
    return max((_f1(pred, tokenize(gold)) for gold in _golds(golds)), default=0.0)


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of two token sequences (O(len(a)·len(b)), two rows)."""
    if len(a) < len(b):
        a, b = b, a
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b, start=1):
            current.append(previous[j - 1] + 1 if x == y else max(previous[j], current[j - 1]))
        previous = current
    return previous[-1]


def _rouge_l(pred: list[str], gold: list[str]) -> float:
    return _overlap_f1(pred, gold, lcs_length(pred, gold) if pred and gold else 0)


def rouge_l(prediction: str, golds: Sequence[str] | str) -> float:
    """ROUGE-L F1 (LCS-based, beta = 1) on normalised tokens, the best over the gold answers."""
    pred = tokenize(prediction)
    return max((_rouge_l(pred, tokenize(gold)) for gold in _golds(golds)), default=0.0)


# Choice extraction, most explicit first: "answer is (B)", "Answer: B", "答案：B" ...
_EXPLICIT_PATTERNS = (
    r"answer\s*+(?:is|:|：|=|would be|should be|must be)?\s*+(?:option|choice)?\s*+[\(\[\"'*]*+\s*+"
    r"([{letters}])(?![A-Za-z])",
    r"(?:option|choice)\s*+(?:is|:|：)\s*+[\(\[\"'*]*+([{letters}])(?![A-Za-z])",
    r"(?:option|choice)\s*+[\(\[\"'*]*+([{letters}])(?![A-Za-z])\s*+(?:is|would be)?\s*+"
    r"(?:correct|right|the answer)",
    r"答案\s*+(?:是|为|：|:)?\s*+[\(（\[]?\s*+([{letters}])",
    r"(?:选|选择)\s*+[\(（\[]?\s*+([{letters}])",
)
r"""Possessive runs (``\s*+``): each run of spaces is read once. With plain ``\s*`` on both sides of an
optional word, "answer" and 400 spaces took 69 s to score (the time grew as the fourth power), and a
model's answer is what is scored."""
_LEADING_PATTERNS = (
    r"^\s*+[\(\[（]\s*+([{letters}])\s*+[\)\]）]",  # "(B) the garbage"
    r"^\s*+\**+([{letters}])\**+\s*+(?:[\)\.:：,、]|$)",  # "B. the garbage", "B)", "B" (but not "A good ...")
)
_BRACKETED_PATTERN = r"[\(\[（]([{letters}])[\)\]）]"


def extract_choice(text: str, options: str = "ABCD") -> str | None:
    """The option letter a multiple-choice answer chose, or None when it names none unambiguously.

    Looks, in order, for an explicit statement ("The answer is (B)", "Answer: B", "答案：B"), then for a
    letter opening the answer ("B. The garbage", "(B)", "B"), then for a single bracketed letter
    anywhere ("... so (C)"). Only capital letters among ``options`` count, so the pronoun "I" or the
    article "a" is never read as an option.
    """
    letters = re.escape("".join(sorted(set(options.upper()))))
    for pattern in _EXPLICIT_PATTERNS:
        matches = re.findall(pattern.format(letters=letters), text, flags=re.IGNORECASE)
        upper = [m for m in matches if m.isupper()] if matches else []
        if upper:
            return str(upper[-1])
    for pattern in _LEADING_PATTERNS:
        leading = re.match(pattern.format(letters=letters), text)
        if leading:
            return str(leading.group(1))
    bracketed = set(re.findall(_BRACKETED_PATTERN.format(letters=letters), text))
    if len(bracketed) == 1:
        return str(bracketed.pop())
    return None


def mc_accuracy(prediction: str, gold_letter: str, options: str = "ABCD") -> float:
    """1.0 if the option letter extracted from ``prediction`` is ``gold_letter``, else 0.0."""
    gold = gold_letter.strip().strip("().").upper()
    chosen = extract_choice(prediction, options if gold in options.upper() else options + gold)
    return 1.0 if chosen is not None and chosen == gold else 0.0


def needle_match(prediction: str, gold: Sequence[str] | str) -> float:
    """1.0 if a normalised gold answer occurs, as whole tokens, inside the normalised prediction.

    Retrieval tests ask for a planted fact; an answer that states it inside a longer sentence ("The
    code is 7319-KESTREL, as written in ...") has found it, so containment, not equality, is the test.
    Normalisation makes case, punctuation and articles irrelevant ("7319 kestrel" matches).
    """
    pred = f" {normalize_answer(prediction)} "
    for answer in _golds(gold):
        norm = normalize_answer(answer)
        if norm and f" {norm} " in pred:
            return 1.0
    return 0.0


def score_instance(task_family: str, prediction: str, golds: Sequence[str] | str) -> dict[str, float]:
    """All metrics that apply to a task family (see :data:`longgraph.evals.data.instance.TaskFamily`).

    ``qa``: exact_match, f1, rouge_l; ``mc``: accuracy (the first gold is the letter); ``retrieval``:
    needle_match, f1; ``open``: f1 and rouge_l, a proxy only, the real score being the LLM judge's.
    """
    gold_list = _golds(golds)
    if task_family == "qa":
        return {
            "exact_match": exact_match(prediction, gold_list),
            "f1": token_f1(prediction, gold_list),
            "rouge_l": rouge_l(prediction, gold_list),
        }
    if task_family == "mc":
        if not gold_list:
            raise InputError("multiple-choice scoring needs the gold option letter")
        return {"accuracy": mc_accuracy(prediction, gold_list[0])}
    if task_family == "retrieval":
        return {"needle_match": needle_match(prediction, gold_list), "f1": token_f1(prediction, gold_list)}
    if task_family == "open":
        return {"f1": token_f1(prediction, gold_list), "rouge_l": rouge_l(prediction, gold_list)}
    raise InputError(f"unknown task family {task_family!r} (expected qa, mc, retrieval or open)")
