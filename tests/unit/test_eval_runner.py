"""The evaluation runner: records and their fields, resuming without redoing work, failures as records."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from longgraph.errors import ConfigurationError
from longgraph.evals.data.instance import EvalInstance
from longgraph.evals.runner import (
    RECORD_FIELDS,
    EvalConfig,
    EvalSummary,
    LoongSource,
    format_tokens,
    parse_tokens,
    read_records,
    records_path,
    run_eval,
)
from longgraph.testing.fakes import FakeProvider, ScriptedChatModel, oracle_responder
from longgraph.tests.conftest import FAKE_SETTINGS, QUESTION, planted

SETTINGS = dict(FAKE_SETTINGS)
POISON = "This sentence makes the endpoint hang up."


def _instance(name: str, text: str, *, family: str = "retrieval", gold: str = "smoked plums") -> EvalInstance:
    return EvalInstance(
        id=f"needle-{name}", suite="needle", question=QUESTION, documents=[{"title": "essays", "text": text}],
        gold_answers=[gold], task_family=family, target_tokens=8_000, actual_tokens=7_900, depth=0.5,  # type: ignore[arg-type]
        metadata={"needle_token_depth": 0.5},
    )  # fmt: skip


@pytest.fixture(scope="module")
def instances() -> list[EvalInstance]:
    return [_instance("a", planted(30_000, at=0.1)), _instance("b", planted(30_000, at=0.8))]


def _config(out: Path, **changes: Any) -> EvalConfig:
    base: dict[str, Any] = {
        "suite": "needle", "strategies": ("mapreduce", "truncate"), "out_dir": out,
        "model_settings": dict(SETTINGS), "label": "fake", "concurrency": 2, "start_embedded": False,
    }  # fmt: skip
    return EvalConfig(**{**base, **changes})


def _run(
    config: EvalConfig, model: ScriptedChatModel, instances: Sequence[EvalInstance], **kw: Any
) -> EvalSummary:
    return asyncio.run(run_eval(config, llm=FakeProvider(model), instances=instances, **kw))


def test_records_have_every_field_and_the_scores(tmp_path: Path, instances: list[EvalInstance]) -> None:
    model = ScriptedChatModel()
    summary = _run(_config(tmp_path), model, instances)
    assert (summary.planned, summary.done, summary.skipped, summary.failed) == (4, 4, 0, 0)
    assert summary.records_path == records_path(tmp_path, "fake") == tmp_path / "records-fake.jsonl"
    records = read_records(summary.records_path)
    assert len(records) == 4
    for record in records:
        assert set(record) == set(RECORD_FIELDS)
        assert record["model"] == "fake" and record["oracle"] is False
        assert record["error"] is None and record["finished_at"]
        assert record["metric"] == "needle_match" and record["score"] == record["scores"]["needle_match"]
        assert record["llm_calls"] > 0 and record["prompt_tokens"] > 0 and record["seconds"] > 0
        chunks = record["chunks"]
        assert chunks["total"] == sum(v for k, v in chunks.items() if k != "total") > 0
        assert (record["length"], record["length_set"], record["depth"]) == (8_000, "8K", 0.5)
    by = {(r["instance_id"], r["strategy"]): r for r in records}
    assert by[("needle-a", "mapreduce")]["score"] == by[("needle-b", "mapreduce")]["score"] == 1.0
    assert by[("needle-b", "truncate")]["score"] == 0.0  # the fact lies past the cut
    assert any(n.startswith("truncated") for n in by[("needle-b", "truncate")]["notes"])
    assert sum(r["llm_calls"] for r in records) == len(model.calls)
    run_file = json.loads((tmp_path / "run-fake-needle.json").read_text())
    assert run_file["done"] == 4 and "api_key" not in run_file["context"]


def test_a_rerun_redoes_nothing_and_an_interrupted_run_redoes_only_what_is_missing(
    tmp_path: Path, instances: list[EvalInstance]
) -> None:
    model = ScriptedChatModel()
    _run(_config(tmp_path), model, instances)
    first_calls = len(model.calls)
    records = read_records(records_path(tmp_path, "fake"))

    again = _run(_config(tmp_path), model, instances)
    assert (again.done, again.skipped) == (0, 4)
    assert len(model.calls) == first_calls  # not one LLM call

    # an interruption: the last record never made it, the one before was torn mid-line
    path = records_path(tmp_path, "fake")
    lines = path.read_text().splitlines()
    lost = [json.loads(line) for line in lines[-2:]]
    path.write_text("\n".join(lines[:-2]) + "\n" + lines[-2][: len(lines[-2]) // 2])
    resumed = _run(_config(tmp_path), model, instances)
    assert (resumed.done, resumed.skipped) == (2, 2)
    assert len(model.calls) - first_calls == sum(r["llm_calls"] for r in lost)
    after = read_records(path)
    assert len(after) == 4
    assert {(r["instance_id"], r["strategy"]) for r in after} == {
        (r["instance_id"], r["strategy"]) for r in records
    }


def test_another_model_label_is_another_file_and_is_run_afresh(
    tmp_path: Path, instances: list[EvalInstance]
) -> None:
    model = ScriptedChatModel()
    _run(_config(tmp_path), model, instances[:1])
    calls = len(model.calls)
    other = _run(_config(tmp_path, label="other-model"), model, instances[:1])
    assert other.done == 2 and len(model.calls) > calls
    assert other.records_path.name == "records-other-model.jsonl"
    assert {r["model"] for r in read_records(other.records_path)} == {"other-model"}


def _hangs_up_on_poison(messages: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]) -> str:
    if any(POISON in str(m["content"]) for m in messages):
        raise openai.APIConnectionError(request=httpx.Request("POST", "http://fake.invalid/v1"))
    return oracle_responder(messages, extras)


def test_a_failed_instance_is_a_record_with_its_error(tmp_path: Path, instances: list[EvalInstance]) -> None:
    bad = _instance("bad", planted(6_000, at=0.5, fact=POISON))
    config = _config(tmp_path, strategies=("truncate",), model_settings={**SETTINGS, "max_retries": 0})
    summary = _run(config, ScriptedChatModel(responder=_hangs_up_on_poison), [instances[0], bad])
    assert (summary.done, summary.failed) == (2, 1)
    records = {r["instance_id"]: r for r in read_records(summary.records_path)}
    failed = records["needle-bad"]
    assert failed["error_type"] == "EndpointError" and "no endpoint answered" in failed["error"]
    assert failed["score"] is None and set(failed) == set(RECORD_FIELDS)
    assert records["needle-a"]["error"] is None and records["needle-a"]["score"] == 1.0

    # failed records stay failed on a plain rerun, and are redone with retry_failed
    assert _run(config, ScriptedChatModel(), [instances[0], bad]).done == 0
    healthy = ScriptedChatModel()
    retried = _run(
        _config(tmp_path, strategies=("truncate",), retry_failed=True), healthy, [instances[0], bad]
    )
    assert retried.done == 1 and len(healthy.calls) == 1
    assert all(r["error"] is None for r in read_records(summary.records_path))


def test_open_answers_are_graded_by_the_judge(tmp_path: Path) -> None:
    instance = _instance("open", planted(6_000, at=0.5), family="open", gold="Smoked plums.")
    judge = ScriptedChatModel(responder=lambda m, e: "Accurate and complete.\nRating: [[80]]")
    config = _config(
        tmp_path,
        strategies=("truncate",),
        judge_settings={"base_url": "http://judge.invalid/v1", "model": "j"},
    )
    asyncio.run(run_eval(config, llm=FakeProvider(), judge_llm=FakeProvider(judge), instances=[instance]))
    (record,) = read_records(records_path(tmp_path, "fake"))
    assert (record["metric"], record["judge_score"], record["score"]) == ("judge", 80.0, 0.8)
    assert "smoked plums" in str(judge.calls[0]["messages"][-1]["content"]).lower()

    unjudged = _config(tmp_path / "no-judge", strategies=("truncate",))
    asyncio.run(run_eval(unjudged, llm=FakeProvider(), instances=[instance]))
    (record,) = read_records(records_path(tmp_path / "no-judge", "fake"))
    assert record["metric"] == "f1_proxy" and record["score"] == record["scores"]["f1"]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"label": "oracle"}, "reserved"),
        ({"strategies": ("mapreduce", "nope")}, "unknown strategy nope"),
        ({"depths": (1.5,)}, "depths"),
        ({"suite": "loong"}, "instances file"),
    ],
)
def test_bad_configurations_are_refused_before_any_call(
    tmp_path: Path, changes: dict[str, Any], message: str
) -> None:
    model = ScriptedChatModel()
    with pytest.raises(ConfigurationError, match=message):
        _run(_config(tmp_path, **changes), model, [])
    assert not model.calls


def test_lengths_are_written_and_read_the_way_papers_write_them() -> None:
    assert [parse_tokens(x) for x in ("32K", "1.28M", "128000", "8k")] == [32_000, 1_280_000, 128_000, 8_000]
    assert [format_tokens(n) for n in (32_000, 1_280_000, 8_192, 500, 3_072)] == [
        "32K",
        "1.28M",
        "8K",
        "500",
        "3.072K",
    ]
    with pytest.raises(ConfigurationError):
        parse_tokens("lots")


def test_loong_takes_n_per_length_set_and_is_judged(tmp_path: Path) -> None:
    from longgraph.tests.unit.test_eval_data import _write_loong

    path, docs = _write_loong(tmp_path / "loong")
    config = _config(
        tmp_path / "out", suite="loong", strategies=("truncate",), n=1,
        loong=LoongSource(path, docs), judge_settings={"base_url": "http://judge.invalid/v1", "model": "j"},
    )  # fmt: skip
    judge = ScriptedChatModel(responder=lambda m, e: "Partly right. Rating: [[50]]")
    summary = asyncio.run(run_eval(config, llm=FakeProvider(), judge_llm=FakeProvider(judge)))
    records = read_records(summary.records_path)
    assert sorted(r["instance_id"] for r in records) == ["loong-fin-1", "loong-paper-1"]  # first of each set
    by_id = {r["instance_id"]: r for r in records}
    assert (
        by_id["loong-fin-1"]["length_set"] == "10K-50K" and by_id["loong-paper-1"]["length_set"] == "50K-100K"
    )
    assert all(r["length"] == r["actual_tokens"] > 0 for r in records)
    assert all((r["metric"], r["score"]) == ("judge", 0.5) for r in records)
    assert by_id["loong-fin-1"]["metadata"]["task"] == "Comparison"
    assert len(judge.calls) == 2


def test_a_run_that_misses_gets_a_page_the_report_links(
    tmp_path: Path, instances: list[EvalInstance]
) -> None:
    """needle-b's fact lies past truncate's cut: that run scores 0 and gets a page, linked from the report;
    the runs that scored 1 get none."""
    from longgraph.evals.report import write_reports
    from longgraph.tests.unit.test_answer_page import Page

    _run(_config(tmp_path), ScriptedChatModel(), instances)
    by = {(r["instance_id"], r["strategy"]): r for r in read_records(tmp_path / "records-fake.jsonl")}
    missed = by[("needle-b", "truncate")]
    assert missed["score"] == 0.0 and missed["page"] == "pages-fake/needle-b--truncate.html"
    page = (tmp_path / missed["page"]).read_text(encoding="utf-8")
    assert len(Page(page).cells) == missed["chunks"]["total"] and QUESTION.replace("'", "&#x27;") in page
    assert by[("needle-a", "mapreduce")]["page"] is None and by[("needle-b", "mapreduce")]["page"] is None
    report = write_reports(tmp_path)["fake"][0].read_text(encoding="utf-8")
    assert "(pages-fake/needle-b--truncate.html)" in report


def test_a_file_in_the_pages_folder_that_is_not_a_page_is_left_alone(
    tmp_path: Path, instances: list[EvalInstance]
) -> None:
    squatter = tmp_path / "pages-fake" / "needle-b--truncate.html"
    squatter.parent.mkdir()
    squatter.write_text("my notes", encoding="utf-8")
    _run(_config(tmp_path, strategies=("truncate",)), ScriptedChatModel(), instances)
    missed = next(r for r in read_records(tmp_path / "records-fake.jsonl") if r["instance_id"] == "needle-b")
    assert missed["score"] == 0.0 and missed["page"] is None and missed["error"] is None
    assert any("no page written" in n and "not a page longgraph wrote" in n for n in missed["notes"])
    assert squatter.read_text(encoding="utf-8") == "my notes"
