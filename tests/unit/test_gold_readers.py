"""The readers built from a suite's gold (``evals/readers/``), on their own and through the eval runner.

Negative controls first: a reader that does not see the records says it does not know, and the plain
pass cut to a window that cannot hold a 32K needle scores low. Then the one difference that matters:
``reference`` combines records, ``extractor`` never does.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from longgraph.evals.config import EvalConfig
from longgraph.evals.data.instance import EvalInstance
from longgraph.evals.data.loong_synth import build_loong_synth
from longgraph.evals.data.ruler import build_ruler, score_ruler
from longgraph.evals.readers import gold_of, responder_for
from longgraph.evals.readers.gold import copied_records
from longgraph.evals.records import read_records
from longgraph.evals.runner import run_eval
from longgraph.state.contract import GraphOutput
from longgraph.state.outputs import AnswerCheck
from longgraph.strategies import build_strategy
from longgraph.testing.capable import SETTINGS
from longgraph.testing.fakes import FakeProvider, ScriptedChatModel
from longgraph.testing.oracle import NO_INFORMATION


def _read(
    instance: EvalInstance, reader: str, strategy: str = "truncate", window: int = 8_192
) -> GraphOutput:
    model = ScriptedChatModel(responder=responder_for(instance, reader, "bare"))  # type: ignore[arg-type]
    graph = build_strategy(strategy, FakeProvider(model))
    context = {**SETTINGS, "context_window": window}
    return GraphOutput.model_validate(asyncio.run(graph.ainvoke(instance.graph_input(), context=context)))


def _ruler(task: str, tokens: int = 4_000, n: int = 1) -> list[EvalInstance]:
    return build_ruler(target_tokens=tokens, n=n, seed=0, tasks=[task])


def _without(instance: EvalInstance, pattern: str) -> EvalInstance:
    text = re.sub(pattern, "", instance.documents[0]["text"])
    return instance.model_copy(update={"documents": [{"title": "RULER", "text": text}]})


@pytest.mark.parametrize("reader", ["reference", "extractor"])
def test_a_needle_shown_is_found_and_a_removed_one_is_not(reader: str) -> None:
    instance = _ruler("niah_single_1")[0]
    assert score_ruler(_read(instance, reader).answer, instance.label)["string_match_all"] == 1.0
    removed = _without(instance, r"One of the special magic \w+ for \S+ is: \d+\.")
    assert not gold_of(removed).records
    assert _read(removed, reader).answer == NO_INFORMATION


def test_truncation_to_8k_on_a_32k_needle_task_scores_low() -> None:
    instances = _ruler("niah_single_1", tokens=32_000, n=5)
    scores = [score_ruler(_read(i, "reference").answer, i.label)["string_match_all"] for i in instances]
    assert sum(scores) / len(scores) <= 0.4, scores


def test_reference_combines_and_extractor_does_not() -> None:
    instance = _ruler("vt")[0]  # a chain: the variables that end up holding the value
    gold = gold_of(instance)
    assert gold.aggregates and len(gold.records) == len(instance.gold_answers)
    reference = _read(instance, "reference", window=16_384)  # the whole document in one call
    extractor = _read(instance, "extractor", window=16_384)
    assert score_ruler(reference.answer, instance.label)["string_match_all"] == 1.0
    assert score_ruler(extractor.answer, instance.label)["string_match_all"] < 1.0
    assert extractor.answer in gold.records  # its best single record, as it reads


def test_a_chunk_read_copies_the_records_present_within_the_output_budget() -> None:
    instance = _ruler("cwe")[0]
    gold = gold_of(instance)
    respond = responder_for(instance, "reference", "bare", max_output_tokens=40)
    shown = instance.documents[0]["text"][:2_000]
    prompt = f"Copy it.\nQuestion: {instance.question}\n\nThe text begins as follows:\n{shown}\nThe text concludes here.\n"
    extras = {"response_format": {"type": "json_schema", "json_schema": {"name": "ChunkAnswer", "schema": {
        "type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}}}}  # fmt: skip
    answer = json.loads(respond([{"role": "user", "content": prompt}], extras))["answer"]
    copied = answer.splitlines()
    assert copied and all(line in gold.records for line in copied)
    assert len(answer) <= 40 * 3 + 20  # the budget, at the reader's characters a token
    assert copied_records(["a" * 500], 10) == "a" * 500  # at least one record, whatever the budget


@pytest.mark.parametrize("family", ["comparison", "clustering", "chain"])
def test_loong_synth_records_are_the_facts_the_question_needs(family: str) -> None:
    instance = build_loong_synth(length_set=1, n=1, seed=3, families=[family])[0]
    gold = gold_of(instance)
    assert gold.aggregates and len(gold.records) >= 2
    assert all(record in " ".join(instance.render_context().split()) for record in gold.records)
    assert gold.right(instance.gold_answers[0]) and not gold.right(NO_INFORMATION)


def test_the_verification_call_says_yes_to_the_gold_only() -> None:
    instance = _ruler("vt")[0]
    respond = responder_for(instance, "reference", "bare")
    schema = AnswerCheck.model_json_schema()
    extras = {
        "response_format": {"type": "json_schema", "json_schema": {"name": "AnswerCheck", "schema": schema}}
    }

    def verdict(answer: str) -> Any:
        prompt = f"Question: {instance.question}\n\nProposed answer: {answer}\n\nIs it right?"
        claims = json.loads(respond([{"role": "user", "content": prompt}], extras))["claims"]
        return [c["verdict"] for c in claims]

    assert verdict(", ".join(instance.gold_answers)) == ["stated"]
    assert verdict(instance.gold_answers[0]) == ["not stated"]
    assert verdict("I'm sorry, but I could not find that in the text provided.") == []  # claims nothing


@pytest.mark.parametrize("reader", ["reference", "extractor"])
def test_a_ruler_slice_runs_through_the_eval_runner(reader: str, tmp_path: Path) -> None:
    config = EvalConfig(
        suite="ruler",
        strategies=("mapreduce", "truncate"),
        out_dir=tmp_path,
        lengths=(4_000,),
        tasks=("niah_single_1", "vt"),
        reader=reader,  # type: ignore[arg-type]
        model_settings={"context_window": 2_048},
    )
    summary = asyncio.run(run_eval(config))
    records = read_records(summary.records_path)
    assert summary.label == f"{reader}-bare" and summary.failed == 0 and len(records) == 4
    assert {r["metadata"]["task"] for r in records} == {"niah_single_1", "vt"}
    needle = next(
        r for r in records if r["metadata"]["task"] == "niah_single_1" and r["strategy"] == "mapreduce"
    )
    assert needle["score"] == 1.0 and needle["model"] == f"{reader}-bare"


def test_a_reader_is_refused_for_a_suite_without_gold(tmp_path: Path) -> None:
    from longgraph.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="reader"):
        EvalConfig(suite="needle", strategies=("mapreduce",), out_dir=tmp_path, reader="reference").validate()
