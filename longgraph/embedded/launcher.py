"""Starting the embedded vLLM server detached in its own session, waiting for it, stopping it."""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from longgraph.embedded.catalog import MODEL_ENV, chosen_model
from longgraph.embedded.common import (
    _SERVER_MODULE,
    LOG_FILE,
    EmbeddedServerError,
    _file_lock,
    _log_tail,
    _offline_env,
    _resolve_cache_dir,
    logger,
)
from longgraph.embedded.convert import _require_modules
from longgraph.embedded.dtype import choose_dtype
from longgraph.embedded.install import add_model
from longgraph.embedded.registry import (
    ServerInfo,
    _answers,
    _group_members,
    _is_server_process,
    _read_state,
    _remove_state,
    _write_state,
    pid_alive,
)


@dataclass(frozen=True)
class ServerSettings:
    """How to run vLLM; the defaults are the recipe seen to work on a 2-core, 24 GB CPU machine.

    ``enforce_eager`` skips graph compilation: ready in ~25 s instead of ~90 s on such a machine.
    ``kv_cache_space_gb`` is vLLM's CPU KV-cache size (``VLLM_CPU_KVCACHE_SPACE``).
    ``dtype`` ``auto``: bfloat16 where this CPU computes it fast, else float32
    (:mod:`longgraph.embedded.dtype`); any vLLM dtype name is passed through.
    """

    model_name: str | None = None
    """A catalogued model (``longgraph.embedded.catalog``); None: ``$LONGGRAPH_EMBEDDED_MODEL`` or the
    default. It is installed on first start and is the name the server answers to."""
    max_model_len: int = 8192
    dtype: str = "auto"
    kv_cache_space_gb: int = 2
    enforce_eager: bool = True
    prefix_caching: bool = True
    """vLLM's prefix cache: a prompt whose start was computed before reuses its KV. Off for exact
    reruns: measured on the embedded model (``evals/bench/reproducibility.py``), a cache hit gives other
    bfloat16 sums than a miss, so a question's first run read 5 of 6 documents' chunks differently from
    its reruns; with the cache off and one request at a time, 6 of 6 agreed, at 1.22x the wall time."""
    extra_args: tuple[str, ...] = ()
    extra_env: Mapping[str, str] = field(default_factory=dict)
    python: str | None = None


def _cpu_list() -> str:
    """CPUs this process may run on, as a vLLM bind list (``0-1``): vLLM's ``auto`` leaves one idle."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        cpus = list(range(os.cpu_count() or 1))
    ranges: list[str] = []
    start = prev = cpus[0]
    for cpu in [*cpus[1:], None]:
        if cpu is not None and cpu == prev + 1:
            prev = cpu
            continue
        ranges.append(f"{start}-{prev}" if prev != start else str(start))
        if cpu is not None:
            start = prev = cpu
    return ",".join(ranges)


def _free_port(host: str) -> int:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _port_in_use(host: str, port: int) -> bool:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return True
    return False


def _client_host(host: str) -> str:
    """The address clients use: a wildcard bind is reached via loopback; IPv6 needs brackets."""
    if host in ("", "0.0.0.0"):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host


def server_command(
    model_path: Path, host: str, port: int, settings: ServerSettings, python: str | None = None
) -> list[str]:
    """The vLLM command line: started as a module because the ``vllm`` console script cannot find
    its own metadata under the ``vllm-cpu`` distribution name."""
    cmd = [
        python or settings.python or sys.executable,
        "-m",
        _SERVER_MODULE,
        "--model",
        str(model_path),
        "--served-model-name",
        chosen_model(settings.model_name).name,
        "--host",
        host,
        "--port",
        str(port),
        "--dtype",
        settings.dtype,
        "--max-model-len",
        str(settings.max_model_len),
    ]
    if settings.enforce_eager:
        cmd.append("--enforce-eager")
    if not settings.prefix_caching:
        cmd.append("--no-enable-prefix-caching")
    # Compact JSON under constrained decoding: without this SmolLM2 spends a third of its output on
    # whitespace between keys and values ('{\n\n"answer"\n\n: ...').
    cmd += [
        "--structured-outputs-config",
        json.dumps({"backend": "xgrammar", "disable_any_whitespace": True}),
    ]
    cmd.extend(settings.extra_args)
    return cmd


def server_env(settings: ServerSettings, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """Environment for vLLM: offline, CPU KV-cache size, OpenMP bound to all our CPUs.

    A ``VLLM_CPU_*`` value already in the environment wins, so a user can tune it without code.
    """
    env = _offline_env(base)
    env.setdefault("VLLM_CPU_KVCACHE_SPACE", str(settings.kv_cache_space_gb))
    env.setdefault("VLLM_CPU_OMP_THREADS_BIND", _cpu_list())
    env.update(settings.extra_env)
    return env


# The launcher: starts the server in its own session with output to the log file, prints its pid
# and exits, so the server is reparented away from us. argv = [log_path, *command].
_LAUNCH_SCRIPT = """
import subprocess, sys
with open(sys.argv[1], "ab") as log:
    proc = subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True, close_fds=True)
print(proc.pid, flush=True)
proc.returncode = 0  # we never wait for it: keep Popen.__del__ quiet
"""


def _launch_detached(cmd: Sequence[str], env: Mapping[str, str], log_path: Path, cwd: Path) -> int:
    launcher = subprocess.run(
        [sys.executable, "-c", _LAUNCH_SCRIPT, str(log_path), *cmd],
        env=dict(env),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    try:
        return int(launcher.stdout.strip())
    except ValueError:
        raise EmbeddedServerError(
            f"could not launch the model server: {launcher.stderr.strip() or 'launcher gave no pid'}"
        ) from None


def _wait_ready(info: ServerInfo, timeout: float) -> None:
    """Poll ``/v1/models`` until it answers; fail fast, with the log's tail, if the process dies."""
    deadline = time.monotonic() + timeout
    while True:
        if _answers(info.base_url):
            return
        if not pid_alive(info.pid):
            raise EmbeddedServerError(
                f"the model server exited during start-up (log: {info.log_path})",
                log_path=info.log_path,
                log_tail=_log_tail(info.log_path),
            )
        if time.monotonic() > deadline:
            raise EmbeddedServerError(
                f"the model server did not answer within {timeout:.0f} s "
                f"(pid {info.pid}, log: {info.log_path})",
                log_path=info.log_path,
                log_tail=_log_tail(info.log_path),
            )
        time.sleep(1.0)


def _start_locked(
    root: Path, port: int | None, host: str, settings: ServerSettings, startup_timeout: float
) -> ServerInfo:
    """Start the server; the caller holds the server lock."""
    existing = _read_state(root)
    if existing is not None and _is_server_process(existing.pid):
        raise EmbeddedServerError(
            f"a model server is already running at {existing.base_url} (pid {existing.pid}); "
            "use it or stop it first (longgraph model stop)"
        )
    _require_modules("vllm")
    model = chosen_model(settings.model_name)
    model_path = add_model(model, root)
    if port is None:
        port = _free_port(host)
    elif _port_in_use(host, port):
        raise EmbeddedServerError(f"port {port} on {host} is already in use")
    log_path = root / LOG_FILE
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log_path.write_text("")  # one log per run: a stale tail from an older run would mislead
    choice = choose_dtype(settings.dtype, settings.python or sys.executable)
    logger.info("model server dtype %s: %s", choice.dtype, choice.reason)
    cmd = server_command(model_path, host, port, replace(settings, dtype=choice.dtype))
    logger.info("starting the model server: %s", " ".join(cmd))
    started = time.monotonic()
    pid = _launch_detached(cmd, server_env(settings), log_path, root)
    info = ServerInfo(
        base_url=f"http://{_client_host(host)}:{port}/v1",
        model=model.name,
        pid=pid,
        port=port,
        host=host,
        tokenizer_path=model_path,
        log_path=log_path,
        started_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        dtype=choice.dtype,
        dtype_reason=choice.reason,
        prefix_caching=settings.prefix_caching,
    )
    _write_state(root, info)  # recorded before it is ready, so `stop` can end a server still loading
    try:
        _wait_ready(info, startup_timeout)
    except BaseException:
        _terminate_group(pid, grace=10.0)
        _remove_state(root, pid)
        raise
    ready = ServerInfo(**{**asdict(info), "startup_seconds": round(time.monotonic() - started, 1)})
    _write_state(root, ready)
    logger.info("model server ready at %s in %.1f s (pid %d)", ready.base_url, ready.startup_seconds, pid)
    return ready


def start_server(
    port: int | None = None,
    host: str = "127.0.0.1",
    *,
    cache_dir: Path | None = None,
    settings: ServerSettings | None = None,
    startup_timeout: float = 300.0,
) -> ServerInfo:
    """Start a detached vLLM server (installing the model first if needed) and wait until it answers.

    ``port=None`` picks a free port. Raises :class:`EmbeddedServerError` if one is already running for
    this cache dir, if the process exits during start-up (with its log's tail) or if it does not answer
    within ``startup_timeout`` seconds (it is then stopped).
    """
    root = _resolve_cache_dir(cache_dir)
    with _file_lock(root / "server.lock", startup_timeout + 3600.0, "starting the model server"):
        return _start_locked(root, port, host, settings or ServerSettings(), startup_timeout)


def ensure_running(
    port: int | None = None,
    host: str = "127.0.0.1",
    *,
    cache_dir: Path | None = None,
    settings: ServerSettings | None = None,
    startup_timeout: float = 300.0,
) -> tuple[ServerInfo, bool]:
    """Return the running server, or start one; the flag is True when it was started by this call.

    A recorded server that is alive but not answering yet (still loading, started elsewhere) is
    waited for rather than started twice. ``port``/``host``/``settings`` only apply to a new server.
    A model chosen (``settings.model_name`` or ``$LONGGRAPH_EMBEDDED_MODEL``) other than the one
    running is an error, never a silent swap: the run's profile and results name the model.
    """
    root = _resolve_cache_dir(cache_dir)
    settings = settings or ServerSettings()
    wanted = settings.model_name or os.environ.get(MODEL_ENV)
    with _file_lock(root / "server.lock", startup_timeout + 3600.0, "starting the model server"):
        info = _read_state(root)
        if info is not None and _is_server_process(info.pid):
            if wanted and info.model != wanted:
                raise EmbeddedServerError(
                    f"the model server at {info.base_url} serves {info.model}, not {wanted}; "
                    "stop it first (longgraph model stop)"
                )
            _wait_ready(info, startup_timeout)
            return info, False
        if info is not None:
            _remove_state(root, info.pid)
        return _start_locked(root, port, host, settings, startup_timeout), True


def _terminate_group(pgid: int, grace: float) -> None:
    """SIGTERM the process group, wait up to ``grace`` seconds, then SIGKILL what is left."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            pid_alive(pgid)  # reaps it if it is our child
            if not _group_members(pgid):
                return
            time.sleep(0.2)
        if sig is signal.SIGTERM:
            logger.warning("model server (pgid %d) ignored SIGTERM for %.0f s; killing it", pgid, grace)


def stop_server(cache_dir: Path | None = None, *, grace: float = 30.0) -> bool:
    """Stop the recorded server (its whole process group) and remove the state file.

    Returns True if a server was stopped, False if none was running.
    """
    root = _resolve_cache_dir(cache_dir)
    info = _read_state(root)
    if info is None:
        return False
    stopped = False
    if _is_server_process(info.pid):
        logger.info("stopping the model server (pid %d)", info.pid)
        _terminate_group(info.pid, grace)
        stopped = True
    _remove_state(root, info.pid)
    return stopped
