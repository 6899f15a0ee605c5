"""Each served user's share of the server: runs in flight, and model calls and prompt tokens per window.

A LangGraph server runs ``--n-jobs-per-worker`` runs at once, first come first served; the model
client shares its requests in flight out per user (``longgraph/concurrency.py``). What that leaves open
is one user taking every run slot, or keeping the model busy for an hour. The operator bounds both, in
the server's environment (read when a run starts, so a restart is not needed to change them):

* ``LONGGRAPH_USER_RUNS`` (default 4 when the server has users, ``LONGGRAPH_AUTH_TOKENS``; else none:
  a single-user server's runs are all its one user's): runs one user may have in flight at once. The one past it is
  refused — at admission with a 429 when the user's runs in flight already reach it
  (``longgraph/auth.py``), else at its first step with :class:`UserShareExceeded` — so it neither
  queues behind the user's own runs holding a run slot nor waits unbounded. Set it below
  ``--n-jobs-per-worker``: the slots left over are the other users'.
* ``LONGGRAPH_USER_CALLS`` and ``LONGGRAPH_USER_PROMPT_TOKENS`` per ``LONGGRAPH_USER_WINDOW_S``
  seconds (defaults: no limit, 60 s): a call that would pass the user's window waits until enough of
  the window's calls have aged out — at most one window, since one call alone is always admitted — and
  no other user's call waits for it.

Runs and calls outside a server (the Python API, the CLI, a batch) have no user and no share here:
their limits are their own budgets (``max_calls``, ``max_prompt_tokens``).
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from longgraph.errors import ConfigurationError, LonggraphError

RUNS_ENV = "LONGGRAPH_USER_RUNS"
CALLS_ENV = "LONGGRAPH_USER_CALLS"
TOKENS_ENV = "LONGGRAPH_USER_PROMPT_TOKENS"
WINDOW_ENV = "LONGGRAPH_USER_WINDOW_S"
DEFAULT_RUNS = 4
DEFAULT_WINDOW_S = 60.0


class UserShareExceeded(LonggraphError):
    """A served run went past its user's share (``LONGGRAPH_USER_RUNS``): refused before any call."""

    exit_code = 5


@dataclass(frozen=True)
class ShareSettings:
    """The operator's limits per user (0: none); see :func:`share_settings` for the defaults."""

    runs: int = 0
    calls: int = 0
    prompt_tokens: int = 0
    window_s: float = DEFAULT_WINDOW_S


def share_settings(environ: Mapping[str, str] | None = None) -> ShareSettings:
    """The limits the server's environment sets; a malformed one is a :class:`ConfigurationError`
    naming it (a limit silently read as "none" would be worse than none)."""
    env = os.environ if environ is None else environ

    def number(name: str, default: float, kind: Callable[[str], float]) -> float:
        raw = env.get(name, "").strip()
        if not raw:
            return default
        try:
            value = kind(raw)
        except ValueError:
            raise ConfigurationError(f"{name}={raw!r}: expected a number") from None
        if value < 0 or value != value:
            raise ConfigurationError(f"{name}={raw!r}: expected 0 or more")
        return value

    users = bool(env.get("LONGGRAPH_AUTH_TOKENS", "").strip())
    window = number(WINDOW_ENV, DEFAULT_WINDOW_S, float)
    if window <= 0:
        raise ConfigurationError(f"{WINDOW_ENV}={window}: a window is longer than 0 seconds")
    return ShareSettings(
        runs=int(number(RUNS_ENV, DEFAULT_RUNS if users else 0, int)),
        calls=int(number(CALLS_ENV, 0, int)),
        prompt_tokens=int(number(TOKENS_ENV, 0, int)),
        window_s=window,
    )


@dataclass
class _Run:
    steps: int = 0
    """Steps of the run executing now."""
    idle_since: float = 0.0


class RunsInFlight:
    """The served runs each user has in flight, by run id (process-wide: the server's runs share it).

    Each step of a run enters and exits (``nodes/runtime.py``); its first step claims the run's place.
    A run leaves when its last step ends (``finalize``), when a step fails, or — whatever other way it
    ended (a route straight to END, a lost worker) — once no step of it has run for ``grace_s``
    seconds (the gap between two steps is a checkpoint write). Thread-safe: a served graph's sync twin
    runs steps on threads of their own.
    """

    def __init__(self, grace_s: float = 10.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.grace_s = grace_s
        self.clock = clock
        self._lock = threading.Lock()
        self._runs: dict[str, dict[str, _Run]] = {}

    def _live(self, user: str, now: float) -> dict[str, _Run]:
        runs = self._runs.setdefault(user, {})
        for run_id in [r for r, run in runs.items() if not run.steps and now - run.idle_since > self.grace_s]:
            del runs[run_id]
        return runs

    def count(self, user: str) -> int:
        """``user``'s runs in flight now."""
        with self._lock:
            return len(self._live(user, self.clock()))

    def enter(self, user: str, run_id: str, limit: int) -> None:
        """A step of ``run_id`` starts. Raises :class:`UserShareExceeded` when it is a new run and
        ``user`` already has ``limit`` runs in flight (0: no limit)."""
        with self._lock:
            runs = self._live(user, self.clock())
            run = runs.get(run_id)
            if run is None:
                if limit and len(runs) >= limit:
                    raise UserShareExceeded(
                        f"refused: user {user!r} already has {len(runs)} run(s) in flight, this server's "
                        f"limit per user ({RUNS_ENV}={limit}); retry when one has finished"
                    )
                run = runs[run_id] = _Run()
            run.steps += 1

    def exit(self, user: str, run_id: str, *, ended: bool) -> None:
        """A step of ``run_id`` is over; ``ended``: the run with it (its last step, or a failure)."""
        with self._lock:
            runs = self._runs.get(user, {})
            run = runs.get(run_id)
            if run is None:
                return
            run.steps = max(0, run.steps - 1)
            run.idle_since = self.clock()
            if ended:
                del runs[run_id]
            if not runs:
                self._runs.pop(user, None)


RUNS = RunsInFlight()


@dataclass
class CallWindow:
    """One user's calls and prompt tokens over the last ``window_s`` seconds, against the limits.

    :meth:`admit` waits (never more than a window) until the call fits; a call larger than the whole
    token limit is admitted alone into an empty window, so no call waits forever."""

    calls: int
    prompt_tokens: int
    window_s: float
    clock: Callable[[], float] = time.monotonic
    _sent: deque[tuple[float, int]] = field(default_factory=deque)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _room_at(self, tokens: int) -> float:
        """When a call of ``tokens`` fits (now or later, by the clock); records it when that is now."""
        with self._lock:
            now = self.clock()
            while self._sent and self._sent[0][0] <= now - self.window_s:
                self._sent.popleft()
            spent = sum(t for _, t in self._sent)
            fits_calls = not self.calls or len(self._sent) < self.calls
            fits_tokens = not self.prompt_tokens or not self._sent or spent + tokens <= self.prompt_tokens
            if fits_calls and fits_tokens:
                self._sent.append((now, tokens))
                return now
            return self._sent[0][0] + self.window_s  # the oldest ages out: look again then

    async def admit(self, tokens: int) -> float:
        """Wait until a call of ``tokens`` prompt tokens fits the window, and count it; the seconds
        waited."""
        started = self.clock()
        while True:
            at = self._room_at(tokens)
            now = self.clock()
            if at <= now:
                return now - started
            await asyncio.sleep(min(at - now, self.window_s))

    def charge(self, extra_tokens: int) -> None:
        """The server counted ``extra_tokens`` more than the call reserved (its chat template)."""
        if extra_tokens > 0:
            with self._lock:
                if self._sent:
                    at, tokens = self._sent.pop()
                    self._sent.append((at, tokens + extra_tokens))


_WINDOWS: dict[tuple[str, ShareSettings], CallWindow] = {}
_WINDOWS_LOCK = threading.Lock()


def call_window(user: str | None, settings: ShareSettings) -> CallWindow | None:
    """``user``'s window under ``settings`` (None: no user, or no limit on calls or tokens). One per
    user and settings, process-wide: every run of the user counts against it."""
    if user is None or not (settings.calls or settings.prompt_tokens):
        return None
    with _WINDOWS_LOCK:
        key = (user, settings)
        window = _WINDOWS.get(key)
        if window is None:
            window = _WINDOWS[key] = CallWindow(settings.calls, settings.prompt_tokens, settings.window_s)
        return window
