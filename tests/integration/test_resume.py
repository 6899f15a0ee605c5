"""Resumable runs: a checkpointed run that dies redoes only the model calls that had not finished.

The honest interruption is a hard kill of a real CLI process in the middle of the map stage (no
cleanup, no exception handlers); the stub counts the calls each attempt makes, and the checkpoint
database itself says how many map results had been saved when the process died.

Every served graph resumes through the API after its endpoint went down: a ``fan-out`` graph midway
through its calls (only the unfinished ones are made again), a ``single-call`` graph at its one call
(the steps before it are not redone, and the call is made once). See ``support.SHAPES``.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver

from longgraph.api import aask
from longgraph.checkpointing import checkpoint_serializer
from longgraph.errors import ConfigurationError, EndpointError
from longgraph.state.usage import Usage
from longgraph.strategies import build_strategy, plans
from longgraph.testing.stub_server import StubConfig, StubHandle, run_stub_in_thread
from longgraph.tests.conftest import QUESTION, planted
from longgraph.tests.integration.support import (
    STUB_SETTINGS,
    comparable,
    hermetic_env,
    json_result,
    longgraph_command,
    run_longgraph,
    served_strategies,
    shape_of,
    stub_cli_args,
)

pytestmark = pytest.mark.integration

DOCUMENT_CHARS = 90_000  # about 20 chunks under a 2048-token window
CONCURRENCY = 2


def _map_calls(stub: StubHandle) -> int:
    return int(stub.stats()["by_stage"].get("map", 0))


def _interrupted_tasks(db: Path, thread_id: str, strategy: str) -> list[Any]:
    """The tasks of the step the run died in, as its checkpoint holds them (inside a subgraph's step when
    the step is a subgraph's: ``auto`` runs mapreduce's graph as one)."""
    graph = build_strategy(strategy)
    # closing(): a sqlite3 connection's own context manager commits but never closes, and an open
    # connection left to the garbage collector can hold a lock the next run trips over.
    with closing(sqlite3.connect(db, check_same_thread=False)) as connection:
        saver = SqliteSaver(connection, serde=checkpoint_serializer())
        config: Any = {"configurable": {"thread_id": thread_id}}
        snapshot = graph.copy({"checkpointer": saver}).get_state(config, subgraphs=True)
    tasks: list[Any] = []
    pending = list(snapshot.tasks)
    while pending:
        task = pending.pop(0)
        inner = getattr(task, "state", None)
        if inner is not None and hasattr(inner, "tasks"):
            pending += list(inner.tasks)
        else:
            tasks.append(task)
    return tasks


def _saved_map_results(db: Path, thread_id: str) -> int:
    """Map tasks whose results the checkpoint holds (what a resume must not redo)."""
    tasks = _interrupted_tasks(db, thread_id, "mapreduce")
    return sum(1 for task in tasks if task.name == "map_chunk" and task.result is not None)


def _saved_calls(db: Path, thread_id: str, strategy: str) -> int:
    """Model calls behind the saved task results (every stage node reports its ``usage``)."""
    tasks = _interrupted_tasks(db, thread_id, strategy)
    return sum(
        task.result["usage"].llm_calls
        for task in tasks
        if isinstance(task.result, dict) and isinstance(task.result.get("usage"), Usage)
    )


def test_cli_run_killed_mid_map_resumes_without_redoing_finished_calls(tmp_path: Path) -> None:
    """The CLI's ``--resume`` after a hard kill, with mapreduce (its map stage is the one the checkpoint
    is inspected for); every graph's resume is the API test below."""
    document = tmp_path / "doc.txt"
    document.write_text(planted(DOCUMENT_CHARS), encoding="utf-8")
    db = tmp_path / "checkpoints.sqlite"
    with run_stub_in_thread(StubConfig(latency_s=0.3)) as stub:
        common = [
            "ask", str(document), "-q", QUESTION, "--json", "--no-progress", "--no-cache",
            "--strategy", "mapreduce", "--max-concurrency", str(CONCURRENCY), *stub_cli_args(stub.base_url),
        ]  # fmt: skip
        resumable = [*common, "--resume", "job-1", "--checkpoint-db", str(db)]

        # 1. Killed hard while the map stage is under way.
        process = subprocess.Popen(
            longgraph_command(resumable),
            env=hermetic_env(tmp_path),
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 60
            while _map_calls(stub) < 8 and process.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            assert process.poll() is None, "the run ended before it could be interrupted"
            os.kill(process.pid, signal.SIGKILL)
        finally:
            if process.poll() is None:
                process.kill()
            process.wait(timeout=10)
        assert process.returncode == -signal.SIGKILL
        saved = _saved_map_results(db, "job-1")

        # 2. Resumed with the same thread: only the unsaved map calls go out again.
        stub.configure(latency_s=0.0)
        stub.reset()
        resumed_run = run_longgraph(resumable, home=tmp_path, timeout=90)
        resumed = json_result(resumed_run)
        assert resumed_run.stderr == "", resumed_run.stderr  # no warnings about loading the checkpoint
        total = len(resumed["chunks"])
        assert 0 < saved < total, f"{saved} of {total} map results saved: the kill was not mid-map"
        assert _map_calls(stub) == total - saved

        # 3. The same answer as a run that was never interrupted.
        reference = json_result(run_longgraph(common, home=tmp_path, timeout=90))
    assert comparable(resumed) == comparable(reference)
    assert "smoked plums" in resumed["answer"]


@pytest.mark.parametrize("strategy", served_strategies())
def test_run_failing_midway_resumes_from_its_checkpoint(strategy: str, tmp_path: Path) -> None:
    """The API path: an endpoint that goes down mid-run, a typed error, then a resume once it is back.

    A fan-out graph's endpoint dies after a third of its calls, and the resume makes only the calls
    whose results the checkpoint did not hold. A single-call graph's endpoint is down for its one call:
    the checkpoint holds the steps before it (chunking, selecting), and the resume starts at that call.
    Either way the resumed result is the uninterrupted one, and the finished thread answers again free.
    """
    document = planted(DOCUMENT_CHARS)
    db = tmp_path / "checkpoints.sqlite"
    with run_stub_in_thread(StubConfig()) as stub:
        settings: dict[str, Any] = {
            **STUB_SETTINGS, "base_url": stub.base_url, "max_concurrency": CONCURRENCY, "max_retries": 0,
            "strategy": strategy, "start_embedded": False,
        }  # fmt: skip
        reference = asyncio.run(aask(QUESTION, document, **settings))
        calls = stub.stats()["requests"]
        fan_out = shape_of(strategy).calls != "single-call"  # a graph search makes many calls too
        assert calls >= 3 if fan_out else calls == 1, f"{strategy} made {calls} call(s)"

        stub.reset()
        stub.configure(die_after=calls // 3)
        resumable = {**settings, "checkpoint_path": db, "thread_id": "job-2"}
        with pytest.raises(EndpointError) as failure:
            asyncio.run(aask(QUESTION, document, **resumable))
        assert failure.value.endpoint == stub.base_url and failure.value.undone
        saved = _saved_calls(db, "job-2", strategy)
        if fan_out:
            assert 0 < saved <= calls // 3
        else:
            assert saved == 0
            pending = [task.name for task in _interrupted_tasks(db, "job-2", strategy)]
            assert pending == ["answer"], f"the checkpoint did not stop at the one call: {pending}"

        stub.configure(die_after=None)
        stub.reset()
        # Settings that change the answer are refused, naming them; where calls go and the budgets may change.
        with pytest.raises(ConfigurationError, match=r"other settings \(temperature: 0\.0 -> 0\.7\)"):
            asyncio.run(aask(QUESTION, document, **{**resumable, "temperature": 0.7}))
        assert stub.stats()["requests"] == 0
        resumed = asyncio.run(
            aask(QUESTION, document, **{**resumable, "max_retries": 1, "max_calls": 10_000})
        )
        # The records plan's result was checkpointed in an earlier step than the one the run died in.
        assert stub.stats()["requests"] == calls - saved - (1 if plans(strategy) else 0)
        assert resumed.stats.resumed and not reference.stats.resumed

        # Asking the finished thread again returns its result without a call.
        stub.reset()
        again = asyncio.run(aask(QUESTION, document, **resumable))
        assert stub.stats()["requests"] == 0
        assert again.answer == resumed.answer

        # The same thread with another input is refused rather than silently answering the old one.
        with pytest.raises(ConfigurationError, match="another question"):
            asyncio.run(aask("Who wrote the essays?", document, **resumable))
    assert comparable(resumed.model_dump()) == comparable(reference.model_dump())


def test_checkpoint_db_that_is_not_a_database_is_a_configuration_error(tmp_path: Path) -> None:
    bogus = tmp_path / "not-a-db.sqlite"
    bogus.write_bytes(b"this is not SQLite" * 100)
    with pytest.raises(ConfigurationError, match="checkpoint database"):
        asyncio.run(
            aask(QUESTION, "Some text.", base_url="http://127.0.0.1:9/v1", model="m",
                 checkpoint_path=bogus, thread_id="t", start_embedded=False)
        )  # fmt: skip


def test_cli_failure_of_a_checkpointed_run_says_how_to_resume(tmp_path: Path) -> None:
    document = tmp_path / "doc.txt"
    document.write_text(planted(10_000), encoding="utf-8")
    args = ["ask", str(document), "-q", QUESTION, "--retries", "0", "--resume", "job-3"]
    done = run_longgraph([*args, *stub_cli_args("http://127.0.0.1:9/v1")], home=tmp_path)
    assert done.returncode == 3
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "--resume job-3" in lines[0] and "left undone" in lines[0], done.stderr
    assert (tmp_path / "checkpoints.sqlite").is_file()  # the default place, under LONGGRAPH_HOME
