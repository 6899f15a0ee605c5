"""PECAN over real HTTP against the stub: several questions build one graph, and the graph is drawn."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from longgraph.testing.stub_server import StubConfig, StubHandle, run_stub_in_thread
from longgraph.tests.conftest import QUESTION, planted
from longgraph.tests.integration.support import run_longgraph, stub_cli_args

pytestmark = pytest.mark.integration


@pytest.fixture
def stub() -> Iterator[StubHandle]:
    with run_stub_in_thread(StubConfig(model="stub")) as handle:
        yield handle


def test_several_questions_build_the_graph_once(stub: StubHandle, tmp_path: Path) -> None:
    document = tmp_path / "doc.txt"
    document.write_text(planted(30_000), encoding="utf-8")
    questions = [
        QUESTION,
        "Who is the mayor of the town of Quillhaven?",
        "What does the author say about essays?",
    ]
    args = [
        "ask",
        str(document),
        "--strategy",
        "pecan",
        "--json",
        "--no-cache",
        *stub_cli_args(stub.base_url),
    ]
    for question in questions:
        args += ["-q", question]
    done = run_longgraph(args, home=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads(done.stdout)
    assert [r["strategy"] for r in results] == ["pecan"] * 3
    assert "smoked plums" in results[0]["answer"] and results[0]["verdict"] in ("supported", "unconfirmed")
    built = [r["stats"]["build"]["llm_calls"] for r in results]
    assert built[0] > 0 and built[1:] == [0, 0]  # the first question built it; the others found it
    assert [r["stats"]["built_from_cache"] for r in results] == [False, True, True]
    assert stub.stats()["by_stage"]["points"] == built[0]  # counted at the server: no second build


def test_graph_show_draws_the_levels_and_edges(stub: StubHandle, tmp_path: Path) -> None:
    document = tmp_path / "doc.txt"
    document.write_text(planted(20_000), encoding="utf-8")
    png, page = tmp_path / "graph.png", tmp_path / "graph.html"
    args = ["graph", "show", str(document), "--png", str(png), "--html", str(page), "--base-url", stub.base_url,
            "--model", "stub", "--cache", str(tmp_path / "cache.sqlite")]  # fmt: skip
    done = run_longgraph(args, home=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "edges: embedding-similarity" in done.stdout.splitlines()[0]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 2_000
    html = page.read_text(encoding="utf-8")
    assert "<svg" in html and "<line" in html and "embedding-similarity" in html and "<script" not in html
    assert html.count("<circle") >= 3
