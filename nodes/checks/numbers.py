"""The one number reader, and decision (c): a number that neither a quote nor arithmetic over the
quotes' numbers gives refutes the answer that writes it.

:func:`numbers_in` reads numbers as written: thousands separators and decimals ("1,200", "3.5",
"-4"), a unit written on ("12km"), never a piece of a word or a code ("A12", "v2.1", "QW-5361-F"),
nothing after a second decimal point (a version "2.1.3"); with ``spelled``, also the counts zero to
twenty spelled out. The map stage, these checks, the records check and the scorers read numbers
with it. What arithmetic may give (:func:`derived_values`) is every count, extremum, difference, sum
and mean over the quotes' numbers, bounded: a refutation is a strong verdict, so any value a reader
could have worked out stands (and is then verified like any answer the words cannot confirm).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from decimal import Decimal

NUMBER = re.compile(
    r"(?<![A-Za-z0-9_.,])(?<![A-Za-z]-)(?>-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)"
    r"(?=[A-Za-z]+\b(?!-?\d)|(?![A-Za-z0-9_]|-[A-Za-z]|\.\d))"
)
SPELLED = {
    word: value
    for value, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "  # noqa: SIM905 - reads as prose
        "fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
}
_SPELLED = re.compile(rf"\b(?:{'|'.join(SPELLED)})\b", re.IGNORECASE)
MAX_CHOICES = 512
"""Ways of picking one number per quote that are tried (quotes holding several numbers multiply them)."""
MAX_GROUPED = 6
"""Up to this many quotes with numbers, sums and means over every group of two or more are tried;
above it, over all of them only."""


def numbers_in(text: str, *, spelled: bool = False) -> list[float]:
    """The numbers ``text`` writes in digits, in order; with ``spelled``, then the counts it spells out."""
    found = [float(m.group().replace(",", "")) for m in NUMBER.finditer(text)]
    if spelled:
        found += [float(SPELLED[m.group().lower()]) for m in _SPELLED.finditer(text)]
    return found


def same_number(written: float, value: float) -> bool:
    """Whether a number written ``written`` states ``value``: ``value`` rounded to the decimals written
    (a mean of 3.3333 written 3.33), or a whole number equal up to floating-point error; never a value
    written with more digits than it has (234,394.1 is not 234,394)."""
    exponent = Decimal(repr(written)).as_tuple().exponent
    decimals = -exponent if isinstance(exponent, int) and exponent < 0 else 0
    if decimals:
        return round(value, decimals) == written
    return abs(written - value) <= 1e-9 * max(1.0, abs(written), abs(value))


def derived_values(groups: Sequence[Sequence[float]]) -> list[float]:
    """What a count (of any number of the quotes, or of their numbers), extremum, difference, sum or
    mean over ``groups`` (each quote's numbers) gives."""
    filled = [list(dict.fromkeys(g)) for g in groups if g]
    flat = sorted({v for g in filled for v in g})
    values = [float(k) for k in range(len(groups) + 1)]  # a count of any of the quotes
    values += [float(len(filled)), float(len(flat))]
    values += [a - b for a, b in itertools.permutations(flat, 2)]
    subsets = (
        [c for size in range(2, len(filled) + 1) for c in itertools.combinations(filled, size)]
        if len(filled) <= MAX_GROUPED
        else [tuple(filled)]
    )
    for subset in subsets:
        for choice in itertools.islice(itertools.product(*subset), MAX_CHOICES):
            values += [sum(choice), sum(choice) / len(choice)]
    return values


def unexplained_numbers(answer: str, asked: Sequence[float], quotes: Sequence[str]) -> list[float]:
    """The numbers of ``answer`` (beyond ``asked``, the question's) that no quote holds and no
    arithmetic over the quotes' numbers gives (:func:`derived_values`)."""
    wanted = [v for v in numbers_in(answer) if not any(same_number(v, q) for q in asked)]
    groups = [numbers_in(q, spelled=True) for q in quotes]
    missing = [v for v in wanted if not any(same_number(v, h) for g in groups for h in g)]
    if not missing:
        return []
    derived = derived_values(groups)
    return [v for v in missing if not any(same_number(v, d) for d in derived)]
