"""Spending limits: a run never sends the call that would take it past ``max_calls`` or
``max_prompt_tokens``.

Why here and not in the client: one :class:`~longgraph.llm.LLMClient` is shared by every run with the
same settings on an event loop (a LangGraph server, a batch), while a budget belongs to one run — or,
for :func:`longgraph.batch.abatch`, to one corpus (its items share one context and so one kit). The
kit holds a :class:`SpendingLimit`, and the one structured-call path asks it before each request.

* **Checked before sending.** A call's prompt is counted with the run's tokenizer (plus the same
  per-message allowance the token budgets use) and reserved; a reservation that would pass either
  limit is refused with :class:`~longgraph.errors.BudgetExhausted`, naming what was left undone.
* **Charged what the server says, when that is more.** After the reply the call costs
  ``max(reserved, reported)`` prompt tokens: the chat template's own tokens are the server's to count.
* **Learned before spent.** Under ``max_prompt_tokens`` the first call is sent alone; later calls are
  reserved with the most the server has counted beyond the run's own count of a call (a chat
  template's preamble). When the server tokenizes as the run does (``tokenizer`` pointed at the
  served model; the embedded server) the limit is therefore never passed; another tokenizer's counts
  are predicted only up to its difference from the run's.
* **Nothing in flight is wasted.** The refused call waits until the calls already sent have answered
  before it raises: LangGraph saves the writes of the tasks that finished in a failing step, so a
  checkpointed run resumed with a larger budget redoes none of them.
* **Cached answers are free.** A result-cache hit makes no request and is not counted.

Limits are per invocation: a resumed run gets its budget afresh and spends it only on what is left.

A served run also counts against its user's window (``longgraph/user_share.py``): a call the run's
budget allows then waits, if need be, until it fits the user's calls and prompt tokens per window.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from longgraph.errors import BudgetExhausted
from longgraph.tokenizer import PER_MESSAGE_TOKENS
from longgraph.user_share import CallWindow

COUNT_OFF_LOOP_CHARS = 8_192
"""A prompt longer than this is counted in a worker thread: on a served event loop, counting the map
prompts of a 36M-character document one after another held every other user's run for 45 s."""


@dataclass(frozen=True)
class Reservation:
    """One call's place in the budget: what it was reserved at, and the run's own count of it."""

    tokens: int
    counted: int


@dataclass
class SpendingLimit:
    """Counts the calls and prompt tokens of one run (or one batch) against its limits."""

    max_calls: int | None
    max_prompt_tokens: int | None
    count_tokens: Callable[[Sequence[str]], int]
    """Tokens of each of a call's message texts, summed (the run's tokenizer)."""
    window: CallWindow | None = None
    """The served user's calls and prompt tokens per window, when the operator limits them."""
    calls: int = 0
    prompt_tokens: int = 0
    in_flight: int = 0
    refused: int = 0
    waited_s: float = 0.0
    """Seconds this run's calls waited for room in the user's window."""
    server_extra: int = 0
    """The most the server has counted of one call's prompt beyond the run's own count of it (a chat
    template's preamble): later calls are reserved with it."""
    reports: int = 0
    """Replies that carried the server's prompt count."""
    _waiters: list[asyncio.Future[None]] = field(default_factory=list, repr=False)
    _probe_waiters: list[asyncio.Future[None]] = field(default_factory=list, repr=False)

    def counted(self, texts: Sequence[str]) -> int:
        """The run's own count of a call of ``texts``: its tokens plus the per-message allowance."""
        return self.count_tokens(texts) + PER_MESSAGE_TOKENS * len(texts)

    async def reserve(self, texts: Sequence[str], *, work: str) -> Reservation:
        """Reserve one call of ``texts``. Raises :class:`BudgetExhausted`
        (after the calls in flight have answered) when the call would pass a limit."""
        while self._probing():  # the server's count is not known yet: one call at a time
            probed = asyncio.get_running_loop().create_future()
            self._probe_waiters.append(probed)
            await probed
        if self.max_calls is not None and self.calls >= self.max_calls:
            counted = 0  # refused whatever it holds: every call after the last one allowed skips the count
        elif sum(map(len, texts)) > COUNT_OFF_LOOP_CHARS:
            counted = await asyncio.to_thread(self.counted, texts)
        else:
            counted = self.counted(texts)
        tokens = counted + self.server_extra
        reservation = Reservation(tokens, counted)
        over = self._over(tokens)
        if over is None:
            self.calls += 1
            self.prompt_tokens += tokens
            self.in_flight += 1
            if self.window is not None:
                try:
                    self.waited_s += await self.window.admit(tokens)
                except BaseException:
                    self.settle(reservation, None)  # cancelled while waiting: never sent
                    raise
            return reservation
        self.refused += 1
        if self.in_flight:  # let paid-for calls land (and be checkpointed) before the run stops
            drained = asyncio.get_running_loop().create_future()
            self._waiters.append(drained)
            await drained
        raise BudgetExhausted(
            f"budget reached: {over}; spent {self.calls} call(s) and {self.prompt_tokens:,} prompt tokens",
            undone=work,
            spent_calls=self.calls,
            spent_prompt_tokens=self.prompt_tokens,
        )

    def settle(self, reservation: Reservation, reported: int | None) -> None:
        """The reserved call has ended (answered or failed): charge the server's count when larger,
        and learn how much more than the run's own count it is."""
        self.in_flight -= 1
        reserved = reservation.tokens
        if reported is not None:
            self.reports += 1
            self.server_extra = max(self.server_extra, reported - reservation.counted)
        if reported is not None and reported > reserved:
            self.prompt_tokens += reported - reserved
            if self.window is not None:
                self.window.charge(reported - reserved)
        probes, self._probe_waiters = self._probe_waiters, []
        _wake_all(probes)
        if not self.in_flight:
            waiters, self._waiters = self._waiters, []
            _wake_all(waiters)

    def _probing(self) -> bool:
        """A token limit is set, no reply has told the server's count yet, and a call is in flight."""
        return self.max_prompt_tokens is not None and not self.reports and self.in_flight > 0

    def _over(self, tokens: int) -> str | None:
        if self.max_calls is not None and self.calls + 1 > self.max_calls:
            return f"max_calls {self.max_calls}"
        if self.max_prompt_tokens is not None and self.prompt_tokens + tokens > self.max_prompt_tokens:
            return (
                f"max_prompt_tokens {self.max_prompt_tokens:,} (the next call alone takes {tokens:,} "
                f"after {self.prompt_tokens:,})"
            )
        return None


def spending_limit(
    max_calls: int | None,
    max_prompt_tokens: int | None,
    count_tokens: Callable[[Sequence[str]], int],
    window: CallWindow | None = None,
) -> SpendingLimit | None:
    """A limit when either budget or a user's window is set; None (no counting, no cost) otherwise."""
    if max_calls is None and max_prompt_tokens is None and window is None:
        return None
    return SpendingLimit(max_calls, max_prompt_tokens, count_tokens, window)


def _wake_all(waiters: list[asyncio.Future[None]]) -> None:
    for waiter in waiters:  # a served graph's sync twin runs nodes on loops of their own
        if not waiter.done():
            waiter.get_loop().call_soon_threadsafe(_wake, waiter)


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)
