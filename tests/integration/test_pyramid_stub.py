"""Pyramid-Align over real HTTP against the stub: `longgraph synth` writes a dataset, and a run killed
part-way resumes without redoing the documents it had finished (counted at the stub)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from longgraph.testing.stub_server import StubConfig, StubHandle, run_stub_in_thread
from longgraph.tests.conftest import essays
from longgraph.tests.integration.support import kill_when, run_longgraph, stub_cli_args

pytestmark = pytest.mark.integration
DOCUMENTS = 5


@pytest.fixture
def stub() -> Iterator[StubHandle]:
    with run_stub_in_thread(StubConfig(model="stub", latency_s=0.2)) as handle:
        yield handle


def _corpus(folder: Path) -> Path:
    folder.mkdir()
    for i in range(DOCUMENTS):
        (folder / f"doc{i}.txt").write_text(essays()[i * 9000 : (i + 1) * 9000], encoding="utf-8")
    return folder


def _records(out: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if line.strip()]


def _synth_args(corpus: Path, out: Path, stub: StubHandle) -> list[str]:
    return ["synth", str(corpus), "--out", str(out), "--documents-in-flight", "1", "--max-concurrency", "4",
            *stub_cli_args(stub.base_url)]  # fmt: skip


def test_synth_writes_a_record_per_document_and_a_card(stub: StubHandle, tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus")
    out = tmp_path / "data.jsonl"
    done = run_longgraph(_synth_args(corpus, out, stub), home=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    records = _records(out)
    progress = [json.loads(line) for line in out.with_suffix(".progress.jsonl").read_text().splitlines()]
    outcomes = [row for row in progress if row["kind"] == "document"]
    assert len(outcomes) == DOCUMENTS and {row["status"] for row in outcomes} <= {"written", "filtered"}
    assert len(records) == sum(row["status"] == "written" for row in outcomes) > 0
    for record in records:
        assert {"X", "Q", "M", "A", "category", "source_node", "source_level", "model", "seed"} <= set(record)
        assert record["model"] == "stub" and record["Q"] and record["M"] and int(str(record["levels"])) >= 2
    calls = re.search(r"(\d+) calls,", done.stderr)
    assert calls and stub.stats()["requests"] == int(calls.group(1)) > len(records)  # every call counted
    card = out.with_suffix(".card.md").read_text(encoding="utf-8")
    assert f"records: **{len(records)}**" in card and "| causal reasoning |" in card
    assert "written to" in done.stderr and "dataset card" in done.stderr


def test_a_killed_run_resumes_without_redoing_finished_documents(stub: StubHandle, tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus")
    out = tmp_path / "data.jsonl"
    progress = out.with_suffix(".progress.jsonl")
    args = _synth_args(corpus, out, stub)
    kill_when(
        args, home=tmp_path, what="no document finished",
        done=lambda: progress.exists() and progress.read_text().count('"kind": "document"') >= 2,
    )  # fmt: skip
    finished = [
        json.loads(line) for line in progress.read_text().splitlines() if '"kind": "document"' in line
    ]
    assert 2 <= len(finished) < DOCUMENTS, "the run finished before it could be killed"
    stub.reset()
    # The rerun finishes the others and sends no request the finished documents need.
    again = run_longgraph(args, home=tmp_path, timeout=300)
    assert again.returncode == 0, again.stderr
    assert f"skipped: {len(finished)} finished by an earlier run" in again.stderr
    rerun = {entry["messages"] for entry in stub.fault_log()}
    outcomes = [
        json.loads(line) for line in progress.read_text().splitlines() if '"kind": "document"' in line
    ]
    assert sorted(row["source"] for row in outcomes) == sorted(str(p) for p in corpus.iterdir())
    records = _records(out)
    assert len({r["id"] for r in records}) == len(records)  # no document twice
    assert rerun, "the rerun made no request for the unfinished documents"

    # What the finished documents' requests are: the same documents alone, in a fresh home and cache.
    alone = tmp_path / "finished"
    alone.mkdir()
    for row in finished:
        source = Path(row["source"])
        (alone / source.name).write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    stub.reset()
    home = tmp_path / "fresh-home"
    home.mkdir()
    fresh = run_longgraph(_synth_args(alone, tmp_path / "finished.jsonl", stub), home=home, timeout=300)
    assert fresh.returncode == 0, fresh.stderr
    theirs = {entry["messages"] for entry in stub.fault_log()}
    assert theirs and not rerun & theirs, "the rerun redid requests of documents finished before the kill"
