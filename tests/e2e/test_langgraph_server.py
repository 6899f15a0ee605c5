"""End to end: every graph in ``langgraph.json`` served by a real ``langgraph dev`` on loopback, offline,
driven through ``langgraph_sdk`` (``runs.wait``, ``runs.stream`` with progress events, thread state,
concurrent runs) against the fault-free stub as the model endpoint.

The endpoint is configured per run through ``context=`` (base URL, model, window), one the operator
allows (``LONGGRAPH_ALLOWED_ENDPOINTS``); the API key only through the server's environment, and the test checks it shows up in no response, event or log line.

``langgraph dev`` refuses graph code that blocks its event loop (BlockBuster). That check has a test
of its own, one ``runs.wait`` per graph on a server with the check on, as a user's ``langgraph dev``
has it (it is also each graph's ``runs.wait`` test: the answer is checked there); the functional tests
run on a server with ``--allow-blocking`` so that a blocking call shows up there, under its name,
instead of failing every test.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient

from longgraph.state.contract import GraphOutput
from longgraph.testing.langgraph_dev import LangGraphServer, run_langgraph_dev
from longgraph.testing.stub_server import StubConfig, StubHandle, run_stub_in_subprocess
from longgraph.tests.conftest import QUESTION, planted
from longgraph.tests.integration.support import (
    FACT_DEPTH,
    FACT_DOCUMENT_CHARS,
    LOCAL_MODEL,
    REPO_ROOT,
    STUB_SETTINGS,
    all_served_graphs,
    served_graphs,
)

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.xdist_group("langgraph-dev"),
]  # one worker: its servers are per module

GRAPHS = sorted(name for name in served_graphs() if name not in LOCAL_MODEL)
"""Every served graph a stub can run (``LOCAL_MODEL`` ones need a local model: tested with vLLM)."""
KEY = f"sk-served-secret-{uuid.uuid4().hex}"
CONCURRENT_RUNS = 10


@pytest.fixture(scope="module")
def stub() -> Iterator[StubHandle]:
    # The stub insists on the key: runs only succeed if the server really sends it from its environment.
    with run_stub_in_subprocess(StubConfig(model="stub", api_key=KEY)) as handle:
        yield handle


@pytest.fixture(scope="module")
def lookup_stub() -> Iterator[StubHandle]:
    """A stub whose model name and window a run leaves to be looked up (``max_model_len`` 3000)."""
    with run_stub_in_subprocess(StubConfig(model="stub", api_key=KEY, max_model_len=3000)) as handle:
        yield handle


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, stub: StubHandle, lookup_stub: StubHandle
) -> Iterator[LangGraphServer]:
    had_state_dir = (REPO_ROOT / ".langgraph_api").exists()
    workdir = tmp_path_factory.mktemp("langgraph-dev")
    with run_langgraph_dev(
        workdir, n_jobs_per_worker=CONCURRENT_RUNS, allow_blocking=True, env=operator_env(stub, lookup_stub)
    ) as running:
        yield running
    assert running.process.returncode is not None, "the server did not stop"
    assert (workdir / ".langgraph_api").is_dir(), "the server wrote its state somewhere else"
    assert had_state_dir or not (REPO_ROOT / ".langgraph_api").exists(), "the server wrote into the repo"


@pytest.fixture(scope="module")
def strict_server(tmp_path_factory: pytest.TempPathFactory, stub: StubHandle) -> Iterator[LangGraphServer]:
    """``langgraph dev`` as a user starts it: blocking calls in graph code are errors."""
    workdir = tmp_path_factory.mktemp("langgraph-dev-strict")
    with run_langgraph_dev(workdir, env=operator_env(stub)) as running:
        yield running


def operator_env(*stubs: StubHandle) -> dict[str, str]:
    """The server's key, and the stubs as endpoints its runs may name (``LONGGRAPH_ALLOWED_ENDPOINTS``),
    each given that key by the operator (``LONGGRAPH_ENDPOINT_KEYS``: an allowed endpoint gets no key
    unless it is listed there)."""
    return {
        "LONGGRAPH_API_KEY": KEY,
        "LONGGRAPH_ALLOWED_ENDPOINTS": ",".join(s.base_url for s in stubs),
        "LONGGRAPH_ENDPOINT_KEYS": ",".join(f"{s.base_url}={KEY}" for s in stubs),
        "LONGGRAPH_ALLOWED_MODELS": STUB_SETTINGS["model"],
    }


def context_for(stub: StubHandle, **overrides: Any) -> dict[str, Any]:
    return {**STUB_SETTINGS, "base_url": stub.base_url, **overrides}


def client_for(server: LangGraphServer) -> LangGraphClient:
    return get_client(url=server.url, timeout=120)


def assert_complete(raw: Any, fact_words: str = "smoked plums") -> GraphOutput:
    result = GraphOutput.model_validate(raw)
    assert fact_words in result.answer, result.answer
    assert [c.id for c in result.chunks] == list(range(len(result.chunks))) and result.chunks
    assert all(c.reason for c in result.chunks if c.status == "failed")
    return result


def test_serves_every_graph_on_loopback(server: LangGraphServer) -> None:
    assert server.url.startswith("http://127.0.0.1:")

    async def search() -> list[Any]:
        return list(await client_for(server).assistants.search(limit=100))

    assistants = asyncio.run(search())
    assert {a["graph_id"] for a in assistants} >= set(all_served_graphs())


@pytest.mark.parametrize("graph", GRAPHS)
def test_runs_stream_shows_progress_events(graph: str, server: LangGraphServer, stub: StubHandle) -> None:
    async def run() -> tuple[list[Any], list[Any], dict[str, Any]]:
        client = client_for(server)
        thread = await client.threads.create()
        custom: list[Any] = []
        updates: list[Any] = []
        async for part in client.runs.stream(
            thread["thread_id"], graph, input={"question": QUESTION, "document": planted(FACT_DOCUMENT_CHARS, at=FACT_DEPTH)},
            context=context_for(stub), stream_mode=["updates", "custom"],
        ):  # fmt: skip
            if part.event == "custom":
                custom.append(part.data)
            elif part.event == "updates":
                updates.append(part.data)
            assert part.event != "error", part.data
        state = await client.threads.get_state(thread["thread_id"])
        values = state["values"]
        assert isinstance(values, dict)
        return custom, updates, values

    custom, updates, values = asyncio.run(run())
    result = assert_complete(values)
    # Progress events: every stage (and collapse/merge round) reaches its total, and the chunk stage
    # announces every chunk of the result.
    assert custom and all({"stage", "total", "advance"} <= set(e) for e in custom)
    progress: dict[tuple[str, str], list[Any]] = {}
    for event in custom:
        progress.setdefault((event["stage"], event.get("message", "")), []).append(event)
    for key, events in progress.items():
        assert sum(e["advance"] for e in events) == max(e["total"] for e in events), (key, events)
    chunked = next(e for e in custom if e["stage"] == "chunk")  # after the records plan, where one is made
    assert chunked["total"] == len(result.chunks)
    assert any("finalize" in update for update in updates)


def test_concurrent_runs_each_get_their_own_answer(server: LangGraphServer, stub: StubHandle) -> None:
    """Distinct facts per run, the graphs taking turns: cross-talk between runs shows as a wrong answer."""
    words = [f"zephyr{i}quartz" for i in range(CONCURRENT_RUNS)]

    async def one(i: int) -> Any:
        # Depths vary but stay inside the prefix the truncation baseline keeps.
        depth = FACT_DEPTH * (i + 1) / CONCURRENT_RUNS
        document = planted(FACT_DOCUMENT_CHARS, at=depth, fact=f"Agent {i} uses the code word {words[i]}.")
        return await client_for(server).runs.wait(
            None, GRAPHS[i % len(GRAPHS)], input={"question": f"What code word does agent {i} use?", "document": document},
            context=context_for(stub),
        )  # fmt: skip

    async def all_runs() -> list[Any]:
        return list(await asyncio.gather(*(one(i) for i in range(CONCURRENT_RUNS))))

    for i, raw in enumerate(asyncio.run(all_runs())):
        assert_complete(raw, fact_words=words[i])


def test_api_key_appears_in_no_response_or_log(server: LangGraphServer, stub: StubHandle) -> None:
    """Runs here used the key from the server's environment; it must not come back in any form."""

    async def everything() -> str:
        client = client_for(server)
        thread = await client.threads.create()
        seen: list[Any] = []
        async for part in client.runs.stream(
            thread["thread_id"], GRAPHS[0], input={"question": QUESTION, "document": planted(FACT_DOCUMENT_CHARS, at=FACT_DEPTH)},
            context=context_for(stub), stream_mode=["values", "updates", "custom", "debug", "messages"],
        ):  # fmt: skip
            seen.append(part)
        seen.append(await client.threads.get_state(thread["thread_id"]))
        seen.append(await client.threads.get_history(thread["thread_id"]))
        seen.append(await client.runs.list(thread["thread_id"]))
        return repr(seen)

    assert KEY not in asyncio.run(everything())
    assert KEY not in server.log_text()


@pytest.mark.parametrize(
    ("run_input", "context_overrides", "error", "message"),
    [
        ({"question": " ", "document": "Some text."}, {}, "InputError", "invalid input: question is empty"),
        ({"question": QUESTION, "documents": "one string"}, {}, "InputError", "'documents' is one string"),
        ({"question": QUESTION, "document": "Some text."}, {"temperature": -1}, "ConfigurationError",
         "temperature must be in [0, 2], got -1"),
    ],
)  # fmt: skip
def test_bad_input_reaches_the_client_with_its_message(
    run_input: dict[str, Any], context_overrides: dict[str, Any], error: str, message: str,
    server: LangGraphServer, stub: StubHandle,
) -> None:  # fmt: skip
    """The server hides the message of any exception but a ``ValueError`` ("An internal error
    occurred"): input and settings errors are both, so the SDK shows what to fix."""

    async def run() -> Any:
        return await client_for(server).runs.wait(
            None,
            GRAPHS[0],
            input=run_input,
            context=context_for(stub, **context_overrides),
            raise_error=False,
        )

    raw = asyncio.run(run())
    assert isinstance(raw, dict) and raw.get("__error__", {}).get("error") == error, raw
    assert message in raw["__error__"]["message"], raw


@pytest.mark.parametrize("graph", GRAPHS)
def test_served_graph_does_not_block_the_event_loop(
    graph: str, strict_server: LangGraphServer, stub: StubHandle
) -> None:
    """A blocking call in a node stalls every run the server is executing (and fails under dev)."""

    async def run() -> Any:
        return await client_for(strict_server).runs.wait(
            None,
            graph,
            input={"question": QUESTION, "document": planted(FACT_DOCUMENT_CHARS, at=FACT_DEPTH)},
            context=context_for(stub),
            raise_error=False,
        )

    raw = asyncio.run(run())
    if isinstance(raw, dict) and "__error__" in raw:
        log = strict_server.log_text()
        start = log.rfind("Blocking call to")
        frames = [
            line.strip() for line in log.splitlines() if 'File "' in line and "site-packages" not in line
        ]
        where = list(dict.fromkeys(frames))[-6:]  # the graph's own frames, innermost last
        pytest.fail(f"{graph}: {raw['__error__']}: {log[start : start + 40]!r} at {where}")
    assert_complete(raw)


def test_server_load_benchmark_runs_and_answers_correctly(capsys: pytest.CaptureFixture[str]) -> None:
    """The benchmark script itself, small: it prints its figures and every run answers right."""
    from longgraph.evals.bench.server_load import main

    figures = main(["--runs", "3", "--repeats", "1", "--latency", "0", "--chars", "8000"])
    assert figures["3 concurrent runs, in process: correct answers"] == "3/3"
    assert figures["3 concurrent runs, through the server: correct answers"] == "3/3"
    assert "server overhead per run (median difference): " in capsys.readouterr().out


def test_a_served_graph_and_ask_render_the_same_prompts(
    server: LangGraphServer, lookup_stub: StubHandle
) -> None:
    """One resolution of the context, inside the graph: for the same context (here without a model
    name or a window, both looked up at the endpoint), a graph served by ``langgraph dev`` and the
    same graph through ``longgraph.ask`` send exactly the same messages."""
    from longgraph.api import aask

    document = planted(FACT_DOCUMENT_CHARS, at=FACT_DEPTH)
    context = {"base_url": None, "temperature": 0.0, "structured_output": "json_schema"}
    endpoint = lookup_stub
    context["base_url"] = endpoint.base_url

    async def served() -> Any:
        return await client_for(server).runs.wait(
            None, "mapreduce", input={"question": QUESTION, "document": document}, context=context
        )

    endpoint.reset()
    assert_complete(asyncio.run(served()))
    served_requests = sorted((e["stage"], e["messages"]) for e in endpoint.fault_log())
    endpoint.reset()
    local = asyncio.run(aask(QUESTION, document, start_embedded=False, api_key=KEY, **context))
    local_requests = sorted((e["stage"], e["messages"]) for e in endpoint.fault_log())
    assert "smoked plums" in local.answer
    assert served_requests and served_requests == local_requests


def test_pyramid_align_is_served_and_returns_a_record(
    strict_server: LangGraphServer, stub: StubHandle
) -> None:
    """The data engine's graph (no question: a document in, a record out), on the server that refuses
    blocking calls."""
    from longgraph.state.pyramid import Record

    async def run() -> Any:
        return await client_for(strict_server).runs.wait(
            None, "pyramid-align", input={"document": planted(FACT_DOCUMENT_CHARS, at=FACT_DEPTH), "seed": 3},
            context=context_for(stub), raise_error=False,
        )  # fmt: skip

    raw = asyncio.run(run())
    assert isinstance(raw, dict) and "__error__" not in raw, raw
    record = Record.model_validate(raw["record"])
    assert record.Q and record.A and record.M and record.levels >= 2 and record.seed == 3
