"""Evaluation reports: tables, JSON summary and plots, one set per model, oracle results apart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import matplotlib.image
import numpy as np
from typer.testing import CliRunner

from longgraph.cli import app
from longgraph.evals.report import ORACLE_BANNER, summarize, write_reports
from longgraph.evals.runner import RECORD_FIELDS, format_tokens

LENGTHS = (8_000, 32_000, 128_000)
DEPTHS = (0.0, 0.5, 1.0)


def _record(
    strategy: str, length: int, depth: float, score: float, *, model: str, **extra: Any
) -> dict[str, Any]:
    record: dict[str, Any] = {field: None for field in RECORD_FIELDS}
    record.update(
        instance_id=f"needle-s0-0-t{length}-d{depth:.3f}", suite="needle", task_family="retrieval",
        length=length, length_set=format_tokens(length), actual_tokens=length, depth=depth, strategy=strategy,
        model=model, oracle=model == "oracle", answer="x", gold=["x"], metric="needle_match", score=score,
        scores={"needle_match": score}, llm_calls=10 if strategy == "mapreduce" else 1,
        prompt_tokens=length if strategy == "mapreduce" else 7_000, completion_tokens=100, seconds=1.5,
        chunks={"total": 4, "used": 1, "no_information": 3, "filtered": 0, "failed": 0}, notes=[], metadata={},
    )  # fmt: skip
    record.update(extra)
    return record


def _write(path: Path, records: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def _real_records() -> list[dict[str, Any]]:
    records = [_record("mapreduce", n, d, 1.0, model="real-7b") for n in LENGTHS for d in DEPTHS]
    # truncate finds the needle only near the start, and only while the input nearly fits
    records += [
        _record("truncate", n, d, 1.0 if d == 0.0 or n == 8_000 else 0.0, model="real-7b")
        for n in LENGTHS
        for d in DEPTHS
    ]
    # a second mapreduce instance at 128K / depth 1.0 failed: it must count as 0 and show as an error
    records.append(
        _record(
            "mapreduce", 128_000, 1.0, None, model="real-7b", instance_id="needle-s0-1-t128000-d1.000",
            error="boom", error_type="EndpointError",
        )
    )  # fmt: skip
    return records


def test_summary_counts_failures_as_zero_and_keeps_lengths_in_order() -> None:
    rows = summarize(_real_records())
    assert [(r["strategy"], r["length_set"]) for r in rows] == [
        ("mapreduce", "8K"), ("mapreduce", "32K"), ("mapreduce", "128K"),
        ("truncate", "8K"), ("truncate", "32K"), ("truncate", "128K"),
    ]  # fmt: skip
    last = rows[2]
    assert (last["n"], last["errors"]) == (4, 1)
    assert last["score"] == 0.75
    assert rows[4]["score"] == 1 / 3
    assert rows[0]["llm_calls"] == 10 and rows[3]["prompt_tokens"] == 7_000


def test_reports_are_written_per_model_and_oracle_results_stay_apart(tmp_path: Path) -> None:
    _write(tmp_path / "records-real-7b.jsonl", _real_records())
    _write(
        tmp_path / "records-oracle.jsonl",
        [_record("mapreduce", n, d, 1.0, model="oracle") for n in LENGTHS for d in DEPTHS],
    )
    written = write_reports(tmp_path)
    assert set(written) == {"real-7b", "oracle"}
    for label in ("real-7b", "oracle"):
        names = {p.name for p in written[label]}
        assert names == {
            f"report-{label}.md", f"summary-{label}.json", f"needle-heatmap-{label}.png",
            f"score-vs-length-{label}.png", f"score-vs-tokens-{label}.png",
        }  # fmt: skip
        for png in (p for p in written[label] if p.suffix == ".png"):
            assert png.stat().st_size > 10_000
            pixels = matplotlib.image.imread(png)
            assert pixels.shape[0] > 200 and pixels.shape[1] > 300
            assert float(np.std(pixels[..., :3])) > 0.05  # not a blank canvas

    real = (tmp_path / "report-real-7b.md").read_text()
    oracle = (tmp_path / "report-oracle.md").read_text()
    assert ORACLE_BANNER in oracle and ORACLE_BANNER not in real
    assert "| mapreduce | 128K | 4 | 0.750 | 1 |" in real
    assert "| truncate | 32K | 3 | 0.333 | 0 |" in real
    assert "## Needle: score by depth and length" in real and "| 100% | 1.00 | 1.00 | 0.50 |" in real
    assert "| 100% | 1.00 | 0.00 | 0.00 |" in real
    assert "boom" in real  # failed runs are listed with their error
    summary = json.loads((tmp_path / "summary-real-7b.json").read_text())
    assert summary["oracle"] is False and summary["banner"] is None and summary["records"] == 19
    assert summary["needle"]["truncate"]["32K"] == {"0": 1.0, "0.5": 0.0, "1": 0.0}
    oracle_summary = json.loads((tmp_path / "summary-oracle.json").read_text())
    assert oracle_summary["oracle"] is True and oracle_summary["banner"] == ORACLE_BANNER
    assert {r["strategy"] for r in oracle_summary["rows"]} == {"mapreduce"}


def test_an_oracle_record_in_a_real_models_file_is_left_out(tmp_path: Path) -> None:
    stray = _record("mapreduce", 8_000, 0.5, 1.0, model="real-7b", oracle=True)
    _write(tmp_path / "records-real-7b.jsonl", [_record("truncate", 8_000, 0.5, 0.0, model="real-7b"), stray])
    write_reports(tmp_path)
    summary = json.loads((tmp_path / "summary-real-7b.json").read_text())
    assert summary["records"] == 1 and {r["strategy"] for r in summary["rows"]} == {"truncate"}


def test_the_report_command(tmp_path: Path) -> None:
    runner = CliRunner()
    empty = runner.invoke(app, ["eval", "report", str(tmp_path)])
    assert empty.exit_code == 2 and "no records" in empty.output
    _write(tmp_path / "records-real-7b.jsonl", _real_records())
    done = runner.invoke(app, ["eval", "report", str(tmp_path)])
    assert done.exit_code == 0, done.output
    assert str(tmp_path / "report-real-7b.md") in done.output
    assert (tmp_path / "needle-heatmap-real-7b.png").stat().st_size > 10_000


def test_tree_build_and_question_are_reported_apart() -> None:
    from longgraph.evals.report import build_summary, render_markdown

    def tom(build_calls: int, build_s: float, cached: bool) -> dict[str, Any]:
        build = {"llm_calls": build_calls, "prompt_tokens": 1, "completion_tokens": 1, "seconds": build_s,
                 "from_cache": cached}  # fmt: skip
        return _record("tom", 8_000, 0.5, 1.0, model="m", llm_calls=20, seconds=30.0, build=build)

    records = [
        tom(8, 10.0, False),
        tom(10, 14.0, False),
        tom(0, 0.0, True),
        _record("mapreduce", 8_000, 0.5, 1.0, model="m"),
    ]
    (row,) = build_summary(records)
    assert (row["strategy"], row["n"], row["build_calls"], row["build_seconds"]) == ("tom", 2, 9.0, 12.0)
    assert (row["question_calls"], row["question_seconds"]) == (11.0, 18.0)
    assert "| needle | tom | 8K | 2 | 9.0 | 12.00 | 11 | 18.00 |" in render_markdown("m", records, [])
