"""The new suites through the runner and the reports: a named scorer decides the score, the metric and
the answer instructions; reports break scores down by task family and length set (Markdown, JSON, PNG)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib.image
import pytest

from longgraph.evals.data.loong_synth import build_loong_synth
from longgraph.evals.report import write_reports
from longgraph.evals.runner import EvalConfig, read_records, run_eval
from longgraph.testing.fakes import FakeProvider, ScriptedChatModel
from longgraph.tests.conftest import FAKE_SETTINGS


def _config(out: Path, **changes: Any) -> EvalConfig:
    base: dict[str, Any] = {
        "suite": "loong-synth", "strategies": ("truncate",), "out_dir": out,
        "model_settings": dict(FAKE_SETTINGS, context_window=60_000), "label": "fake", "start_embedded": False,
    }  # fmt: skip
    return EvalConfig(**{**base, **changes})


def _answering(answers: Mapping[str, str]) -> ScriptedChatModel:
    """A model that answers each question with the text given for it (by the question's opening)."""

    def respond(messages: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]) -> str:
        prompt = str(messages[-1]["content"])
        answer = next((a for q, a in answers.items() if q in prompt), "[NO INFORMATION]")
        return json.dumps({"answer": answer}) if extras.get("response_format") else answer

    return ScriptedChatModel(responder=respond)


def test_loong_synth_records_are_scored_exactly_and_reported_by_family(tmp_path: Path) -> None:
    instances = build_loong_synth(length_set=1, n=1, seed=0)
    # Right on the first two families, wrong (no answer) on the other two.
    answers = {i.question: i.gold_answers[0] for i in instances[:2]}
    summary = asyncio.run(
        run_eval(_config(tmp_path), llm=FakeProvider(_answering(answers)), instances=instances)
    )
    records = {r["metadata"]["task"]: r for r in read_records(summary.records_path)}
    assert set(records) == {"Spotlight Locating", "Comparison", "Clustering", "Chain of Reasoning"}
    assert records["Spotlight Locating"]["metric"] == "value_match"
    assert records["Comparison"]["metadata"]["subtask"] == "extremum"
    assert (records["Spotlight Locating"]["score"], records["Comparison"]["score"]) == (1.0, 1.0)
    assert records["Clustering"]["metric"] == "group_accuracy" and records["Clustering"]["score"] == 0.0
    assert (
        records["Chain of Reasoning"]["metric"] == "order_f1"
        and records["Chain of Reasoning"]["score"] == 0.0
    )
    assert all(r["length_set"] == "10K-50K" for r in records.values())

    failed = {**records["Spotlight Locating"], "strategy": "broken", "score": None, "metric": None,
              "error": "the graph failed", "error_type": "TooManyFailures"}  # fmt: skip
    with summary.records_path.open("a", encoding="utf-8") as out:
        out.write(json.dumps(failed) + "\n")
    written = write_reports(tmp_path)["fake"]
    markdown = (tmp_path / "report-fake.md").read_text()
    assert "## loong-synth: score by task family and length set" in markdown
    assert "| broken | 0.00 (1) | – | – | – |" in markdown  # a failed run counts as 0, names no metric
    assert "Metrics: Spotlight Locating: value found; Comparison: accuracy;" in markdown
    assert ("| truncate | 1.00 (1) | 1.00 (1) | 0.00 (1) | 0.00 (1) |") in markdown
    header = next(line for line in markdown.splitlines() if line.startswith("| strategy | Spotlight"))
    assert header.index("Spotlight Locating (10K-50K)") < header.index("Chain of Reasoning (10K-50K)")
    families = json.loads((tmp_path / "summary-fake.json").read_text())["families"]
    assert {(f["task"], f["score"]) for f in families if f["strategy"] == "truncate"} == {
        ("Spotlight Locating", 1.0), ("Comparison", 1.0), ("Clustering", 0.0), ("Chain of Reasoning", 0.0),
    }  # fmt: skip
    heatmap = tmp_path / "family-heatmap-fake.png"
    assert heatmap in written and matplotlib.image.imread(heatmap).shape[0] > 100


def test_infinitebench_runs_with_its_official_rule_and_the_fitting_instructions(tmp_path: Path) -> None:
    data = tmp_path / "ib"
    data.mkdir()
    item = {"id": 0, "context": "Long text. The meeting was in the garden. More text.", "input": "Where was it?",
            "answer": ["The garden"], "options": ["A park", "The garden", "A ship", "Rome"]}  # fmt: skip
    (data / "longbook_choice_eng.jsonl").write_text(json.dumps(item) + "\n", encoding="utf-8")
    model = _answering({"Where was it?": "B. The garden"})
    config = _config(tmp_path / "out", suite="infinitebench", data_dir=data)
    summary = asyncio.run(run_eval(config, llm=FakeProvider(model)))
    [record] = read_records(summary.records_path)
    assert record["error"] is None, record["error"]
    assert (record["metric"], record["score"], record["scores"]) == ("accuracy", 1.0, {"accuracy": 1.0})
    assert record["metadata"]["task"] == "longbook_choice_eng" and record["length_set"] == "<10K"
    prompt = str(model.calls[0]["messages"][-1]["content"])
    assert "Answer with the letter of the chosen option" in prompt  # the mc instructions, from the scorer


def test_options_of_one_suite_are_refused_with_another() -> None:
    from pathlib import Path

    from longgraph.cli.eval import check_suite_options, judge_settings, suite_source
    from longgraph.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="--split is dev or test"):
        check_suite_options("needle", data=None, tasks=None, split="dev")
    with pytest.raises(ConfigurationError, match="--data is the InfiniteBench folder"):
        check_suite_options("general", data=Path("x"), tasks=None, split=None)
    with pytest.raises(ConfigurationError, match="--tasks chooses"):
        check_suite_options("needle", data=None, tasks="one", split=None)
    check_suite_options("general", data=None, tasks="one,absent", split="test")
    with pytest.raises(ConfigurationError, match="needs --loong-instances"):
        suite_source("loong", None, Path("docs"), None, 10_000)
    with pytest.raises(ConfigurationError, match="are for --suite loong"):
        suite_source("general", Path("i.jsonl"), None, None, 10_000)
    assert suite_source("general", None, None, None, 10_000) is None
    assert judge_settings(None, "m", None, None) is None
    assert judge_settings("http://j/v1", None, None, 4096) == {
        "base_url": "http://j/v1",
        "context_window": 4096,
    }
