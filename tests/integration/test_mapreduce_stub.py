"""The mapreduce graph over real HTTP: ChatOpenAI against the local OpenAI-compatible stub."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from longgraph.graphs.mapreduce import graph
from longgraph.state.contract import GraphOutput
from longgraph.testing.stub_server import StubConfig, StubHandle, run_stub_in_thread
from longgraph.tests.conftest import QUESTION, planted

pytestmark = pytest.mark.integration


@pytest.fixture
def stub() -> Iterator[StubHandle]:
    with run_stub_in_thread(StubConfig(model="stub")) as handle:
        yield handle


def _context(*urls: str, **extra: object) -> dict[str, object]:
    return {
        "base_url": list(urls) if len(urls) > 1 else urls[0],
        "model": "stub",
        "context_window": 4096,
        "max_output_tokens": 256,
        "max_retries": 1,
        "request_timeout": 10,
        **extra,
    }


@pytest.mark.parametrize("mode", ["json_schema", "text"])
def test_planted_fact_over_http(stub: StubHandle, mode: str) -> None:
    out = GraphOutput.model_validate(
        graph.invoke(
            {"question": QUESTION, "document": planted(200_000)},
            context=_context(stub.base_url, structured_output=mode),
        )
    )
    assert "smoked plums" in out.answer
    stats = stub.stats()
    assert stats["by_stage"]["map"] == len(out.chunks) == out.stats.calls_by_stage["map"]
    assert out.stats.prompt_tokens > 0 and out.stats.completion_tokens > 0  # usage counted from the server


def test_load_is_spread_over_replicas() -> None:
    with (
        run_stub_in_thread(StubConfig(model="stub", latency_s=0.05)) as a,
        run_stub_in_thread(StubConfig(model="stub", latency_s=0.05)) as b,
    ):
        out = GraphOutput.model_validate(
            graph.invoke(
                {"question": QUESTION, "document": planted(200_000)},
                context=_context(a.base_url, b.base_url, max_concurrency=4),
            )
        )
        assert "smoked plums" in out.answer
        counts = a.stats()["requests"], b.stats()["requests"]
    assert min(counts) > 0 and sum(counts) == out.stats.llm_calls


def test_cli_json_over_http(stub: StubHandle, tmp_path: object) -> None:
    from pathlib import Path

    doc = Path(str(tmp_path)) / "essays.txt"
    doc.write_text(planted(120_000), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "longgraph.cli", "ask", "--question", QUESTION, str(doc), "--json", "--no-progress",
         "--base-url", stub.base_url, "--model", "stub", "--context-window", "4096", "--max-output-tokens", "256"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert "smoked plums" in result["answer"]
    assert {c["status"] for c in result["chunks"]} <= {"used", "no_information"}
    assert result["evidence"][0]["title"] == "essays.txt"


@pytest.mark.parametrize("strategy", ["mapreduce", "segment-plus", "mapreduce-segment-merge"])
def test_a_hallucinating_model_cannot_outvote_the_one_grounded_note(strategy: str) -> None:
    """Every chunk without the fact answers a confident wrong value (the stub's ``hallucinate`` mode,
    over real HTTP): the grounding check reports them unsupported and the answer is the fact."""
    from longgraph.strategies import build_strategy
    from longgraph.testing.stub_server import HALLUCINATION

    with run_stub_in_thread(StubConfig(model="stub", hallucinate=True)) as liar:
        out = GraphOutput.model_validate(
            build_strategy(strategy).invoke(
                {"question": QUESTION, "document": planted(80_000)}, context=_context(liar.base_url)
            )
        )
    assert "smoked plums" in out.answer and out.verdict in ("supported", "unconfirmed"), out.verdict_reason
    assert "lantern" not in out.answer.lower()
    unsupported = [c for c in out.chunks if c.status == "unsupported"]
    assert len(unsupported) >= len(out.chunks) - 2
    assert all(HALLUCINATION in f"{c.answer} {c.extracted}" for c in unsupported)  # quoted or answered


def test_tree_show_prints_the_tree_and_writes_a_page(tmp_path: Path) -> None:
    """``longgraph tree show`` over real HTTP: every chunk's leaf listed, the page written."""
    doc = tmp_path / "doc.txt"
    doc.write_text(planted(20_000), encoding="utf-8")
    page = tmp_path / "tree.html"
    with run_stub_in_thread(StubConfig(model="stub")) as stub:
        run = subprocess.run(
            [sys.executable, "-m", "longgraph.cli", "tree", "show", str(doc), "--base-url", stub.base_url,
             "--model", "stub", "--chunk-tokens", "400", "--cache", str(tmp_path / "c.sqlite"), "--html", str(page)],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        parses = stub.stats()["by_stage"].get("parse", 0)
    assert run.returncode == 0, run.stderr
    chunks = {int(m) for m in re.findall(r"\(chunk (\d+)\)", run.stdout)}
    assert chunks == set(range(parses)) and parses > 3
    assert page.read_text(encoding="utf-8").count("<details") >= parses
