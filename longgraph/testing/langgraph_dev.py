"""Run ``langgraph dev`` on loopback, offline, for tests and benchmarks, and stop it cleanly.

What it takes care of, each learnt the hard way:

* **Offline and local**: ``LANGGRAPH_CLI_NO_ANALYTICS=1``, ``--no-browser``, ``--host 127.0.0.1``; no
  LangSmith key is needed.
* **The port**: a free one is chosen first, but ``langgraph dev`` silently moves to another when it
  is taken meanwhile, so the URL is read from its own "API:" line.
* **No hot reload** (``--no-reload``): the server watches its working folder and restarts on any
  change, which in a shared checkout (or when a test writes files) kills runs mid-way.
* **Its files stay out of the repository**: it writes ``.langgraph_api/`` into its working folder, so
  it runs in a scratch folder with a copy of ``langgraph.json`` whose graph paths are made absolute.
* **Stopping**: SIGINT to the process started (its graceful path), then SIGKILL if it lingers.

Blocking calls in graph code are refused by ``langgraph dev`` (BlockBuster) unless
``allow_blocking=True``; the default keeps that check on, as a user's ``langgraph dev`` would.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

__all__ = ["LangGraphServer", "run_langgraph_dev", "served_config"]

_API_LINE = re.compile(r"API:\s*(http://[^\s]+)")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass
class LangGraphServer:
    """A running ``langgraph dev``: its URL, process and log file (stdout and stderr together)."""

    url: str
    process: subprocess.Popen[bytes]
    log_path: Path
    workdir: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    def log_text(self) -> str:
        return _ANSI.sub("", self.log_path.read_text(encoding="utf-8", errors="replace"))


def served_config(config_path: Path) -> dict[str, Any]:
    """``langgraph.json`` with graph paths, the auth handler's, dependencies and env file made absolute.

    So the server can run in any working folder (and write its state there, not into the project).
    """
    root = config_path.resolve().parent
    config: dict[str, Any] = json.loads(config_path.read_text(encoding="utf-8"))

    def absolute(path: str) -> str:
        return str((root / path).resolve()) if path.startswith(".") else path

    def absolute_spec(spec: str) -> str:  # FILE:ATTRIBUTE
        file, _, attribute = spec.rpartition(":")
        return f"{absolute(file)}:{attribute}" if file else spec

    config["dependencies"] = [absolute(dep) for dep in config.get("dependencies", ["."])]
    config["graphs"] = {name: absolute_spec(spec) for name, spec in config.get("graphs", {}).items()}
    if isinstance(config.get("auth"), dict) and "path" in config["auth"]:
        config["auth"] = {**config["auth"], "path": absolute_spec(config["auth"]["path"])}
    if isinstance(config.get("env"), str):
        config["env"] = absolute(config["env"])
    return config


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
    return port


def _wait_for_url(server_log: Path, process: subprocess.Popen[bytes], timeout_s: float) -> str:
    deadline = time.monotonic() + timeout_s
    url: str | None = None
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        text = _ANSI.sub("", server_log.read_text(encoding="utf-8", errors="replace"))
        if url is None and (match := _API_LINE.search(text)):
            url = match.group(1).rstrip("/")
        if url is not None:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/ok", timeout=2.0).status_code == 200:
                    return url
        time.sleep(0.1)
    tail = _ANSI.sub("", server_log.read_text(encoding="utf-8", errors="replace"))[-3000:]
    raise RuntimeError(
        f"langgraph dev did not come up within {timeout_s:.0f} s (exit code {process.poll()}):\n{tail}"
    )


def stop(process: subprocess.Popen[bytes], *, grace_s: float = 10.0) -> None:
    """SIGINT (the server's graceful shutdown), then SIGKILL if it is still there after ``grace_s``."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


@contextlib.contextmanager
def run_langgraph_dev(
    workdir: Path,
    *,
    config_path: Path | None = None,
    host: str = "127.0.0.1",
    port: int | None = None,
    n_jobs_per_worker: int = 10,
    allow_blocking: bool = False,
    env: Mapping[str, str] | None = None,
    startup_timeout_s: float = 120.0,
) -> Iterator[LangGraphServer]:
    """Serve the graphs of ``config_path`` (default: the project's ``langgraph.json``) from ``workdir``.

    ``n_jobs_per_worker`` is how many runs execute at once (the rest queue). ``env`` is added to this
    process's environment: endpoint settings for every run go there (``LONGGRAPH_BASE_URL``, ...).
    """
    if config_path is None:
        config_path = Path(__file__).resolve().parents[2] / "langgraph.json"
    workdir.mkdir(parents=True, exist_ok=True)
    config_file = workdir / "langgraph.json"
    config_file.write_text(json.dumps(served_config(config_path), indent=2), encoding="utf-8")
    command = [
        sys.executable,
        "-m",
        "langgraph_cli",
        "dev",
        "--config",
        str(config_file),
        "--host",
        host,
        "--port",
        str(port or _free_port(host)),
        "--no-browser",
        "--no-reload",
        "--n-jobs-per-worker",
        str(n_jobs_per_worker),
    ]
    if allow_blocking:
        command.append("--allow-blocking")
    full_env = {**os.environ, "LANGGRAPH_CLI_NO_ANALYTICS": "1", "PYTHONUNBUFFERED": "1", **(env or {})}
    log_path = workdir / "server.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command, cwd=workdir, env=full_env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
    try:
        url = _wait_for_url(log_path, process, startup_timeout_s)
        yield LangGraphServer(url=url, process=process, log_path=log_path, workdir=workdir)
    finally:
        stop(process)
