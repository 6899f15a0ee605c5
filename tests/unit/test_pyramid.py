"""Pyramid-Align with injected fakes: importance by hand, citations, bolding, the seeded draw, the corpus run."""

from __future__ import annotations

import asyncio
import itertools
import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from longgraph.errors import ConfigurationError, TooManyFailures
from longgraph.graphs.pyramid import LEVELS, build_graph
from longgraph.nodes.pyramid import (
    bold_ids,
    leaf_importance,
    question_problem,
    question_sources,
    render_nodes,
)
from longgraph.state.pyramid import CATEGORIES, Pyramid, PyramidNode, Record, Sentence, Synthesised
from longgraph.synth import Source, asynth, dataset_files, filtered_file, illegal_characters
from longgraph.testing.fakes import FakeProvider, ScriptedChatModel, oracle_responder
from longgraph.tests.conftest import FAKE_SETTINGS, essays

SMALL = {**FAKE_SETTINGS, "temperature": 0.0, "cache_path": None}


def _stage(call: Mapping[str, Any]) -> str:
    return str((call.get("headers") or {}).get("X-Longgraph-Stage", ""))


def test_leaf_importance_is_the_sum_of_its_words_tf_idf() -> None:
    sentences = ["the cat sat", "the cat", "a dog"]
    # n = 3; df: the 2, cat 2, sat 1, a 1, dog 1; idf = ln((1+n)/(1+df)) + 1
    common, rare = math.log(4 / 3) + 1, math.log(4 / 2) + 1
    expected = [2 * common + rare, 2 * common, 2 * rare]
    assert leaf_importance(sentences) == pytest.approx(expected, abs=1e-4)
    assert leaf_importance(["Word word WORD"]) == pytest.approx([3.0])  # casefolded, counted


def _hand_pyramid() -> Pyramid:
    """Two leaves, sentence ids 0-1 and 2-3, with importances 1, 2, 4 and 8."""
    leaves = [
        PyramidNode(id=0, level=0, chunk_id=0, sentences=[Sentence(id=0, text="a", importance=1),
                                                            Sentence(id=1, text="b", importance=2)]),
        PyramidNode(id=1, level=0, chunk_id=1, sentences=[Sentence(id=2, text="c", importance=4),
                                                            Sentence(id=3, text="d", importance=8)]),
    ]  # fmt: skip
    return Pyramid(nodes=leaves, levels=[[0, 1]])


class _Kit:
    """The part of a run kit the loop's ``absorb`` reads (the default failure budget)."""

    class context:
        max_failed_fraction = 0.2


def test_an_upper_sentence_scores_the_sum_of_what_it_cites_and_bad_ids_are_dropped_and_counted() -> None:
    pyramid = _hand_pyramid()
    done = Synthesised(
        index=0, members=[0, 1], sentences=[("a and d", [0, 3]), ("b again", [1, 1, 99]), ("new", [])]
    )
    update = asyncio.run(LEVELS.absorb([done], {"pyramid": pyramid}, _Kit(), 1))  # type: ignore[arg-type]
    upper = update["pyramid"].nodes[2]
    assert upper.level == 1 and upper.children == [0, 1] and update["layer"] == [2]
    assert [s.id for s in upper.sentences] == [4, 5, 6]  # ids continue after the leaves'
    assert [s.importance for s in upper.sentences] == [9, 2, 0]  # 1 + 8; a repeated cite counts once
    assert [s.cites for s in upper.sentences] == [[0, 3], [1], []]
    assert update["pyramid"].dropped_citations == 1  # 99 is no sentence of the group
    # One level up, a sentence citing 4 and 5 scores 9 + 2: importance propagates through the levels.
    top = Synthesised(index=0, members=[2], sentences=[("all", [4, 5, 0])])  # 0 is not in this group
    again = asyncio.run(LEVELS.absorb([top], {"pyramid": update["pyramid"]}, _Kit(), 2))  # type: ignore[arg-type]
    assert again["pyramid"].nodes[3].sentences[0].importance == 11
    assert again["pyramid"].dropped_citations == 2


def test_an_unwritten_group_rises_unchanged_and_is_noted() -> None:
    pyramid = _hand_pyramid()
    results = [
        Synthesised(index=0, members=[0], error="unreadable"),
        Synthesised(index=1, members=[1], sentences=[("x", [2])]),
    ]
    update = asyncio.run(LEVELS.absorb(results, {"pyramid": pyramid}, _Kit(), 1))  # type: ignore[arg-type]
    assert update["layer"] == [0, 2]
    assert "rose unchanged" in update["decisions"][0] and "unreadable" in update["decisions"][0]
    # An unwritten root ends the pyramid below it, noted, rather than failing the document.
    root = asyncio.run(
        LEVELS.absorb(
            [Synthesised(index=0, members=[0, 1], error="no sentence")], {"pyramid": pyramid}, _Kit(), 2
        )
    )  # type: ignore[arg-type]
    assert root["layer"] == [0, 1] and root["pyramid"].levels == pyramid.levels
    assert "root could not be synthesised (no sentence)" in root["pyramid"].construction
    # Two groups of three unwritten, more than max_failed_fraction: they rise, nothing is lost.
    partial = asyncio.run(
        LEVELS.absorb(
            [Synthesised(index=0, members=[0], error="x"), Synthesised(index=1, members=[1], error="x"),
             Synthesised(index=2, members=[0, 1], sentences=[("y", [0])])],
            {"pyramid": pyramid}, _Kit(), 1,
        )
    )  # type: ignore[arg-type]  # fmt: skip
    assert len(partial["layer"]) == 3 and sum("rose unchanged" in d for d in partial["decisions"]) == 2
    with pytest.raises(TooManyFailures, match="none of the 2"):  # no group of the level written
        asyncio.run(
            LEVELS.absorb(
                [Synthesised(index=i, members=[i], error="x") for i in (0, 1)],
                {"pyramid": pyramid},
                _Kit(),
                1,
            )
        )  # type: ignore[arg-type]


def test_the_most_important_third_is_bold_in_the_prompt() -> None:
    pyramid = _hand_pyramid()
    assert bold_ids(pyramid.nodes[0].sentences + pyramid.nodes[1].sentences) == {3, 2}  # ceil(4 / 3) = 2
    text = render_nodes(pyramid, [0, 1])
    assert "[3] **d**" in text and "[2] **c**" in text and "[0] a" in text and "Part 2:" in text
    assert "**" not in render_nodes(pyramid, [0], numbered=False).replace(
        "**b**", ""
    )  # b is node 0's top third
    assert bold_ids([Sentence(id=0, text="z", importance=0)]) == set()  # a zero score is never bold


def test_the_source_node_and_category_are_drawn_by_seed_and_document() -> None:
    pyramid = Pyramid(
        nodes=[PyramidNode(id=i, level=0, sentences=[]) for i in range(5)], levels=[list(range(5))]
    )

    def draw(seed: int, text: str) -> tuple[int, int]:
        order, category = question_sources({"seed": seed, "document": text, "pyramid": pyramid})  # type: ignore[typeddict-item]
        assert sorted(order) == list(range(5))  # every node, the draw first: the order of later tries
        return order[0], category

    assert draw(1, "doc") == draw(1, "doc")
    draws = [draw(seed, "doc") for seed in range(300)]
    categories = Counter(CATEGORIES[c] for _, c in draws)
    assert set(categories) == set(CATEGORIES) and min(categories.values()) > 70  # about a third each
    assert {n for n, _ in draws} == set(range(5))
    assert [draw(0, f"doc {i}") for i in range(20)] != [draw(0, "doc")] * 20  # the document matters too


def _run(
    document: str, model: ScriptedChatModel | None = None, **settings: Any
) -> tuple[dict[str, Any], ScriptedChatModel]:
    model = model or ScriptedChatModel()
    out = build_graph(FakeProvider(model)).invoke(
        {"document": document, "seed": 7, "source": "doc"}, context={**SMALL, **settings}
    )
    return out, model


def test_a_document_becomes_a_pyramid_a_question_and_a_mapreduce_answer() -> None:
    document = essays()[:30_000]
    out, model = _run(document)
    pyramid: Pyramid = out["pyramid"]
    record: Record = out["record"]
    sizes = [len(level) for level in pyramid.levels]
    assert sizes[0] > 3 and sizes[-1] == 1 and pyramid.construction == "one root"
    assert all(a > b for a, b in itertools.pairwise(sizes))  # about a third each level
    uppers = [pyramid.node(i) for level in pyramid.levels[1:] for i in level]
    assert len(uppers) == len(pyramid.nodes) - sizes[0] > 0
    assert all(1 <= len(n.children) <= 3 for n in uppers)
    assert all(n.level == 1 + max(pyramid.node(c).level for c in n.children) for n in uppers)
    stages = Counter(_stage(c) for c in model.calls)
    assert stages["synthesise"] == len(pyramid.nodes) - sizes[0]
    assert sum(stages[s] for s in ("question_causal", "question_extraction", "question_summary")) == 1
    assert stages["map"] >= 2  # the mapreduce subgraph read the whole document
    assert document == record.X and record.Q.endswith("?") and record.A
    assert record.calls == len(model.calls) and record.levels == len(pyramid.levels)
    assert [m["chunk"] for m in record.M] == list(range(len(record.M))) and len(record.M) == stages["map"]
    assert (
        pyramid.dropped_citations
        > 0
        == sum(1 for n in pyramid.nodes for s in n.sentences for c in s.cites if c > 10_000)
    )
    # The question's prompt shows the drawn node, its most important sentences in bold.
    (asked,) = [c for c in model.calls if _stage(c).startswith("question_")]
    assert "**" in asked["messages"][-1]["content"]


def test_illegal_characters_are_named_and_counted() -> None:
    assert illegal_characters("clean\ttext\n") == Counter()
    assert illegal_characters("a\x00b\x1bc\ufffd\ud800") == Counter(
        {"control character": 2, "replacement character (U+FFFD)": 1, "lone surrogate": 1}
    )


def _question_with(text: str) -> ScriptedChatModel:
    """A model whose question is ``text``, ``{words}`` in it replaced by the node's first words (so the
    question is about the node)."""

    def respond(messages: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]) -> str:
        schema = ((extras.get("response_format") or {}).get("json_schema") or {}).get("name")
        if schema == "GeneratedQuestion":
            prompt = next(str(m["content"]) for m in messages if "### Text:" in str(m["content"]))
            node = prompt.split("### Text:", 1)[1].split("### Question:")[0]
            return json.dumps(
                {"question": text.replace("{words}", " ".join(node.replace("*", "").split()[:4]))}
            )
        return oracle_responder(messages, extras)

    return ScriptedChatModel(responder=respond)


def test_a_statement_is_asked_again_from_the_next_nodes_then_the_document_is_filtered(tmp_path: Path) -> None:
    """SmolLM2 sometimes writes a sentence of the text instead of a question: the next node of the
    seeded order is asked, and a document with no question from any is filtered with what was written."""
    asked_nodes: list[str] = []

    def statement_first(messages: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]) -> str:
        schema = ((extras.get("response_format") or {}).get("json_schema") or {}).get("name")
        if schema == "GeneratedQuestion":
            asked_nodes.append(str(messages[-1]["content"]))
            if len(asked_nodes) <= 2:  # the first node's answer and its one parse retry
                return json.dumps({"question": "Founders are often flattered by such meetings."})
        return oracle_responder(messages, extras)

    out, model = _run(essays()[:30_000], ScriptedChatModel(responder=statement_first), parse_retries=1)
    record: Record = out["record"]
    (rejected,) = out["rejected_questions"]
    order = question_sources({"seed": 7, "document": essays()[:30_000], "pyramid": out["pyramid"]})[0]
    assert rejected.node == order[0] and "not a question" in rejected.error and "flattered" in rejected.raw
    assert record.source_node == order[1] and record.Q.endswith("?")
    assert f"node {order[0]} gave no question (" in " ".join(record.notes)  # the record says so
    assert record.calls == len(model.calls)  # the rejected calls are paid for and counted

    never = _question_with("The essay is about startups.")
    sources = [Source(name="doc", text=essays()[:6000])]
    out_file = tmp_path / "data.jsonl"
    summary = asyncio.run(
        asynth(sources, out_file, llm=FakeProvider(never), start_embedded=False, **SMALL,
               pyramid_question_nodes=2, parse_retries=1)
    )  # fmt: skip
    why = "no question (the model wrote none from 2 node(s))"
    assert summary.written == 0 and summary.filtered == Counter({why: 1}) and not summary.failed
    assert summary.calls == len(never.calls) > 4  # the pyramid and the rejected questions are counted
    (set_aside,) = [json.loads(line) for line in filtered_file(out_file).read_text().splitlines()]
    assert set_aside["reason"] == why and len(set_aside["rejected_questions"]) == 2
    assert all(r["raw"] and "not a question" in r["error"] for r in set_aside["rejected_questions"])
    assert sum(1 for c in never.calls if _stage(c).startswith("question_")) == 2 * 2  # 2 nodes, 2 attempts
    assert not any(_stage(c) == "map" for c in never.calls)  # no answer is paid for without a question
    _progress, card = dataset_files(out_file)
    assert "no question" in card.read_text()
    again = asyncio.run(
        asynth(sources, out_file, llm=FakeProvider(never), start_embedded=False, **SMALL,
               pyramid_question_nodes=2)
    )  # fmt: skip
    assert again.skipped == 1  # filtered is an outcome: a rerun does not ask again


def test_a_corpus_run_writes_filters_resumes_and_refuses_another_recipe(tmp_path: Path) -> None:
    texts = [essays()[i * 6000 : (i + 1) * 6000] for i in range(4)]
    sources = [Source(name=f"doc{i}", text=t) for i, t in enumerate(texts)]
    out = tmp_path / "data.jsonl"
    model = _question_with("Why did \x07 {words}?")  # an illegal character in every question
    summary = asyncio.run(asynth(sources, out, llm=FakeProvider(model), start_embedded=False, **SMALL))
    assert summary.written == 0 and summary.filtered == Counter(
        {"illegal characters in the question or answer": 4}
    )
    assert summary.illegal["control character"] >= 4
    _progress, card = dataset_files(out)
    assert "illegal characters" in card.read_text() and out.read_text() == ""
    set_aside = [json.loads(line) for line in filtered_file(out).read_text().splitlines()]
    assert len(set_aside) == 4 and all(
        "\x07" in r["Q"] and r["reason"].startswith("illegal") for r in set_aside
    )

    clean = tmp_path / "clean.jsonl"
    first = asyncio.run(
        asynth(sources[:2], clean, llm=FakeProvider(ScriptedChatModel()), start_embedded=False, **SMALL)
    )
    assert first.written + sum(first.filtered.values()) == 2
    counting = ScriptedChatModel()
    again = asyncio.run(asynth(sources, clean, llm=FakeProvider(counting), start_embedded=False, **SMALL))
    assert again.skipped == 2 and again.written + sum(again.filtered.values()) == 2
    ids = [json.loads(line)["id"] for line in clean.read_text().splitlines()]
    assert len(ids) == len(set(ids)) == first.written + again.written  # each document once
    assert sum(1 for c in counting.calls if _stage(c).startswith("question_")) == 2  # only the new two
    with pytest.raises(ConfigurationError, match="seed"):
        asyncio.run(
            asynth(
                sources, clean, seed=5, llm=FakeProvider(ScriptedChatModel()), start_embedded=False, **SMALL
            )
        )


def test_a_failing_document_is_recorded_and_retried_by_the_next_run(tmp_path: Path) -> None:
    def broken(messages: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]) -> str:
        return "not json at all"

    sources = [Source(name="doc", text=essays()[:6000]), Source(name="empty", text="   ")]
    out = tmp_path / "data.jsonl"
    summary = asyncio.run(
        asynth(
            sources, out, llm=FakeProvider(ScriptedChatModel(responder=broken)), start_embedded=False, **SMALL
        )
    )
    assert summary.written == 0 and set(summary.failed) == {"doc", "empty"}
    assert "no text" in summary.failed["empty"]
    progress, _ = dataset_files(out)
    assert '"status": "failed"' in progress.read_text()
    retried = asyncio.run(
        asynth(sources[:1], out, llm=FakeProvider(ScriptedChatModel()), start_embedded=False, **SMALL)
    )
    assert retried.skipped == 0 and retried.written + sum(retried.filtered.values()) == 1


def test_a_line_torn_by_a_kill_is_redone_and_no_finished_record_is_lost(tmp_path: Path) -> None:
    sources = [Source(name=f"doc{i}", text=essays()[i * 6000 : (i + 1) * 6000]) for i in range(3)]
    out = tmp_path / "data.jsonl"
    first = asyncio.run(
        asynth(sources[:2], out, llm=FakeProvider(ScriptedChatModel()), start_embedded=False, **SMALL)
    )
    kept = out.read_text(encoding="utf-8")
    with out.open("a", encoding="utf-8") as torn:  # a kill in the middle of the third document's write
        torn.write('{"id": "half a rec')
    again = asyncio.run(
        asynth(sources, out, llm=FakeProvider(ScriptedChatModel()), start_embedded=False, **SMALL)
    )
    assert again.skipped == 2 and again.written + sum(again.filtered.values()) == 1
    lines = out.read_text(encoding="utf-8").splitlines()
    assert out.read_text(encoding="utf-8").startswith(kept)  # the finished records untouched
    assert [json.loads(line)["id"] for line in lines]  # every line whole again
    assert len(lines) == first.written + again.written


def test_a_generated_question_must_be_a_question() -> None:
    """What SmolLM2 wrote for 5 of 6 nodes (a copied sentence, the format line) is refused; text mode
    picks the line that asks."""
    from pydantic import ValidationError

    from longgraph.state.outputs import GeneratedQuestion

    for statement in ("Particularly to young companies that are growing fast.",
                      'Respond with one JSON object with the keys "question" (string).'):  # fmt: skip
        with pytest.raises(ValidationError, match="not a question"):
            GeneratedQuestion.model_validate({"question": statement})
    asked = GeneratedQuestion.model_validate({"question": "Why do founders take the meeting?"})
    assert asked.question == "Why do founders take the meeting?"
    stopped = GeneratedQuestion.model_validate({"question": "Why do founders take the meeting."})
    assert stopped.question == "Why do founders take the meeting?"  # a question with the wrong stop
    parsed = GeneratedQuestion.parse_text("The text is about corp dev.\nQuestion: Why meet corp dev?\n")
    assert parsed == {"question": "Why meet corp dev?"}


def test_a_question_about_nothing_or_copied_from_the_text_is_rejected() -> None:
    """What SmolLM2 wrote with a question mark that still asks nothing of the node."""
    node = "Corp dev people are **flattering founders** when they meet. Particularly to young companies that are growing fast."
    assert question_problem("What is the question?", node) is not None
    assert question_problem("What is the answer to the question about the text?", node) is not None
    assert "sentence of the text" in str(
        question_problem("Particularly to young companies that are growing fast?", node)
    )
    assert "about a question" in str(
        question_problem("What is the answer to the question about flattering founders?", node)
    )
    assert question_problem("47, Question: 1. Why are corp dev people flattering?", node) is not None
    assert question_problem("Why do corp dev people flatter founders?", node) is None
