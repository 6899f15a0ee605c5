"""Question decomposition: the plan, its checks, the combination in code, and the graph path."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from longgraph.errors import InputError
from longgraph.evals.data.loong_synth import build_loong_synth
from longgraph.evals.scoring import get_scorer
from longgraph.evals.scoring.structured import score_groups
from longgraph.graphs.mapreduce import build_graph
from longgraph.nodes.aggregate import combine_values, named_document
from longgraph.nodes.decompose import plan_problem
from longgraph.nodes.derivation import numbers_in
from longgraph.state.contract import GraphOutput
from longgraph.state.plan import DocumentValue, QuestionPlan
from longgraph.testing.fakes import FakeProvider, ScriptedChatModel, oracle_responder
from longgraph.testing.oracle import question_plan
from longgraph.tests.conftest import FAKE_SETTINGS, QUESTION, planted

SETTINGS = {**FAKE_SETTINGS, "context_window": 8192}
CASES = ["Case file: Alder v. Birch", "Case file: Cedar v. Dogwood", "Case file: Elm v. Fir"]


def _values(answers: Sequence[str | None], titles: Sequence[str], plan: QuestionPlan) -> list[DocumentValue]:
    """Document values as ``document_values`` reads them, from answers given here."""
    from longgraph.nodes.aggregate import _label_of

    out = []
    for i, (answer, title) in enumerate(zip(answers, titles, strict=True)):
        value = DocumentValue(doc_index=i, title=title, answer=answer)
        if answer is None:
            value.reason = "no verified answer"
        elif plan.combine == "group":
            value.label = _label_of(answer, plan.labels)
            value.reason = None if value.label else "no label"
        elif plan.combine == "chain":
            value.link = named_document(answer, titles, besides=i)
        else:
            value.number = next(iter(numbers_in(answer)), None)
            value.reason = None if value.number is not None else "its answer gives no number"
        out.append(value)
    return out


def test_numbers_read_with_thousands_and_decimals() -> None:
    assert numbers_in("revenue of 1,250.5 million, up 3.2% from 2022") == [1250.5, 3.2, 2022.0]


def test_group_puts_each_document_under_the_label_its_answer_names() -> None:
    plan = QuestionPlan(per_document_question="What was the verdict in {document}?", combine="group",
                        labels=["convicted", "acquitted", "dismissed"])  # fmt: skip
    answers = ["the defendant was acquitted", "The case was dismissed.", None]
    result = combine_values(plan, _values(answers, CASES, plan), "Group the cases by verdict.", CASES)
    assert result.answer == "acquitted: Case file: Alder v. Birch\ndismissed: Case file: Cedar v. Dogwood"
    assert result.used == result.named == [0, 1]
    assert "Case file: Elm v. Fir (no verified answer)" in result.explanation


@pytest.mark.parametrize(
    ("combine", "question", "expected"),
    [
        ("highest", "Which shop sold the most?", "B (30)"),
        ("lowest", "Which shop sold the least?", "C (10)"),
        ("order", "Rank the shops by sales, from highest to lowest.", "B (30), A (20), C (10)"),
        ("order", "Rank the shops by sales, from lowest to highest.", "C (10), A (20), B (30)"),
        ("between", "Which shops sold between 15 and 30 units?", "A (20), B (30)"),
    ],
)
def test_numbers_are_compared_in_code(combine: Any, question: str, expected: str) -> None:
    plan = QuestionPlan(per_document_question="How many units did {document} sell?", combine=combine)
    values = _values(["20 units", "It sold 30.", "10 units were sold"], ["A", "B", "C"], plan)
    assert combine_values(plan, values, question, ["A", "B", "C"]).answer == expected


def test_a_document_without_a_number_is_left_out_and_named() -> None:
    plan = QuestionPlan(per_document_question="How many units did {document} sell?", combine="highest")
    values = _values(["20 units", "many units", "10 units"], ["A", "B", "C"], plan)
    result = combine_values(plan, values, "Which sold most?", ["A", "B", "C"])
    assert result.answer == "A (20)"
    assert "B (its answer gives no number)" in result.explanation


def test_chain_follows_the_documents_each_answer_names_from_the_one_the_question_names() -> None:
    titles = ["Tidal Models", "Wave Theory", "Storm Surges", "Ocean Currents"]
    plan = QuestionPlan(per_document_question="Which study does {document} build on?", combine="chain")
    answers = ["It builds on Storm Surges.", "It builds on Old Work.", "This builds on Wave Theory.", None]
    result = combine_values(
        plan, _values(answers, titles, plan), "Starting from Tidal Models, follow it.", titles
    )
    assert result.answer == "Tidal Models -> Storm Surges -> Wave Theory"
    cyclic = _values(["Wave Theory", "Tidal Models", None, None], titles, plan)
    assert (
        combine_values(plan, cyclic, "Start from Tidal Models.", titles).answer
        == "Tidal Models -> Wave Theory"
    )


def test_plans_that_cannot_be_carried_out_are_refused_with_the_reason() -> None:
    titles = ["A", "B"]
    question = "Group the cases by verdict: convicted or acquitted."
    assert plan_problem(QuestionPlan(), question, titles) is not None
    no_slot = QuestionPlan(per_document_question="What was the verdict?", combine="group")
    assert "does not name its document" in str(plan_problem(no_slot, question, titles))
    foreign = QuestionPlan(per_document_question="Verdict of {document}?", combine="group", labels=["fined"])
    assert "fined" in str(plan_problem(foreign, question, titles))
    no_range = QuestionPlan(per_document_question="What amount did {document} sell?", combine="between")
    assert "two numbers" in str(plan_problem(no_range, "Which sold a middling amount?", titles))
    no_start = QuestionPlan(per_document_question="What does {document} cite?", combine="chain")
    assert "names none" in str(plan_problem(no_start, "Follow what each one cites.", titles))
    copied = QuestionPlan(
        per_document_question="How many hours does the battery of {document} last?", combine="lowest"
    )
    assert "not about the question's subject" in str(plan_problem(copied, "Which case ended first?", titles))
    good = QuestionPlan(per_document_question="Verdict of {document}?", combine="group", labels=["convicted"])
    assert plan_problem(good, question, titles) is None


def test_a_document_answers_with_its_strongest_note_that_the_combination_can_read() -> None:
    from longgraph.nodes.aggregate import document_values
    from longgraph.state.contract import Chunk, ChunkPart, Evidence
    from longgraph.state.notes import Note

    def note(chunk: int, answer: str, confidence: float) -> Note:
        quote = Evidence(chunk_id=chunk, doc_index=0, title="A", start=0, end=5, text=answer, verified=True)
        return Note(sources=[chunk], answer=answer, quotes=[quote], confidence=confidence)

    chunks = [
        Chunk(id=i, parts=[ChunkPart(doc_index=0, title="A", start=0, end=5)], tokens=5, text="x")
        for i in (0, 1)
    ]
    plan = QuestionPlan(per_document_question="Verdict of {document}?", combine="group", labels=["acquitted"])
    values, chosen = document_values(plan, [note(0, "This is the case file of A.", 5.0),
                                            note(1, "The defendant was acquitted.", 3.0)], chunks, ["A"])  # fmt: skip
    assert values[0].label == "acquitted" and chosen[0].sources == [1]


def test_text_protocol_labels_and_combine_words_are_read() -> None:
    plan = QuestionPlan.model_validate({"per_document_question": "Q {document}?", "combine": " Group.",
                                        "labels": "convicted, acquitted or dismissed"})  # fmt: skip
    assert plan.combine == "group"
    assert plan.labels == ["convicted", "acquitted", "dismissed"]


def _case_documents() -> tuple[list[dict[str, str]], dict[str, list[str]]]:
    verdicts = {"Alder v. Birch": "acquitted", "Cedar v. Dogwood": "convicted", "Elm v. Fir": "convicted"}
    docs = []
    for i, (case, verdict) in enumerate(verdicts.items()):
        text = planted(6_000, at=0.3 + 0.2 * i, fact=f"The verdict in {case}: the defendant was {verdict}.")
        docs.append({"title": f"Case file: {case}", "text": text})
    groups = {
        "convicted": ["Cedar v. Dogwood", "Elm v. Fir"],
        "acquitted": ["Alder v. Birch"],
        "dismissed": [],
    }
    return docs, groups


def _planning(plan: Mapping[str, Any]) -> Any:
    """The oracle, except that the planning call answers ``plan``."""

    def respond(messages: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]) -> str:
        if "Plan how to answer it one document at a time" in str(messages[-1]["content"]):
            return json.dumps(plan)
        return oracle_responder(messages, extras)

    return respond


GROUP_QUESTION = "Each case ended convicted, acquitted or dismissed. Group the cases by verdict."
VERDICT_PLAN = {"per_document_question": "What was the verdict in {document}?", "combine": "group",
                "labels": ["convicted", "acquitted", "dismissed"]}  # fmt: skip


def test_the_graph_groups_documents_by_their_planned_answers_and_accounts_for_every_chunk() -> None:
    docs, groups = _case_documents()
    model = ScriptedChatModel(responder=_planning(VERDICT_PLAN))
    raw = build_graph(FakeProvider(model)).invoke(
        {"question": GROUP_QUESTION, "documents": docs}, context=SETTINGS
    )
    out = GraphOutput.model_validate(raw)
    score = score_groups(out.answer, {"answer": groups, "candidates": [d["title"][11:] for d in docs]})
    assert score["exact_match"] == 1.0, out.answer
    assert out.supported is True
    assert {e.title for e in out.evidence if e.verified} == {d["title"] for d in docs}
    map_questions = [str(c["messages"][-1]["content"]) for c in model.calls[1:]]
    assert all("What was the verdict in Case file:" in q for q in map_questions)
    assert {c.status for c in out.chunks} <= {"used", "no_information", "filtered"}
    assert any("planned (by the model)" in n for n in out.stats.notes)


def test_a_given_plan_is_followed_without_a_planning_call_and_a_bad_one_is_refused() -> None:
    docs, _ = _case_documents()
    model = ScriptedChatModel()
    graph = build_graph(FakeProvider(model))
    out = graph.invoke(
        {"question": GROUP_QUESTION, "documents": docs, "plan": VERDICT_PLAN}, context=SETTINGS
    )
    assert "acquitted: Case file: Alder v. Birch" in out["answer"]
    assert not any("Plan how to answer" in str(c["messages"][-1]["content"]) for c in model.calls)
    with pytest.raises(InputError, match="does not name its document"):
        bad = {**VERDICT_PLAN, "per_document_question": "What was the verdict?"}
        graph.invoke({"question": GROUP_QUESTION, "documents": docs, "plan": bad}, context=SETTINGS)


def test_one_document_or_decompose_off_makes_no_planning_call() -> None:
    docs, _ = _case_documents()
    for graph_input, settings in (
        ({"question": QUESTION, "document": planted(6_000)}, SETTINGS),
        ({"question": GROUP_QUESTION, "documents": docs}, {**SETTINGS, "decompose": False}),
    ):
        model = ScriptedChatModel(responder=_planning(VERDICT_PLAN))
        out = build_graph(FakeProvider(model)).invoke(graph_input, context=settings)
        assert not any("Plan how to answer" in str(c["messages"][-1]["content"]) for c in model.calls)
        assert not any("planned" in n for n in out["stats"]["notes"])


def test_an_unusable_model_plan_leaves_the_question_as_asked_and_says_why() -> None:
    docs, _ = _case_documents()
    model = ScriptedChatModel(responder=_planning({**VERDICT_PLAN, "labels": ["fined"]}))
    out = build_graph(FakeProvider(model)).invoke(
        {"question": GROUP_QUESTION, "documents": docs}, context=SETTINGS
    )
    assert any(
        "no per-document plan (group labels not in the question: fined)" in n for n in out["stats"]["notes"]
    )
    map_questions = [str(c["messages"][-1]["content"]) for c in model.calls[1:]]
    assert all(GROUP_QUESTION in q for q in map_questions)


@pytest.mark.parametrize("subtask", ["extremum", "enumeration", "range"])
def test_reference_plans_answer_loong_comparisons_exactly(subtask: str) -> None:
    index = ("extremum", "enumeration", "range").index(subtask)
    instance = build_loong_synth(length_set=1, n=3, seed=0, families=["comparison"])[index]
    assert instance.metadata["subtask"] == subtask
    graph_input = {**instance.graph_input(), "plan": instance.metadata["plan"]}
    out = build_graph(FakeProvider()).invoke(graph_input, context=SETTINGS)
    assert instance.scorer is not None
    scorer = get_scorer(instance.scorer)
    assert scorer.score(out["answer"], instance.label)[scorer.metric] == 1.0, (
        out["answer"],
        instance.gold_answers,
    )


def test_the_oracle_plans_an_extremum_itself() -> None:
    instance = build_loong_synth(length_set=1, n=1, seed=0, families=["comparison"])[0]
    out = build_graph(FakeProvider()).invoke(instance.graph_input(), context=SETTINGS)
    assert any("planned (by the model)" in n and "(highest)" in n for n in out["stats"]["notes"])
    assert out["answer"].startswith(instance.label["answer"]), out["answer"]  # type: ignore[index]


def test_the_oracle_plan_follows_the_question_cue_words() -> None:
    assert question_plan("Who founded it?")["combine"] == "none"
    assert question_plan("List them in order of revenue, from highest to lowest.")["combine"] == "order"
    grouped = question_plan("Each ended convicted, acquitted or dismissed. Group them.")
    assert grouped["labels"] == ["convicted", "acquitted", "dismissed"]


def test_the_eval_gives_loong_synth_reference_plans_and_labels_the_records(tmp_path: Any) -> None:
    import asyncio

    from longgraph.evals.runner import EvalConfig, read_records, run_eval

    # Clustering is left out: the oracle's sentence matcher answers "What was the verdict in Case file: X?"
    # with "This is the case file of X" (more shared words); the scripted test above covers grouping.
    instances = build_loong_synth(length_set=1, n=1, seed=0, families=["comparison", "chain"])
    assert all(i.metadata["plan"]["per_document_question"] for i in instances)
    config = EvalConfig(suite="loong-synth", strategies=("mapreduce", "truncate"), out_dir=tmp_path,
                        model_settings=dict(SETTINGS), label=None, concurrency=2, start_embedded=False,
                        oracle=True, given_plans=True)  # fmt: skip
    summary = asyncio.run(run_eval(config, llm=FakeProvider(), instances=instances))
    assert summary.label == "oracle-given-plan"
    records = {(r["instance_id"], r["strategy"]): r for r in read_records(summary.records_path)}
    for instance in instances:
        given = records[(instance.id, "mapreduce")]
        assert given["metadata"].get("given_plan") is True and given["error"] is None
        assert given["score"] == 1.0, (given["answer"], instance.gold_answers)
        assert "given_plan" not in records[(instance.id, "truncate")]["metadata"]  # it does not decompose
    with pytest.raises(Exception, match="given plans are for --suite loong-synth"):
        EvalConfig(suite="needle", strategies=("mapreduce",), out_dir=tmp_path, given_plans=True).validate()


def test_a_plan_is_refused_by_a_strategy_that_does_not_decompose_and_checked_when_given() -> None:
    from longgraph.api import ask
    from longgraph.errors import ConfigurationError

    docs, _ = _case_documents()
    with pytest.raises(ConfigurationError, match="does not decompose questions"):
        ask(
            GROUP_QUESTION,
            documents=docs,
            strategy="segment-plus",
            plan=VERDICT_PLAN,
            llm=FakeProvider(),
            **SETTINGS,
        )
    with pytest.raises(InputError, match="invalid plan"):
        ask(GROUP_QUESTION, documents=docs, plan={"combine": "sideways"}, llm=FakeProvider(), **SETTINGS)
    result = ask(GROUP_QUESTION, documents=docs, plan=VERDICT_PLAN, llm=FakeProvider(), **SETTINGS)
    assert "convicted: Case file: Cedar v. Dogwood, Case file: Elm v. Fir" in result.answer


def test_a_document_name_in_the_question_does_not_steer_the_second_reading_to_its_opening_line() -> None:
    """First readings answer with each case file's opening line (which names the case, as the question
    does); the second reading must go to the verdict, which is what the question asks."""
    docs, groups = _case_documents()
    for doc in docs:
        doc["text"] = f"This is the case file of {doc['title'][11:]}, filed in 2019.\n\n" + doc["text"]
    oracle = _planning(VERDICT_PLAN)

    def respond(messages: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]) -> str:
        shown = str(messages[-1]["content"])
        if "[Document: Case file: " in shown:  # a first reading: the opening line
            opening = shown[shown.index("This is the case file of") :].split("\n")[0]
            return json.dumps({"answer": opening})
        return oracle(messages, extras)

    model = ScriptedChatModel(responder=respond)
    out = build_graph(FakeProvider(model)).invoke(
        {"question": GROUP_QUESTION, "documents": docs}, context=SETTINGS
    )
    assert (
        score_groups(out["answer"], {"answer": groups, "candidates": [d["title"][11:] for d in docs]})[
            "exact_match"
        ]
        == 1.0
    )
    assert any("read a second time" in n and "3 gave evidence" in n for n in out["stats"]["notes"]), out[
        "stats"
    ]["notes"]
