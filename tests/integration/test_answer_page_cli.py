"""``longgraph ask --html`` and ``longgraph show`` against the stub: the page is written beside the answer,
a saved result becomes a page again (side by side with another strategy's), a moved or edited document
is said and the quoted evidence shown, and no existing file that is not a page is overwritten."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from longgraph.outputs import PAGE_MARK
from longgraph.testing.stub_server import StubConfig, StubHandle, run_stub_in_thread
from longgraph.tests.conftest import QUESTION, planted
from longgraph.tests.integration.support import run_longgraph, stub_cli_args
from longgraph.tests.unit.test_answer_page import Page

pytestmark = pytest.mark.integration


@pytest.fixture
def stub() -> Iterator[StubHandle]:
    with run_stub_in_thread(StubConfig(model="stub")) as handle:
        yield handle


def _ask(stub: StubHandle, home: Path, document: Path, strategy: str, *extra: str) -> dict[str, Any]:
    args = ["ask", str(document), "-q", QUESTION, "--strategy", strategy, "--json", "--no-cache",
            *stub_cli_args(stub.base_url), *extra]  # fmt: skip
    done = run_longgraph(args, home=home, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_ask_writes_the_page_and_show_draws_saved_results_side_by_side(
    stub: StubHandle, tmp_path: Path
) -> None:
    document = tmp_path / "doc.txt"
    text = planted(20_000)
    document.write_text(text, encoding="utf-8")
    page = tmp_path / "answer.html"
    saved = _ask(stub, tmp_path, document, "mapreduce", "--html", str(page))
    assert saved["question"] == QUESTION and saved["sources"][0]["path"] == str(document.resolve())
    assert saved["sources"][0]["chars"] == len(text)
    written = page.read_text(encoding="utf-8")
    assert PAGE_MARK in written and len(Page(written).cells) == len(saved["chunks"]) and Page(written).marks

    first, second = tmp_path / "mapreduce.json", tmp_path / "tom.json"
    first.write_text(json.dumps(saved), encoding="utf-8")
    second.write_text(json.dumps(_ask(stub, tmp_path, document, "tom")), encoding="utf-8")
    side = tmp_path / "side.html"
    done = run_longgraph(["show", str(first), str(second), "--html", str(side)], home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "mapreduce:" in done.stdout and "tom:" in done.stdout
    parsed = Page(side.read_text(encoding="utf-8"))
    assert {c["id"].split("-")[1] for c in parsed.cells} == {"0", "1"}
    colours = {c for m in parsed.marks for c in m["class"].split()}
    assert {"r0", "r1"} <= colours  # both results' evidence highlighted

    # Run again over the page it wrote: allowed (its own kind); over the result file: refused.
    again = run_longgraph(["show", str(first), "--html", str(side)], home=tmp_path)
    assert again.returncode == 0, again.stderr
    refused = run_longgraph(["show", str(first), "--html", str(second)], home=tmp_path)
    assert refused.returncode == 2 and "is not a page longgraph wrote" in refused.stderr
    assert json.loads(second.read_text(encoding="utf-8"))["strategy"] == "tom"

    # The document edited since: said, and the page shows the evidence as it was quoted.
    document.write_text(text + "\nedited", encoding="utf-8")
    moved = tmp_path / "moved.html"
    done = run_longgraph(["show", str(first), "--html", str(moved)], home=tmp_path)
    assert done.returncode == 0 and "changed since the run" in done.stderr
    assert "not at hand" in moved.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("not json", "not JSON"),
        ('{"answer": "x"}', "no answer and chunks"),
        ("[1, 2]", "no answer and chunks"),
    ],
)
def test_show_refuses_what_is_not_a_saved_result(tmp_path: Path, content: str, problem: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content, encoding="utf-8")
    done = run_longgraph(["show", str(bad), "--html", str(tmp_path / "p.html")], home=tmp_path)
    assert done.returncode == 2 and problem in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "p.html").exists()


def test_show_refuses_results_over_different_documents(stub: StubHandle, tmp_path: Path) -> None:
    results = []
    for name, at in (("a.txt", 0.3), ("b.txt", 0.7)):
        document = tmp_path / name
        document.write_text(planted(12_000, at=at), encoding="utf-8")
        saved = tmp_path / f"{name}.json"
        saved.write_text(json.dumps(_ask(stub, tmp_path, document, "mapreduce")), encoding="utf-8")
        results.append(str(saved))
    done = run_longgraph(["show", *results, "--html", str(tmp_path / "p.html")], home=tmp_path)
    assert done.returncode == 2 and "different documents" in done.stderr
