"""Many runs in one process leave nothing behind: each ``longgraph.ask`` (a loop of its own) and each
node call of a sync ``graph.invoke`` (a loop per call) had left its HTTP clients open — 16 sockets per
1.28M-token run, 5.5 per 60,000 characters, so a script asking in a loop ran out of 1,024 file
descriptors after 60–185 questions — and, through the clients' tasks, the whole run's state (+11 MB
per 1.28M-token run)."""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from longgraph import ask
from longgraph.graphs.mapreduce import graph
from longgraph.nodes import chunking
from longgraph.nodes.chunking import forget_chunks
from longgraph.state.contract import Chunk
from longgraph.testing.stub_server import StubConfig, StubHandle, run_stub_in_subprocess
from longgraph.tests.conftest import QUESTION, planted

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts open files in /proc"),
]

SETTINGS: dict[str, object] = {"model": "stub", "context_window": 4096, "max_output_tokens": 256}


@pytest.fixture(scope="module")
def stub() -> Iterator[StubHandle]:
    with run_stub_in_subprocess(StubConfig(model="stub")) as handle:  # its sockets are not ours
        yield handle


def _open_files() -> int:
    return len(os.listdir("/proc/self/fd"))


def _chunks_alive() -> int:
    """Chunks still held once the chunk memo (``nodes/chunking.chunks_once``, a document's chunks kept
    for its next question, bounded) lets go of its own: none, or a run left something behind."""
    assert len(chunking._memo) <= chunking._MEMO_ENTRIES
    forget_chunks()
    gc.collect()
    return sum(type(o) is Chunk for o in gc.get_objects())  # not isinstance: it wakes lazy modules


def test_questions_asked_in_a_loop_leave_no_sockets_and_no_runs_behind(stub: StubHandle) -> None:
    document = planted(60_000)
    answer = ask(QUESTION, document, base_url=stub.base_url, start_embedded=False, **SETTINGS)
    assert "smoked plums" in answer.answer and len(answer.chunks) > 4  # several calls per run
    del answer
    files = _open_files()
    for _ in range(4):
        assert (
            "smoked plums"
            in ask(QUESTION, document, base_url=stub.base_url, start_embedded=False, **SETTINGS).answer
        )
    assert _open_files() <= files
    assert _chunks_alive() == 0


def test_sync_graph_runs_close_every_node_calls_clients(stub: StubHandle) -> None:
    """Each node of a sync run runs on a loop of its own: its client is closed with that loop."""
    graph_input = {"question": QUESTION, "document": planted(60_000)}
    context = {"base_url": stub.base_url, **SETTINGS}
    assert "smoked plums" in graph.invoke(graph_input, context=context)["answer"]
    files = _open_files()
    for _ in range(3):
        assert "smoked plums" in graph.invoke(graph_input, context=context)["answer"]
    assert _open_files() <= files
    assert _chunks_alive() == 0
