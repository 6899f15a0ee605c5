"""End to end: the served graphs behind LangGraph's auth with two users' tokens (``longgraph/auth.py``).

A real ``langgraph dev`` with ``LONGGRAPH_AUTH_TOKENS`` for alice and bob, driven by ``langgraph_sdk``
clients that send bearer tokens: requests without a valid token are refused; each user's threads and
runs are invisible to the other (read, list, search, cancel); a run whose context carries an endpoint
key is refused before the server stores it, and the key is nowhere the server can show it afterwards;
a user's runs past ``LONGGRAPH_USER_RUNS`` are refused while the other user's run is answered.
"""

from __future__ import annotations

import asyncio
import http.server
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient

from longgraph.state.contract import GraphOutput
from longgraph.testing.langgraph_dev import LangGraphServer, run_langgraph_dev
from longgraph.testing.stub_server import StubConfig, StubHandle, run_stub_in_subprocess
from longgraph.tests.conftest import QUESTION, planted
from longgraph.tests.integration.support import FACT_DEPTH, FACT_DOCUMENT_CHARS, STUB_SETTINGS

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("langgraph-dev")]

KEY = f"sk-served-secret-{uuid.uuid4().hex}"
TOKENS = {"alice": f"tok-alice-{uuid.uuid4().hex}", "bob": f"tok-bob-{uuid.uuid4().hex}"}
GRAPH = "mapreduce"


@pytest.fixture(scope="module")
def stub() -> Iterator[StubHandle]:
    with run_stub_in_subprocess(StubConfig(model="stub", api_key=KEY)) as handle:
        yield handle


USER_RUNS = 3
"""The server's ``LONGGRAPH_USER_RUNS``."""


@pytest.fixture(scope="module")
def slow_stub() -> Iterator[StubHandle]:
    """An allowed endpoint answering in 1 s: runs on it are still in flight when the next ones start."""
    with run_stub_in_subprocess(StubConfig(model="stub", api_key=KEY, latency_s=1.0)) as handle:
        yield handle


DEAD_ENDPOINT = "http://127.0.0.1:9/v1"
"""Allowed, but nothing listens there: a run naming it fails with an EndpointError."""
SENT_KEY = f"sk-client-secret-{uuid.uuid4().hex}"
"""What a client sends in a run's context (and must find refused)."""


class Capture:
    """An attacker's endpoint on loopback: records every request that reaches it (path and headers)."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        capture = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _record(self) -> None:
                capture.requests.append((self.command, self.path, dict(self.headers)))
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b'{"data": [{"id": "x", "max_model_len": 4096}]}')

            do_GET = do_POST = _record

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture(scope="module")
def capture() -> Iterator[Capture]:
    catcher = Capture()
    yield catcher
    catcher.server.shutdown()


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, stub: StubHandle, slow_stub: StubHandle, capture: Capture
) -> Iterator[LangGraphServer]:
    """The server; once it has stopped (and written its state to its folder), neither key is in any file
    it wrote: runs, threads, checkpoints, its log. Its key never reached the attacker's endpoint."""
    tokens = ",".join(f"{user}:{token}" for user, token in TOKENS.items())
    workdir = tmp_path_factory.mktemp("langgraph-dev-auth")
    env = {
        "LONGGRAPH_API_KEY": KEY, "LONGGRAPH_AUTH_TOKENS": tokens,
        "LONGGRAPH_ALLOWED_ENDPOINTS": f"{stub.base_url},{slow_stub.base_url},{DEAD_ENDPOINT}",
        "LONGGRAPH_ENDPOINT_KEYS": f"{stub.base_url}={KEY},{slow_stub.base_url}={KEY}",  # each its own key
        "LONGGRAPH_USER_RUNS": str(USER_RUNS),
        "LONGGRAPH_ALLOWED_MODELS": f"{STUB_SETTINGS['model']},m",
        "LONGGRAPH_CACHE_PATH": str(workdir / "operator-cache.sqlite"),
    }  # fmt: skip
    with run_langgraph_dev(workdir, allow_blocking=True, env=env) as running:
        yield running
    written = [path for path in workdir.rglob("*") if path.is_file()]
    assert any(path.parent.name == ".langgraph_api" for path in written), "the server stored no state"
    for path in written:
        data = path.read_bytes()
        assert KEY.encode() not in data and SENT_KEY.encode() not in data, f"a key is stored in {path}"
    assert capture.requests == [], f"the server called the attacker's endpoint: {capture.requests}"


def client(server: LangGraphServer, user: str | None, token: str | None = None) -> LangGraphClient:
    token = token or (TOKENS[user] if user else None)
    headers = {"Authorization": f"Bearer {token}"} if token else None
    return get_client(url=server.url, timeout=120, headers=headers)


def run_input(fact: str = "") -> dict[str, Any]:
    document = planted(FACT_DOCUMENT_CHARS, at=FACT_DEPTH, **({"fact": fact} if fact else {}))
    return {"question": QUESTION, "document": document}


def context_for(stub: StubHandle, **extra: Any) -> dict[str, Any]:
    return {**STUB_SETTINGS, "base_url": stub.base_url, **extra}


def status_of(call: Any) -> int:
    """The HTTP status an SDK call failed with (the test fails if it succeeded)."""
    try:
        asyncio.run(call)
    except httpx.HTTPStatusError as refused:
        return refused.response.status_code
    pytest.fail("the call was not refused")


@pytest.mark.parametrize(
    "token", [None, "tok-eve", TOKENS["alice"][:-1]], ids=["none", "unknown", "truncated"]
)
def test_a_request_without_a_valid_token_is_refused(token: str | None, server: LangGraphServer) -> None:
    async def search() -> Any:
        return await client(server, None, token).threads.search()

    assert status_of(search()) == 401


@pytest.mark.parametrize("path", ["/metrics", "/info", "/docs", "/openapi.json", "/ui/mapreduce", "/mcp"])
def test_routes_that_answer_without_a_token_are_not_served(path: str, server: LangGraphServer) -> None:
    """The meta, UI and MCP routes are off (``langgraph.json: http``): none answers with data, and none
    with a 500; ``/ok`` still answers a health check."""
    assert httpx.get(server.url + path, timeout=30).status_code in (401, 403, 404, 405)
    assert httpx.get(server.url + "/ok", timeout=30).status_code == 200


def test_each_users_threads_and_runs_are_theirs_alone(server: LangGraphServer, stub: StubHandle) -> None:
    async def alice_runs() -> tuple[str, Any]:
        alice = client(server, "alice")
        thread = await alice.threads.create()
        raw = await alice.runs.wait(thread["thread_id"], GRAPH, input=run_input(), context=context_for(stub))
        return thread["thread_id"], raw

    thread_id, raw = asyncio.run(alice_runs())
    assert "smoked plums" in GraphOutput.model_validate(raw).answer

    async def threads_seen(user: str) -> list[str]:
        return [t["thread_id"] for t in await client(server, user).threads.search(limit=100)]

    runs = asyncio.run(client(server, "alice").runs.list(thread_id))
    assert thread_id in asyncio.run(threads_seen("alice")) and len(runs) == 1
    assert thread_id not in asyncio.run(threads_seen("bob"))

    run_id = runs[0]["run_id"]

    def bob() -> LangGraphClient:  # one per event loop: each asyncio.run closes its own
        return client(server, "bob")

    assert status_of(bob().runs.list(thread_id)) == 404
    assert status_of(bob().threads.get(thread_id)) == 404
    assert status_of(bob().threads.get_state(thread_id)) == 404
    assert status_of(bob().runs.get(thread_id, run_id)) == 404
    assert status_of(bob().runs.cancel(thread_id, run_id)) == 404
    assert status_of(bob().threads.delete(thread_id)) == 404
    assert (
        asyncio.run(client(server, "alice").threads.get(thread_id))["thread_id"] == thread_id
    )  # still there


def test_two_users_runs_at_once_each_get_their_own_answer(server: LangGraphServer, stub: StubHandle) -> None:
    words = [f"zephyr{i}quartz" for i in range(6)]

    async def one(i: int) -> Any:
        user = ("alice", "bob")[i % 2]
        fact = f"The code word is {words[i]}."
        return await client(server, user).runs.wait(
            None, GRAPH, input={"question": "What is the code word?", "document": planted(FACT_DOCUMENT_CHARS, at=FACT_DEPTH, fact=fact)},
            context=context_for(stub),
        )  # fmt: skip

    async def all_runs() -> list[Any]:
        return list(await asyncio.gather(*(one(i) for i in range(len(words)))))

    for word, raw in zip(words, asyncio.run(all_runs()), strict=True):
        assert word in GraphOutput.model_validate(raw).answer


def test_each_users_requests_carry_their_own_prefix_cache_salt(
    server: LangGraphServer, stub: StubHandle
) -> None:
    """vLLM's prefix cache is shared within a user and never between two (a cached prefix answers
    faster: a timing side channel, CVE-2025-46570); the stub records each request's ``cache_salt``."""
    stub.reset()

    async def runs() -> None:
        for i, user in enumerate(("alice", "bob", "alice")):
            fact = f"The code word is salt{i}{uuid.uuid4().hex[:6]}."  # new text: no cached answer
            await client(server, user).runs.wait(
                None, GRAPH, context=context_for(stub),
                input={"question": "What is the code word?", "document": planted(FACT_DOCUMENT_CHARS, fact=fact)},
            )  # fmt: skip

    asyncio.run(runs())
    salts = [entry.get("cache_salt") for entry in stub.fault_log() if entry["status"] == 200]
    assert salts and None not in salts, salts  # every request of a served run carries one
    assert len(set(salts)) == 2, set(salts)  # alice's two runs share hers; bob's is his own


def test_a_users_runs_past_their_share_are_refused_and_another_users_run_is_answered(
    server: LangGraphServer, slow_stub: StubHandle
) -> None:
    fact = "The code word is basaltharp."
    document = planted(FACT_DOCUMENT_CHARS, at=FACT_DEPTH, fact=fact)

    async def start(user: str) -> tuple[str, str] | int:
        """A run of ``user`` started (its thread and run), or the HTTP status that refused it."""
        served = client(server, user)
        thread = await served.threads.create()
        try:
            run = await served.runs.create(
                thread["thread_id"], GRAPH, input={"question": "What is the code word?", "document": document},
                context=context_for(slow_stub),
            )  # fmt: skip
        except httpx.HTTPStatusError as refused:
            return refused.response.status_code
        return thread["thread_id"], run["run_id"]

    async def outcome(user: str, started: tuple[str, str] | int) -> str:
        if isinstance(started, int):
            return f"HTTP {started}"
        raw = await client(server, user).runs.join(*started)
        return (
            raw["__error__"]["error"]
            if isinstance(raw, dict) and "__error__" in raw
            else str(raw.get("answer"))
        )

    async def flood() -> tuple[list[str], str]:
        alice = [await start("alice") for _ in range(USER_RUNS + 2)]
        bob = await start("bob")
        outcomes = await asyncio.gather(*(outcome("alice", s) for s in alice), outcome("bob", bob))
        return list(outcomes[:-1]), outcomes[-1]

    alice, bob = asyncio.run(flood())
    refused = [o for o in alice if o in ("HTTP 429", "UserShareExceeded")]
    assert len(refused) == 2 and sum("basaltharp" in o for o in alice) == USER_RUNS, alice
    assert "basaltharp" in bob


def test_an_endpoint_key_in_a_runs_context_is_refused_and_stored_nowhere(
    server: LangGraphServer, stub: StubHandle
) -> None:
    sent = SENT_KEY

    async def attempt() -> tuple[int, str, str]:
        alice = client(server, "alice")
        thread = await alice.threads.create()
        try:
            await alice.runs.wait(
                thread["thread_id"], GRAPH, input=run_input(), context=context_for(stub, api_key=sent)
            )
        except httpx.HTTPStatusError as refused:
            status, detail = refused.response.status_code, refused.response.text
        else:
            pytest.fail("a run carrying api_key was accepted")
        seen = [
            await alice.runs.list(thread["thread_id"]),
            await alice.threads.get(thread["thread_id"]),
            await alice.threads.get_state(thread["thread_id"]),
            await alice.threads.search(limit=100),
        ]
        return status, detail, repr(seen)

    status, detail, seen = asyncio.run(attempt())
    assert status == 400 and "api_key" in detail and "LONGGRAPH_API_KEY" in detail and sent not in detail
    assert sent not in seen
    assert sent not in server.log_text()


def refusal(call: Any) -> tuple[int, str]:
    """The HTTP status and body an SDK call was refused with (the test fails if it succeeded)."""
    try:
        asyncio.run(call)
    except httpx.HTTPStatusError as refused:
        return refused.response.status_code, refused.response.text
    pytest.fail("the call was not refused")


def test_a_run_naming_another_endpoint_is_refused_and_the_key_goes_nowhere(
    server: LangGraphServer, capture: Capture
) -> None:
    for context in ({"base_url": capture.url, "model": "x"}, {"embedding_url": capture.url},
                    {"base_url": [capture.url]}, {"base_url": capture.url.replace("127.0.0.1", "localhost")}):  # fmt: skip
        status, detail = refusal(
            client(server, "alice").runs.wait(None, GRAPH, input=run_input(), context=context)
        )
        assert status == 400 and "LONGGRAPH_ALLOWED_ENDPOINTS" in detail, detail
    status, detail = refusal(
        client(server, "alice").runs.wait(
            None, GRAPH, input=run_input(), config={"configurable": {"base_url": capture.url}}
        )
    )
    assert status == 400 and "base_url" in detail
    batch = [
        {"assistant_id": GRAPH, "input": run_input(), "context": {"base_url": capture.url, "model": "x"}}
    ]
    status, detail = refusal(client(server, "alice").runs.create_batch(batch))  # type: ignore[arg-type]
    assert status == 400 and "base_url" in detail, detail
    assert capture.requests == []


@pytest.mark.parametrize(
    "setting",
    [{"cache_path": "/tmp/longgraph-hostile/cache.sqlite"}, {"tokenizer": "/etc/passwd"}, {"attention_model": "/root"},
     {"embedding_model": "/root"}, {"cache_scope": "user:bob"}, {"max_concurrency": 100000}, {"api_key": SENT_KEY}],
    ids=lambda s: next(iter(s)),
)  # fmt: skip
def test_server_settings_are_refused_in_a_run(
    setting: dict[str, Any], server: LangGraphServer, stub: StubHandle
) -> None:
    status, detail = refusal(
        client(server, "alice").runs.wait(
            None, GRAPH, input=run_input(), context=context_for(stub, **setting)
        )
    )
    assert status == 400 and next(iter(setting)) in detail and SENT_KEY not in detail
    assert not Path("/tmp/longgraph-hostile").exists()


def test_assistants_and_crons_are_no_way_around_the_policy(
    server: LangGraphServer, stub: StubHandle, capture: Capture
) -> None:
    def alice() -> LangGraphClient:
        return client(server, "alice")

    for context in ({"api_key": SENT_KEY}, {"base_url": capture.url}, {"cache_path": "/tmp/x.sqlite"}):
        assert refusal(alice().assistants.create(GRAPH, context=context))[0] == 400
        assert refusal(alice().assistants.create(GRAPH, config={"configurable": context}))[0] == 400
        assert (
            refusal(alice().crons.create(GRAPH, schedule="0 0 1 1 *", input=run_input(), context=context))[0]
            == 400
        )
    typo = refusal(alice().assistants.create(GRAPH, config={"configurable": {"max_cals": 5}}))
    assert typo[0] == 400 and "did you mean 'max_calls'" in typo[1], typo  # stored and dropped, before
    mine = asyncio.run(alice().assistants.create(GRAPH, context=context_for(stub), name="alice's"))
    assert (
        refusal(alice().assistants.update(mine["assistant_id"], context={"base_url": capture.url}))[0] == 400
    )
    assert capture.requests == []


def test_a_users_assistant_is_theirs_alone_and_the_served_graphs_everyones(
    server: LangGraphServer, stub: StubHandle
) -> None:
    mine = asyncio.run(
        client(server, "alice").assistants.create(
            GRAPH, context=context_for(stub), name="alice's", metadata={"created_by": "system"}
        )
    )
    assistant = mine["assistant_id"]

    async def seen(user: str) -> set[str]:
        return {a["assistant_id"] for a in await client(server, user).assistants.search(limit=100)}

    async def graphs_seen(user: str) -> set[str]:
        return {a["graph_id"] for a in await client(server, user).assistants.search(limit=100)}

    assert assistant in asyncio.run(seen("alice")) and assistant not in asyncio.run(seen("bob"))
    assert GRAPH in asyncio.run(graphs_seen("bob")), "the served graphs are everyone's"
    assert refusal(client(server, "bob").assistants.get(assistant))[0] == 404
    assert refusal(client(server, "bob").runs.wait(None, assistant, input=run_input()))[0] in (403, 404)
    raw = asyncio.run(client(server, "alice").runs.wait(None, assistant, input=run_input()))
    assert "smoked plums" in GraphOutput.model_validate(raw).answer


@pytest.mark.parametrize(
    ("inputs", "context", "error", "words"),
    [({"question": " ", "document": "text"}, {}, "InputError", "question"),
     (None, {"base_url": DEAD_ENDPOINT, "model": "m", "context_window": 2048, "max_retries": 0}, "EndpointError", "127.0.0.1:9"),
     # a document of its own: the server's result cache holds the other tests' answers (no call, no budget)
     ({"question": QUESTION, "document": planted(FACT_DOCUMENT_CHARS, at=0.21)}, {"max_calls": 1}, "BudgetExhausted", "max_calls"),
     (None, {"min_note_strength": 2.0}, "ConfigurationError", "min_note_strength")],
    ids=["input", "endpoint", "budget", "configuration"],
)  # fmt: skip
def test_a_served_client_gets_longgraphs_error_type_and_message(
    inputs: dict[str, Any] | None, context: dict[str, Any], error: str, words: str,
    server: LangGraphServer, stub: StubHandle,
) -> None:  # fmt: skip
    settings = context if "base_url" in context else context_for(stub, **context)
    raw = asyncio.run(
        client(server, "alice").runs.wait(
            None, GRAPH, input=inputs or run_input(), context=settings, raise_error=False
        )
    )
    assert isinstance(raw, dict) and "__error__" in raw, raw
    assert raw["__error__"]["error"] == error, raw
    assert words in raw["__error__"]["message"] and "internal error" not in raw["__error__"]["message"]
    assert KEY not in repr(raw)


@pytest.mark.parametrize(
    "command", [{"resume": "yes"}, {"update": {"question": QUESTION}}, {"goto": "plan_records"}]
)
def test_a_run_with_a_command_is_refused_with_the_reason(
    command: dict[str, Any], server: LangGraphServer, stub: StubHandle
) -> None:
    """The graphs never pause for input; LangGraph failed such a run on a new thread with a bare
    TypeError from its own graph code."""
    alice = client(server, "alice")

    async def run() -> Any:
        thread = await alice.threads.create()
        return await alice.runs.wait(thread["thread_id"], GRAPH, command=command, context=context_for(stub))  # type: ignore[arg-type]

    status, detail = refusal(run())
    assert status == 400 and "not a command" in detail, detail


def test_an_allowed_endpoint_with_a_trailing_newline_is_a_configuration_error(
    server: LangGraphServer, stub: StubHandle
) -> None:
    """It passed the allow-list (compared normalised) and failed inside the HTTP library as an
    internal error."""
    settings = context_for(stub, base_url=stub.base_url + "\n")
    raw = asyncio.run(
        client(server, "alice").runs.wait(None, GRAPH, input=run_input(), context=settings, raise_error=False)
    )
    assert isinstance(raw, dict) and raw.get("__error__", {}).get("error") == "ConfigurationError", raw
    assert "base_url" in raw["__error__"]["message"] and "control characters" in raw["__error__"]["message"]
