"""A small real evaluation on the vLLM CPU server: needle 2K, one depth, mapreduce and truncate.

SmolLM2-135M is too weak for its answers to be asserted on; what is checked is that a real endpoint
goes through the whole evaluation path (real usage counts, real latencies, the report) and that the
records say what happened. Kept to a few minutes of CPU: small chunks, short outputs.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from longgraph.embedded import ServerInfo
from longgraph.evals.report import ORACLE_BANNER, write_reports
from longgraph.evals.runner import RECORD_FIELDS, EvalConfig, read_records, run_eval

pytestmark = pytest.mark.e2e


def test_a_small_needle_eval_on_the_real_model(embedded_server: ServerInfo, tmp_path: Path) -> None:
    config = EvalConfig(
        suite="needle", strategies=("mapreduce", "truncate"), out_dir=tmp_path, lengths=(2_000,), depths=(0.5,),
        model_settings={
            "base_url": embedded_server.base_url, "model": embedded_server.model,
            "tokenizer": str(embedded_server.tokenizer_path), "context_window": 2048, "chunk_size": 400,
            "max_output_tokens": 128, "max_concurrency": 8, "structured_output": "json_schema",
            "request_timeout": 300,
        },
        concurrency=1, start_embedded=False,
    )  # fmt: skip
    summary = asyncio.run(run_eval(config))
    records = {r["strategy"]: r for r in read_records(summary.records_path)}
    errors = {s: r["error"] for s, r in records.items() if r["error"]}
    assert (summary.done, summary.failed, summary.label) == (2, 0, embedded_server.model), errors
    assert set(records) == {"mapreduce", "truncate"}
    for record in records.values():
        assert set(record) == set(RECORD_FIELDS) and record["error"] is None
        assert record["oracle"] is False and record["model"] == embedded_server.model
        assert record["score"] in (0.0, 1.0) and record["answer"]
        assert record["prompt_tokens"] > 1_000 and record["completion_tokens"] > 0  # vLLM's own usage
        assert record["seconds"] > 0
    mapreduce, truncate = records["mapreduce"], records["truncate"]
    assert mapreduce["chunks"]["total"] >= 4  # 2K cl100k tokens in 400-token chunks
    assert mapreduce["llm_calls"] >= mapreduce["chunks"]["total"]
    assert truncate["llm_calls"] == 1
    # 2K cl100k tokens are more SmolLM2 tokens than a 2,048-token window leaves for text
    assert any(note.startswith("truncated") for note in truncate["notes"]), truncate["notes"]
    assert truncate["chunks"]["used"] + truncate["chunks"]["filtered"] == truncate["chunks"]["total"]

    written = write_reports(tmp_path)[embedded_server.model]
    report = next(p for p in written if p.suffix == ".md").read_text()
    assert ORACLE_BANNER not in report and "| mapreduce | 2K | 1 |" in report
    summary_file = json.loads(next(p for p in written if p.suffix == ".json").read_text())
    assert summary_file["oracle"] is False
