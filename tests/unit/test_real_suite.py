"""The real-question suite (``evals/data/real.py``): SQuAD v2 and HotpotQA planted in filler, split by
article / question id once, each instance carrying its gold evidence; its scorer (SQuAD normalisation);
and the reference reader built from that gold alone."""

from __future__ import annotations

import itertools

import pytest

from longgraph.errors import ConfigurationError
from longgraph.evals.data.real import KINDS, build_real, cases, score_real, split_of
from longgraph.evals.readers.real import WORDINGS, scenario_of, word


@pytest.mark.parametrize("split", ["dev", "test"])
def test_every_kind_is_built_with_its_gold_evidence_planted(split: str) -> None:
    instances = build_real(target_tokens=4_000, n=2, seed=1, split=split)
    assert {i.metadata["kind"] for i in instances} == set(KINDS)
    assert {i.metadata["split"] for i in instances} == {split}
    for instance in instances:
        flat = " ".join(instance.documents[0]["text"].split())
        assert all(fact in flat for fact in instance.metadata["facts"])
        assert abs(instance.actual_tokens - 4_000) <= 200
        unanswerable = instance.metadata["kind"] == "squad-unanswerable"
        assert (instance.gold_answers == ["NO INFORMATION"]) == unanswerable
        assert bool(instance.metadata["facts"]) != unanswerable
        if instance.metadata["kind"].startswith("hotpot"):
            depths = instance.metadata["depths"]
            assert (
                len(depths) == 5
                and depths == sorted(depths)
                and min(b - a for a, b in itertools.pairwise(depths)) > 0
            )
    again = build_real(target_tokens=4_000, n=2, seed=1, split=split)
    assert [i.model_dump() for i in again] == [i.model_dump() for i in instances]


def test_splits_are_disjoint_by_article_and_question_and_seeds_share_no_question() -> None:
    for kind in KINDS:
        dev, test = cases(kind, "dev"), cases(kind, "test")
        assert dev and test
        assert not {c["key"] for c in dev} & {c["key"] for c in test}
        assert all(split_of(c["key"]) == "test" for c in test)
    first = {i.metadata["question_id"] for i in build_real(target_tokens=4_000, n=2, seed=0, split="dev")}
    second = {i.metadata["question_id"] for i in build_real(target_tokens=4_000, n=2, seed=1, split="dev")}
    assert not first & second


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="unknown kind"):
        build_real(target_tokens=4_000, n=1, seed=0, kinds=["trivia"])
    with pytest.raises(ConfigurationError, match="too short"):
        build_real(target_tokens=500, n=1, seed=0)


def test_scoring_follows_squad_normalisation_and_reads_verdicts_whole() -> None:
    label = {"kind": "squad", "answers": ["Matthew Murray"]}
    assert score_real("matthew murray.", label)["em"] == 1.0
    assert score_real("It was designed by Matthew Murray.", label)["correct"] == 1.0
    assert score_real("Murray", label)["correct"] == 0.0
    assert score_real("[NO INFORMATION]", label) == {"correct": 0.0, "em": 0.0, "f1": 0.0, "silent": 1.0}
    unanswerable = {"kind": "squad-unanswerable", "answers": ["NO INFORMATION"]}
    assert score_real("NO INFORMATION", unanswerable)["correct"] == 1.0
    assert score_real("Paris", unanswerable)["correct"] == 0.0
    verdict = {"kind": "hotpot-comparison", "answers": ["no"]}
    assert score_real("No, they were not.", verdict)["correct"] == 1.0
    assert score_real("Yes or no: not clear", verdict)["correct"] == 0.0


def test_the_reference_reader_is_built_from_the_gold_alone() -> None:
    instance = build_real(target_tokens=4_000, n=1, seed=0, split="dev", kinds=["hotpot-bridge"])[0]
    scenario = scenario_of(instance)
    assert scenario.facts == tuple(instance.metadata["facts"])
    assert scenario.conclusion == instance.gold_answers[0]
    unanswerable = build_real(target_tokens=4_000, n=1, seed=0, split="dev", kinds=["squad-unanswerable"])[0]
    assert scenario_of(unanswerable).facts == ()
    seen = ["The mill was designed by Matthew Murray in 1812."]
    worded = {w: word("Matthew Murray", seen, w) for w in WORDINGS}
    assert worded == {
        "bare": "Matthew Murray",
        "sentence": seen[0],
        "chatty": "Based on the text, the answer is **Matthew Murray**.",
    }


def test_the_report_counts_right_answers_the_checks_withheld_on_the_real_suite() -> None:
    from longgraph.evals.report import general_rows

    records = [
        {"suite": "real", "strategy": "mapreduce", "length_set": "8K", "score": score, "supported": False,
         "scores": scores, "metadata": {"split": "dev", "kind": "squad"}}
        for score, scores in ((0.0, {"correct": 0.0, "withheld_correct": 1.0}),
                              (0.0, {"correct": 0.0, "withheld_correct": 0.0}),
                              (1.0, {"correct": 1.0}))
    ]  # fmt: skip
    (row,) = general_rows(records)
    assert (row["n"], row["withheld_right"], row["wrong_supported"]) == (3, 1, 0)


def test_the_runner_scores_a_withheld_final_answer_beside_the_run_s_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The run's score is its answer's (NO INFORMATION: wrong); the model's withheld answer is scored as
    ``withheld_correct`` so a report can count right answers the gate did not let stand."""
    import asyncio

    import longgraph.api
    from longgraph.api import Answer
    from longgraph.evals.runner import evaluate
    from longgraph.state.context import Context
    from longgraph.state.contract import Candidate

    (instance,) = build_real(target_tokens=2_000, n=1, seed=0, kinds=("squad",), split="dev")
    gold = instance.gold_answers[0]

    async def withheld(*args: object, **kwargs: object) -> Answer:
        return Answer(answer="[NO INFORMATION]", supported=False, support="none",
                      candidates=[Candidate(answer=f"It is {gold}.", reason="not confirmed")])  # fmt: skip

    monkeypatch.setattr(longgraph.api, "aask", withheld)
    record = asyncio.run(evaluate(instance, "mapreduce", context=Context(), label="fake"))
    assert record["score"] == 0.0 and record["scores"]["withheld_correct"] == 1.0


def test_the_lenient_verifier_states_any_answer_whose_words_are_shown_and_defers_otherwise() -> None:
    import json

    from longgraph.evals.readers.real import lenient

    deferred: list[str] = []

    def reader(messages: object, extras: object) -> str:
        deferred.append("asked")
        return json.dumps({"claims": [], "reason": "the reader's own"})

    respond = lenient(reader)
    schema = {"type": "json_schema", "json_schema": {"name": "AnswerCheck", "schema": {}}}

    def check(answer: str) -> list[str]:
        prompt = (
            f"Question: Who built it?\nProposed answer: {answer}\n\nThe sentences begin as follows:\n"
            "The Kestrel company built the mill in 1911.\nThe sentences conclude here.\n\nQuestion: Who built it?"
        )
        claims = json.loads(respond([{"role": "user", "content": prompt}], {"response_format": schema}))[
            "claims"
        ]
        return [c["verdict"] for c in claims]

    assert check("The mill was built in 1911.") == ["stated"]  # its words are shown: stated, right or not
    assert check("The Osprey company") == [] and deferred == ["asked"]  # a word not shown: the reader decides
