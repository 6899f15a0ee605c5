"""ToM with injected fakes: outlines to subtrees, aggregation, post-order reasoning, the tree cache."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from longgraph.nodes.tree import assemble, subtree_from_outline
from longgraph.nodes.tree_build import knn_clusters
from longgraph.state.contract import Chunk, ChunkPart, DocumentIn, GraphOutput
from longgraph.state.outputs import DocSections, ParsedSection
from longgraph.strategies import build_strategy
from longgraph.testing.fakes import FakeProvider, ScriptedChatModel, hashed_embeddings, oracle_responder
from longgraph.tests.conftest import FACT, FAKE_SETTINGS, QUESTION, planted

SMALL = FAKE_SETTINGS
TEXT = (
    "Opening remarks come first. The first section starts now and goes on for a while. More of it.\n\n"
    "Second part begins here with angels. Angels invest early. The end of the chunk."
)


def _chunk(text: str = TEXT, chunk_id: int = 3) -> tuple[Chunk, list[DocumentIn]]:
    docs = [DocumentIn(text=text)]
    return Chunk(
        id=chunk_id, parts=[ChunkPart(doc_index=0, title="", start=0, end=len(text))], tokens=40, text=text
    ), docs


def _covered(parse: Any, text: str) -> str:
    return "".join(text[p.start : p.end] for n in parse.nodes for p in n.parts)


def test_an_outline_becomes_a_subtree_whose_leaves_partition_the_chunk() -> None:
    chunk, docs = _chunk()
    outline = DocSections(
        title="Investing", keywords=["angels"], summary="About money.",
        sections=[
            ParsedSection(number="1", title="Start", text="The first section starts now"),
            ParsedSection(number="2", title="Angels", text="SECOND part begins here"),
            ParsedSection(number="2.1", title="Early", text="Angels invest early."),
        ],
    )  # fmt: skip
    parse = subtree_from_outline(outline, chunk, docs)
    assert parse.loss is None
    by_title = {n.title: n for n in parse.nodes}
    assert by_title["Angels"].children == [by_title["Early"].id] and not by_title["Angels"].parts
    assert _covered(parse, TEXT) == TEXT  # every character in exactly one leaf, in order
    assert TEXT[by_title["Early"].parts[0].start :].startswith("Angels invest early.")


def test_malformed_and_sectionless_outlines_keep_the_chunk_as_one_leaf() -> None:
    chunk, docs = _chunk()
    failed = subtree_from_outline(None, chunk, docs, error="unparseable after 2 attempt(s)")
    assert len(failed.nodes) == 1 and _covered(failed, TEXT) == TEXT
    assert failed.loss and "parse failed" in failed.loss
    bare = subtree_from_outline(DocSections(title="Only a title"), chunk, docs)
    assert len(bare.nodes) == 1 and bare.nodes[0].title == "Only a title" and _covered(bare, TEXT) == TEXT
    ghost = subtree_from_outline(
        DocSections(
            title="T", sections=[ParsedSection(number="1", title="Ghost", text="words nowhere in it")]
        ),
        chunk,
        docs,
    )
    assert _covered(ghost, TEXT) == TEXT and ghost.loss and "found in the chunk" in ghost.loss


def test_rewritten_text_is_recorded_and_the_original_kept() -> None:
    chunk, docs = _chunk()
    rewritten = (  # its opening words are the chunk's; the rest is the parser's own
        "Opening remarks come first. The first section starts now and goes on for a while. The parser then "
        "wrote its own words about finance and dropped everything else."
    )
    parse = subtree_from_outline(
        DocSections(title="T", sections=[ParsedSection(number="1", title="All", text=rewritten)]), chunk, docs
    )
    assert _covered(parse, TEXT) == TEXT and parse.loss and "rewrote" in parse.loss


def test_a_section_left_without_text_is_dropped() -> None:
    """Section 2's only subsection quotes text that is not in the chunk: neither keeps a node (they
    would hold only model-written summary, and two such nodes would ask the model the same thing)."""
    chunk, docs = _chunk()
    sections = [
        ParsedSection(number="1", title="One", text="Opening remarks come first."),
        ParsedSection(number="2", title="Two", text=""),
        ParsedSection(number="2.1", title="Ghost", text="Nothing like this is in the chunk at all, really."),
        ParsedSection(number="3", title="Three", text="Second part begins here with angels."),
    ]
    parse = subtree_from_outline(DocSections(title="T", sections=sections), chunk, docs)
    assert [n.title for n in parse.nodes] == ["T", "One", "Three"]
    assert all(n.parts for n in parse.nodes if not n.children)
    assert _covered(parse, TEXT) == TEXT


def test_limits_five_main_sections_and_four_levels() -> None:
    chunk, docs = _chunk(" ".join(f"Sentence number {i} is here." for i in range(40)))
    sections = [
        ParsedSection(number=str(i), title=f"S{i}", text=f"Sentence number {i * 5} is here")
        for i in range(1, 8)
    ]
    sections.append(ParsedSection(number="1.1.1.1.1", title="Deep", text="Sentence number 6 is here"))
    parse = subtree_from_outline(DocSections(title="T", sections=sections), chunk, docs)
    root = parse.nodes[0]
    assert len(root.children) == 5
    assert parse.loss and "folded" in parse.loss
    assert max(len(n.number.split(".")) for n in parse.nodes if n.number) <= 4


def test_the_papers_text_outline_is_read() -> None:
    text = (
        "***Money***\n**Keywords**: money; startups\n**Summary**: On money.\n"
        "***1. Raising***\n**Keywords**: seed\n**Summary**: How.\n**Original Text**: The first section starts now"
    )
    outline = DocSections.model_validate(DocSections.parse_text(text))
    assert (
        outline.title == "Money"
        and outline.sections[0].number == "1"
        and outline.sections[0].keywords == ["seed"]
    )


def test_clustering_guards_and_a_large_layer() -> None:
    assert knn_clusters(np.zeros((1, 8), dtype=np.float32)) == [[0]]
    two = knn_clusters(hashed_embeddings(["apples and pears", "pears and apples"]))
    assert sorted(i for c in two for i in c) == [0, 1]
    topics = ["rockets orbit launch", "bread flour oven", "violin cello orchestra", "goal striker league"]
    texts = [f"{topics[i % 4]} note {i}" for i in range(500)]
    clusters = knn_clusters(hashed_embeddings(texts))
    assert sorted(i for c in clusters for i in c) == list(range(500))  # a partition
    assert 2 <= len(clusters) < 500


def _run(
    strategy: str, document: str, model: ScriptedChatModel | None = None, **settings: Any
) -> GraphOutput:
    graph = build_strategy(strategy, FakeProvider(model or ScriptedChatModel()))
    out = GraphOutput.model_validate(
        graph.invoke({"question": QUESTION, "document": document}, context={**SMALL, **settings})
    )
    assert [c.id for c in out.chunks] == list(range(len(out.chunks)))
    assert all(c.reason for c in out.chunks if c.status in ("filtered", "failed", "unsupported"))
    return out


def test_tom_answers_from_the_tree_and_accounts_for_every_chunk() -> None:
    document = planted(60_000)
    out = _run("tom", document)
    assert (
        "smoked plums" in out.answer and out.verdict in ("supported", "unconfirmed") and out.strategy == "tom"
    )
    assert document[out.evidence[0].start : out.evidence[0].end] == FACT
    assert {"parse", "summarize", "map"} <= set(out.stats.calls_by_stage)
    filtered = [c for c in out.chunks if c.status == "filtered"]
    assert len(filtered) == len(out.chunks) - 7 and all("top 7 chunks" in (c.reason or "") for c in filtered)
    assert (
        out.stats.build is not None
        and out.stats.build.llm_calls
        == out.stats.calls_by_stage["parse"] + out.stats.calls_by_stage["summarize"]
    )


def test_aggregation_over_many_subtrees_reaches_one_root_within_the_bound() -> None:
    document = planted(40_000)
    out = _run("tom", document, tom_top_k=0, tom_chunk_tokens=80, max_collapse_rounds=6)
    assert len(out.chunks) > 100
    assert "smoked plums" in out.answer
    summaries = out.stats.calls_by_stage["summarize"]
    assert 0 < summaries < len(out.chunks)
    assert out.stats.collapse_rounds >= 2  # reasoning went up several levels


def test_reasoning_is_post_order() -> None:
    """Every inner node is mapped after all of its children: their results are in its prompt."""
    order: list[str] = []

    def logging_oracle(messages: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]) -> str:
        user = str(messages[-1]["content"])
        title = re.search(r"^Title: (.*)$", user, re.MULTILINE)
        if title and ("Find the sentence" in user or "A section of a long text" in user):
            order.append("inner" if "Previous reasoning results" in user else "leaf")
        return oracle_responder(messages, extras)

    out = _run("tom", planted(60_000), ScriptedChatModel(responder=logging_oracle))
    assert "smoked plums" in out.answer
    assert "inner" in order and order.index("inner") > max(
        i for i, kind in enumerate(order) if kind == "leaf"
    )


def test_a_second_question_reuses_the_cached_tree(tmp_path: Any) -> None:
    document = planted(60_000)
    cache = str(tmp_path / "cache.sqlite")
    first = _run("tom", document, cache_path=cache, tom_top_k=0, tom_chunk_tokens=600)
    assert first.stats.built_from_cache is False and first.stats.build and first.stats.build.llm_calls > 0
    model = ScriptedChatModel()
    graph = build_strategy("tom", FakeProvider(model))
    second = GraphOutput.model_validate(
        graph.invoke(
            {"question": "Who is Grandma Olga?", "document": document},
            context={**SMALL, "cache_path": cache, "tom_top_k": 0, "tom_chunk_tokens": 600},
        )
    )
    assert second.stats.built_from_cache is True
    assert "parse" not in second.stats.calls_by_stage and "summarize" not in second.stats.calls_by_stage
    assert second.stats.build is not None and second.stats.build.llm_calls == 0
    assert not any("Outline the text" in str(c["messages"][-1]["content"]) for c in model.calls)


def test_ablations_run() -> None:
    document = planted(40_000)
    flat = _run("tom-no-aggregation", document)
    assert "summarize" not in flat.stats.calls_by_stage and "smoked plums" in flat.answer

    def paper_oracle(messages: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]) -> str:
        return oracle_responder(messages, extras)

    plain = _run(
        "tom-no-confidence", document, ScriptedChatModel(responder=paper_oracle), prompt_variant="paper"
    )
    assert "map_plain" in plain.stats.calls_by_stage and "map" not in plain.stats.calls_by_stage
    assert "smoked plums" in plain.answer


def test_assembled_tree_renumbers_and_keeps_losses() -> None:
    chunk_a, docs = _chunk()
    parse_a = subtree_from_outline(None, chunk_a, docs, error="x")
    chunk_b, _ = _chunk(chunk_id=4)
    parse_b = subtree_from_outline(DocSections(title="B"), chunk_b, docs)
    tree = assemble([parse_b, parse_a])
    assert tree.chunk_ids == [3, 4] and len(tree.roots) == 2 and set(tree.losses) == {3, 4}
    assert json.loads(tree.model_dump_json())["roots"] == tree.roots


WEAK = "The secret ingredient of good writing is rewriting."


def test_a_weak_leaf_is_set_aside() -> None:
    """A leaf whose note quotes a sentence sharing two words with the question ("secret ingredient",
    none of its names: its confidence is 55% of the holder's) is set aside, with ``min_note_strength``
    set above that, before it can meet the holder's note in a reduce."""
    document = planted(30_000, at=0.2).replace(". ", f". {WEAK} ", 1)

    def responder(messages: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]) -> str:
        user = str(messages[-1]["content"])
        if "Find the sentence" in user and "Previous reasoning results" not in user:
            if "smoked plums" in user:
                return json.dumps({"answer": FACT})
            if WEAK in user:
                return json.dumps({"answer": WEAK})
        return oracle_responder(messages, extras)

    out = _run("tom", document, ScriptedChatModel(responder=responder), tom_top_k=0, min_note_strength=0.6)
    assert "smoked plums" in out.answer and out.verdict in ("supported", "unconfirmed"), out.verdict_reason
    assert document[out.evidence[0].start : out.evidence[0].end] == FACT
    weak = next(c for c in out.chunks if c.answer == WEAK)
    assert weak.status == "filtered" and "much weaker" in (weak.reason or "")
