"""InfiniteBench: the official scoring rules, ROUGE-Lsum against rouge-score, the loader and re-scoring.

The rules are checked on predictions whose official score is known by reading ``compute_scores.py``,
quirks included (the *first* digits for the passkey, the *last* word for code_run...). The published
predictions of seven models re-score to the benchmark's README table (evals/bench/README.md); those
files are not redistributed, so the tests make their own in the official format.
"""

from __future__ import annotations

import json
import random
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from rouge_score import rouge_scorer
from typer.testing import CliRunner

from longgraph.cli import app
from longgraph.errors import ConfigurationError, InputError
from longgraph.evals.data.infinitebench import PROMPTS_PATH, TASKS, load_infinitebench
from longgraph.evals.rescore import rescore
from longgraph.evals.runner import EvalConfig
from longgraph.evals.scoring import SCORERS, get_scorer
from longgraph.evals.scoring.infinitebench import RULES, score_infinitebench
from longgraph.evals.scoring.rouge import rouge_lsum


@pytest.mark.parametrize(
    ("task", "prediction", "label", "expected"),
    [
        ("passkey", "The pass key is 71432.", "71432", 1.0),
        ("passkey", "In 2024 the pass key was 71432.", "71432", 0.0),  # the first digits count
        ("number_string", "The sequence is 9384756", ["9384756"], 1.0),
        ("kv_retrieval", 'The value is "a1b2-c3".', "a1b2-c3", 1.0),
        ("kv_retrieval", "The value is a1b2-c3d4", "a1b2-c3", 0.0),  # a whole word, not a substring
        ("longdialogue_qa_eng", "It is probably Hamlet.", ["HAMLET"], 1.0),
        ("longdialogue_qa_eng", "Hamlet's friend", ["HAMLET"], 1.0),  # ' splits words
        ("longdialogue_qa_eng", "Hamlets friend", ["HAMLET"], 0.0),
        ("longbook_choice_eng", "B. The garden", ["The garden", "B"], 1.0),
        ("longbook_choice_eng", "I think the answer is: C", ["The garden", "B"], 0.0),
        ("longbook_choice_eng", "so the answer is B because", ["The garden", "B"], 1.0),
        ("longbook_choice_eng", "The garden", ["The garden", "B"], 1.0),  # the option text itself
        ("longbook_choice_eng", "Probably B or C", ["The garden", "B"], 1.0),  # the first letter word
        ("code_debug", "C.", ["func_b", "C"], 1.0),
        ("code_debug", "The answer is: func_b", ["func_b", "C"], 1.0),
        ("code_debug", "It must be func_b", ["func_b", "C"], 0.0),  # no answer prefix
        ("code_run", "The value is:\n42", [42], 1.0),
        ("code_run", "42 is the value", [42], 0.0),  # the last word counts
        ("math_find", "The largest number is 97", [97], 1.0),
        ("math_find", "3.5 then 97", [97], 0.0),
        ("math_find", "It is 2.5", [2.5], 1.0),
        ("math_calc", "[3, 7, 12, 2]", [[3, 7, 10, 2]], 0.5),
        ("longbook_qa_eng", "The old lighthouse", ["an old lighthouse keeper"], 0.8),
        ("longbook_qa_chn", "北京。", ["在北京"], 0.8),
    ],
)
def test_each_rule_scores_as_the_official_scorer_would(
    task: str, prediction: str, label: Any, expected: float
) -> None:
    assert score_infinitebench(task, prediction, label) == pytest.approx(expected)


def test_every_task_has_a_rule_a_scorer_and_an_unknown_one_is_a_typed_error() -> None:
    assert set(RULES) == set(TASKS)
    assert all(f"infinitebench:{task}" in SCORERS for task in TASKS)
    assert get_scorer("infinitebench:longbook_sum_eng").metric == "rougeLsum"
    with pytest.raises(InputError, match="no scoring rule"):
        score_infinitebench("code_debug_step_by_step", "A", ["f", "A"])
    with pytest.raises(InputError, match="unknown scorer"):
        get_scorer("infinitebench:nope")


def test_rouge_lsum_matches_the_rouge_score_package() -> None:
    scorer = rouge_scorer.RougeScorer(["rougeLsum"])
    rng = random.Random(7)
    words = [
        "the",
        "cat",
        "sat",
        "on",
        "a",
        "mat",
        "and",
        "then",
        "it",
        "ran",
        "far",
        "away",
        "from",
        "home",
        "while",
        "dogs",
        "barked",
    ]
    cases = [
        ("the cat sat\non the mat", "the cat was on the mat"),
        ("", "something"),
        ("Ünïcode only 漢字", "only unicode"),
        ("A B C\nD E\n\nF", "a b\nc d e f"),
    ]
    for _ in range(40):

        def text() -> str:
            return "\n".join(
                " ".join(rng.choices(words, k=rng.randint(1, 9))) for _ in range(rng.randint(1, 4))
            )

        cases.append((text(), text()))
    for prediction, reference in cases:
        expected = scorer.score(reference, prediction)["rougeLsum"].fmeasure
        assert rouge_lsum(prediction, reference) == pytest.approx(expected), (prediction, reference)


# --------------------------------------------------------------------------------------------------
# The loader


def _write(folder: Path, task: str, rows: list[dict[str, Any]]) -> Path:
    path = folder / f"{task}.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _item(i: int, **changes: Any) -> dict[str, Any]:
    row = {"id": i, "context": f"Noise {{not a placeholder}} {i}. The pass key is 4{i}12. More noise.",
           "input": "What is the pass key?", "answer": [f"4{i}12"], "options": []}  # fmt: skip
    return {**row, **changes}


def test_the_loader_builds_question_document_and_official_label(tmp_path: Path) -> None:
    _write(tmp_path, "passkey", [_item(0), _item(1), _item(2)])
    _write(tmp_path, "longbook_choice_eng", [_item(0, input="Where did they meet?", answer=["The garden"],
                                                   options=["A park", "The garden", "A ship", "Rome"])])  # fmt: skip
    _write(tmp_path, "math_find", [_item(0, input="The largest number of the list is?", answer=97)])
    instances = load_infinitebench(tmp_path, n=2)
    by_task: dict[str, list[Any]] = {}
    for instance in instances:
        by_task.setdefault(instance.metadata["task"], []).append(instance)
    assert [len(by_task[t]) for t in ("passkey", "longbook_choice_eng", "math_find")] == [2, 1, 1]
    passkey = by_task["passkey"][0]
    assert passkey.question.startswith("There is an important info hidden") and passkey.question.endswith(
        "What is the pass key?"
    )
    assert passkey.documents == [{"title": "", "text": _item(0)["context"]}]
    assert passkey.scorer == "infinitebench:passkey" and passkey.label == ["4012"]
    assert passkey.actual_tokens > 0 and passkey.metadata["length_set"] == "<10K"
    assert "{context}" in passkey.metadata["official_prompt"]  # the template without the long context
    choice = by_task["longbook_choice_eng"][0]
    assert choice.label == ["The garden", "B"]
    assert "B. The garden" in choice.question and "Question: Where did they meet?" in choice.question
    math = by_task["math_find"][0]
    assert math.question.startswith("What is the largest number in the following list?")
    assert get_scorer(math.scorer).score("97", math.label) == {"accuracy": 1.0}


def test_without_data_the_error_names_the_expected_files_and_where(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"passkey\.jsonl.*kv_retrieval\.jsonl.*huggingface"):
        load_infinitebench(tmp_path)
    with pytest.raises(InputError, match="does not exist"):
        load_infinitebench(tmp_path / "missing", tasks=["passkey"])
    with pytest.raises(InputError, match="unknown InfiniteBench task"):
        load_infinitebench(tmp_path, tasks=["passkeys"])
    config = EvalConfig(suite="infinitebench", strategies=("truncate",), out_dir=tmp_path)
    with pytest.raises(ConfigurationError, match=r"--data DIR holding passkey\.jsonl"):
        config.validate()


def test_malformed_items_are_typed_errors_naming_the_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "passkey", [_item(0)])
    with path.open("a", encoding="utf-8") as handle:
        handle.write("{not json\n")
    with pytest.raises(InputError, match=r"passkey\.jsonl:2: not JSON"):
        load_infinitebench(tmp_path)
    _write(tmp_path, "passkey", [{"id": 0, "input": "?"}])
    with pytest.raises(InputError, match="needs context and answer"):
        load_infinitebench(tmp_path)
    _write(tmp_path, "passkey", [])
    _write(tmp_path, "code_debug", [_item(0, answer=["nope"], options=["a", "b", "c", "d"])])
    with pytest.raises(InputError, match="not one of the options"):
        load_infinitebench(tmp_path, tasks=["code_debug"])


def test_every_question_is_its_official_template_without_the_context() -> None:
    prompts = tomllib.loads(PROMPTS_PATH.read_text(encoding="utf-8"))
    assert set(prompts["tasks"]) == set(TASKS)
    for task, entry in prompts["tasks"].items():
        assert "{context}" in entry["template"] and "{context}" not in entry["question"], task
        template_words = re.findall(r"\S+", entry["template"])
        for word in re.findall(r"\S+", entry["question"]):
            assert word in template_words, (task, word)


# --------------------------------------------------------------------------------------------------
# Re-scoring predictions files


def _preds(path: Path, rows: list[tuple[str, Any]]) -> Path:
    path.write_text("".join(json.dumps({"id": i, "prediction": p, "ground_truth": g}) + "\n"
                            for i, (p, g) in enumerate(rows)), encoding="utf-8")  # fmt: skip
    return path


def test_a_predictions_file_is_scored_by_the_task_in_its_name(tmp_path: Path) -> None:
    path = _preds(tmp_path / "preds_passkey.jsonl", [("The pass key is 123", "123"), ("no idea", "456")])
    score = rescore(path)
    assert (score.task, score.n, score.score, score.metric) == ("passkey", 2, 50.0, "accuracy")
    other = _preds(tmp_path / "mine.jsonl", [("B", ["x", "B"])])
    with pytest.raises(InputError, match="give it with --task"):
        rescore(other)
    assert rescore(other, "longbook_choice_eng").score == 100.0
    bad = tmp_path / "kv_retrieval.jsonl"
    bad.write_text('{"id": 0, "prediction": "x"}\n', encoding="utf-8")
    with pytest.raises(
        InputError, match=r"kv_retrieval\.jsonl:1: a line needs a prediction and a ground_truth"
    ):
        rescore(bad)


def test_the_cli_prints_the_per_task_table(tmp_path: Path) -> None:
    first = _preds(tmp_path / "preds_passkey.jsonl", [("The pass key is 123", "123")])
    second = _preds(tmp_path / "preds_kv_retrieval.jsonl", [("x", "y"), ("y", "y")])
    result = CliRunner().invoke(app, ["eval", "score", str(first), str(second)])
    assert result.exit_code == 0, result.output
    assert "| passkey | accuracy | 1 | 100.00 |" in result.output
    assert "| kv_retrieval | accuracy | 2 | 50.00 |" in result.output
    result = CliRunner().invoke(app, ["eval", "score", str(tmp_path / "preds_nothing.jsonl")])
    assert result.exit_code != 0 and "Traceback" not in result.output


def test_the_eval_command_without_data_names_the_files_and_runs_nothing(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["eval", "--suite", "infinitebench", "--strategies", "truncate", "--out", str(tmp_path)]
    )
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert "--data DIR holding passkey.jsonl" in " ".join(result.output.split())
    assert not list(tmp_path.iterdir())
    result = CliRunner().invoke(app, ["eval", "--suite", "needle", "--data", str(tmp_path)])
    assert result.exit_code != 0 and "use it with --suite infinitebench" in " ".join(result.output.split())
