"""Whether a final answer follows from the verified notes: read in them, or worked out from them.

The grounding check (``nodes/grounding.py``) asks that an answer's words be found in its notes' quotes:
right for an answer copied from the text, wrong for one reasoned from it. A capable reader asked "How
many goals did the three teams score in total?" reduces three notes (3, 4 and 5 goals) to "12", a number
no quote holds; asked "Did the Harriers score more than the Wolves?", it answers "No". Overruling them
with a note sentence turned right answers into wrong ones marked supported. This module decides, in
code, whether such an answer is **derived** from the notes:

* a **number** of the answer (one the question does not hold) is in a note, or is a count, sum,
  difference, extremum or mean over the notes' numbers (one number per note, over every group of notes
  when there are few), where the question asks for one: a count where it asks over every item of a
  kind ("How many teams scored?"), a sum, mean or difference where it asks to combine or compare
  ("in total", "average", "more than"). Asked "What is the yearly fee to join the X guild?", the
  one note's count is no fee: measured, PECAN's reader answered "£1.00" over a note of "59.80
  shillings a year", and it passed as derived (the count of the notes was 1);
* its other **new words** are in the notes (half of them at least, as for an extractive answer);
* a **verdict** (yes, no, true, false) stands on the notes that bear on the question.

It does not check that the reasoning is right (which notes to add, which to compare): that is the
reader's. It checks that the answer is one the notes could give, so an answer whose value comes from
nowhere is still refused.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal

NUMBER = re.compile(
    r"(?<![A-Za-z0-9_.,])(?<![A-Za-z]-)(?>-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)"
    r"(?=[A-Za-z]+\b(?!-?\d)|(?![A-Za-z0-9_]|-[A-Za-z]|\.\d))"
)
"""A number as written: thousands separators and decimals ("1,200", "3.5", "-4"), not inside a word or
a code ("A12", "v2.1", "QW-5361-F", "23T09" are not read as numbers), but with a unit written on
("380.4C", "12km": letters that end the word). Matched whole or not at all (an atomic group):
"380.4C" was read as 380 (measured: the embedded model answered "380.4C" from "melts at 380.4 degrees",
and the stray 380 was "a number in no verified note"). Digits run on after a second decimal point
("234,394.1000.1000", a version "2.1.3") are no number: measured, the embedded model answered
"234,394.1000.1000.1000.234,394.1001" and its head, read as 234,394.1, passed as the note's 234,394.
Word characters beside a number are ASCII ones: in Chinese or Japanese text a number sits between
ideographs ("密码是482915。") and is read.

The project's one number reader: the map stage, the answer checks and the records check
(``nodes/records/check.py``) all read numbers with :func:`numbers_in`."""
MAX_CHOICES = 512
"""Ways of picking one number per note that are tried (notes holding several numbers multiply them)."""
MAX_GROUPED_NOTES = 6
"""Up to this many notes with numbers, sums and means over every group of two or more are tried; above
it, over all of them only (each extra value tried is one more chance to accept a wrong answer)."""


SPELLED = {
    word: value
    for value, word in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
            "twenty",
        ]
    )
}
"""The number names up to twenty: how a count is most often spelled out ("eight U.S. presidents")."""
_SPELLED = re.compile(rf"\b(?:{'|'.join(SPELLED)})\b", re.IGNORECASE)


def numbers_in(text: str, *, spelled: bool = False) -> list[float]:
    """The numbers ``text`` writes in digits, in order; with ``spelled``, then the counts it spells out
    (zero to twenty), so a quote's "eight presidents" explains an answer's 8."""
    found = [float(m.group().replace(",", "")) for m in NUMBER.finditer(text)]
    if spelled:
        found += [float(SPELLED[m.group().lower()]) for m in _SPELLED.finditer(text)]
    return found


def _same(written: float, value: float) -> bool:
    """Whether an answer's number (``written``) states ``value``: ``value`` rounded to the decimals the
    answer writes (a mean of 3.3333 written 3.33), or for a whole number, equal up to floating-point
    error. Not a value the answer writes more digits of than it has: 234,394.1 is not 234,394 (a
    relative tolerance of 1e-6 had made them one), nor is 3,752,677.000001 (measured on a
    test split: SmolLM2-135M wrote it for a bank's loan of 3,752,677, and rounding both to the cent had
    let it pass as derived, supported)."""
    decimals = _decimals(written)
    if decimals:
        return round(value, decimals) == written  # the answer's own precision decides
    return abs(written - value) <= 1e-9 * max(1.0, abs(written), abs(value))


def _decimals(number: float) -> int:
    """How many decimals ``number`` is written with (its shortest round-trip form: as parsed from text)."""
    exponent = Decimal(repr(number)).as_tuple().exponent
    return -exponent if isinstance(exponent, int) and exponent < 0 else 0


COMBINING = re.compile(
    r"\b(?:total|sum|combined|together|altogether|overall|in\s+all|average|mean|difference|differ|"
    r"more|fewer|less|than|exceed|exceeds|between)\b",
    re.IGNORECASE,
)
"""Words of a question that asks to combine or compare values (a sum, a mean, a difference)."""


@dataclass(frozen=True)
class Asked:
    """Which derivations a question asks for: a count (over every item of a kind), a combination (a
    sum, mean or difference). Extrema need neither: they are numbers the notes hold. No default: a
    caller that allowed every derivation would let a lookup's answer pass as a count of its notes."""

    counts: bool
    combines: bool
    items: int = 0
    """How many sentences name the kind of item counted ("vault" for "For how many vaults ..."), when a
    count is asked: the count over them. The sentences that share any word of the question may hold
    others ("Lisp code looks weird" beside four vaults' access codes; measured with the scripted capable
    reader, PECAN's count of 4 vaults over six such passages was refused)."""


def asks_to_combine(question: str) -> bool:
    """Whether the question asks for a sum, mean or difference (:data:`COMBINING`)."""
    return COMBINING.search(question) is not None


def derived_values(groups: Sequence[Sequence[float]], asked: Asked) -> list[float]:
    """The values a count, sum, difference, extremum or mean over ``groups`` (each note's numbers) gives,
    of those ``asked`` for."""
    filled = [list(dict.fromkeys(g)) for g in groups if g]
    flat = sorted({v for g in filled for v in g})
    values: list[float] = []
    if asked.counts and asked.items:
        # The items are known: the count is theirs, not that of whatever sentences share a word with the
        # question ("4" over three poets' sentences and an essay's "the town gave its name" stood as a
        # count of the notes, derived and supported).
        values.append(float(asked.items))
    elif asked.counts:
        values += [float(len(groups)), float(len(filled)), float(len(flat))]
    if flat:
        values += [max(flat), min(flat)]
    if not asked.combines:
        return values
    if flat:
        values += [a - b for a, b in itertools.permutations(flat, 2)]
    subsets: Iterable[Sequence[list[float]]] = (
        [c for size in range(2, len(filled) + 1) for c in itertools.combinations(filled, size)]
        if len(filled) <= MAX_GROUPED_NOTES
        else [filled]
    )
    for subset in subsets:
        for choice in itertools.islice(itertools.product(*subset), MAX_CHOICES):
            values += [sum(choice), sum(choice) / len(choice)]
    return values


def unexplained_numbers(
    answer: str, question: str, groups: Sequence[Sequence[float]], derivations: Asked
) -> list[float]:
    """The numbers of ``answer`` (beyond the question's) that no note holds and none of the
    ``derivations`` asked for gives."""
    asked = numbers_in(question)
    wanted = [v for v in numbers_in(answer) if not any(_same(v, q) for q in asked)]
    if not wanted:
        return []
    held = [v for g in groups for v in g]
    missing = [v for v in wanted if not any(_same(v, h) for h in held)]
    if not missing:
        return []
    derived = derived_values(groups, derivations)
    return [v for v in missing if not any(_same(v, d) for d in derived)]


def has_numbers(answer: str, question: str) -> bool:
    asked = numbers_in(question)
    return any(not any(_same(v, q) for q in asked) for v in numbers_in(answer))
