"""A local OpenAI-compatible chat server with a deterministic "oracle" model and fault injection.

Why it exists: the graphs talk to real OpenAI-compatible endpoints over HTTP, and their retry, timeout,
fallback and checkpoint logic only gets exercised honestly by a real HTTP peer that misbehaves on purpose.
A real model is slow and non-deterministic; this stub answers in microseconds, deterministically, from the
text it is shown, and injects errors, hangs, malformed output, rate limits and process death on a
reproducible schedule (a seed plus the request counter).

By concern: ``testing/oracle.py`` (the deterministic "model"), ``testing/answers.py`` (answers in the
requested shape), ``testing/faults.py`` (settings and fault schedule), ``testing/stub_app.py`` (the
HTTP app). This module serves it, three ways:

* ``python -m longgraph.testing.stub_server --port 0 ...`` prints ``STUB_URL=http://127.0.0.1:PORT/v1``;
* :func:`run_stub_in_subprocess` wraps that in a context manager (needed for ``exit_after``, which kills
  the process for real);
* :func:`run_stub_in_thread` serves from a background thread of the current process (fast, for tests).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import queue
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from starlette.applications import Starlette

from longgraph.testing.answers import HALLUCINATION, build_completion_content, requested_labels
from longgraph.testing.faults import Fault, StubConfig, decide_fault
from longgraph.testing.oracle import (
    FORMAT_HEADER,
    NO_INFORMATION,
    TEXT_MARKERS,
    extract_question_and_text,
    oracle_answer,
)
from longgraph.testing.stub_app import EXIT_AFTER_RETURN_CODE, STAGE_HEADER, _hard_exit, create_app

__all__ = [
    "EXIT_AFTER_RETURN_CODE",
    "FORMAT_HEADER",
    "HALLUCINATION",
    "NO_INFORMATION",
    "STAGE_HEADER",
    "TEXT_MARKERS",
    "Fault",
    "StubConfig",
    "StubHandle",
    "build_completion_content",
    "create_app",
    "decide_fault",
    "extract_question_and_text",
    "main",
    "oracle_answer",
    "requested_labels",
    "run_stub_in_subprocess",
    "run_stub_in_thread",
]

STUB_SETTINGS: dict[str, Any] = {
    "model": "stub",
    "context_window": 2048,
    "max_output_tokens": 256,
    "temperature": 0.0,
    "structured_output": "json_schema",
}
"""Run settings for the stub: small windows (many chunks from a short document), deterministic
sampling, the stub's model name. Shared by the integration tests and the benchmarks."""


def stub_settings(base_url: str, **overrides: Any) -> dict[str, Any]:
    """:data:`STUB_SETTINGS` for the stub at ``base_url``, with ``overrides``."""
    return {**STUB_SETTINGS, "base_url": base_url, **overrides}


URL_LINE_PREFIX = "STUB_URL="


def _bind(host: str, port: int) -> socket.socket:
    """Bind before uvicorn starts so port 0 resolves to a known free port we can print."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.set_inheritable(True)
    return sock


def _base_url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/v1"


def _uvicorn_config(app: Starlette, *, in_thread: bool) -> uvicorn.Config:
    return uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        # A thread must not reconfigure the host process's logging.
        log_config=None if in_thread else uvicorn.config.LOGGING_CONFIG,
        limit_concurrency=100_000,
        backlog=4096,
        timeout_keep_alive=30,
        timeout_graceful_shutdown=1,
        lifespan="off",
    )


def _make_server(
    config: StubConfig | None, *, on_exit: Callable[[], None] | None, in_thread: bool
) -> uvicorn.Server:
    """A uvicorn server around a fresh app; ``on_exit=None`` makes ``exit_after`` stop the server."""
    holder: list[uvicorn.Server] = []

    def stop_server() -> None:
        holder[0].should_exit = True

    def stopping() -> bool:
        return bool(holder and holder[0].should_exit)

    app = create_app(config, on_exit=on_exit or stop_server, is_stopping=stopping)
    server = uvicorn.Server(_uvicorn_config(app, in_thread=in_thread))
    holder.append(server)
    return server


_CLI_FLAGS: tuple[tuple[str, str], ...] = (
    ("model", "--model"),
    ("latency_s", "--latency"),
    ("error_rate", "--error-rate"),
    ("timeout_rate", "--timeout-rate"),
    ("hang_s", "--hang"),
    ("malformed_rate", "--malformed-rate"),
    ("rate_limit_every", "--rate-limit-every"),
    ("retry_after_s", "--retry-after"),
    ("die_after", "--die-after"),
    ("exit_after", "--exit-after"),
    ("seed", "--seed"),
    ("api_key", "--api-key"),
    ("hallucinate", "--hallucinate"),
    ("max_model_len", "--max-model-len"),
    ("capacity", "--capacity"),
    ("over_capacity", "--over-capacity"),
    ("fail_containing", "--fail-containing"),
)
"""StubConfig field ↔ CLI flag; one table so the parser and the subprocess launcher cannot drift apart."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m longgraph.testing.stub_server",
        description="OpenAI-compatible stub server with a deterministic oracle and fault injection.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port; 0 picks a free one (default)")
    kinds: dict[str, Callable[[str], Any]] = {
        "model": str,
        "rate_limit_every": int,
        "die_after": int,
        "exit_after": int,
        "seed": int,
        "api_key": str,
        "max_model_len": int,
        "capacity": int,
        "over_capacity": str,
        "fail_containing": str,
        "hallucinate": lambda value: value.strip().lower() in ("1", "true", "yes"),
    }
    for name, flag in _CLI_FLAGS:
        info = StubConfig.model_fields[name]
        parser.add_argument(flag, dest=name, type=kinds.get(name, float), default=None, help=info.description)
    return parser


def _config_to_argv(config: StubConfig) -> list[str]:
    """The flags that start a stub process with ``config``; a setting no flag carries is an error, not
    a stub that silently runs without it (a capacity dropped here made a fairness test pass for the
    wrong reason)."""
    argv: list[str] = []
    defaults = StubConfig()
    flags = dict(_CLI_FLAGS)
    for name in StubConfig.model_fields:
        value = getattr(config, name)
        if value is None or value == getattr(defaults, name):
            continue
        if name not in flags:
            raise ValueError(f"stub setting {name!r} has no command-line flag: configure it after start")
        argv += [flags[name], str(value)]
    return argv


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point: serve until SIGTERM/SIGINT, printing ``STUB_URL=...`` once listening."""
    args = _parser().parse_args(argv)
    values = {name: getattr(args, name) for name, _ in _CLI_FLAGS if getattr(args, name) is not None}
    config = StubConfig.model_validate(values)
    sock = _bind(args.host, args.port)
    server = _make_server(config, on_exit=_hard_exit, in_thread=False)

    async def serve() -> None:
        task = asyncio.create_task(server.serve(sockets=[sock]))
        # uvicorn exposes no "listening" event, only this flag.
        while not server.started and not task.done():  # noqa: ASYNC110
            await asyncio.sleep(0.01)
        if server.started:
            print(f"{URL_LINE_PREFIX}{_base_url(sock)}", flush=True)
        await task

    with asyncio.Runner(loop_factory=server.config.get_loop_factory()) as runner:
        runner.run(serve())
    return 0


@dataclass
class StubHandle:
    """A running stub: where to send requests, plus its control plane."""

    base_url: str
    """OpenAI base URL, ending in ``/v1``."""
    pid: int
    process: subprocess.Popen[str] | None = None
    _client: httpx.Client = field(default_factory=lambda: httpx.Client(timeout=10.0), repr=False)

    @property
    def root_url(self) -> str:
        return self.base_url.removesuffix("/v1")

    def stats(self) -> dict[str, Any]:
        response = self._client.get(f"{self.root_url}/stub/stats")
        response.raise_for_status()
        result: dict[str, Any] = response.json()
        return result

    def fault_log(self) -> list[dict[str, Any]]:
        """Per-request (seq, fault, status, stage) records since the last reset, oldest first."""
        response = self._client.get(f"{self.root_url}/stub/log")
        response.raise_for_status()
        log: list[dict[str, Any]] = response.json()["log"]
        return log

    def configure(self, **changes: Any) -> dict[str, Any]:
        """Update fault settings at runtime; returns the full new config. Counters are kept."""
        response = self._client.post(f"{self.root_url}/stub/config", json=changes)
        response.raise_for_status()
        result: dict[str, Any] = response.json()
        return result

    def reset(self) -> None:
        """Zero the counters and the request sequence, so the fault schedule restarts from request 1."""
        self._client.post(f"{self.root_url}/stub/reset").raise_for_status()

    def close(self) -> None:
        self._client.close()


def _read_url_line(process: subprocess.Popen[str], timeout_s: float) -> str:
    """Wait for the ``STUB_URL=`` line, then keep draining stdout so the child never blocks on a pipe."""
    assert process.stdout is not None
    stdout = process.stdout
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        for line in stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, name="stub-stdout", daemon=True).start()
    deadline = time.monotonic() + timeout_s
    while (remaining := deadline - time.monotonic()) > 0:
        try:
            line = lines.get(timeout=remaining)
        except queue.Empty:
            break
        if line is None:
            break
        if line.startswith(URL_LINE_PREFIX):
            return line[len(URL_LINE_PREFIX) :].strip()
    raise RuntimeError(
        f"stub server did not report its URL within {timeout_s} s (exit code {process.poll()})"
    )


@contextlib.contextmanager
def run_stub_in_subprocess(
    config: StubConfig | None = None, *, host: str = "127.0.0.1", startup_timeout_s: float = 30.0
) -> Iterator[StubHandle]:
    """Run the stub as ``python -m longgraph.testing.stub_server`` and yield its handle.

    A separate process is the only honest way to test ``exit_after`` (the process really dies) and keeps
    the stub's event loop off the caller's CPU budget. On exit: SIGTERM, then SIGKILL after 5 s.
    """
    cmd = [sys.executable, "-m", "longgraph.testing.stub_server", "--host", host, "--port", "0"]
    cmd += _config_to_argv(config or StubConfig())
    env = dict(os.environ)
    # Make the package importable even before an editable install exists (source checkout).
    source_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (source_root, env.get("PYTHONPATH", "")) if p)
    process = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
    handle: StubHandle | None = None
    try:
        handle = StubHandle(
            base_url=_read_url_line(process, startup_timeout_s), pid=process.pid, process=process
        )
        yield handle
    finally:
        if handle is not None:
            handle.close()
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)
        if process.stdout is not None:
            process.stdout.close()


@contextlib.contextmanager
def run_stub_in_thread(
    config: StubConfig | None = None, *, host: str = "127.0.0.1", startup_timeout_s: float = 10.0
) -> Iterator[StubHandle]:
    """Serve the stub from a daemon thread of this process and yield its handle.

    Cheapest start-up for tests. ``exit_after`` here stops the server (later connections are refused)
    instead of killing the process, which would take the test runner with it.
    """
    sock = _bind(host, 0)
    server = _make_server(config, on_exit=None, in_thread=True)
    errors: list[BaseException] = []

    def target() -> None:
        try:
            server.run(sockets=[sock])
        except BaseException as exc:  # surfaced to the caller below
            errors.append(exc)

    thread = threading.Thread(target=target, name="stub-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + startup_timeout_s
    while not server.started:
        if errors or not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            raise RuntimeError(f"stub server thread failed to start: {errors[:1]}")
        time.sleep(0.005)
    handle = StubHandle(base_url=_base_url(sock), pid=os.getpid())
    try:
        yield handle
    finally:
        handle.close()
        server.should_exit = True
        thread.join(timeout=10)
        if thread.is_alive():
            server.force_exit = True
            thread.join(timeout=5)
        with contextlib.suppress(OSError):
            sock.close()


if __name__ == "__main__":
    raise SystemExit(main())
