"""Pyramid-Align end to end on the real vLLM CPU server: two short documents, each accounted for.

SmolLM2 writes the pyramid (its citations checked, the bad ones counted), the question and, through the
mapreduce subgraph, the answer; the documents are short (a window of 2,048 tokens still gives each a
pyramid of two levels). Whether a document becomes a record or is filtered (no question, no grounded
answer) is the model's quality, measured by the 20-document benchmark (``evals/results/pyramid-smollm2``),
not asserted here: here nothing fails, and every outcome is whole and says why.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from longgraph.embedded import ServerInfo
from longgraph.state.pyramid import CATEGORIES, Record
from longgraph.synth import Source, dataset_files, filtered_file, synth
from longgraph.tests.conftest import essays
from longgraph.tests.e2e.conftest import tiny_model_settings

pytestmark = pytest.mark.e2e


def test_two_documents_become_records_on_the_served_model(
    embedded_server: ServerInfo, tmp_path: Path
) -> None:
    sources = [Source(name=f"essay {i}", text=essays()[i * 3500 : (i + 1) * 3500]) for i in range(2)]
    out = tmp_path / "data.jsonl"
    settings = {**tiny_model_settings(embedded_server), "context_window": 2048, "max_output_tokens": 256}
    summary = synth(sources, out, seed=1, **settings)
    assert not summary.failed, summary.failed
    assert summary.written + sum(summary.filtered.values()) == 2, summary.lines()
    assert summary.calls >= 2 * 4  # a pyramid of two levels and a question at least, per document
    set_aside = [json.loads(line) for line in filtered_file(out).read_text(encoding="utf-8").splitlines()]
    assert len(set_aside) == sum(summary.filtered.values())
    for row in set_aside:  # what the model wrote is kept: the question and answer, or its non-questions
        assert row["reason"] and (row.get("Q") or row.get("rejected_questions")), row
    _progress, card = dataset_files(out)
    for line in out.read_text(encoding="utf-8").splitlines():
        record = Record.model_validate(json.loads(line))
        assert record.model == embedded_server.model and record.category in CATEGORIES
        assert len(record.Q) >= 5 and record.A and record.M and record.levels >= 2
        assert record.X in {s.text for s in sources} and record.calls >= 4
    assert "Lengths in tokens" in card.read_text(encoding="utf-8")
