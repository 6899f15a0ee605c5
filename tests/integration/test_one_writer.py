"""One thread, one writer (``longgraph/exclusive.py``): a second process resuming a thread that is running
is refused with one clear line (exit 2), on SQLite and on PostgreSQL, and the first run's calls are the
only ones made; a killed run's hold is gone with it, so its resume is never blocked. Two batches on one
results file: the second is refused the same way."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from longgraph.testing.stub_server import StubConfig, StubHandle, run_stub_in_thread
from longgraph.tests.conftest import QUESTION, planted
from longgraph.tests.integration.support import (
    hermetic_env,
    json_result,
    longgraph_command,
    run_longgraph,
    stub_cli_args,
)

pytestmark = pytest.mark.integration


def _calls(stub: StubHandle) -> int:
    return int(sum(stub.stats()["by_stage"].values()))


def _wait_for_calls(stub: StubHandle, process: subprocess.Popen[bytes], log: Path, at_least: int = 2) -> None:
    deadline = time.monotonic() + 60
    while _calls(stub) < at_least:
        assert process.poll() is None, f"the first run ended early: {log.read_text()}"
        assert time.monotonic() < deadline, "the first run made no call"
        time.sleep(0.05)


def _start(
    command: list[str], home: Path, stdout: int = subprocess.DEVNULL
) -> tuple[subprocess.Popen[bytes], Path]:
    """The first run, in the background, its stderr in a log file."""
    log = home / "first.log"
    process = subprocess.Popen(
        longgraph_command(command), env=hermetic_env(home), cwd=home, stdout=stdout, stderr=log.open("w")
    )
    return process, log


@pytest.fixture(params=["sqlite", "postgres"])
def checkpoint_db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgres":
        return str(request.getfixturevalue("postgres_url"))
    return str(tmp_path / "team.sqlite")


def test_a_second_process_resuming_a_running_thread_is_refused(checkpoint_db: str, tmp_path: Path) -> None:
    document = tmp_path / "doc.txt"
    document.write_text(planted(80_000), encoding="utf-8")
    # The stub holds every answer until the second CLI has been refused: however slow the host is at
    # starting a CLI, the first run is still in the middle of its calls (CI once saw it finish first).
    with run_stub_in_thread(StubConfig(hold=True)) as stub:
        command = [
            "ask", str(document), "-q", QUESTION, "--json", "--no-progress", "--no-cache", "--max-concurrency", "2",
            *stub_cli_args(stub.base_url), "--resume", "shared-thread", "--checkpoint-db", checkpoint_db,
        ]  # fmt: skip
        first, log = _start(command, tmp_path, stdout=subprocess.PIPE)
        try:
            _wait_for_calls(stub, first, log, at_least=1)
            second = run_longgraph(command, home=tmp_path, timeout=120)
            assert first.poll() is None, "the first run should still be running"
            assert second.returncode == 2, second.stderr
            lines = second.stderr.strip().splitlines()
            assert len(lines) == 1 and "shared-thread" in lines[0] and "in use" in lines[0], second.stderr
            stub.configure(hold=False)
            out, _ = first.communicate(timeout=120)
        finally:
            if first.poll() is None:
                first.kill()
        assert first.returncode == 0, log.read_text()
        calls_of_one_run = _calls(stub)
        assert "smoked plums" in json_result(subprocess.CompletedProcess([], 0, out.decode(), ""))["answer"]
        stub.reset()
        again = run_longgraph(command, home=tmp_path, timeout=60)  # finished: its stored result, no call
        assert again.returncode == 0 and _calls(stub) == 0, again.stderr
    assert calls_of_one_run > 0


def test_a_killed_runs_hold_is_gone_with_it(tmp_path: Path) -> None:
    document = tmp_path / "doc.txt"
    document.write_text(planted(40_000), encoding="utf-8")
    with run_stub_in_thread(StubConfig(latency_s=0.3)) as stub:
        command = [
            "ask", str(document), "-q", QUESTION, "--json", "--no-progress", "--no-cache",
            *stub_cli_args(stub.base_url), "--resume", "killed", "--checkpoint-db", str(tmp_path / "c.sqlite"),
        ]  # fmt: skip
        first, log = _start(command, tmp_path)
        _wait_for_calls(stub, first, log)
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=10)
        stub.configure(latency_s=0.0)
        resumed = run_longgraph(command, home=tmp_path, timeout=60)
    assert resumed.returncode == 0, resumed.stderr
    assert "smoked plums" in json_result(resumed)["answer"]


def test_two_batches_on_one_results_file(tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    rows = [{"id": str(i), "question": QUESTION, "document": planted(6_000)} for i in range(6)]
    items.write_text("\n".join(json.dumps(row) for row in rows), encoding="utf-8")
    with run_stub_in_thread(StubConfig(hold=True)) as stub:  # held until the second batch is refused
        command = ["batch", str(items), "--out", str(tmp_path / "out.jsonl"), "--no-progress", "--no-cache", "--max-concurrency", "1",
                   *stub_cli_args(stub.base_url)]  # fmt: skip
        first, log = _start(command, tmp_path)
        try:
            _wait_for_calls(stub, first, log, at_least=1)
            second = run_longgraph(command, home=tmp_path, timeout=120)
            assert first.poll() is None, "the first batch should still be running"
            assert second.returncode == 2 and "another run" in second.stderr, second.stderr
            assert len(second.stderr.strip().splitlines()) == 1
            stub.configure(hold=False)
            first.wait(timeout=120)
        finally:
            if first.poll() is None:
                first.kill()
    assert first.returncode == 0, log.read_text()
