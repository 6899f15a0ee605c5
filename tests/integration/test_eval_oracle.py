"""`longgraph eval --oracle` end to end: the CLI in a subprocess, the stub server's oracle as the model.

The oracle answers deterministically from the text it is shown, so the outcome of every run is known in
advance: MapReduce and BM25 retrieval find the needle wherever it is, truncation only before its cut.
That pins down the whole path (instance building, strategies, HTTP, scoring, records, resume, reports)
at lengths no real CPU model could cover in CI. The 1.28M-token run is the same command at full length
(see evals/README.md); here it runs at 256K.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from longgraph.evals.report import ORACLE_BANNER
from longgraph.evals.runner import RECORD_FIELDS

pytestmark = pytest.mark.integration


def _eval(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "longgraph.cli", "eval", "--oracle", *args],
        capture_output=True, text=True, timeout=timeout, env=env, check=False,
    )  # fmt: skip


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_oracle_needle_32k_three_strategies_records_and_report(tmp_path: Path) -> None:
    args = (
        "--suite", "needle", "--lengths", "32K", "--depths", "0.1,0.9",
        "--strategies", "mapreduce,truncate,rag-bm25", "--out", str(tmp_path),
    )  # fmt: skip
    done = _eval(*args)
    assert done.returncode == 0, done.stderr
    records = _records(tmp_path / "records-oracle.jsonl")
    assert len(records) == 6
    assert all(set(r) == set(RECORD_FIELDS) for r in records)
    assert all(r["model"] == "oracle" and r["oracle"] is True and r["error"] is None for r in records)
    score = {(r["strategy"], r["depth"]): r["score"] for r in records}
    assert score == {
        ("mapreduce", 0.1): 1.0, ("mapreduce", 0.9): 1.0,
        ("rag-bm25", 0.1): 1.0, ("rag-bm25", 0.9): 1.0,
        ("truncate", 0.1): 1.0, ("truncate", 0.9): 0.0,
    }  # fmt: skip
    for r in records:
        assert abs(r["actual_tokens"] - 32_000) <= 640
        assert r["chunks"]["total"] == sum(v for k, v in r["chunks"].items() if k != "total")
        if r["strategy"] == "truncate":
            assert r["llm_calls"] == 1 and any(n.startswith("truncated") for n in r["notes"])
        if r["strategy"] == "mapreduce":
            assert r["llm_calls"] == r["chunks"]["total"] + 2  # the plan, one map per chunk, one reduce

    report = (tmp_path / "report-oracle.md").read_text()
    assert ORACLE_BANNER in report and "| truncate | 32K | 2 | 0.500 | 0 |" in report
    summary = json.loads((tmp_path / "summary-oracle.json").read_text())
    assert summary["oracle"] is True and summary["needle"]["truncate"]["32K"] == {"0.1": 1.0, "0.9": 0.0}
    for plot in ("needle-heatmap", "score-vs-length", "score-vs-tokens"):
        assert (tmp_path / f"{plot}-oracle.png").stat().st_size > 10_000
    assert [p.name for p in tmp_path.glob("records-*.jsonl")] == ["records-oracle.jsonl"]

    again = _eval(*args)
    assert again.returncode == 0, again.stderr
    assert "0 run(s) done (0 failed), 6 already recorded" in again.stderr
    assert len(_records(tmp_path / "records-oracle.jsonl")) == 6


def test_oracle_mapreduce_at_256k_accounts_for_every_chunk(tmp_path: Path) -> None:
    done = _eval(
        "--suite", "needle", "--lengths", "256K", "--depths", "0.37", "--strategies", "mapreduce",
        "--concurrency", "1", "--out", str(tmp_path), "--no-report", "--no-plain",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (record,) = _records(tmp_path / "records-oracle.jsonl")
    assert record["score"] == 1.0
    chunks = record["chunks"]
    assert chunks["total"] >= 30 and chunks["used"] == 1 and chunks["no_information"] == chunks["total"] - 1
    assert record["llm_calls"] == chunks["total"] + 2  # the plan, the maps, the reduce
    assert not (tmp_path / "report-oracle.md").exists()  # --no-report


def test_oracle_tom_at_64k_keeps_the_fact_from_leaf_to_root(tmp_path: Path) -> None:
    """ToM over a long haystack, the held-out check: the 7 chunks query-aware compression keeps are
    parsed, aggregated into one root and reasoned over bottom-up; the fact read at its leaf is the
    supported answer at the root, and every other chunk is accounted for (filtered with its rank, or
    read and found silent). (64K: embedding every chunk for the compression dominates the time; the
    oracle benchmark covers 1.28M.)"""
    done = _eval(
        "--suite", "needle", "--lengths", "64K", "--depths", "0.63", "--strategies", "tom",
        "--concurrency", "1", "--out", str(tmp_path), "--no-report", "--no-plain", timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (record,) = _records(tmp_path / "records-oracle.jsonl")
    assert record["score"] == 1.0 and record["verdict"] in ("supported", "unconfirmed")
    chunks = record["chunks"]
    assert chunks["total"] >= 40 and chunks["filtered"] == chunks["total"] - 7
    assert chunks["used"] == 1 and chunks["used"] + chunks["no_information"] + chunks["unsupported"] == 7
    stages = record["calls_by_stage"]
    assert stages["parse"] == 7 and stages.get("summarize", 0) >= 1 and stages["map"] >= 7


def test_oracle_pecan_at_128k_finds_the_fact_by_searching_its_graph(tmp_path: Path) -> None:
    """PECAN over a long haystack, the held-out check: the graph is built over every chunk, the search
    starts at the top level and must reach the chunk holding the fact (the oracle's summary points keep
    only each group's first sentence, so the fact is only in the chunks); every chunk is accounted for.
    (128K: the graph's one-time embedding of every node — ~2.7K pieces with MiniLM on two CPU cores,
    about a minute — dominates; the oracle benchmark covers 1.28M.)"""
    done = _eval(
        "--suite", "needle", "--lengths", "128K", "--depths", "0.63", "--strategies", "pecan",
        "--concurrency", "1", "--out", str(tmp_path), "--no-report", "--no-plain", timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (record,) = _records(tmp_path / "records-oracle.jsonl")
    assert record["score"] == 1.0 and record["verdict"] in ("supported", "unconfirmed"), record["notes"]
    chunks = record["chunks"]
    assert chunks["total"] >= 400 and chunks["used"] >= 1
    assert (
        chunks["filtered"] + chunks["used"] + chunks["no_information"] + chunks["unsupported"]
        == chunks["total"]
    )
    build = record["build"]
    assert build["edges"] == "embedding-similarity" and len(build["levels"]) >= 3 and build["retrieved"] >= 1
    stages = record["calls_by_stage"]
    assert stages["points"] == build["llm_calls"] and stages["answer"] == 1 and stages["enough"] >= 1


def test_a_real_model_may_not_call_itself_oracle(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "longgraph.cli", "eval", "--label", "oracle", "--base-url", "http://127.0.0.1:9/v1",
         "--model", "m", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2 and "reserved" in done.stderr
    assert not list(tmp_path.glob("records-*"))


def test_oracle_general_suite_records_say_their_split(tmp_path: Path) -> None:
    """The generalisation suite through the CLI at a small size (the embedded model's figures come from
    the same command at 8K-128K; evals/README.md)."""
    done = _eval(
        "--suite", "general", "--split", "dev", "--lengths", "4K", "--n", "1", "--strategies", "mapreduce",
        "--out", str(tmp_path), "--no-plain",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    records = _records(tmp_path / "records-oracle.jsonl")
    assert len(records) == 6 and all(r["error"] is None for r in records)
    assert {r["metadata"]["split"] for r in records} == {"dev"}
    assert {r["metadata"]["kind"] for r in records} == {
        "one",
        "distractors",
        "absent",
        "paraphrase",
        "two-hop",
        "aggregation",
    }
    by_kind = {r["metadata"]["kind"]: r for r in records}
    assert by_kind["one"]["score"] == 1.0 and by_kind["one"]["verdict"] in ("supported", "unconfirmed"), (
        by_kind["one"]
    )
    # The oracle answers an absent entity's question with its best-matching sentence: never supported;
    # shown unconfirmed (scored as given, wrong) or, where the checks refute it, NO INFORMATION.
    absent = by_kind["absent"]
    assert absent["supported"] is False and absent["verdict"] in ("unconfirmed", "refuted"), absent
    assert absent["score"] == (1.0 if absent["verdict"] == "refuted" else 0.0), absent
