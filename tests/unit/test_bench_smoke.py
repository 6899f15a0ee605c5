"""The benchmarks run and print every figure they promise (tiny sizes; the numbers are not checked).

Timings are never asserted: they depend on a shared machine. What can rot silently is the code
path itself (a renamed stage, a changed hook, a figure that stopped being printed), and that is
what these tests catch. The vLLM benchmark needs the real server and has no test here.
"""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from longgraph.evals.bench import chunker, mapreduce_stub, peak_rss_mb, print_figures, spread

STUB_FIGURES = (
    "input_tokens",
    "latency_s",
    "concurrency",
    "load_average_at_start",
    "calls_by_stage",
    "supersteps_with_calls",
    "graph_wall",
    "bare_wall",
    "ratio_bare_over_graph",
    "ideal_critical_path_s",
    "graph_phases_s",
    "bare_phases_s",
    "gap_graph_minus_bare_s",
    "gap_chunking_s",
    "gap_map_round_s",
    "gap_after_map_round_s",
    "graph_cpu_s_orchestrator",
    "bare_cpu_s_orchestrator",
    "graph_cpu_s_stub",
    "bare_cpu_s_stub",
    "rss_before_run_mb",
    "peak_rss_mb",
    "load_average_after",
)

CHUNKER_FIGURES = (
    "input_tokens",
    "budget_tokens",
    "chunks",
    "split_into_chunks",
    "chunker_tokens_per_s",
    "tokenizer_whole_text",
    "tokenizer_whole_text_tokens_per_s",
    "tokenizer_count_batch_paragraphs",
    "tokenizer_count_batch_tokens_per_s",
    "load_average_at_start",
    "load_average_after",
)


def _printed_keys(output: str) -> set[str]:
    return {line.split(": ", 1)[0] for line in output.splitlines() if ": " in line}


def test_mapreduce_stub_benchmark_prints_its_figures(capsys: pytest.CaptureFixture[str]) -> None:
    figures = mapreduce_stub.main(
        ["--tokens", "20000", "--latency", "0.01", "--repeats", "1", "--max-wait", "0"]
    )
    out = capsys.readouterr().out
    assert out.startswith("== mapreduce graph vs bare client on the stub")
    missing = [key for key in STUB_FIGURES if key not in _printed_keys(out)]
    assert not missing, out
    # The bare client replayed exactly the calls the graph made: the plan, map(s), then one reduce.
    stages = figures["calls_by_stage"]
    assert isinstance(stages, dict) and stages["map"] >= 2 and stages["reduce"] == 1 and stages["plan"] == 1
    assert figures["supersteps_with_calls"] == ["plan×1", f"map×{stages['map']}", "reduce×1"]


def test_chunker_benchmark_prints_its_figures(capsys: pytest.CaptureFixture[str]) -> None:
    figures = chunker.main(["--tokens", "20000", "--repeats", "1", "--max-wait", "0"])
    out = capsys.readouterr().out
    assert out.startswith("== chunker on the needle document")
    missing = [key for key in CHUNKER_FIGURES if key not in _printed_keys(out)]
    assert not missing, out
    assert isinstance(figures["chunks"], int) and figures["chunks"] >= 2


def test_a_memory_child_reports_its_own_peak_not_its_parents() -> None:
    """``ru_maxrss`` survives ``exec``: a child of a large process read as large as its parent."""
    ballast = bytearray(200 * 2**20)
    ballast[::4096] = b"x" * len(ballast[::4096])  # touched: resident
    probe = "from longgraph.evals.bench import peak_rss_mb; print(peak_rss_mb())"
    child = float(
        subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    )
    assert peak_rss_mb() >= 200
    assert 5 < child < 100  # an interpreter with a few imports; its parent holds over 200 MB
    del ballast


def test_waves_follow_supersteps_and_ideal_path_counts_rounds() -> None:
    calls = [
        mapreduce_stub.Call(step=s, stage=stage, body=b"{}", headers={})
        for s, stage in [(2, "map"), (2, "map"), (2, "map"), (5, "collapse"), (7, "reduce")]
    ]
    waves = mapreduce_stub.waves_of(list(reversed(calls)))
    assert [[c.stage for c in w] for w in waves] == [["map"] * 3, ["collapse"], ["reduce"]]
    # 3 maps at concurrency 2 take two latencies; the collapse and the reduce one each.
    assert mapreduce_stub.ideal_critical_path(waves, concurrency=2, latency_s=1.5) == 6.0


def test_spread_and_figure_format(capsys: pytest.CaptureFixture[str]) -> None:
    assert spread([3.0, 1.0, 2.0]).format() == "2.000s (min 1.000, max 3.000, n=3)"
    print_figures("title", {"a": 1, "b": "x"})
    assert capsys.readouterr().out == "== title\na: 1\nb: x\n"


def test_pyramid_throughput_benchmark_prints_its_figures(capsys: pytest.CaptureFixture[str]) -> None:
    from longgraph.evals.bench import pyramid_throughput

    figures = pyramid_throughput.main(["--documents", "3", "--chars", "4000", "--latency", "0"])
    written, filtered, failed = (
        int(n) for n in str(figures["records written / filtered / failed"]).split(" / ")
    )
    assert written + filtered == 3 and failed == 0
    assert int(str(figures["requests"])) >= 3 * 3  # a pyramid, a question and a mapreduce answer per document
    out = capsys.readouterr().out
    for name in ("throughput / saturating load", "calls per record", "wall time per document"):
        assert name in out


def test_batch_throughput_benchmark_prints_its_figures(capsys: pytest.CaptureFixture[str]) -> None:
    from longgraph.evals.bench import batch_throughput

    figures = batch_throughput.main(
        ["--items", "4", "--chars", "4000", "--latency", "0.1", "--concurrency", "2"]
    )
    assert figures["answered right / failed"] == "4 / 0"  # each item's own planted orchard
    assert figures["peak requests in flight at the stub"] == 2  # one budget for the whole corpus
    out = capsys.readouterr().out
    for name in ("throughput / saturating load", "calls per item", "items per second"):
        assert name in out


def test_adaptive_concurrency_benchmark_prints_its_figures(capsys: pytest.CaptureFixture[str]) -> None:
    from longgraph.evals.bench import adaptive_concurrency

    figures = adaptive_concurrency.main(["--chars", "120000", "--latency", "0.05", "--concurrency", "8"])
    assert str(figures["reject, adaptive"]).startswith("outcome right")
    assert str(figures["queue, adaptive"]).startswith("outcome right")
    out = capsys.readouterr().out
    for name in (
        "429s per answer, adaptive / fixed",
        "request-seconds queued, adaptive / fixed",
        "wall time",
    ):
        assert name in out


def test_growth_benchmark_prints_sizes_and_slopes(capsys: pytest.CaptureFixture[str]) -> None:
    from longgraph.evals.bench import growth

    figures = growth.main(["--sizes", "20000,40000", "--concurrency", "8"])
    sizes = [k for k in figures if k.endswith(" tokens")]
    assert len(sizes) == 2 and all("peak RSS" in str(figures[k]) for k in sizes)
    out = capsys.readouterr().out
    assert "slope 0.02M → 0.04M: wall, peak RSS, working memory" in out


def test_durable_runs_benchmark_prints_its_figures(
    postgres_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from longgraph.evals.bench import durable_runs

    figures = durable_runs.main(
        ["--chars", "30000", "--window", "2048", "--repeats", "1", "--postgres-url", postgres_url]
    )
    calls = str(figures["input"]).split(", ")[2].split()[0]
    for backend in ("sqlite", "postgres"):
        made = str(figures[f"resume after failing at 1/3, {backend}"]).split("calls ")[1]
        assert made.endswith(f"of {calls}") and not made.startswith(f"[{calls}]")  # not redone from scratch
    assert "SQLite file after one run" in capsys.readouterr().out


def test_flaky_endpoint_benchmark_prints_its_figures(capsys: pytest.CaptureFixture[str]) -> None:
    from longgraph.evals.bench import flaky_endpoint

    figures = flaky_endpoint.main(["--runs", "2", "--chars", "60000", "--error-rate", "0.3"])
    counted = [
        int(str(v).split(" of ")[0]) for k, v in figures.items() if k == "answered" or k.startswith("stopped")
    ]
    assert sum(counted) == 2  # every run either answered or stopped with a typed error
    out = capsys.readouterr().out
    for name in ("with a call out of retries", "failed chunks per answered run", "seconds per run"):
        assert name in out


def test_result_cache_benchmark_prints_its_figures(capsys: pytest.CaptureFixture[str]) -> None:
    from longgraph.evals.bench import result_cache

    figures = result_cache.main(["--tokens", "20000", "--repeats", "1", "--latency", "0"])
    stored = int(str(figures["answers in the file after a run (equal chunks share one)"]))
    commits = int(str(figures["commits storing them"]).split()[0])
    assert stored >= 1 and commits >= 1  # the runs did use the cache the figures are about
    assert "cost of misses over no cache" in capsys.readouterr().out


@pytest.mark.skipif(
    shutil.which("cc") is None or not sys.platform.startswith("linux"), reason="needs Linux and cc"
)
def test_result_cache_benchmark_runs_itself_again_under_a_slow_fsync(
    capfd: pytest.CaptureFixture[str],
) -> None:
    from longgraph.evals.bench import result_cache

    result_cache.main(["--tokens", "20000", "--repeats", "1", "--latency", "0", "--fsync-ms", "5"])
    assert "extra_ms_per_fsync: 5" in capfd.readouterr().out


def test_reproducibility_benchmark_prints_its_figures(capsys: pytest.CaptureFixture[str]) -> None:
    """Against the stub (deterministic by construction) every document agrees with itself."""
    from longgraph.evals.bench import reproducibility

    reproducibility.main(["--stub", "--docs", "2", "--repeats", "2", "--concurrency", "4", "1"])
    out = capsys.readouterr().out
    assert out.count("same answer every run (documents): 2/2") == 2, out
    assert out.count("same reading of every chunk every run (documents): 2/2") == 2, out


def test_verify_probe_prints_the_yes_rate_of_every_kind(capsys: pytest.CaptureFixture[str]) -> None:
    from longgraph.evals.bench import verify_probe

    figures = verify_probe.main(["--stub", "--seeds", "1"])
    out = capsys.readouterr().out
    for kind in ("right", "look-alike's value", "two-hop, the bridge"):
        assert f"yes, {kind}:" in out, out
    assert int(str(figures["calls"])) > 0


def test_verify_probe_by_words_asks_no_model_and_lets_nothing_stand_on_words_alone() -> None:
    """The words' own verdict on the dev cases: no call is made, and no answer stands by its words alone,
    right or wrong: a look-alike's value, another fact about the entity and a chain's bridge are
    stretches of the shown sentence just as the right value is (``nodes/checks``: words ground an
    answer, only the verification call supports it)."""
    from longgraph.evals.bench import verify_probe

    figures = verify_probe.main(["--by", "words", "--seeds", "1"])
    assert figures["calls"] == 0
    yes = {k: v for k, v in figures.items() if k.startswith("yes, ")}
    assert len(yes) >= 6 and all(str(v).startswith("0/") for v in yes.values()), figures


def test_verify_probe_real_cases_pair_each_gold_with_wrong_answers_from_the_same_data() -> None:
    """The real-question cases: a right case is the gold in its gold sentences; every wrong case's answer
    is another question's gold, never one overlapping this question's, or the other verdict."""
    from longgraph.evals.bench import verify_probe
    from longgraph.evals.data.real import cases as real_pool
    from longgraph.evals.metrics import normalize_answer

    built = verify_probe.real_cases("dev", 4)
    kinds = {case[0] for case in built}
    assert {"right", "right, hotpot-bridge", "right, hotpot-comparison"} <= kinds
    assert any(k.startswith("another question's answer") for k in kinds)
    golds = {
        c["question"]: {normalize_answer(g) for g in c["gold"]}
        for k in ("squad", "hotpot-bridge", "hotpot-comparison")
        for c in real_pool(k, "dev")
    }  # type: ignore[arg-type]
    for kind, question, answer, shown, _ in built:
        assert shown.strip(), kind
        mine = golds.get(question, set())
        said = normalize_answer(answer)
        if kind.startswith("right"):
            assert said in mine, (question, answer)
        elif kind.startswith("the other verdict"):
            assert said in {"yes", "no"} and said not in mine
        elif not kind.startswith("unanswerable"):
            assert not any(said in g or g in said for g in mine), (question, answer)


def test_many_questions_plants_one_fact_a_question_and_reads_its_ratios() -> None:
    """The embedded-server bench's own parts (it needs the real server to run): each question's fact is
    in the document once, and the ratios are the later questions' and the repeat's over the first."""
    from longgraph.evals.bench import many_questions

    document, asked = many_questions.planted(2_000, 3)
    assert len(asked) == 3 and all(document.count(f"number {answer}.") == 1 for _, answer in asked)
    records = [
        {"layout": "shared_prefix", "question": q, "again": again, "seconds": s}
        for q, again, s in ((1, False, 40.0), (2, False, 10.0), (3, False, 14.0), (1, True, 8.0))
    ]
    assert many_questions.ratios(records, "shared_prefix") == {
        "later_over_first": 0.3,
        "floor_over_first": 0.2,
    }
