"""The record of a running embedded server (its state file) and the checks that it is alive and ours."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx

from longgraph.embedded.common import _SERVER_MODULE, STATE_FILE, _resolve_cache_dir, logger


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
    dtype: str | None = None
    """What the server computes in, and why (``longgraph.embedded.dtype``)."""
    dtype_reason: str | None = None
    prefix_caching: bool | None = None
    """Whether vLLM reuses the KV of prompt prefixes it has seen (None: recorded before this was)."""

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
            dtype=data.get("dtype"),
            dtype_reason=data.get("dtype_reason"),
            prefix_caching=data.get("prefix_caching"),
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


def _answers(base_url: str, timeout: float = 3.0) -> bool:
    """True when ``GET {base_url}/models`` answers 200: the server is up and has loaded its model."""
    try:
        return httpx.get(f"{base_url}/models", timeout=timeout).status_code == 200
    except httpx.HTTPError:
        return False


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


def recorded_server(cache_dir: Path | None = None) -> ServerInfo | None:
    """The state file's record whatever the process's health (for ``status``), or None."""
    return _read_state(_resolve_cache_dir(cache_dir))


def is_server_process(pid: int) -> bool:
    """Public form of the pid check used before signalling: alive and a vLLM API server."""
    return _is_server_process(pid)
