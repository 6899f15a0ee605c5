"""PECAN with injected fakes: batching to the threshold, attention aggregation, the search and its stops."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pytest

from longgraph.errors import ConfigurationError, TooManyFailures
from longgraph.nodes import attention as attention_module
from longgraph.nodes.attention import AttentionReading, _Capture, normalise_rows
from longgraph.nodes.chunking import split_into_chunks
from longgraph.nodes.graph_search import (
    NOTED,
    WORD_WEIGHT,
    chunks_reached,
    node_relevance,
    node_similarity,
    retrieval_scores,
)
from longgraph.state.contract import Chunk, DocumentIn, GraphOutput
from longgraph.state.pecan import IPGraph, IPNode
from longgraph.strategies import build_strategy
from longgraph.testing.answers import build_completion_content
from longgraph.testing.capable import SETTINGS, Scenario, capable_responder
from longgraph.testing.fakes import FakeProvider, ScriptedChatModel, oracle_responder
from longgraph.tests.conftest import FAKE_SETTINGS, QUESTION, planted, spread
from longgraph.tokenizer import get_tokenizer

SMALL = {**FAKE_SETTINGS, "context_window": 4096, "pecan_edges": "embedding", "temperature": 0.0}


def _stage(call: Mapping[str, Any]) -> str:
    return str((call.get("headers") or {}).get("X-Longgraph-Stage", ""))


def _run(
    document: str, strategy: str = "pecan", model: ScriptedChatModel | None = None, **settings: Any
) -> tuple[GraphOutput, ScriptedChatModel]:
    model = model or ScriptedChatModel()
    graph = build_strategy(strategy, FakeProvider(model))
    out = graph.invoke({"question": QUESTION, "document": document}, context={**SMALL, **settings})
    return GraphOutput.model_validate(out), model


def _answering(verdict: str) -> ScriptedChatModel:
    """The oracle for every stage, but the Yes/No turn always answers ``verdict``."""

    def respond(messages: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]) -> str:
        schema = ((extras.get("response_format") or {}).get("json_schema") or {}).get("name")
        return f'{{"answer": "{verdict}"}}' if schema == "Sufficiency" else oracle_responder(messages, extras)

    return ScriptedChatModel(responder=respond)


def test_the_planted_fact_is_found_and_grounded_and_every_chunk_accounted_for() -> None:
    out, _ = _run(planted(60_000))
    assert "smoked plums" in out.answer and out.verdict in ("supported", "unconfirmed")
    assert out.evidence and "smoked plums" in out.evidence[0].text
    structure = out.stats.structure or {}
    assert (
        structure["edges"] == "embedding-similarity"
        and structure["relevance"] == "embedding+words-similarity"
    )
    assert len(structure["levels"]) >= 2 and structure["retrieved"] >= 1
    assert len(out.chunks) == len({c.id for c in out.chunks}) == structure["levels"][0]
    assert {c.status for c in out.chunks} <= {"used", "no_information", "unsupported", "filtered"}
    assert any(c.status == "used" for c in out.chunks)
    assert all(c.reason for c in out.chunks if c.status == "filtered")


def test_batches_fill_up_to_the_threshold_in_order() -> None:
    threshold = 900
    out, model = _run(planted(40_000), pecan_batch_tokens=threshold)
    tokenizer = get_tokenizer(None)
    points_calls = [c for c in model.calls if _stage(c) == "points"]
    level_one = (out.stats.structure or {})["levels"][0]
    first_level = [c for c in points_calls if "Each segment" in str(c["messages"][-1]["content"])]
    assert first_level
    shown = [str(c["messages"][-1]["content"]).split("begins as follows:\n", 1)[1].split("\nThe information concludes")[0]
             for c in points_calls]  # fmt: skip
    sizes = [tokenizer.count(text) for text in shown]
    assert max(sizes) <= threshold
    # level 1 holds every chunk once, so its batches cover them all: at least total / threshold batches
    chunk_tokens = sum(c.tokens for c in out.chunks)
    assert len(points_calls) >= math.ceil(chunk_tokens / threshold)
    assert level_one == len(out.chunks)


def _by_hand(query: Any, key: Any, sources: list[tuple[int, int]], targets: list[tuple[int, int]]) -> Any:
    """Softmax rows with the causal mask, mean over heads, mean over target then source tokens."""
    heads, length = query.shape[1], query.shape[2]
    q, k = query.numpy()[0], np.repeat(key.numpy()[0], heads // key.shape[1], axis=0)
    scores = np.einsum("hid,hjd->hij", q, k) * 0.5
    scores[:, np.triu(np.ones((length, length), dtype=bool), 1)] = -np.inf
    probs = np.exp(scores - scores.max(axis=-1, keepdims=True))
    probs = (probs / probs.sum(axis=-1, keepdims=True)).mean(axis=0)
    return np.array([[probs[a:b, c:d].mean(axis=1).mean() for c, d in targets] for a, b in sources])


@pytest.mark.parametrize(
    ("sources", "targets"),
    [
        ([(5, 7), (4, 5)], [(0, 2), (2, 4)]),
        ([(2, 4)], [(0, 2), (5, 7)]),  # a target after the source: masked, it reads nothing
    ],
)
def test_attention_is_aggregated_over_heads_layers_and_tokens_as_the_paper_says(
    sources: list[tuple[int, int]], targets: list[tuple[int, int]]
) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    heads, kv_heads, length, dim = 4, 2, 7, 3
    query = torch.tensor(rng.normal(size=(1, heads, length, dim)), dtype=torch.float32)
    key = torch.tensor(rng.normal(size=(1, kv_heads, length, dim)), dtype=torch.float32)
    capture = _Capture(sources=sources, targets=targets, total=np.zeros((len(sources), len(targets))))
    capture.add(query, key, 0.5)
    capture.add(query, key, 0.5)  # a second "layer": the mean over layers is the same
    assert capture.layers == 2
    assert np.allclose(capture.mean(), _by_hand(query, key, sources, targets), atol=1e-6)
    normalised = normalise_rows(capture.mean())
    assert np.allclose(normalised.sum(axis=1), 1.0) and np.allclose(normalise_rows(np.zeros((1, 3))), 0.0)


def _graph() -> IPGraph:
    """Two chunks and three chunks under two points under one top point (hand-made weights)."""
    nodes = [IPNode(id=i, level=1, chunk_id=i) for i in range(5)]
    nodes += [
        IPNode(id=5, level=2, text="a", edges={0: 0.7, 1: 0.3}),
        IPNode(id=6, level=2, text="b", edges={2: 0.2, 3: 0.2, 4: 0.6}),
        IPNode(id=7, level=3, text="top", edges={5: 0.25, 6: 0.75}),
    ]
    return IPGraph(nodes=nodes, levels=[[0, 1, 2, 3, 4], [5, 6], [7]], chunk_ids=list(range(5)))


def test_the_search_scores_are_E_transposed_r_plus_similarity() -> None:
    graph = _graph()
    relevance = {7: 2.0, 6: 1.5}
    similarity = [0.1, 0.0, 0.3, 0.0, 0.05, 0.2, 0.9, 0.0]
    scores = retrieval_scores(graph, relevance, similarity, use_similarity=True)
    r = np.zeros(8)
    for node_id, value in relevance.items():
        r[node_id] = value
    dense = graph.edge_matrix().T @ r + np.array(similarity)
    assert set(scores) == {0, 1, 2, 3, 4, 5}  # visited nodes are never candidates
    assert all(math.isclose(scores[i], dense[i], rel_tol=1e-6) for i in scores)
    assert max(scores, key=lambda i: scores[i]) == 4  # 1.5 × 0.6 + 0.05 beats 2 × 0.25 + 0.2
    alone = retrieval_scores(graph, relevance, similarity, use_similarity=False)
    assert alone[1] == 0.0 and math.isclose(alone[4], 0.9)
    assert chunks_reached(graph, [7]) == [4, 0, 2]  # weights multiplied down: 0.45, 0.175, 0.15…


def _one_chunk_each(texts: Sequence[str]) -> tuple[IPGraph, dict[int, Chunk]]:
    """A graph of one level: each text one chunk (its id its index), no points, no vectors."""
    tokenizer = get_tokenizer(None)
    chunks = {
        i: split_into_chunks([DocumentIn(text=text)], 100, tokenizer)[0].model_copy(update={"id": i})
        for i, text in enumerate(texts)
    }
    nodes = [IPNode(id=i, level=1, chunk_id=i) for i in range(len(texts))]
    return IPGraph(nodes=nodes, levels=[list(range(len(texts)))], chunk_ids=list(range(len(texts)))), chunks


def test_the_asked_entitys_chunk_outranks_a_look_alike_the_embedding_prefers() -> None:
    """Similarity is the cosine plus the question's words: an embedding reads two customs houses alike,
    so a look-alike may win on the cosine alone; the asked name tells them apart."""
    texts = [
        "The ledgers of the Thimcor customs house are signed by Casimir Ganath.",
        "The ledgers of the Halwexmis customs house are signed by Leocadia Quivar.",
        "Startups grow fast when founders talk to users.",
    ]
    graph, chunks = _one_chunk_each(texts)
    question = np.array([1.0, 0.0], dtype=np.float32)
    vectors = np.array([[0.9, 0.436], [0.8, 0.6], [0.0, 1.0]], dtype=np.float32)  # the look-alike is closer
    graph = graph.with_vectors(vectors, [0, 1, 2], "toy")
    cosine = node_similarity(graph, question)
    assert cosine[0] > cosine[1] > cosine[2]
    scores = node_relevance(graph, question, "Who signs the ledgers of the Halwexmis customs house?", chunks)
    assert scores[1] > scores[0] > scores[2]
    assert all(math.isclose(scores[i] - cosine[i], WORD_WEIGHT * share) for i, share in ((1, 1.0), (2, 0.0)))


def test_a_word_most_chunks_hold_counts_for_less_than_the_one_that_says_what_is_asked() -> None:
    """Measured with the scripted capable reader: for "For which reservoirs does the text give the fill
    level?", filler chunks holding "levels" tied with the reservoirs' chunks on the words' share and
    took the search prompt's room (two reservoirs of three found). Weighted by rarity among the chunks,
    the reservoir's chunk ranks first; a chunk with every word still gets the whole weight."""
    texts = [
        "Sea levels rose by a few centimetres.",
        "The noise levels in the hall were high.",
        "Water levels in the canal fell in June.",
        "The violet reservoir is 32.0 percent full.",
        "The text gives the reservoir fill level each day.",
    ]
    graph, chunks = _one_chunk_each(texts)
    question = "For which reservoirs does the text give the fill level?"
    scores = node_relevance(graph, np.array([1.0, 0.0], dtype=np.float32), question, chunks)
    assert all(scores[3] > scores[i] for i in range(3)), scores
    assert math.isclose(scores[4], WORD_WEIGHT)  # no vectors: no cosine, and every question word held


def _reached_path_by_path(graph: IPGraph, visited: Sequence[int]) -> list[int]:
    """The definition, walked one visited point and one path at a time (the implementation before the
    vectorised one): the reference for :func:`chunks_reached`."""
    from longgraph.nodes.graph_search import DESCENT

    reached = [i for i in visited if graph.node(i).chunk_id is not None]
    for i in visited:
        if graph.node(i).chunk_id is not None:
            continue
        below = _chunk_weights_below(graph, i, 1.0, {})
        reached += sorted(below, key=lambda n: (-round(below[n], 9), n))[:DESCENT]
    return list(dict.fromkeys(reached))


def _chunk_weights_below(
    graph: IPGraph, node_id: int, carried: float, below: dict[int, float]
) -> dict[int, float]:
    for lower, w in graph.node(node_id).edges.items():
        if graph.node(lower).chunk_id is not None:
            below[lower] = below.get(lower, 0.0) + carried * w
        else:
            _chunk_weights_below(graph, lower, carried * w, below)
    return below


def _random_graph(rng: np.random.Generator, chunks: int, levels: int) -> IPGraph:
    """Points over random members of the level below (a member may have several parents, or none),
    some edges weighing zero, as embedding similarity clipped at 0 gives."""
    nodes = [IPNode(id=i, level=1, chunk_id=i) for i in range(chunks)]
    layers = [list(range(chunks))]
    for level in range(2, levels + 2):
        below = layers[-1]
        layer = []
        for _ in range(max(1, len(below) // 3)):
            members = rng.choice(below, size=min(len(below), int(rng.integers(1, 6))), replace=False)
            weights = np.where(rng.random(len(members)) < 0.2, 0.0, rng.random(len(members)))
            node_id = len(nodes)
            edges = {int(m): round(float(w), 3) for m, w in zip(members, weights, strict=True)}
            nodes.append(IPNode(id=node_id, level=level, text=f"p{node_id}", edges=edges))
            layer.append(node_id)
        layers.append(layer)
    return IPGraph(nodes=nodes, levels=layers, chunk_ids=list(range(chunks)))


def test_chunks_reached_carries_every_point_down_at_once_as_each_path_would() -> None:
    rng = np.random.default_rng(7)
    for _ in range(40):
        graph = _random_graph(rng, chunks=int(rng.integers(4, 40)), levels=int(rng.integers(1, 4)))
        visited = [int(i) for i in rng.choice(len(graph.nodes), size=min(6, len(graph.nodes)), replace=False)]
        assert chunks_reached(graph, visited) == _reached_path_by_path(graph, visited)


def test_stop_patience_counts_yes_answers() -> None:
    document = planted(30_000)
    for patience in (1, 3):
        out, model = _run(document, model=_answering("Yes"), pecan_patience=patience)
        stages = [_stage(c) for c in model.calls]
        assert stages.count("enough") == patience
        assert (out.stats.structure or {})["retrieved"] == patience - 1
        assert any("stop patience" in note for note in out.stats.notes)
        assert stages[-1] == "answer" or stages[-2:] == ["answer", "verify"]  # "Yes" is verified


def test_the_retrieval_bound_ends_a_search_the_model_never_ends() -> None:
    out, model = _run(planted(30_000), model=_answering("No"), pecan_max_nodes=4)
    structure = out.stats.structure or {}
    assert structure["retrieved"] == 4 and structure["yes_answers"] == 0
    assert [_stage(c) for c in model.calls].count("enough") == 5  # the first turn and one per retrieval
    assert "the bound" in structure["search_stop"]


def test_fixed_k_asks_no_yes_no_question() -> None:
    out, model = _run(planted(30_000), strategy="pecan-fixed-k", pecan_fixed_k=3)
    assert "enough" not in [_stage(c) for c in model.calls]
    assert (out.stats.structure or {})["retrieved"] == 3 and out.strategy == "pecan-fixed-k"


def test_a_second_question_reuses_the_cached_graph(tmp_path: Any) -> None:
    document = planted(40_000)
    cache = str(tmp_path / "cache.sqlite")
    first, _ = _run(document, cache_path=cache)
    assert first.stats.built_from_cache is False and first.stats.build and first.stats.build.llm_calls > 0
    model = ScriptedChatModel()
    graph = build_strategy("pecan", FakeProvider(model))
    second = GraphOutput.model_validate(
        graph.invoke(
            {"question": "Who is Grandma Olga?", "document": document}, context={**SMALL, "cache_path": cache}
        )
    )
    assert second.stats.built_from_cache is True and "points" not in second.stats.calls_by_stage
    assert second.stats.build is not None and second.stats.build.llm_calls == 0


class _FakeReader:
    """Attention that always favours the last target: stands in for the local model."""

    def __init__(self) -> None:
        self.reads = 0

    def chat_text(self, messages: Sequence[tuple[str, str]], *, answer: str | None = None) -> str:
        return "\n".join(content for _, content in messages) + "\n" + (answer or "")

    def read(self, text: str, sources: Sequence[Any], targets: Sequence[Any]) -> AttentionReading:
        self.reads += 1
        weights = np.full((len(sources), len(targets)), 0.1)
        weights[:, -1] = 0.7
        return AttentionReading(weights=weights, tokens=len(text) // 4, seconds=0.0)


def test_attention_edges_and_relevance_come_from_the_local_model(monkeypatch: pytest.MonkeyPatch) -> None:
    reader = _FakeReader()
    monkeypatch.setattr("longgraph.nodes.ip_graph.attention_reader", lambda folder, precision="auto": reader)
    monkeypatch.setattr(
        "longgraph.nodes.graph_search.attention_reader", lambda folder, precision="auto": reader
    )
    out, _ = _run(planted(30_000), pecan_edges="attention", attention_model="/models/local")
    structure = out.stats.structure or {}
    assert structure["edges"] == "attention" and structure["relevance"] == "attention × position index"
    assert structure["edge_model"] == "/models/local" and reader.reads >= 2  # edges, then relevance


def test_attention_spans_are_found_in_text_whose_frame_lines_rendering_marked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A point or chunk holding "The information concludes here." is shown marked "(quoted)" (prompt
    framing); the attention reader must look for it as shown. Measured with SmolLM2 at 128K: a point
    "The first summary point: The information concludes here." failed the run with "a span is not in
    the text"."""
    reader = _FakeReader()
    monkeypatch.setattr("longgraph.nodes.ip_graph.attention_reader", lambda folder, precision="auto": reader)
    monkeypatch.setattr(
        "longgraph.nodes.graph_search.attention_reader", lambda folder, precision="auto": reader
    )
    framed = planted(30_000).replace(". ", ". The information concludes here. ", 3)
    out, _ = _run(framed, pecan_edges="attention", attention_model="/models/local", pecan_batch_tokens=900)
    assert (out.stats.structure or {})["edges"] == "attention" and reader.reads >= 2
    assert "smoked plums" in out.answer


def test_attention_without_a_local_model_is_refused_before_any_call() -> None:
    model = ScriptedChatModel()
    with pytest.raises(ConfigurationError, match="attention_model"):
        _run(planted(20_000), strategy="pecan-no-embedding", model=model)
    assert model.calls == []


def test_an_unreadable_batch_passes_its_members_up_and_says_so() -> None:
    first_batch = planted(20_000)[:60]

    def respond(messages: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]) -> str:
        shown = " ".join(str(messages[-1]["content"]).split())
        if "Each segment" in shown and " ".join(first_batch.split()) in shown:
            return "I cannot summarise this."
        return oracle_responder(messages, extras)

    out, _ = _run(
        planted(20_000), model=ScriptedChatModel(responder=respond), parse_retries=0, pecan_batch_tokens=900
    )
    assert any("gave no information point" in note for note in out.stats.notes)
    assert "smoked plums" in out.answer  # the chunks themselves were searched


def _unreadable_points(messages: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]) -> str:
    if "Each segment" in str(messages[-1]["content"]):
        return "I cannot summarise this."
    return oracle_responder(messages, extras)


def test_a_first_level_of_unreadable_batches_leaves_the_chunks_as_the_top(tmp_path: Any) -> None:
    """Every chunk is still there to read, so construction ends with them as the top, says so, and the
    search reads them (it used to raise TooManyFailures: 1 of 16 PECAN runs with SmolLM2 on dev seed
    11). The graph is cached like any other, and the next question reuses it as it is."""
    document, cache = planted(20_000), str(tmp_path / "cache.sqlite")
    first, _ = _run(
        document, model=ScriptedChatModel(responder=_unreadable_points), parse_retries=0, cache_path=cache
    )
    structure = first.stats.structure or {}
    assert structure["levels"] == [18], structure
    construction = str(structure["construction"])
    assert "2 of 2 batches of level 2" in construction, construction
    assert "the chunks (level 1) are the top" in construction and "I cannot summarise this." in construction
    assert "smoked plums" in first.answer and first.verdict in ("supported", "unconfirmed")
    assert len(first.chunks) == 18
    second, _ = _run(document, cache_path=cache)
    assert second.stats.built_from_cache is True and "points" not in second.stats.calls_by_stage
    assert (second.stats.structure or {})["construction"] == construction
    assert "smoked plums" in second.answer and second.verdict in ("supported", "unconfirmed")


def _unreadable_answers(messages: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]) -> str:
    schema = ((extras.get("response_format") or {}).get("json_schema") or {}).get("name")
    return "I cannot answer that." if schema == "DirectAnswer" else oracle_responder(messages, extras)


def test_an_unparseable_answer_turn_fails_the_chunks_it_read() -> None:
    """The answer turn is the one call that reads the reached chunks: when it gives nothing they failed
    (not "no answer"), and the failure budget refuses a run all of whose reached chunks failed."""
    with pytest.raises(TooManyFailures, match=r"failed in the answer stage.*DirectAnswer"):
        _run(planted(20_000), model=ScriptedChatModel(responder=_unreadable_answers), parse_retries=0)
    out, _ = _run(
        planted(20_000),
        model=ScriptedChatModel(responder=_unreadable_answers),
        parse_retries=0,
        max_failed_fraction=1.0,
    )
    failed = [c for c in out.chunks if c.status == "failed"]
    assert failed and all("the answer turn that read it was unparseable" in (c.reason or "") for c in failed)
    assert not any(c.status == "no_information" for c in out.chunks)
    assert not out.supported


def test_a_thread_asked_again_does_not_carry_the_last_answer_turns_failure() -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    from longgraph.graphs.pecan import build_graph

    replies: list[str] = []

    def respond(messages: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]) -> str:
        schema = ((extras.get("response_format") or {}).get("json_schema") or {}).get("name")
        if schema == "DirectAnswer" and not replies:
            replies.append("failed once")
            return "I cannot answer that."
        return oracle_responder(messages, extras)

    graph = build_graph(FakeProvider(ScriptedChatModel(responder=respond)), checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "asked twice"}}
    given = {"question": QUESTION, "document": planted(20_000)}
    settings = {**SMALL, "parse_retries": 0, "max_failed_fraction": 1.0}
    first = GraphOutput.model_validate(graph.invoke(given, config, context=settings))
    assert any(c.status == "failed" for c in first.chunks)
    second = GraphOutput.model_validate(graph.invoke(given, config, context=settings))
    assert not any(c.status == "failed" for c in second.chunks), second.chunks
    assert "smoked plums" in second.answer and second.verdict in ("supported", "unconfirmed")


def test_a_first_level_lost_to_the_endpoint_is_not_cached(tmp_path: Any) -> None:
    """A batch whose call ran out of the endpoint's retries is not the model's answer: the graph built
    without it is used for this question and not kept, so the next one builds it whole. (The other
    batch is answered, unreadably: the endpoint is up, so the lost call is recorded, not fatal.)"""
    document, cache = planted(20_000), str(tmp_path / "cache.sqlite")
    first_chunk = " ".join(document.split()[:40])

    def respond(messages: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]) -> str:
        shown = " ".join(str(messages[-1]["content"]).split())
        if "Each segment" in shown and first_chunk in shown:
            raise ConnectionError("the endpoint went away")
        return _unreadable_points(messages, extras)

    first, _ = _run(document, model=ScriptedChatModel(responder=respond), cache_path=cache, parse_retries=0)
    assert first.stats.unanswered_calls == 1
    assert "the chunks (level 1) are the top" in str((first.stats.structure or {})["construction"])
    second, _ = _run(document, cache_path=cache)
    assert second.stats.built_from_cache is False and "points" in second.stats.calls_by_stage


def test_one_unreadable_batch_of_three_on_the_first_level_does_not_fail_the_run() -> None:
    """Its chunks rise unchanged and are searched: no chunk is lost, so the failure budget (0.2 by
    default, here 1 of 3 batches) does not apply. Measured with SmolLM2 on HotpotQA 16K."""
    seen: list[str] = []

    def respond(messages: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]) -> str:
        shown = str(messages[-1]["content"])
        if "Each segment" in shown:
            seen.append(shown)
            if len(seen) == 2:
                return "I cannot summarise this."
        return oracle_responder(messages, extras)

    out, _ = _run(
        planted(20_000), model=ScriptedChatModel(responder=respond), parse_retries=0, pecan_batch_tokens=2_500
    )
    assert len(seen) >= 3  # at least three batches on the first summary level
    assert any("gave no information point" in note for note in out.stats.notes)
    assert "smoked plums" in out.answer


def test_an_unreadable_level_above_the_first_ends_construction_instead_of_the_run() -> None:
    """Measured with SmolLM2 on loong-synth: a 452-second build failed on its one level-3 batch, though
    the level below was a whole graph. Here levels 1 and 2 are 18 and 7 nodes; level 3 is unreadable."""
    calls = 0

    def respond(messages: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]) -> str:
        nonlocal calls
        if "Each segment" in str(messages[-1]["content"]):
            calls += 1
            if calls > 2:  # the two level-2 batches are read; the level-3 batch is not
                return "I cannot summarise this."
        return oracle_responder(messages, extras)

    out, _ = _run(planted(20_000), model=ScriptedChatModel(responder=respond), parse_retries=0)
    structure = out.stats.structure or {}
    assert structure["levels"] == [18, 7], structure
    construction = str(structure["construction"])
    assert "1 of 1 batches of level 3" in construction and "level 2 is the top" in construction
    assert "I cannot summarise this." in construction  # the unreadable answer is shown
    assert any("construction stopped" in note for note in out.stats.notes)
    assert "smoked plums" in out.answer and out.verdict in ("supported", "unconfirmed")


def test_the_reader_refuses_a_folder_without_a_model(tmp_path: Any) -> None:
    with pytest.raises(ConfigurationError, match="not a transformers model folder"):
        attention_module.AttentionReader(str(tmp_path))


class _CountingEmbedder(FakeProvider):
    """The fakes' hashed vectors, with how many texts each embed call asked for."""

    def __init__(self, model: ScriptedChatModel) -> None:
        super().__init__(model)
        self.embedded: list[int] = []

    async def embed(self, texts: Sequence[str], context: Any) -> Any:
        self.embedded.append(len(texts))
        return await super().embed(texts, context)


def _steps(cache_path: str | None, tmp_path: Any) -> tuple[list[tuple[str, ...]], list[int]]:
    from langgraph.checkpoint.memory import InMemorySaver

    from longgraph.graphs.pecan import build_graph

    provider = _CountingEmbedder(ScriptedChatModel())
    graph = build_graph(provider, checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "prefetch"}}
    settings = {**SMALL, "cache_path": cache_path} if cache_path else SMALL
    out = graph.invoke({"question": QUESTION, "document": planted(40_000)}, config, context=settings)
    assert "smoked plums" in GraphOutput.model_validate(out).answer
    return [tuple(s.next) for s in graph.get_state_history(config)], provider.embedded


def test_each_layer_is_embedded_beside_its_levels_calls_when_a_cache_keeps_them(tmp_path: Any) -> None:
    """The layer a round reads (the chunks' pieces, then the points the last round wrote) is embedded in
    the same superstep as that round's batches (the embedder's time hidden behind the model's calls),
    into the result cache the graph's embedding then reads. Without a cache they would be embedded
    twice, so they are embedded once, after the levels."""
    steps, embedded = _steps(str(tmp_path / "cache.sqlite"), tmp_path)
    beside = [s for s in steps if "prefetch_vectors" in s]
    rounds = [s for s in steps if "write_points" in s]
    assert len(beside) == len(rounds) >= 2 and all("write_points" in s for s in beside), steps
    # pieces, then each later layer's points; the graph's embedding; the question
    assert len(embedded) == len(rounds) + 2 and embedded[0] > embedded[1], embedded
    steps, embedded = _steps(None, tmp_path)
    assert not any("prefetch_vectors" in s for s in steps) and len(embedded) == 2, (steps, embedded)


def test_the_attention_reader_is_loaded_per_precision_and_auto_is_resolved(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ "auto" reads attention in bfloat16 where the CPU has units for it (2.3x faster, the same strongest
    members: ``evals/bench/pecan_costs.py``), and each precision is its own reader."""
    from longgraph.embeddings import resolve_precision

    loaded: list[tuple[str, str]] = []
    monkeypatch.setattr(
        attention_module, "_reader", lambda folder, precision: loaded.append((folder, precision))
    )
    attention_module.attention_reader("/models/m", "auto")
    attention_module.attention_reader("/models/m", "float32")
    assert loaded == [("/models/m", resolve_precision("auto")), ("/models/m", "float32")]
    with pytest.raises(ConfigurationError, match="attention_precision 'half'"):
        from longgraph.state.context import Context

        Context(attention_precision="half")  # type: ignore[arg-type]


GRANTS = tuple(
    f"The {name} foundation received a grant of ${value}."
    for name, value in (
        ("Corcor", "702,971"),
        ("Quilo", "319,577"),
        ("Halganvin", "1,004,242"),
        ("Pevmis", "1,250,813"),
        ("Osknevtal", "2,410,115"),
        ("Athmis", "2,039,418"),
    )
)
LIST = Scenario(
    "list",
    "For which foundations does the text give the grant?",
    GRANTS,
    "Corcor, Quilo, Halganvin, Pevmis, Osknevtal and Athmis",
)


def _text(call: Mapping[str, Any]) -> str:
    return " ".join(str(m.get("content", "")) for m in call["messages"])


def test_a_list_over_more_chunks_than_the_search_prompt_holds_is_answered_after_condensing() -> None:
    """Six facts in six chunks at a 2,048-token window, where the search prompt holds five chunks beside
    the top level: the capable reader said NO INFORMATION before condensing (it never saw all six). The
    prompt's nodes become the reader's note, the search goes on after them, and the list comes back."""
    model = ScriptedChatModel(responder=capable_responder(LIST))
    graph = build_strategy("pecan", FakeProvider(model))
    given = {"question": LIST.question, "document": spread(GRANTS, 96_000)}
    out = GraphOutput.model_validate(asyncio.run(graph.ainvoke(given, context=dict(SETTINGS))))
    assert LIST.right(out.answer) and out.supported is True, (out.answer, out.stats.notes)
    structure = out.stats.structure or {}
    assert structure["condensations"] >= 1
    assert any("condensed" in note for note in out.stats.notes)
    stages = [_stage(c) for c in model.calls]
    after = stages.index("condense") + 1
    asked = [c for c, stage in zip(model.calls[after:], stages[after:], strict=True) if stage == "enough"]
    # The next turn shows the note, then only the nodes retrieved since: not the top level read before.
    top_line = _text(model.calls[stages.index("enough")]).split("* ")[1][:60]
    assert asked and NOTED in _text(asked[0]) and top_line not in _text(asked[0])
    # Every chunk the search read stays visited: the six facts' chunks are all grounded.
    used = " ".join(c.text for c in out.evidence)
    assert all(fact.split(" received")[0] in used for fact in GRANTS), used


def _never_enough_with_note(note: str) -> ScriptedChatModel:
    """Always "No" to the Yes/No turn, ``note`` (verbatim) to a condensing, the oracle otherwise."""

    def respond(messages: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]) -> str:
        schema = ((extras.get("response_format") or {}).get("json_schema") or {}).get("name")
        if schema == "Sufficiency":
            return '{"answer": "No"}'
        if schema == "FreeTextNote":
            return (
                note
                if not note.startswith("=")
                else build_completion_content(
                    {"messages": list(messages), **extras}, said=(note[1:], note[1:])
                )[0]
            )
        return oracle_responder(messages, extras)

    return ScriptedChatModel(responder=respond)


def test_condensing_keeps_the_retrieval_bound_and_an_empty_note_clears_the_prompt() -> None:
    out, model = _run(
        planted(40_000),
        model=_never_enough_with_note("=" + "[NO INFORMATION]"),
        context_window=2048,
        pecan_max_nodes=12,
    )
    structure = out.stats.structure or {}
    stages = [_stage(c) for c in model.calls]
    assert structure["retrieved"] == 12 and "the bound" in structure["search_stop"]
    assert structure["condensations"] == stages.count("condense") >= 1
    # After a NO INFORMATION note the prompt shows only the nodes retrieved since: no note line.
    after = stages.index("condense") + 1
    assert NOTED not in _text(model.calls[after + stages[after:].index("enough")])


def test_a_condensing_that_gives_no_note_or_no_room_ends_the_search_on_the_prompt_as_it_was() -> None:
    unreadable, _ = _run(
        planted(40_000), model=_never_enough_with_note("I will not."), context_window=2048, parse_retries=0
    )
    stop = (unreadable.stats.structure or {})["search_stop"]
    assert "would overflow the search prompt, and condensing it gave no note" in stop
    assert (unreadable.stats.structure or {})["condensations"] == 0
    wordy, model = _run(
        planted(40_000), model=_never_enough_with_note("=" + "a long note " * 600), context_window=2048
    )
    structure = wordy.stats.structure or {}
    assert structure["search_stop"].endswith("even condensed") and structure["condensations"] == 0
    stages = [_stage(c) for c in model.calls]
    # The answer turn reads the prompt as it was before the condensing that made no room.
    assert NOTED not in _text(model.calls[stages.index("answer")])
