"""Durable runs on a real PostgreSQL server (``longgraph/testing/postgres.py``): the resume tests of
``test_resume.py`` with a ``postgresql://`` checkpoint database, and two processes killed and resumed at
once on one server, each on its own thread.

The server is the distribution's (``apt-get install postgresql``, done by ``scripts/setup.sh``), from the
session's ``postgres_url`` fixture (``tests/conftest.py``: skipped where it cannot start, failed in CI).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from longgraph.api import aask
from longgraph.checkpointing import checkpoint_serializer
from longgraph.errors import ConfigurationError, EndpointError
from longgraph.strategies import build_strategy
from longgraph.testing.stub_server import StubConfig, StubHandle, run_stub_in_thread
from longgraph.tests.conftest import QUESTION, planted
from longgraph.tests.integration.support import (
    STUB_SETTINGS,
    comparable,
    hermetic_env,
    json_result,
    longgraph_command,
    run_longgraph,
    stub_cli_args,
)

pytestmark = pytest.mark.integration

DOCUMENT_CHARS = 90_000
CONCURRENCY = 2


def _map_results_saved(url: str, thread_id: str) -> int:
    """Map tasks whose results the Postgres checkpoint holds for ``thread_id``."""
    from langgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(url) as saver:
        saver.serde = checkpoint_serializer()
        graph = build_strategy("mapreduce").copy({"checkpointer": saver})
        snapshot = graph.get_state({"configurable": {"thread_id": thread_id}})
    return sum(1 for task in snapshot.tasks if task.name == "map_chunk" and task.result is not None)


def _map_calls(stub: StubHandle) -> int:
    return int(stub.stats()["by_stage"].get("map", 0))


def test_api_run_failing_midway_resumes_from_postgres(postgres_url: str) -> None:
    document = planted(DOCUMENT_CHARS)
    with run_stub_in_thread(StubConfig()) as stub:
        settings: dict[str, Any] = {
            **STUB_SETTINGS, "base_url": stub.base_url, "max_concurrency": CONCURRENCY, "max_retries": 0,
            "start_embedded": False,
        }  # fmt: skip
        reference = asyncio.run(aask(QUESTION, document, **settings))
        calls = stub.stats()["requests"]
        resumable = {**settings, "checkpoint_url": postgres_url, "thread_id": "api-1"}

        stub.reset()
        stub.configure(die_after=calls // 3)
        with pytest.raises(EndpointError):
            asyncio.run(aask(QUESTION, document, **resumable))
        saved = _map_results_saved(postgres_url, "api-1")
        assert 0 < saved <= calls // 3

        stub.configure(die_after=None)
        stub.reset()
        resumed = asyncio.run(aask(QUESTION, document, **resumable))
        assert stub.stats()["requests"] == calls - saved - 1  # the records plan was checkpointed too
        stub.reset()
        again = asyncio.run(aask(QUESTION, document, **resumable))
        assert stub.stats()["requests"] == 0 and again.answer == resumed.answer
        with pytest.raises(ConfigurationError, match="other settings"):
            asyncio.run(aask(QUESTION, document, **{**resumable, "chunk_size": 700}))
    assert comparable(resumed.model_dump()) == comparable(reference.model_dump())


def test_two_processes_killed_mid_map_resume_their_own_threads_at_once(
    postgres_url: str, tmp_path: Path
) -> None:
    facts = ["The code word is zephyr0quartz.", "The code word is zephyr1quartz."]
    question = "What is the code word?"
    with run_stub_in_thread(StubConfig(latency_s=0.3)) as stub:
        commands = []
        for i, fact in enumerate(facts):
            document = tmp_path / f"doc{i}.txt"
            document.write_text(planted(DOCUMENT_CHARS, at=0.3 + 0.4 * i, fact=fact), encoding="utf-8")
            common = [
                "ask", str(document), "-q", question, "--json", "--no-progress", "--no-cache",
                "--strategy", "mapreduce", "--max-concurrency", str(CONCURRENCY), *stub_cli_args(stub.base_url),
            ]  # fmt: skip
            commands.append((common, [*common, "--resume", f"team-{i}", "--checkpoint-db", postgres_url]))

        # 1. Both killed hard while their map stages are under way.
        logs = [tmp_path / f"killed-{i}.log" for i in range(len(commands))]
        processes = [
            subprocess.Popen(longgraph_command(resumable), env=hermetic_env(tmp_path), cwd=tmp_path,
                             stdout=subprocess.DEVNULL, stderr=log.open("w"))
            for (_, resumable), log in zip(commands, logs, strict=True)
        ]  # fmt: skip
        try:
            deadline = time.monotonic() + 90
            while _map_calls(stub) < 16 and time.monotonic() < deadline:
                ended = [
                    log.read_text() for p, log in zip(processes, logs, strict=True) if p.poll() is not None
                ]
                assert not ended, f"a run ended before it could be interrupted: {ended}"
                time.sleep(0.05)
            for process in processes:
                os.kill(process.pid, signal.SIGKILL)
        finally:
            for process in processes:
                if process.poll() is None:
                    process.kill()
                process.wait(timeout=10)
        saved = [_map_results_saved(postgres_url, f"team-{i}") for i in range(len(facts))]
        assert all(n > 0 for n in saved), saved

        # 2. Both resumed at the same time, each from its own thread.
        stub.configure(latency_s=0.0)
        stub.reset()
        resumers = [
            subprocess.Popen(longgraph_command(resumable), env=hermetic_env(tmp_path), cwd=tmp_path,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _, resumable in commands
        ]  # fmt: skip
        outputs = [process.communicate(timeout=120) for process in resumers]
        assert [p.returncode for p in resumers] == [0, 0], [err for _, err in outputs]
        resumed = [json_result(subprocess.CompletedProcess([], 0, out, err)) for out, err in outputs]
        totals = [len(result["chunks"]) for result in resumed]
        assert _map_calls(stub) == sum(total - n for total, n in zip(totals, saved, strict=True))

        # 3. Each the same answer as a run that was never interrupted.
        for i, (common, _) in enumerate(commands):
            reference = json_result(run_longgraph(common, home=tmp_path, timeout=120))
            assert comparable(resumed[i]) == comparable(reference)
            assert f"zephyr{i}quartz" in resumed[i]["answer"]


def test_an_unreachable_postgres_is_one_clear_line_without_its_password(tmp_path: Path) -> None:
    document = tmp_path / "doc.txt"
    document.write_text(planted(10_000), encoding="utf-8")
    url = "postgresql://team:hunter2secret@127.0.0.1:9/runs"
    with run_stub_in_thread(StubConfig()) as stub:
        done = run_longgraph(
            ["ask", str(document), "-q", QUESTION, "--resume", "t", "--checkpoint-db", url,
             *stub_cli_args(stub.base_url)],
            home=tmp_path,
        )  # fmt: skip
        assert stub.stats()["requests"] == 0  # refused before any call
    assert done.returncode == 2, done.stderr
    assert "checkpoint database postgresql://***@127.0.0.1:9/runs" in done.stderr
    assert "hunter2secret" not in done.stderr and done.stderr.strip().count("\n") == 0


@pytest.mark.e2e
@pytest.mark.xdist_group("langgraph-dev")
def test_served_graphs_checkpoint_to_postgres(postgres_url: str, tmp_path: Path) -> None:
    """``langgraph dev`` with longgraph's served checkpointer named in its config: a thread's steps land
    in PostgreSQL's checkpoint tables, and its state reads back from there."""
    import json

    import psycopg
    from langgraph_sdk import get_client

    from longgraph.state.contract import GraphOutput
    from longgraph.testing.langgraph_dev import run_langgraph_dev, served_config
    from longgraph.tests.integration.support import FACT_DEPTH, FACT_DOCUMENT_CHARS, REPO_ROOT

    config = served_config(REPO_ROOT / "langgraph.json")
    checkpointer = REPO_ROOT / "longgraph" / "checkpointing.py"
    config["checkpointer"] = {"backend": "custom", "path": f"{checkpointer}:served_checkpointer"}
    config_path = tmp_path / "with-postgres.json"
    config_path.write_text(json.dumps(config), encoding="utf-8")
    with (
        run_stub_in_thread(StubConfig()) as stub,
        run_langgraph_dev(tmp_path / "server", config_path=config_path, allow_blocking=True,
                          env={"LONGGRAPH_CHECKPOINT_URL": postgres_url,
                               "LONGGRAPH_ALLOWED_ENDPOINTS": stub.base_url,
                               "LONGGRAPH_ALLOWED_MODELS": STUB_SETTINGS["model"]}) as server,
    ):  # fmt: skip

        async def run() -> tuple[str, Any, Any]:
            client = get_client(url=server.url, timeout=120)
            thread = await client.threads.create()
            raw = await client.runs.wait(
                thread["thread_id"], "mapreduce",
                input={"question": QUESTION, "document": planted(FACT_DOCUMENT_CHARS, at=FACT_DEPTH)},
                context={**STUB_SETTINGS, "base_url": stub.base_url},
            )  # fmt: skip
            return thread["thread_id"], raw, await client.threads.get_state(thread["thread_id"])

        thread_id, raw, state = asyncio.run(run())
    assert "smoked plums" in GraphOutput.model_validate(raw).answer
    assert "smoked plums" in state["values"]["answer"]
    with psycopg.connect(postgres_url) as db:
        rows = db.execute("SELECT count(*) FROM checkpoints WHERE thread_id = %s", (thread_id,)).fetchone()
    assert rows is not None and rows[0] >= 3, rows


def test_processes_opening_a_new_database_at_once_all_get_its_tables(postgres_url: str) -> None:
    """LangGraph's ``setup`` (tables, then migrations, some ``CREATE INDEX CONCURRENTLY``) is not safe
    to run twice at once: two teammates starting on a new database got a ``UniqueViolation`` on
    ``checkpoint_migrations`` or a deadlock (found by the test above failing 4 times in 9)."""
    import psycopg

    from longgraph.checkpointing import _pooled_postgres_checkpointer, postgres_checkpointer

    name = f"fresh_{os.getpid()}_{time.monotonic_ns()}"
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    fresh = postgres_url.rsplit("/", 1)[0] + f"/{name}"

    async def open_one(i: int) -> int:
        opened = postgres_checkpointer if i % 2 else _pooled_postgres_checkpointer  # the CLI's, the server's
        async with opened(fresh) as saver:
            return len([c async for c in saver.alist(None)])

    async def at_once() -> list[int]:
        return list(await asyncio.gather(*(open_one(i) for i in range(6))))

    assert asyncio.run(at_once()) == [0] * 6
    with psycopg.connect(fresh) as check:
        versions = [row[0] for row in check.execute("SELECT v FROM checkpoint_migrations ORDER BY v")]
    assert versions == list(range(len(versions))) and len(versions) > 5  # each migration once
