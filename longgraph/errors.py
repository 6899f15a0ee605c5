"""Typed errors. Each names the problem and carries the context a user needs to act on it.

The CLI prints ``str(error)`` as one line and exits non-zero; nothing here ever carries an API key.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError


class LonggraphError(RuntimeError):
    """Base of every error longgraph raises on purpose.

    A ``RuntimeError``: a LangGraph server passes the type and message of a builtin error class on to
    its client (the SDK's ``__error__``), where any other exception arrives as "An internal error
    occurred". Every message here is written for the user and carries no secret, so a served client
    sees ``EndpointError: ... (endpoint http://vllm:8000/v1; left undone: map of chunk 3)``."""

    exit_code: int = 1


class ConfigurationError(LonggraphError, ValueError):
    """A setting is missing, malformed or contradicts another (e.g. a window smaller than the prompt).
    A ``ValueError`` too, as a bad setting is one."""

    exit_code = 2


class InputError(LonggraphError, ValueError):
    """The input itself cannot be processed (no question, unreadable file, no text at all...). A
    ``ValueError`` too, as :class:`ConfigurationError`."""

    exit_code = 2


class EndpointError(LonggraphError):
    """The model endpoint failed after bounded retries. Names the endpoint and what was left undone."""

    exit_code = 3

    def __init__(self, message: str, *, endpoint: str, undone: str = "") -> None:
        detail = f"{message} (endpoint {endpoint}"
        detail += f"; left undone: {undone})" if undone else ")"
        super().__init__(detail)
        self.endpoint = endpoint
        self.undone = undone


class InUse(LonggraphError):
    """Another process (or another run of this one) is writing what this run would write: the same
    checkpointed thread, the same results or dataset file. Two writers would each redo the other's
    calls and interleave their saves; the second is refused, naming what is in use."""

    exit_code = 2


class StructuredOutputError(LonggraphError):
    """A model answer could not be parsed into the expected structure after bounded retries."""

    def __init__(self, message: str, *, raw: str) -> None:
        super().__init__(message)
        self.raw = raw


class TooManyFailures(LonggraphError):
    """More chunks failed than ``max_failed_fraction`` allows: an answer from the rest would mislead."""

    exit_code = 3


class BudgetExhausted(LonggraphError):
    """A run reached its ``max_calls`` or ``max_prompt_tokens`` budget: the call that would overrun it
    was not sent. Names the budget, what was spent and what was left undone; a checkpointed run
    resumes from where it stopped (with a larger budget)."""

    exit_code = 5

    def __init__(self, message: str, *, undone: str, spent_calls: int, spent_prompt_tokens: int) -> None:
        super().__init__(f"{message}; left undone: {undone}" if undone else message)
        self.reason = message
        self.undone = undone
        self.spent_calls = spent_calls
        self.spent_prompt_tokens = spent_prompt_tokens


def validation_problems(exc: ValidationError, *, limit: int = 5) -> str:
    """One line per pydantic's problems, ``field: message``, at most ``limit`` of them and a count of
    the rest. pydantic's own text echoes the input (a document's text, an endpoint key) and adds a
    documentation URL per problem: 3,000 of them for a string passed where a list belongs."""
    problems = []
    for error in exc.errors(include_url=False, include_input=False):
        where = ".".join(str(part) for part in error["loc"])
        message = str(error["msg"]).removeprefix("Value error, ")
        problems.append(f"{where}: {message}" if where else message)
    shown = "; ".join(problems[:limit])
    return shown + (f"; and {len(problems) - limit} more" if len(problems) > limit else "")
