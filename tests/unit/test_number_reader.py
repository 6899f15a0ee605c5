"""The one number reader (``nodes/derivation.numbers_in``): numbers as written, in any script around
them, counts spelled out when asked for, and never a digit inside a code or a word."""

from __future__ import annotations

import pytest

from longgraph.nodes.checks import numbers_in


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("密码是482915。", [482915.0]),
        ("東京の人口は1,400万人です", [1400.0]),
        ("The bridge is 1,250.5 metres long and cost 3.5 million.", [1250.5, 3.5]),
        ("melts at 380.4C, runs 12km", [380.4, 12.0]),
        ("codes A12, v2.1 and QW-5361-F are no numbers", []),
        ("version 2.1.3 and 234,394.1000.1000", []),
    ],
)
def test_numbers_as_written(text: str, numbers: list[float]) -> None:
    assert numbers_in(text) == numbers


def test_counts_spelled_out_are_read_only_when_asked_for() -> None:
    text = "Harvard's alumni include eight U.S. presidents and 62 living billionaires."
    assert numbers_in(text) == [62.0]
    assert numbers_in(text, spelled=True) == [62.0, 8.0]
    assert numbers_in("Someone wrote it down.", spelled=True) == []  # "one" inside a word is no number
