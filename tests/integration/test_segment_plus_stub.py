"""Segment+ over real HTTP: ChatOpenAI (the default provider) against the local OpenAI-compatible stub."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from longgraph.graphs.segment_plus import graph
from longgraph.state.contract import GraphOutput
from longgraph.testing.stub_server import StubConfig, StubHandle, run_stub_in_thread
from longgraph.tests.conftest import FACT, QUESTION, planted

pytestmark = pytest.mark.integration


@pytest.fixture
def stub() -> Iterator[StubHandle]:
    with run_stub_in_thread(StubConfig(model="stub")) as handle:
        yield handle


@pytest.mark.parametrize("mode", ["json_schema", "text"])
def test_planted_fact_over_http(stub: StubHandle, mode: str) -> None:
    """Both structured-output modes: constrained JSON, and the labelled text protocol (Evidence and
    Reasoning notes, a Decision label, the answer) parsed from free text."""
    document = planted(100_000)
    context = {
        "base_url": stub.base_url,
        "model": "stub",
        "context_window": 4096,
        "max_output_tokens": 256,
        "max_retries": 1,
        "request_timeout": 10,
        "structured_output": mode,
    }
    out = GraphOutput.model_validate(
        graph.invoke({"question": QUESTION, "document": document}, context=context)
    )
    assert "smoked plums" in out.answer
    quote = out.evidence[0]
    assert quote.verified and document[quote.start : quote.end] == FACT
    by_stage = stub.stats()["by_stage"]
    assert by_stage["gather"] == len(out.chunks) == out.stats.calls_by_stage["gather"]
    assert by_stage["filter"] == 1 and by_stage["answer"] == 1
    assert out.stats.prompt_tokens > 0 and out.stats.completion_tokens > 0


def test_cli_ask_with_the_segment_plus_strategy(stub: StubHandle, tmp_path: Path) -> None:
    doc = tmp_path / "essays.txt"
    doc.write_text(planted(60_000), encoding="utf-8")
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "longgraph"), "ask", "--strategy", "segment-plus", "--question", QUESTION,
         str(doc), "--json", "--no-progress", "--base-url", stub.base_url, "--model", "stub"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert "smoked plums" in result["answer"] and result["strategy"] == "segment-plus"
    assert result["evidence"][0]["title"] == "essays.txt" and result["evidence"][0]["verified"]
