"""The API key never shows: not in logs (DEBUG, including httpx/httpcore/openai), results, stream
events, error messages, tracebacks, checkpoints or the result cache.

Runs use a distinctive key against the stub: succeeding, failing with 5xx, refused connections, and a
401 whose body echoes the presented key (as some providers do), the worst case for error messages.
"""

from __future__ import annotations

import asyncio
import logging
import traceback
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.types import StreamMode

from longgraph.api import aask, run_config
from longgraph.errors import ConfigurationError, EndpointError, LonggraphError
from longgraph.state.context import Context, coerce_context
from longgraph.testing.stub_server import StubConfig, run_stub_in_thread
from longgraph.tests.conftest import QUESTION, planted
from longgraph.tests.integration.support import (
    FACT_DEPTH,
    FACT_DOCUMENT_CHARS,
    STUB_SETTINGS,
    run_longgraph,
    served_strategies,
    stub_cli_args,
)

pytestmark = pytest.mark.integration

KEY = f"sk-longgraph-secret-{uuid.uuid4().hex}"
DOCUMENT = planted(FACT_DOCUMENT_CHARS, at=FACT_DEPTH)


@pytest.fixture(autouse=True)
def debug_logs(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """Everything at DEBUG, the HTTP stack included (they propagate to the root logger)."""
    caplog.set_level(logging.DEBUG)
    for name in ("httpx", "httpcore", "openai", "langchain", "langgraph", "longgraph"):
        caplog.set_level(logging.DEBUG, logger=name)
    yield caplog


def _everything(caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str], *objects: Any) -> str:
    """All text a user or an operator could see: log records (formatted, with tracebacks), captured
    stdout/stderr, and the given objects (repr and, for exceptions, the whole formatted chain)."""
    parts = [caplog.text]
    parts += [record.getMessage() + repr(record.args) for record in caplog.records]
    captured = capfd.readouterr()
    parts += [captured.out, captured.err]
    for obj in objects:
        parts.append(repr(obj))
        if isinstance(obj, BaseException):
            parts += traceback.format_exception(obj)
    return "\n".join(parts)


def _ask(base_url: str, **settings: Any) -> Any:
    merged = {**STUB_SETTINGS, "base_url": base_url, "api_key": KEY, **settings}
    return asyncio.run(aask(QUESTION, DOCUMENT, start_embedded=False, **merged))


@pytest.mark.parametrize("strategy", served_strategies(heavy=True))
def test_successful_run_results_and_every_stream_mode(
    strategy: str, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Every graph, heavy ones included (two runs each): every stream mode, the progress events, the
    result, the cache and the checkpoint of a successful run are free of the key."""
    from longgraph.strategies import build_strategy

    events: list[Any] = []
    with run_stub_in_thread(StubConfig()) as stub:
        context = coerce_context({**STUB_SETTINGS, "base_url": stub.base_url, "api_key": KEY})
        graph = build_strategy(strategy)

        async def stream() -> None:
            modes: list[StreamMode] = [
                "values",
                "updates",
                "custom",
                "messages",
                "debug",
                "tasks",
                "checkpoints",
            ]
            async for event in graph.astream(
                {"question": QUESTION, "document": DOCUMENT}, run_config(context), context=context,
                stream_mode=modes, subgraphs=True,
            ):  # fmt: skip
                events.append(event)

        asyncio.run(stream())
        progress: list[Any] = []
        result = _ask(
            stub.base_url, strategy=strategy, on_progress=progress.append,
            cache_path=str(tmp_path / "cache.sqlite"), checkpoint_path=tmp_path / "ck.sqlite", thread_id="t",
        )  # fmt: skip
    assert "smoked plums" in result.answer
    seen = _everything(caplog, capfd, events, progress, result.model_dump_json(), context)
    assert caplog.records, "nothing was logged: the check would prove nothing"
    assert KEY not in seen
    for file in tmp_path.iterdir():
        assert KEY.encode() not in file.read_bytes(), f"the key is stored in {file.name}"


# The failures below happen in the endpoint client, before or instead of any graph-specific step: the
# default strategy stands for every graph.


def test_failing_endpoint_error_and_its_chain(
    caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    with run_stub_in_thread(StubConfig(error_rate=1.0)) as stub, pytest.raises(EndpointError) as failure:
        _ask(stub.base_url, max_retries=1)
    assert KEY not in _everything(caplog, capfd, failure.value)


def test_refused_connection_error_and_its_chain(
    caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(EndpointError) as failure:
        _ask("http://127.0.0.1:9/v1", max_retries=0)
    assert KEY not in _everything(caplog, capfd, failure.value)


@pytest.mark.parametrize("model", ["stub", None], ids=["model-set", "model-looked-up"])
def test_401_that_echoes_the_key_is_scrubbed(
    model: str | None, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    with run_stub_in_thread(StubConfig(api_key="the-right-key")) as stub:
        with pytest.raises(LonggraphError) as failure:
            _ask(stub.base_url, model=model, max_retries=0)
        assert stub.stats()["by_status"].get("401", 0) > 0
    assert isinstance(failure.value, ConfigurationError | EndpointError)
    assert KEY not in _everything(caplog, capfd, failure.value)


def test_context_never_shows_the_key() -> None:
    context = Context(api_key=KEY, base_url="http://127.0.0.1:9/v1", model="m")
    assert KEY not in repr(context) and KEY not in str(context.public_dict())


@pytest.mark.parametrize("debug", [False, True], ids=["plain", "debug"])
def test_cli_401_with_key_from_the_environment(debug: bool, tmp_path: Path) -> None:
    document = tmp_path / "doc.txt"
    document.write_text(DOCUMENT, encoding="utf-8")
    with run_stub_in_thread(StubConfig(api_key="the-right-key")) as stub:
        args = ["ask", str(document), "-q", QUESTION, "--retries", "0", *stub_cli_args(stub.base_url)]
        done = run_longgraph(
            [*args, "--debug"] if debug else args, home=tmp_path, env={"LONGGRAPH_API_KEY": KEY}
        )
    assert done.returncode != 0
    assert "API key" in done.stderr
    assert KEY not in done.stdout and KEY not in done.stderr


def test_cli_success_with_debug_logging(tmp_path: Path) -> None:
    document = tmp_path / "doc.txt"
    document.write_text(DOCUMENT, encoding="utf-8")
    with run_stub_in_thread(StubConfig()) as stub:
        args = ["ask", str(document), "-q", QUESTION, "--json", "--debug", *stub_cli_args(stub.base_url)]
        done = run_longgraph(args, home=tmp_path, env={"LONGGRAPH_API_KEY": KEY})
    assert done.returncode == 0, done.stderr[-2000:]
    assert "DEBUG" in done.stderr  # the check below covers real debug output
    assert KEY not in done.stdout and KEY not in done.stderr
    for file in tmp_path.iterdir():
        if file.is_file():
            assert KEY.encode() not in file.read_bytes(), f"the key is stored in {file.name}"
