"""InfiniteBench's official scoring rules, one per task, as its ``src/compute_scores.py`` defines them.

Read from the benchmark's repository (OpenBMB/InfiniteBench, ``src/compute_scores.py`` at commit
88b3daa) and written again here, rule for rule, so published predictions re-score to the published
numbers (checked: see ``evals/bench/README.md``). Quirks are kept on purpose, because they are part of
the numbers a user compares with:

* passkey, number_string: the *first* run of digits in the prediction must equal the label string
  (``first_int_match``);
* kv_retrieval: the label must be one of the prediction's words after ``\\n : " ' . , ? ! { }`` become
  spaces;
* longdialogue_qa_eng: the same split, words upper-cased, the (upper-case) name must be one of them;
* longbook_choice_eng: a prediction opening with A–D is judged by that letter; else the text after
  "answer is:", "answer:", "answer is" or "option is"; else the first word that is A, B, C or D (the
  label holds the option text and its letter);
* code_debug: "X." or "X:" opening the prediction, else the text after "answer is:", "is:", "answer:" or
  "correct option is:" must start with the letter or the function name;
* code_run: the *last* word must be the integer;
* math_find: the first number in the prediction, as an int or a float like the label;
* math_calc: how many leading intermediate values are right, over the label's length (the official
  scorer drops the first number for GPT-4 only; that model-specific rule is not applied here);
* longbook_qa_eng: SQuAD-style token F1, best over the labels (articles and ASCII punctuation removed);
* longbook_qa_chn: character F1 after removing Chinese and ASCII punctuation and all whitespace;
* longbook_sum_eng: ROUGE-Lsum (:mod:`longgraph.evals.scoring.rouge`).
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from longgraph.errors import InputError
from longgraph.evals.scoring.rouge import rouge_lsum

_RETRIEVAL_SEPARATORS = ("\n", ":", '"', "'", ".", ",", "?", "!", "{", "}")
_ZH_PUNCTUATION = (
    "！？｡。＂＃＄％＆＇（）＊＋，－／：；＜＝＞＠［＼］＾＿｀｛｜｝～｟｠｢｣､、〃》「」『』【】〔〕〖〗〘〙〚〛〜〝〞〟〰〾〿"
    "–—‘’‛“”„‟…‧﹏."
)


def _first(label: Any) -> Any:
    return label[0] if isinstance(label, list) and label else label


def _replace_all(text: str, separators: Sequence[str]) -> str:
    for separator in separators:
        text = text.replace(separator, " ")
    return text


def _words(prediction: str) -> list[str]:
    return _replace_all(prediction, _RETRIEVAL_SEPARATORS).split()


def _squeeze_spaces(text: str) -> str:
    while "  " in text:
        text = text.replace("  ", " ")
    return text


def _after_prefix(pred: str, prefixes: Sequence[str]) -> str | None:
    """The text after the first of ``prefixes`` found (tried in order) and one character more, as the
    official choice rules slice it ("" when the prediction ends there); None when none is found."""
    for prefix in prefixes:
        index = pred.find(prefix)
        if index != -1:
            return pred[index + len(prefix) + 1 :]
    return None


def first_int_match(prediction: str) -> str:
    """The first run of digits in ``prediction`` ("" when there is none)."""
    found = re.search(r"[0-9]+", prediction)
    return found.group(0) if found else ""


def score_passkey(prediction: str, label: Any) -> float:
    """Also number_string: the first digits must equal the label (a string, as in the data files)."""
    return float(_first(label) == first_int_match(prediction))


def score_kv_retrieval(prediction: str, label: Any) -> float:
    return float(_first(label) in _words(prediction))


def score_longdialogue(prediction: str, label: Any) -> float:
    return float(_first(label) in [word.upper() for word in _words(prediction.strip())])


def score_choice(prediction: str, label: Any) -> float:
    """longbook_choice_eng; ``label`` is ``[option text, letter]`` (or any list holding the letter)."""
    labels = label if isinstance(label, list) else [label]
    pred = prediction.strip()
    if not pred:
        return 0.0
    if pred[0] in "ABCD":
        return float(pred[0] in labels)
    if pred in labels:
        return 1.0
    pred = _squeeze_spaces(_replace_all(pred, ("\n", '"', "'", ".", ",", "?", "!", "{", "}")))
    after = _after_prefix(pred, ("answer is:", "answer:", "answer is", "option is"))
    if after is not None:
        return float(any(after.startswith(str(option)) for option in labels))
    for word in pred.split():
        if word in "ABCD":
            return float(word in labels)
    return 0.0


def score_code_debug(prediction: str, label: Any) -> float:
    """``label`` is ``[function name, letter]``, as the official ``get_answer`` builds it."""
    if not isinstance(label, list) or len(label) < 2:
        raise InputError(f"code_debug label must be [function name, option letter], got {label!r}")
    function, letter = str(label[0]), str(label[1])
    pred = prediction.strip()
    if pred[:2] in (f"{letter}.", f"{letter}:"):
        return 1.0
    pred = _squeeze_spaces(_replace_all(pred, ("\n", "`", "'", '"', "-", "*", "Option", "option")))
    after = _after_prefix(pred, ("answer is:", "is:", "answer:", "correct option is:"))
    return float(after is not None and (after.startswith(letter) or after.startswith(function)))


def score_code_run(prediction: str, label: Any) -> float:
    words = _replace_all(prediction.strip(), ("\n", ".", "`", "'", '"', ":")).split()
    if not words:
        return 0.0
    try:
        return float(int(words[-1]) == _first(label))
    except ValueError:
        return 0.0


def score_math_find(prediction: str, label: Any) -> float:
    expected = _first(label)
    found = re.search(r"\d+\.\d+|\d+", prediction)
    if found is None:
        return 0.0
    if isinstance(expected, bool) or not isinstance(expected, int | float):
        raise InputError(f"math_find label must be a number, got {expected!r}")
    number = found.group(0)
    if isinstance(expected, int):  # the official int("3.5") raises; a decimal is simply not the integer
        return float("." not in number and int(number) == expected)
    return float(float(number) == expected)


def score_math_calc(prediction: str, label: Any) -> float:
    values = label[0] if isinstance(label, list) and label and isinstance(label[0], list) else label
    if not isinstance(values, list) or not values:
        raise InputError(f"math_calc label must be a list of numbers, got {label!r}")
    predicted = [int(item) for item in re.split("[^0-9]", prediction) if item]
    right = 0
    for expected, got in zip(values, predicted, strict=False):
        if expected != got:
            break
        right += 1
    return right / len(values)


def _normalize_en(text: str) -> str:
    text = "".join(ch for ch in text.lower() if ch not in set(string.punctuation))
    return " ".join(re.sub(r"\b(a|an|the)\b", " ", text).split())


def _normalize_zh(text: str) -> str:
    excluded = set(string.punctuation + _ZH_PUNCTUATION)
    return "".join("".join(ch for ch in text.lower() if ch not in excluded).split())


def _f1(pred: Sequence[str], gold: Sequence[str]) -> float:
    same = sum((Counter(pred) & Counter(gold)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(gold)
    return 2 * precision * recall / (precision + recall)


def _labels(label: Any) -> list[str]:
    return [str(x) for x in label] if isinstance(label, list) else [str(label)]


def score_qa_en(prediction: str, label: Any) -> float:
    tokens = _normalize_en(prediction).split()
    return max((_f1(tokens, _normalize_en(gold).split()) for gold in _labels(label)), default=0.0)


def score_qa_zh(prediction: str, label: Any) -> float:
    chars = list(_normalize_zh(prediction))
    return max((_f1(chars, list(_normalize_zh(gold))) for gold in _labels(label)), default=0.0)


def score_summary(prediction: str, label: Any) -> float:
    return max((rouge_lsum(prediction, gold) for gold in _labels(label)), default=0.0)


RULES: Mapping[str, Callable[[str, Any], float]] = {
    "passkey": score_passkey,
    "number_string": score_passkey,
    "kv_retrieval": score_kv_retrieval,
    "longdialogue_qa_eng": score_longdialogue,
    "longbook_choice_eng": score_choice,
    "longbook_qa_eng": score_qa_en,
    "longbook_qa_chn": score_qa_zh,
    "longbook_sum_eng": score_summary,
    "code_debug": score_code_debug,
    "code_run": score_code_run,
    "math_find": score_math_find,
    "math_calc": score_math_calc,
}
"""Task name → official rule; every rule returns a score in [0, 1]."""


def score_infinitebench(task: str, prediction: str, label: Any) -> float:
    """The official score of one prediction (a KeyError-free, typed error for an unknown task)."""
    rule = RULES.get(task)
    if rule is None:
        raise InputError(f"InfiniteBench task {task!r} has no scoring rule; known: {', '.join(RULES)}")
    return rule(prediction, label)
