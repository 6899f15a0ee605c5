"""The records path: compute by fixed SQL, check each record against its chunk, reconcile, and the graph's
routes (a plan that cannot be carried out goes to mapreduce, said so; nothing computed is NO INFORMATION).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from longgraph.errors import ConfigurationError
from longgraph.evals.data.ruler import build_ruler, score_ruler
from longgraph.evals.readers import responder_for
from longgraph.nodes.records import compute as compute_module
from longgraph.nodes.records.check import check_row, locate, reconcile
from longgraph.nodes.records.compute import compute
from longgraph.state.contract import Chunk, ChunkPart, DocumentIn, GraphOutput
from longgraph.state.outputs import is_no_information
from longgraph.state.records import Record, RecordPlan, RecordRow
from longgraph.strategies import build_strategy
from longgraph.testing.capable import SETTINGS, schema_name
from longgraph.testing.fakes import FakeProvider, ScriptedChatModel, oracle_responder
from longgraph.tests.conftest import QUESTION, planted


def _plan(operation: str, *, number: bool = False, **rest: Any) -> RecordPlan:
    fields = [{"name": "name", "type": "text"}, {"name": "amount", "type": "number" if number else "text"}]
    return RecordPlan.model_validate(
        {
            "aggregates": True,
            "fields": fields,
            "key": "name",
            "value": "amount",
            "operation": operation,
            **rest,
        }
    )


def _records(*pairs: tuple[str, str | float]) -> list[Record]:
    return [
        Record(
            values={"name": k, "amount": v},
            quote=f"{k} {v}",
            chunk_id=i,
            doc_index=0,
            start=i * 10,
            end=i * 10 + 5,
        )
        for i, (k, v) in enumerate(pairs)
    ]


NUMBERS = _records(("Ash", 3.0), ("Birch", 7.5), ("Cedar", 1.0), ("Dogwood", 4.0))


@pytest.mark.parametrize(
    ("operation", "rest", "answer"),
    [
        ("count", {}, "4"),
        ("sum", {}, "15.5"),
        ("mean", {}, "3.875"),
        ("min", {}, "1"),
        ("max", {}, "7.5"),
        ("argmax", {}, "Birch"),
        ("argmin", {}, "Cedar"),
        ("sort", {"descending": True}, "Birch, Dogwood, Ash, Cedar"),
        ("sort", {"descending": False}, "Cedar, Ash, Dogwood, Birch"),
        ("between", {"low": 2, "high": 5}, "Ash, Dogwood"),
    ],
)
def test_numeric_operations(operation: str, rest: dict[str, Any], answer: str) -> None:
    result = compute(_plan(operation, number=True, **rest), NUMBERS)
    assert result.answer == answer
    assert result.used


def test_list_group_top_k_chain_and_closure() -> None:
    listed = _records(("k1", "7"), ("k2", "8"), ("k1", "9"), ("k1", "7"))
    assert compute(_plan("list", where="k1"), listed).answer == "7, 9"
    assert compute(_plan("list"), listed).answer == "7, 8, 9"
    verdicts = _records(("A", "won"), ("B", "lost"), ("C", "won"))
    grouped = compute(_plan("group", labels=["lost", "won", "drawn"]), verdicts)
    assert grouped.answer == "lost: B\nwon: A, C\ndrawn: "
    words = _records(("w", "fig"), ("w", "yam"), ("w", "fig"), ("w", "oat"), ("w", "yam"), ("w", "fig"))
    assert compute(_plan("top_k", limit=2), words).answer == "fig, yam"
    links = _records(("P1", "P2"), ("P3", "X9"), ("P2", "P3"), ("P4", "P1"))
    assert compute(_plan("chain", start="P1"), links).answer == "P1 -> P2 -> P3"
    assigned = _records(("A", "12345"), ("B", "A"), ("C", "B"), ("D", "99"), ("E", "C"))
    assert compute(_plan("closure", start="12345"), assigned).answer == "A, B, C, E"


def test_set_operations_over_labels() -> None:
    """Which keys hold any, each, or the first and none of the other labels (case and spacing folded)."""
    depots = _records(
        ("Acme", "Leeds"), ("Bolt", "York"), ("acme", "york"), ("Crane", "Leeds"), ("Bolt", "Hull"),
        ("Dune", "Hull"), ("Crane", "Hull"),
    )  # fmt: skip
    assert compute(_plan("union", labels=["Leeds", "York"]), depots).answer == "Acme, Bolt, Crane"
    both = compute(_plan("intersection", labels=["Leeds", "York"]), depots)
    assert both.answer == "Acme" and [r.values["amount"] for r in both.used] == ["Leeds", "york"]
    assert compute(_plan("intersection", labels=["York", "Hull"]), depots).answer == "Bolt"
    assert compute(_plan("difference", labels=["Leeds", "York"]), depots).answer == "Crane"
    assert compute(_plan("difference", labels=["Hull", "Leeds", "York"]), depots).answer == "Dune"
    assert compute(_plan("intersection", labels=["Leeds", "Paris"]), depots).answer == ""  # none: no answer
    assert "needs 2 or more distinct labels" in " ".join(
        _plan("intersection", labels=["Leeds", "leeds"]).problems()
    )
    assert "needs 1 or more" in " ".join(_plan("union").problems())


def test_nothing_to_compute_over_is_no_answer_never_zero() -> None:
    assert compute(_plan("count"), []).answer == ""
    assert compute(_plan("sum", number=True), []).answer == ""
    assert compute(_plan("closure", start="1"), _records(("A", "2"))).answer == ""


def test_only_the_fixed_statements_ever_run() -> None:
    """A hostile document's values go in as bound parameters: SQLite sees no other statement."""
    hostile = _records(("'); DROP TABLE r; --", "1"), ("Robert'); SELECT load_extension('x", "2"))
    seen: list[str] = []
    original = sqlite3.connect

    def traced(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        db = original(*args, **kwargs)
        db.set_trace_callback(seen.append)
        return db

    compute_module.sqlite3.connect = traced  # type: ignore[assignment]
    try:
        results = {
            operation: compute(
                _plan(operation, limit=1, start="2", labels=["1", "'); DROP TABLE r; --"]), hostile
            )
            for operation in (
                "list",
                "count",
                "group",
                "top_k",
                "chain",
                "closure",
                "union",
                "intersection",
                "difference",
            )
        }
    finally:
        compute_module.sqlite3.connect = original  # type: ignore[assignment]
    allowed = set(compute_module._STATEMENTS.values())
    assert seen
    for statement in seen:
        assert (
            statement.strip() in ("BEGIN", "COMMIT")  # the implicit transaction around the inserts
            or statement.startswith("CREATE TABLE r (id INTEGER PRIMARY KEY, k TEXT, v ")
            or statement.startswith("INSERT INTO r VALUES (")
            or statement == "CREATE TABLE labels (pos INTEGER PRIMARY KEY, v TEXT UNIQUE)"
            or statement.startswith("INSERT INTO labels VALUES (")
            or any(_same_statement(statement, s) for s in allowed)
        ), statement
    assert results["count"].answer == "2"  # the table is intact: both rows counted
    assert results["closure"].answer == "Robert'); SELECT load_extension('x"  # the one that holds "2"
    assert results["union"].answer == "'); DROP TABLE r; --"  # a label is data too


def _same_statement(run: str, template: str) -> bool:
    """``run`` is ``template`` with its ``?`` bound (SQLite's trace shows the expanded statement)."""
    pieces = template.split("?")
    at = 0
    for piece in pieces:
        found = run.find(piece, at)
        if found < 0:
            return False
        at = found + len(piece)
    return run.startswith(pieces[0]) and run.endswith(pieces[-1])


DOC = "Ledger.\nThe Ash fund holds 3 coins. The Birch fund holds 7 coins. Ash again: the Ash fund holds 3 coins."
DOCS = [DocumentIn(title="Ledger of funds", text=DOC)]


def _chunk() -> Chunk:
    """The ledger as one chunk (built per test: a module-level Chunk outlives the test, and the resource
    tests count the Chunks left alive in their process)."""
    return Chunk(
        id=0,
        parts=[ChunkPart(doc_index=0, title="Ledger of funds", start=0, end=len(DOC))],
        tokens=30,
        text=DOC,
    )


def test_a_record_stands_only_on_a_verbatim_quote_with_its_values() -> None:
    plan = _plan("sum", number=True)
    good = check_row(
        RecordRow(values=["Ash", "3"], quote="the  ASH fund holds 3 coins"), plan, _chunk(), DOCS
    )
    assert isinstance(good, Record) and good.values == {"name": "Ash", "amount": 3.0}
    assert DOC[good.start : good.end] == "The Ash fund holds 3 coins"
    for row, why in (
        (RecordRow(values=["Ash", "3"], quote="The Ash fund holds three coins"), "not in the chunk"),
        (RecordRow(values=["Ash", "4"], quote="The Ash fund holds 3 coins"), "not a number of its quote"),
        (RecordRow(values=["Elm", "3"], quote="The Ash fund holds 3 coins"), "not written in its quote"),
        (RecordRow(values=["Ash", "many"], quote="The Ash fund holds 3 coins"), "not one number"),
        (RecordRow(values=["Ash"], quote="The Ash fund holds 3 coins"), "1 value(s) for 2 field(s)"),
    ):
        dropped = check_row(row, plan, _chunk(), DOCS)
        assert isinstance(dropped, str) and why in dropped
    titled = check_row(
        RecordRow(values=["Ledger of funds", "7"], quote="The Birch fund holds 7 coins"), plan, _chunk(), DOCS
    )
    assert isinstance(titled, Record)  # a document's title names what it is about


def test_repeated_quotes_name_successive_occurrences() -> None:
    first = locate("the Ash fund holds 3 coins", _chunk(), DOCS, 0)
    second = locate("the Ash fund holds 3 coins", _chunk(), DOCS, 1)
    assert first and second and first[1] < second[1]
    assert locate("the Ash fund holds 3 coins", _chunk(), DOCS, 2) is None


def test_reconcile_merges_one_entity_and_reports_a_conflict() -> None:
    plan = _plan("sum", number=True)
    a = Record(values={"name": "Ash", "amount": 3.0}, quote="q", chunk_id=0, doc_index=0, start=5, end=9)
    again = a.model_copy(update={"chunk_id": 1})  # the same place, read by two overlapping chunks
    later = Record(
        values={"name": "ash", "amount": 3.0}, quote="q2", chunk_id=2, doc_index=0, start=50, end=60
    )
    other = Record(
        values={"name": "Ash", "amount": 4.0}, quote="q3", chunk_id=3, doc_index=0, start=80, end=90
    )
    kept, conflicts = reconcile(plan, [other, later, again, a])
    assert len(kept) == 1 and kept[0].values["amount"] == 3.0 and sorted(kept[0].also) == [1, 2]
    assert len(conflicts) == 1 and "q3" in conflicts[0]
    mentions, none = reconcile(_plan("top_k", limit=1), [a, later, other])
    assert len(mentions) == 3 and none == []


def _run(strategy: str, responder: Any, question: str, text: str, **settings: Any) -> GraphOutput:
    model = ScriptedChatModel(responder=responder)
    graph = build_strategy(strategy, FakeProvider(model))
    given = {"question": question, "documents": [{"title": "T", "text": text}]}
    return GraphOutput.model_validate(asyncio.run(graph.ainvoke(given, context={**SETTINGS, **settings})))


@pytest.mark.parametrize(
    ("plan", "why"),
    [
        (
            '{"aggregates": true, "fields": [{"name": "x", "type": "text"}], "key": "x", "value": "x", "operation": "median"}',
            "did not parse",
        ),
        (
            '{"aggregates": true, "fields": [{"name": "x", "type": "text"}], "key": "x", "value": "x", "operation": "sum"}',
            "needs a number field",
        ),
        ('{"aggregates": false}', "does not aggregate"),
        ("no plan at all", "does not aggregate"),  # the tolerant parser reads it as no plan
    ],
)
def test_a_plan_that_cannot_be_carried_out_goes_to_mapreduce_said_so(plan: str, why: str) -> None:
    def responder(messages: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]) -> str:
        return plan if schema_name(extras) == "RecordPlan" else oracle_responder(messages, extras)

    result = _run("records", responder, QUESTION, planted(6_000))
    assert result.strategy == "records"
    assert result.stats.notes[0].startswith("path: mapreduce") and why in result.stats.notes[0]
    assert "smoked plums" in result.answer


def test_no_record_anywhere_answers_no_information() -> None:
    plan = {"aggregates": True, "fields": [{"name": "fund", "type": "text"}, {"name": "coins", "type": "number"}],
            "key": "fund", "value": "coins", "operation": "sum"}  # fmt: skip

    def responder(messages: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]) -> str:
        name = schema_name(extras)
        if name == "RecordPlan":
            return json.dumps(plan)
        if name == "ChunkRecords":
            return json.dumps({"records": [{"values": ["Oak", "9"], "quote": "The Oak fund holds 9 coins"}]})
        return oracle_responder(messages, extras)

    result = _run(
        "records", responder, "How many coins do the funds hold in all?", "Nothing about funds. " * 40
    )
    assert is_no_information(result.answer) and result.supported is False
    assert all(c.status == "unsupported" and "not in the chunk" in (c.reason or "") for c in result.chunks)


@pytest.mark.parametrize("reader", ["reference", "extractor"])
@pytest.mark.parametrize("task", ["vt", "cwe", "niah_multivalue"])
def test_records_compute_what_the_extractor_cannot(task: str, reader: str) -> None:
    """The extractor never combines; through the records path the answer is right all the same, and a
    list of records too long for one answer is read in halves."""
    instance = build_ruler(target_tokens=4_000, n=1, seed=0, tasks=[task])[0]
    responder = responder_for(instance, reader, "bare", max_output_tokens=SETTINGS["max_output_tokens"])  # type: ignore[arg-type]
    model = ScriptedChatModel(responder=responder)
    graph = build_strategy("records", FakeProvider(model))
    result = GraphOutput.model_validate(asyncio.run(graph.ainvoke(instance.graph_input(), context=SETTINGS)))
    assert score_ruler(result.answer, instance.label)["string_match_all"] == 1.0
    assert result.supported and result.evidence and all(e.verified for e in result.evidence)
    assert result.stats.notes[0].startswith("path: records")
    if task == "cwe":
        assert result.stats.calls_by_stage.get("extract", 0) > len(result.chunks)  # read in halves


@pytest.mark.parametrize("family", ["comparison", "clustering", "chain"])
@pytest.mark.parametrize("strategy", ["records", "mapreduce", "segment-plus", "tom"])
def test_several_documents_answered_by_records_in_every_planning_strategy(family: str, strategy: str) -> None:
    """A question over several documents that aggregates takes the records route of every strategy that
    plans; the extractor (which never combines) is right through it."""
    from longgraph.evals.data.loong_synth import build_loong_synth
    from longgraph.evals.scoring import get_scorer

    instance = build_loong_synth(length_set=1, n=1, seed=11, families=[family])[0]
    responder = responder_for(instance, "extractor", "bare", max_output_tokens=SETTINGS["max_output_tokens"])
    model = ScriptedChatModel(responder=responder)
    graph = build_strategy(strategy, FakeProvider(model))
    result = GraphOutput.model_validate(asyncio.run(graph.ainvoke(instance.graph_input(), context=SETTINGS)))
    scorer = get_scorer(str(instance.scorer))
    assert scorer.score(result.answer, instance.label)[scorer.metric] == 1.0, result.answer
    assert result.path == "records" and result.supported
    assert result.stats.calls_by_stage.get("plan") == 1


def test_auto_answers_in_one_call_when_the_input_fits_and_by_mapreduce_when_not() -> None:
    """``auto``: the whole input in one plain call when it fits the window; otherwise mapreduce's path
    (here the oracle, which never plans an aggregation: the map-reduce reading). Each says why."""
    small = _run("auto", oracle_responder, QUESTION, planted(2_000), context_window=4_096)
    assert small.path == "plain" and small.stats.llm_calls == 1 and "smoked plums" in small.answer
    assert small.strategy == "auto" and small.stats.notes[0].startswith("path: plain")
    large = _run("auto", oracle_responder, QUESTION, planted(30_000))
    assert large.path == "mapreduce" and "smoked plums" in large.answer
    assert large.stats.calls_by_stage.get("plan") == 1 and large.stats.calls_by_stage.get("map", 0) > 1
    assert any("does not fit one call" in note for note in large.stats.notes)


def test_a_window_too_small_to_plan_keeps_the_strategys_path_and_records_refuses_it() -> None:
    """800 tokens hold a map prompt with a chunk but not the records plan: mapreduce answers, saying
    why it did not plan; the records strategy, which must plan, refuses before any call."""
    small = {"context_window": 800, "max_output_tokens": 160, "plan_records": "on"}
    result = _run("mapreduce", oracle_responder, QUESTION, planted(6_000), **small)
    assert "smoked plums" in result.answer
    assert (
        result.stats.notes[0].startswith("path: mapreduce")
        and "no records plan in this window" in result.stats.notes[0]
    )
    with pytest.raises(ConfigurationError, match="too small for the plan stage"):
        _run("records", oracle_responder, QUESTION, planted(6_000), **small)
