"""What a model writes is read in time linear in its length: a pattern that can split a run of spaces
or letters many ways before it fails hangs a run on one odd line (a small model repeats spaces and
punctuation; a served deployment reads whatever its endpoint returns). Each case here ran for seconds
to minutes with the pattern it replaced; with a regression the test does not fail, it hangs, and CI's
time limit reports it."""

from __future__ import annotations

from longgraph.evals.data.needle import split_sentences
from longgraph.evals.metrics import extract_choice
from longgraph.nodes.answer_support import wrong_kind_of_answer
from longgraph.state.outputs import DocSections, PyramidSynthesis, cited_line, outline_heading

SPACES = " " * 4_000


def test_an_outline_heading_with_a_long_run_of_spaces_is_read_at_once() -> None:
    """ToM's outline: "*" + 240 spaces + "x *y*" took 3 s, and twice the spaces sixteen times that."""
    assert outline_heading(f"*{SPACES}x *y*") is None
    assert outline_heading(f"***1.2 [{SPACES}Title]***") == ("1.2", "Title")
    parsed = DocSections.parse_text(f"***[Overall]***\n**Keywords**{SPACES}: a; b\n*{SPACES}x *y*")
    assert parsed is not None and parsed["title"] == "Overall", parsed


def test_a_cited_sentence_line_with_a_long_run_of_spaces_is_read_at_once() -> None:
    """Pyramid-Align's synthesis lines: a line of spaces with no closing bracket ran for minutes."""
    assert cited_line(f"a{SPACES}!") is None
    assert cited_line(f"1. The sentence.{SPACES}[3, 7]") == ("The sentence.", [3, 7])
    assert PyramidSynthesis.parse_text(f"- First. [1]\n{SPACES}x\n") == {
        "sentences": [{"text": "First.", "cites": [1]}]
    }


def test_a_long_answer_of_letters_is_kinded_at_once() -> None:
    """The answer-kind check: "4 " + 24 letters and a capital took 4 s."""
    assert wrong_kind_of_answer("Who keeps the Corath lighthouse?", "4 " + "a" * 4_000 + "A") == ""
    assert wrong_kind_of_answer("Who keeps the Corath lighthouse?", "4 " + "a" * 4_000)


def test_a_multiple_choice_answer_with_a_long_run_of_spaces_is_scored_at_once() -> None:
    """The eval's choice extraction: "answer" and 400 spaces took 69 s, the time growing as the fourth
    power of the spaces."""
    assert extract_choice(f"answer{SPACES}!") is None
    assert extract_choice(f"The answer is{SPACES}(B)") == "B"
    assert extract_choice(f"option{SPACES}C{SPACES}is{SPACES}!") is None
    assert extract_choice(f"答案{SPACES}：{SPACES}D") == "D"


def test_a_corpus_with_a_long_run_of_dots_is_cut_into_sentences_at_once() -> None:
    """The haystack builder's sentence cut tried a run of marks from each of them: 4,000 dots took
    0.45 s and the time grew as the square (100,000 dots, about 5 minutes)."""
    text = "One." + "." * 100_000 + "x Two. Three"
    pieces = split_sentences(text)
    assert "".join(pieces) == text
    assert pieces[-1] == " Three"
