"""The tolerant parser of model answers, and the format instructions it is paired with."""

from __future__ import annotations

import pytest

from longgraph.errors import StructuredOutputError
from longgraph.state.outputs import FilterDecision, MapOutput, ReduceOutput, SegmentNote, is_no_information
from longgraph.structured import format_instructions, parse_structured, response_format


@pytest.mark.parametrize(
    ("text", "answer", "confidence"),
    [
        ("Extracted Information: a\nRationale: b\nAnswer: Paris\nConfidence Score: 4", "Paris", 4.0),
        (
            "**Extracted Information:** a\n**Rationale**: b\n**Answer:** Paris\n**Confidence Score:** 4.5/5",
            "Paris",
            4.5,
        ),
        (
            "1. Extracted Information: a\n2. Rationale: b\n3. Answer: Paris\n4. Confidence Score (out of 5): 3 points",
            "Paris",
            3.0,
        ),
        (
            '```json\n{"extracted_information": "a", "rationale": "b", "answer": "Paris", "confidence_score": 5}\n```',
            "Paris",
            5.0,
        ),
        (
            'Sure! {"extracted_information": "a", "rationale": "b", "answer": "Paris", "confidence_score": "2"}',
            "Paris",
            2.0,
        ),
        ("Extracted Information: a\nRationale: b\nAnswer: Paris\nConfidence Score: 9", "Paris", 5.0),
    ],
)
def test_map_output_variants(text: str, answer: str, confidence: float) -> None:
    out = parse_structured(text, MapOutput)
    assert out.answer == answer
    assert out.confidence_score == confidence


def test_multiline_values_run_until_the_next_label() -> None:
    text = "Extracted Information: line one\nline two\nRationale: r\nAnswer: x\nConfidence Score: 1"
    assert parse_structured(text, MapOutput).extracted_information == "line one\nline two"


@pytest.mark.parametrize("text", ["", "   ", "I cannot help with that.", '{"answer": "x"}', "Answer: x"])
def test_unparseable_answers_raise_with_the_raw_text(text: str) -> None:
    with pytest.raises(StructuredOutputError) as info:
        parse_structured(text, MapOutput)
    assert info.value.raw == text


def test_no_information_is_decided_on_the_answer_field() -> None:
    mentions = parse_structured(
        "Extracted Information: The text says [NO INFORMATION] about cats.\nRationale: r\nAnswer: dogs\nConfidence Score: 4",
        MapOutput,
    )
    assert mentions.has_information
    for literal in ("[NO INFORMATION]", "NO INFORMATION", "[no information].", ""):
        assert is_no_information(literal)
    assert not is_no_information("No, the information says 5")


def test_other_schemas() -> None:
    note = parse_structured(
        'Evidence:\n- "The sky is blue."\n- Grass is green.\nReasoning: colours', SegmentNote
    )
    assert note.evidence == ["The sky is blue.", "Grass is green."] and note.reasoning == "colours"
    assert parse_structured("Decision: Remove", FilterDecision).decision == "Remove"
    assert parse_structured("Rationale: r\nAnswer: 42", ReduceOutput).answer == "42"


def test_format_instructions_match_the_parser() -> None:
    assert "Confidence Score:" in format_instructions(MapOutput, "text")
    assert '"confidence_score"' in format_instructions(MapOutput, "json_schema")
    rf = response_format(MapOutput)
    assert rf["type"] == "json_schema"
    assert set(rf["json_schema"]["schema"]["properties"]) == {
        "extracted_information",
        "rationale",
        "answer",
        "confidence_score",
    }


def test_json_cut_off_by_the_token_limit_is_closed_and_read() -> None:
    cut = '{"extracted_information": "a", "rationale": "b", "answer": "Paris", "confidence_score": 4.5'
    assert parse_structured(cut, MapOutput).answer == "Paris"
    with pytest.raises(StructuredOutputError):  # cut before the score: not enough of the schema
        parse_structured('{"extracted_information": "a", "rationale": "b", "answer": "Par', MapOutput)


def test_string_lengths_scale_with_the_output_budget() -> None:
    small = response_format(MapOutput, 128)["json_schema"]["schema"]["properties"]
    large = response_format(MapOutput, 4096)["json_schema"]["schema"]["properties"]
    assert small["extracted_information"]["maxLength"] < large["extracted_information"]["maxLength"]
    budget_chars = sum(p.get("maxLength", 0) for p in small.values())
    assert budget_chars <= 128 * 3


@pytest.mark.parametrize(
    ("text", "points"),
    [
        ("* The treaty was signed in 1648.\n* It ended the war.", ["The treaty was signed in 1648.", "It ended the war."]),
        ("- one\n• two\n3. three", ["one", "two", "three"]),
        # a looping model repeats a point: kept once, in first-seen order and spelling
        ("* The WTO\n* The death of King William III\n* the wto", ["The WTO", "The death of King William III"]),
        ("* a point\nprose after the bullets\n* A POINT", ["a point"]),
    ],
)  # fmt: skip
def test_information_points_in_text_mode(text: str, points: list[str]) -> None:
    from longgraph.state.outputs import InformationPoints

    assert parse_structured(text, InformationPoints, mode="text").points == points


@pytest.mark.parametrize("text", ["   \n  ", "I cannot summarise this.", "The WTO\nThe WTO"])
def test_information_points_without_a_bullet_are_unreadable(text: str) -> None:
    from longgraph.state.outputs import InformationPoints

    with pytest.raises(StructuredOutputError):
        parse_structured(text, InformationPoints, mode="text")
