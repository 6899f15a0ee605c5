"""`longgraph batch --ray` on a real local Ray cluster (a head and two worker nodes, each its own raylet
process on this machine, started by the tests) against the stub: the same answers as the local engine,
one in-flight budget for the whole cluster, a worker node killed mid-run losing no item, a bad item
failing alone, and Ctrl-C on the driver leaving a file a rerun completes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from longgraph.testing.stub_server import StubConfig, StubHandle, run_stub_in_thread
from longgraph.tests.conftest import FACT, QUESTION, essays
from longgraph.tests.integration.support import hermetic_env, longgraph_command, run_longgraph, stub_cli_args

pytestmark = pytest.mark.integration
ray = pytest.importorskip("ray", reason="the ray extra: pip install 'longgraph[ray]'")
ITEMS = 50


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """A head (no CPU: it only coordinates) and two worker nodes of one CPU each."""
    from ray.cluster_utils import Cluster

    made = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
    for _ in range(2):
        made.add_node(num_cpus=1)
    made.wait_for_nodes()
    yield made
    made.shutdown()


@pytest.fixture
def stub() -> Iterator[StubHandle]:
    with run_stub_in_thread(StubConfig(model="stub", latency_s=0.1)) as handle:
        yield handle


def _items(path: Path, count: int = ITEMS) -> Path:
    text = essays()
    rows = []
    for i in range(count):  # distinct texts and facts: no request of one item is another's
        filler = text[(i % 40) * 3_000 : (i % 40 + 1) * 3_000]
        fact = FACT.replace(".", f" from orchard {i}.")
        document = filler[: len(filler) // 2] + "\n\n" + fact + "\n\n" + filler[len(filler) // 2 :]
        rows.append({"id": f"item-{i}", "question": QUESTION, "document": document})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _batch_workers_of(cluster: Any) -> list[int]:
    """The pids of live `BatchWorker` actor processes started by this cluster's raylets, not by another
    cluster's (tests on other pytest workers start their own)."""
    import psutil

    raylets = {
        process.pid
        for node in cluster.list_all_nodes()
        for process_info in node.all_processes.get("raylet", [])
        if (process := process_info.process) is not None
    }
    found = []
    for candidate in psutil.process_iter(["cmdline"]):
        try:
            if "ray::BatchWorker" not in " ".join(candidate.info["cmdline"] or []):
                continue
            if candidate.status() == psutil.STATUS_ZOMBIE:
                continue
            if raylets & {parent.pid for parent in candidate.parents()}:
                found.append(candidate.pid)
        except psutil.Error:
            continue
    return sorted(found)


def _calls(stderr: str) -> int:
    """The run's model calls, as its summary line prints them ("1,234 LLM calls, ...")."""
    return int(stderr.split(" LLM calls")[0].split()[-1].replace(",", ""))


def _rows(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if line.strip()]


def _args(items: Path, out: Path, stub: StubHandle, cluster: Any, *extra: str) -> list[str]:
    return ["batch", str(items), "--out", str(out), "--no-cache", "--max-concurrency", "3", "--ray",
            cluster.address, *stub_cli_args(stub.base_url), *extra]  # fmt: skip


def test_the_same_answers_as_the_local_engine_within_one_budget(
    stub: StubHandle, cluster: Any, tmp_path: Path
) -> None:
    items = _items(tmp_path / "items.jsonl")
    local, on_ray = tmp_path / "local.jsonl", tmp_path / "ray.jsonl"
    args = [
        "batch",
        str(items),
        "--out",
        str(local),
        "--no-cache",
        "--max-concurrency",
        "3",
        *stub_cli_args(stub.base_url),
    ]
    done = run_longgraph(args, home=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    stub.reset()
    done = run_longgraph(_args(items, on_ray, stub, cluster), home=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    answers = {r["id"]: r["answer"] for r in _rows(local)}
    rows = _rows(on_ray)
    assert len(rows) == ITEMS and {r["id"]: r["answer"] for r in rows} == answers
    assert all(r["error"] is None and "smoked plums" in r["answer"] for r in rows)
    stats = stub.stats()
    assert stats["max_in_flight"] <= 3, stats  # two workers, one budget of three
    assert stats["max_in_flight"] == 3, stats  # and the budget is used
    assert "ray: 2 worker(s), 0 lost" in done.stderr
    assert _calls(done.stderr) == stats["requests"], done.stderr[-1000:]  # every request counted once
    # Both nodes' workers answered: rows do not say where, the stub's peers do.
    assert f"{ITEMS} item(s): {ITEMS} answered, 0 failed, 0 skipped" in done.stderr
    again = run_longgraph(_args(items, on_ray, stub, cluster), home=tmp_path, timeout=600)
    assert again.returncode == 0 and f"{ITEMS} skipped" in again.stderr  # the same resume rules


def test_a_worker_node_killed_mid_run_loses_no_item(stub: StubHandle, tmp_path: Path) -> None:
    """Its own cluster: a node is removed (its raylet and workers killed) once ten rows are written."""
    from ray.cluster_utils import Cluster

    own = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
    nodes = [own.add_node(num_cpus=1) for _ in range(2)]
    own.wait_for_nodes()
    try:
        items, out = _items(tmp_path / "items.jsonl"), tmp_path / "ray.jsonl"
        process = subprocess.Popen(longgraph_command([*_args(items, out, stub, own), "--debug"]), env=hermetic_env(tmp_path),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
        deadline = time.monotonic() + 300
        while not (out.exists() and out.read_text(encoding="utf-8").count("\n") >= 10):
            assert process.poll() is None and time.monotonic() < deadline, "no ten rows before the node kill"
            time.sleep(0.2)
        own.remove_node(nodes[1], allow_graceful=False)
        _stdout, stderr = process.communicate(timeout=600)
        assert process.returncode == 0, stderr[-3000:]
        rows = _rows(out)
        ids = [r["id"] for r in rows]
        assert (
            sorted(set(ids)) == sorted(f"item-{i}" for i in range(ITEMS)) and len(ids) == ITEMS
        )  # none twice
        assert all(r["error"] is None and "smoked plums" in r["answer"] for r in rows)
        assert "1 lost" in stderr
    finally:
        own.shutdown()


def test_a_killed_worker_process_is_replaced_and_no_item_is_lost(
    stub: StubHandle, cluster: Any, tmp_path: Path
) -> None:
    """One worker's process is killed once ten rows are written: a new worker takes its place on the
    node that has room again, and every row is written once."""
    items, out = _items(tmp_path / "items.jsonl"), tmp_path / "ray.jsonl"
    process = subprocess.Popen(longgraph_command(_args(items, out, stub, cluster)), env=hermetic_env(tmp_path),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    deadline = time.monotonic() + 300
    while not (out.exists() and out.read_text(encoding="utf-8").count("\n") >= 10):
        assert process.poll() is None and time.monotonic() < deadline, "no ten rows before the kill"
        time.sleep(0.2)
    workers = _batch_workers_of(cluster)
    while len(workers) != 2:  # an earlier run's workers on this cluster may still be ending
        assert process.poll() is None and time.monotonic() < deadline, workers
        time.sleep(0.2)
        workers = _batch_workers_of(cluster)
    os.kill(workers[0], signal.SIGKILL)
    _stdout, stderr = process.communicate(timeout=600)
    assert process.returncode == 0, stderr[-3000:]
    ids = [r["id"] for r in _rows(out)]
    assert sorted(ids) == sorted(f"item-{i}" for i in range(ITEMS)), "an item missing or written twice"
    assert "2 worker(s), 1 lost, 1 replaced (" in stderr, stderr[-2000:]
    # The lost worker's unfinished items had sent requests: the run's count holds them (up to the three
    # that may have been in flight at the instant of the kill), not only the finished rows' calls.
    served, counted = stub.stats()["requests"], _calls(stderr)
    lost = int(stderr.split("replaced (")[1].split(" call(s)")[0])
    assert lost > 0 and sum(r["llm_calls"] for r in _rows(out)) + lost == counted, stderr[-1000:]
    assert abs(counted - served) <= 3, (counted, served)


def test_one_spending_budget_across_the_cluster(stub: StubHandle, cluster: Any, tmp_path: Path) -> None:
    """``--max-calls`` is the corpus's, split among the workers: two workers together send no more."""
    items, out = _items(tmp_path / "items.jsonl", 12), tmp_path / "ray.jsonl"
    done = run_longgraph(_args(items, out, stub, cluster, "--max-calls", "9"), home=tmp_path, timeout=600)
    served = stub.stats()["requests"]
    assert 0 < served <= 9, (served, done.stderr[-2000:])
    assert "stopped: " in done.stderr and _calls(done.stderr) == served, done.stderr[-2000:]


def test_a_bad_item_fails_alone_with_its_error(stub: StubHandle, cluster: Any, tmp_path: Path) -> None:
    """Every call about item-3's text is refused by the endpoint (503 however often retried): its row
    holds the error; the seven others answer."""
    items = tmp_path / "items.jsonl"
    _items(items, 8)
    rows = [json.loads(line) for line in items.read_text(encoding="utf-8").splitlines()]
    rows[3]["document"] = "Quarantined-7731 " + rows[3]["document"][:1500]
    items.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    stub.configure(fail_containing="Quarantined-7731")
    out = tmp_path / "ray.jsonl"
    done = run_longgraph(_args(items, out, stub, cluster, "--retries", "1"), home=tmp_path, timeout=600)
    assert done.returncode == 4, done.stderr[-2000:]  # some items failed (EXIT_PARTIAL)
    got = {r["id"]: r for r in _rows(out)}
    assert len(got) == 8 and got["item-3"]["error"] and got["item-3"]["error_type"]
    assert all(r["error"] is None and "smoked plums" in r["answer"] for k, r in got.items() if k != "item-3")


def test_ctrl_c_on_the_driver_leaves_a_file_a_rerun_completes(
    stub: StubHandle, cluster: Any, tmp_path: Path
) -> None:
    items, out = _items(tmp_path / "items.jsonl", 20), tmp_path / "ray.jsonl"
    # Once three rows are written, every later request hangs, so the run cannot finish before the signal.
    # The driver gets Ctrl-C's default disposition, as from a terminal: a suite started in the background
    # of a non-interactive shell ignores SIGINT, and its children inherited that (the run then ended on
    # its own, exit 0, or hung on the held requests).
    try:
        process = subprocess.Popen(longgraph_command(_args(items, out, stub, cluster)), env=hermetic_env(tmp_path),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # fmt: skip
        deadline = time.monotonic() + 300
        while not (out.exists() and out.read_text(encoding="utf-8").count("\n") >= 3):
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        stub.configure(timeout_rate=1.0, hang_s=600.0)
        time.sleep(0.5)  # what was in flight finishes or hangs
        assert process.poll() is None, "the run ended before it could be interrupted"
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=120)
    finally:
        stub.configure(timeout_rate=0.0)
    assert process.returncode != 0, err[-2000:]
    first = _rows(out)  # every line whole
    assert 3 <= len(first) < 20
    done = run_longgraph(_args(items, out, stub, cluster), home=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"{len({r['id'] for r in first})} skipped" in done.stderr
    assert sorted({r["id"] for r in _rows(out)}) == sorted(f"item-{i}" for i in range(20))


def test_checkpoints_on_a_shared_postgresql_server(
    stub: StubHandle, cluster: Any, tmp_path: Path, postgres_url: str
) -> None:
    """Every worker checkpoints its items on the team's server; a finished item's checkpoints are
    deleted (the server holds only unfinished work); a SQLite file is refused (one machine's)."""
    import psycopg

    items, out = _items(tmp_path / "items.jsonl", 6), tmp_path / "ray.jsonl"
    rows = [json.loads(line) for line in items.read_text(encoding="utf-8").splitlines()]
    rows[2]["document"] = rows[2]["document"][:2000] + " Held-back-4471 " + rows[2]["document"][2000:]
    items.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    stub.configure(fail_containing="Held-back-4471")  # item-2's reduce never answers: it stays unfinished
    # With the result cache (on each node's disk; here the nodes share one) a resume retries failed chunks.
    cached = [
        a for a in _args(items, out, stub, cluster, "--checkpoint-db", postgres_url) if a != "--no-cache"
    ]
    cached += ["--cache", str(tmp_path / "cache.sqlite")]
    args = [*cached, "--retries", "0"]
    done = run_longgraph(args, home=tmp_path, timeout=600)
    by = {r["id"]: r for r in _rows(out)}
    assert len(by) == 6 and all(r["error"] is None for k, r in by.items() if k != "item-2"), done.stderr[
        -2000:
    ]

    def threads() -> set[str]:
        with psycopg.connect(postgres_url) as db:
            found = db.execute("SELECT DISTINCT thread_id FROM checkpoints WHERE thread_id LIKE 'batch-%'")
            return {str(t[0]) for t in found.fetchall()}

    assert by["item-2"]["error"] is not None and done.returncode == 4
    assert [t.split("-")[1:3] for t in threads()] == [["item", "2"]]  # its work so far; not the finished'
    stub.configure(fail_containing=None)
    again = run_longgraph(cached, home=tmp_path, timeout=600)  # resumed from the server's checkpoint
    assert again.returncode == 0 and "5 skipped" in again.stderr, again.stderr[-2000:]
    assert "smoked plums" in _rows(out)[-1]["answer"] and threads() == set()
    refused = run_longgraph(
        _args(items, tmp_path / "x.jsonl", stub, cluster, "--checkpoint-db", str(tmp_path / "c.sqlite")),
        home=tmp_path,
    )
    assert refused.returncode == 2 and "postgresql://" in refused.stderr


def test_synth_on_ray_writes_the_local_engines_dataset(
    stub: StubHandle, cluster: Any, tmp_path: Path
) -> None:
    """`longgraph synth --ray`: the same records and outcomes as one process, written by the driver;
    a rerun skips every document."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(6):
        (corpus / f"doc{i}.txt").write_text(essays()[i * 9000 : (i + 1) * 9000], encoding="utf-8")

    def args(out: Path, *extra: str) -> list[str]:
        return ["synth", str(corpus), "--out", str(out), "--max-concurrency", "4", "--temperature", "0",
                *stub_cli_args(stub.base_url), *extra]  # fmt: skip

    def outcomes(out: Path) -> dict[str, str]:
        rows = [json.loads(line) for line in out.with_suffix(".progress.jsonl").read_text().splitlines()]
        return {r["source"]: r["status"] for r in rows if r["kind"] == "document"}

    local, on_ray = tmp_path / "local.jsonl", tmp_path / "ray.jsonl"
    assert run_longgraph(args(local), home=tmp_path, timeout=600).returncode == 0
    done = run_longgraph(args(on_ray, "--ray", cluster.address), home=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "ray: 2 worker(s), 0 lost" in done.stderr
    assert outcomes(on_ray) == outcomes(local) and len(outcomes(local)) == 6
    key = lambda r: r["source_document"] if "source_document" in r else r["X"][:80]  # noqa: E731
    assert sorted(map(key, _rows(on_ray))) == sorted(map(key, _rows(local))) and _rows(local)
    assert on_ray.with_suffix(".card.md").is_file()
    again = run_longgraph(args(on_ray, "--ray", cluster.address), home=tmp_path, timeout=600)
    assert again.returncode == 0 and "skipped: 6 finished by an earlier run" in again.stderr, again.stderr
    assert "ray:" not in again.stderr  # nothing left to do: no cluster work started
