"""Answer metrics and the Loong judge, against cases worked out by hand."""

from __future__ import annotations

import pytest

from longgraph.errors import InputError
from longgraph.evals.judge import (
    build_judge_messages,
    load_judge_prompt,
    parse_judge_score,
    summarize_judgements,
)
from longgraph.evals.metrics import (
    exact_match,
    extract_choice,
    lcs_length,
    mc_accuracy,
    needle_match,
    normalize_answer,
    rouge_l,
    score_instance,
    token_f1,
    tokenize,
)

# ------------------------------------------------------------------------------------------- normalise


def test_normalisation_drops_case_punctuation_and_articles() -> None:
    assert normalize_answer("The  Eiffel-Tower, an icon!") == "eiffel tower icon"
    assert normalize_answer("A cat; THE dog.") == "cat dog"
    assert normalize_answer("“Quoted” — text…") == "quoted text"
    assert tokenize("anthem theory") == ["anthem", "theory"]  # articles only as whole words


def test_cjk_is_tokenised_by_character() -> None:
    assert tokenize("北京，是中国的首都。") == ["北", "京", "是", "中", "国", "的", "首", "都"]
    assert tokenize("GDP增长了5%") == ["gdp", "增", "长", "了", "5"]


# ------------------------------------------------------------------------------------------ EM and F1


def test_exact_match() -> None:
    assert exact_match("The Eiffel Tower.", ["eiffel tower"]) == 1.0
    assert exact_match("Eiffel Tower in Paris", ["Eiffel Tower"]) == 0.0
    assert exact_match("Paris", ["London", "paris"]) == 1.0
    assert exact_match("Paris", "Paris") == 1.0


def test_token_f1_by_hand() -> None:
    # pred tokens [big, red, dog], gold [red, dog]: overlap 2, P = 2/3, R = 1, F1 = 0.8
    assert token_f1("the big red dog", ["red dog"]) == pytest.approx(0.8)
    # best over golds
    assert token_f1("the big red dog", ["cat", "big red dog"]) == pytest.approx(1.0)
    assert token_f1("nothing shared", ["red dog"]) == 0.0
    assert token_f1("", [""]) == 1.0 and token_f1("", ["x"]) == 0.0


def test_token_f1_chinese_by_character() -> None:
    # pred 8 chars 北京是中国的首都, gold 7 chars 中国首都是北京: all 7 gold chars shared.
    # P = 7/8, R = 7/7, F1 = 2 * 7/8 / (1 + 7/8) = 14/15
    assert token_f1("北京是中国的首都", ["中国首都是北京"]) == pytest.approx(14 / 15)
    # Chinese punctuation is dropped before counting.
    assert token_f1("北京。", ["北京"]) == 1.0


# ---------------------------------------------------------------------------------------------- ROUGE-L


def test_lcs_length() -> None:
    assert lcs_length(list("ABCBDAB"), list("BDCABA")) == 4
    assert lcs_length([], ["a"]) == 0


def test_rouge_l_by_hand() -> None:
    # [cat, sat, on, mat] vs [cat, was, on, mat]: LCS = cat on mat = 3, P = R = 3/4
    assert rouge_l("the cat sat on the mat", ["the cat was on a mat"]) == pytest.approx(0.75)
    # [police, killed, gunman] vs [gunman, kill, police]: LCS 1, P = R = 1/3
    assert rouge_l("police killed the gunman", ["the gunman kill police"]) == pytest.approx(1 / 3)
    # pred 6 chars vs gold 4 chars, LCS 今天天气 = 4: P = 4/6, R = 1, F = 0.8
    assert rouge_l("今天天气不错", ["今天天气"]) == pytest.approx(0.8)
    assert rouge_l("x y", ["a", "x y"]) == 1.0


# ------------------------------------------------------------------------------------- multiple choice


@pytest.mark.parametrize(
    ("answer", "letter"),
    [
        ("B. The garbage", "B"),
        ("The answer is (B)", "B"),
        ("Answer: C", "C"),
        ("(A) yes, because ...", "A"),
        ("D", "D"),
        ("**C**", "C"),
        ("I think the correct answer is D.", "D"),
        ("A good answer would be C", "C"),
        ("Option B is correct.", "B"),
        ("答案：C", "C"),
        ("I choose (C) because it fits", "C"),
    ],
)
def test_extract_choice(answer: str, letter: str) -> None:
    assert extract_choice(answer) == letter


def test_extract_choice_refuses_to_guess() -> None:
    assert extract_choice("The answer is a banana") is None
    assert extract_choice("I do not know") is None
    assert extract_choice("Either (A) or (B)") is None


def test_mc_accuracy() -> None:
    assert mc_accuracy("B. The garbage", "B") == 1.0
    assert mc_accuracy("The answer is (B)", "(b)") == 1.0
    assert mc_accuracy("The answer is (C)", "B") == 0.0
    assert mc_accuracy("no idea", "B") == 0.0
    assert mc_accuracy("E) none of the above", "E") == 1.0  # the gold letter always counts as an option


# ----------------------------------------------------------------------------------------------- needle


def test_needle_match_is_normalised_containment() -> None:
    gold = "eat a sandwich and sit in Dolores Park on a sunny day"
    said = "The best thing is to eat a sandwich and sit in Dolores Park on a sunny day."
    assert needle_match(said, gold) == 1.0
    assert needle_match("Eat the sandwich and sit in dolores park, on the sunny day", gold) == 1.0
    assert needle_match("Sit in Dolores Park.", gold) == 0.0
    assert needle_match("The code is 7319-KESTREL.", "7319-KESTREL") == 1.0
    assert needle_match("The code is 7319.", "7319-KESTREL") == 0.0
    assert needle_match("17319 kestrel", "7319-KESTREL") == 0.0  # whole tokens only
    assert needle_match("anything", "") == 0.0


def test_score_instance_dispatch() -> None:
    assert score_instance("qa", "Paris", ["Paris"]) == {"exact_match": 1.0, "f1": 1.0, "rouge_l": 1.0}
    assert score_instance("mc", "Answer: B", ["B"]) == {"accuracy": 1.0}
    assert score_instance("retrieval", "It is 4820193.", ["4820193"])["needle_match"] == 1.0
    assert set(score_instance("open", "x", ["y"])) == {"f1", "rouge_l"}
    with pytest.raises(InputError):
        score_instance("essay", "x", ["y"])
    with pytest.raises(InputError):
        score_instance("mc", "B", [])


# ------------------------------------------------------------------------------------------------ judge


@pytest.mark.parametrize(
    ("reply", "score"),
    [
        ("[[85]]", 85.0),
        ("Evaluation evidence: complete and accurate.\nRating: [[100]]", 100.0),
        ("Rating: [70]", 70.0),
        ("[70]", 70.0),
        ("Rating: [[72.5]]", 72.5),
        ("Cites [3] and [4] ... Rating: [[60]]", 60.0),
        ("The answer is good.", None),
        ("garbage [[abc]]", None),
        ("[[150]]", None),
        ("Rating: [[-5]]", None),
    ],
)
def test_parse_judge_score(reply: str, score: float | None) -> None:
    assert parse_judge_score(reply) == score


def test_judge_prompt_and_messages() -> None:
    prompt = load_judge_prompt()
    assert prompt["version"] == "1"
    assert 'FOR EXAMPLE "Rating: [[100]]"' in prompt["template"]
    messages = build_judge_messages("Which {gold} is it?", "Document 5", "I say {prediction}")
    assert len(messages) == 1 and messages[0]["role"] == "user"
    content = messages[0]["content"]
    assert content.startswith("[Question]\nWhich {gold} is it?\n\n[Gold Answer]\nDocument 5\n\n")
    assert "[The Start of Assistant's Predicted Answer]\nI say {prediction}\n[The End of" in content
    assert content.rstrip().endswith("Now, start your evaluation:")


def test_summarize_judgements_by_hand() -> None:
    records = [
        {"task": "Spotlight Locating", "set": 1, "judgement": "Rating: [[100]]"},
        {"task": "Spotlight Locating", "set": 2, "judgement": "no score here"},
        {"task": "Spotlight Locating", "set": 2, "score": 40.0},
        {"task": "Comparison", "set": 1, "score": 100},
        {"task": "Comparison", "set": 1, "score": None},
    ]
    summary = summarize_judgements(records)
    overall = summary["overall"]
    assert (overall["n"], overall["parsed"], overall["perfect"]) == (5, 3, 2)
    assert overall["parse_rate"] == pytest.approx(3 / 5)
    assert overall["avg_score"] == pytest.approx(80.0)  # (100 + 40 + 100) / 3
    assert overall["perfect_rate"] == pytest.approx(2 / 3)
    spot = summary["by_task"]["Spotlight Locating"]
    assert (spot["avg_score"], spot["perfect_rate"]) == (70.0, 0.5)
    assert spot["parse_rate"] == pytest.approx(2 / 3)
    assert summary["by_set"]["1"]["avg_score"] == 100.0 and summary["by_set"]["1"]["parse_rate"] == 2 / 3
    assert summary["by_task_and_set"]["Spotlight Locating"]["2"]["avg_score"] == 40.0
    assert summary["prompt_version"] == "1"
    empty = summarize_judgements([])["overall"]
    assert empty["n"] == 0 and empty["avg_score"] is None and empty["perfect_rate"] is None
