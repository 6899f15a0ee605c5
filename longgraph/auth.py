"""Who may use a served longgraph, and what each user may see: LangGraph's own auth, configured here.

``langgraph.json`` names :data:`auth`, so every ``langgraph dev`` / ``langgraph up`` of the project
runs these handlers before any request reaches a graph or the server's storage:

- **Tokens** come from the server's environment, ``LONGGRAPH_AUTH_TOKENS="alice:TOKEN1,bob:TOKEN2"``;
  a client sends ``Authorization: Bearer TOKEN1`` (``langgraph_sdk.get_client(headers=...)``). With
  tokens set, a request without a valid one is refused (401), loopback included.
- **Without tokens** only loopback clients are served (as the user ``local``); any other client is
  refused with a message saying how to set tokens. So a server bound to a public address is closed
  until tokens are configured, and a laptop's ``langgraph dev`` needs nothing. Behind a reverse proxy
  on the same host every client looks like loopback: set tokens there. ``LONGGRAPH_AUTH=off`` turns
  the checks off entirely (a trusted network, or a gateway that authenticates).
- **Ownership**: every thread, run and cron is stamped with its creator (``metadata.owner``) and every
  read, search, update and delete is filtered by it, so one user can neither read nor list another's.
  The served graphs themselves (the system assistants) are readable by every user.
- **Assistants**: the served graphs (the server's own assistants) are readable by every user; an
  assistant a user makes is visible to and usable by that user only.
- **No secret, server path or foreign endpoint in a run**: a run, assistant, cron or thread whose
  ``context`` / ``configurable`` carries an endpoint key, a server path (``cache_path``, ``tokenizer``,
  ...), an endpoint the operator did not allow, or more load than the operator set is refused before
  the server stores anything (``longgraph/serving_policy.py``; the graphs check again before their
  first request, since an assistant's context is merged into its runs).
"""

from __future__ import annotations

import hmac
import ipaddress
import os
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from langgraph_sdk import Auth

from longgraph.errors import ConfigurationError
from longgraph.serving_policy import input_chars, problems_in_payload, served_operator
from longgraph.user_share import RUNS, RUNS_ENV, share_settings

TOKENS_ENV = "LONGGRAPH_AUTH_TOKENS"
SWITCH_ENV = "LONGGRAPH_AUTH"
LOCAL_USER = "local"
SYSTEM_KEY, SYSTEM_VALUE = "created_by", "system"
"""How the LangGraph server marks the assistants it makes for the graphs of ``langgraph.json``."""

auth = Auth()


def tokens_from(raw: str) -> dict[str, str]:
    """``user:token`` pairs, comma-separated, as a token -> user map (a malformed entry is an error:
    a typo must not silently open the server or lock a user out)."""
    users: dict[str, str] = {}
    for number, entry in enumerate((part.strip() for part in raw.split(",")), start=1):
        if not entry:
            continue
        user, sep, token = entry.partition(":")
        user, token = user.strip(), token.strip()
        if not sep or not user or not token:  # the entry itself is not shown: it may be a bare token
            raise ConfigurationError(
                f"{TOKENS_ENV}: entry {number} is not user:token (pairs separated by commas)"
            )
        if token in users:
            raise ConfigurationError(f"{TOKENS_ENV}: users {users[token]!r} and {user!r} share a token")
        users[token] = user
    return users


@lru_cache(maxsize=1)
def _configured_tokens() -> dict[str, str]:
    """Read once: the server's environment does not change while it runs."""
    return tokens_from(os.environ.get(TOKENS_ENV, ""))


def _checks_off() -> bool:
    return os.environ.get(SWITCH_ENV, "").strip().lower() in ("off", "0", "false", "no")


def _is_loopback(host: str | None) -> bool:
    if not host:
        return False
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def user_for(authorization: str | None, client_host: str | None, tokens: Mapping[str, str]) -> str:
    """The user a request acts as, or :class:`Auth.exceptions.HTTPException` (401) saying why not."""
    if tokens:
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Auth.exceptions.HTTPException(status_code=401, detail="missing bearer token")
        for known, user in tokens.items():
            if hmac.compare_digest(known.encode(), token.strip().encode()):
                return user
        raise Auth.exceptions.HTTPException(status_code=401, detail="invalid bearer token")
    if _is_loopback(client_host):
        return LOCAL_USER
    raise Auth.exceptions.HTTPException(
        status_code=401,
        detail=f"this server has no {TOKENS_ENV}: it serves loopback clients only "
        f"(set {TOKENS_ENV}=user:token,... to serve others, or {SWITCH_ENV}=off behind a trusted gateway)",
    )


@auth.authenticate
async def authenticate(request: Any, authorization: str | None) -> Auth.types.MinimalUserDict:
    if _checks_off():
        return {"identity": LOCAL_USER, "is_authenticated": True}
    client = getattr(request, "client", None)
    user = user_for(authorization, getattr(client, "host", None), _configured_tokens())
    return {"identity": user, "is_authenticated": True}


def _refuse_settings(value: Any) -> None:
    """A 400 naming every setting of the payload a served run may not carry (``longgraph/serving_policy.py``):
    secrets, server paths, endpoints the operator did not allow, load above the operator's."""
    problems = problems_in_payload(value)
    if problems:
        raise Auth.exceptions.HTTPException(
            status_code=400,
            detail="refused: " + "; ".join(problems) + " (the server keeps run, assistant and cron contexts; "
            "endpoint keys belong in its environment, LONGGRAPH_API_KEY)",
        )


def _refuse_oversized_input(value: Any) -> None:
    """A 413 for a run whose input holds more characters than the operator's ``max_input_chars``
    (:data:`~longgraph.serving_policy.SERVED_BUDGETS` when unset), before the run is queued: a 20 MB
    document with ``max_calls: 1`` took 60 s and 250 MB of the server before its budget stopped it."""
    limit = served_operator().max_input_chars
    size = 0
    for carrier in ("kwargs", "payload"):  # a run's input; a cron's, run on every tick
        held = value.get(carrier) if isinstance(value, dict) else None
        size += input_chars(held.get("input") if isinstance(held, dict) else None)
    if limit is not None and size > limit:
        raise Auth.exceptions.HTTPException(
            status_code=413,
            detail=f"the input holds {size:,} characters; this server reads at most {limit:,} per run "
            "(max_input_chars)",
        )


def _refuse_past_share(user: str) -> None:
    """A 429 for a run of a user whose runs in flight already reach the operator's limit
    (``LONGGRAPH_USER_RUNS``, ``longgraph/user_share.py``): refused before it takes a run slot. (Runs
    admitted together are counted at their first step, which refuses the ones past the limit.)"""
    limit = share_settings().runs
    running = RUNS.count(user)
    if limit and running >= limit:
        raise Auth.exceptions.HTTPException(
            status_code=429,
            detail=f"user {user!r} has {running} run(s) in flight, this server's limit per user "
            f"({RUNS_ENV}={limit}); retry when one has finished",
        )


def _refuse_command(value: Any) -> None:
    """A 400 for a run carrying a ``command`` (resume, update, goto): the longgraph graphs never pause
    for input, so there is nothing to resume or steer, and LangGraph fails such a run on a new thread
    with a bare ``TypeError`` from inside its own graph code."""
    kwargs = value.get("kwargs") if isinstance(value, dict) else None
    if isinstance(kwargs, dict) and kwargs.get("command") is not None:
        raise Auth.exceptions.HTTPException(
            status_code=400,
            detail="refused: a run of the longgraph graphs takes an input, not a command (they never "
            "pause for one)",
        )


@auth.on.threads.create_run
async def refuse_settings_and_stamp_the_run(ctx: Auth.types.AuthContext, value: Any) -> dict[str, str]:
    _refuse_command(value)
    _refuse_settings(value)
    _refuse_oversized_input(value)
    _refuse_past_share(ctx.user.identity)
    return _owned(ctx, value)


@auth.on.assistants
async def own_assistants_and_shared_graphs(ctx: Auth.types.AuthContext, value: Any) -> dict[str, Any]:
    """The served graphs (the server's own assistants, ``created_by: system``) are readable by every
    user; an assistant a user makes is that user's alone, to read, use, change or delete."""
    if ctx.action in ("create", "update"):
        _refuse_settings(value)
        metadata = value.get("metadata") if isinstance(value, dict) else None
        if isinstance(metadata, dict):
            metadata.pop(SYSTEM_KEY, None)  # a user's assistant cannot pass for the server's own
    owned = _owned(ctx, value)
    if ctx.action in ("read", "search"):
        return {"$or": [owned, {SYSTEM_KEY: SYSTEM_VALUE}]}
    return owned


@auth.on.crons
async def refuse_settings_in_crons(ctx: Auth.types.AuthContext, value: Any) -> dict[str, str]:
    if ctx.action in ("create", "update"):
        _refuse_settings(value)
        _refuse_oversized_input(value)
    return _owned(ctx, value)


@auth.on.threads
async def refuse_settings_in_threads(ctx: Auth.types.AuthContext, value: Any) -> dict[str, str]:
    if ctx.action in ("create", "update"):
        _refuse_settings(value)
    return _owned(ctx, value)


@auth.on.store
async def own_namespace_only(ctx: Auth.types.AuthContext, value: Any) -> None:
    namespace = tuple(value.get("namespace") or ())
    if not namespace or namespace[0] != ctx.user.identity:
        raise Auth.exceptions.HTTPException(
            status_code=403, detail=f"store namespaces of user {ctx.user.identity!r} start with that name"
        )


@auth.on
async def owner_only(ctx: Auth.types.AuthContext, value: Any) -> dict[str, str]:
    """Threads, runs and crons: stamped with their creator, and every access filtered by it."""
    return _owned(ctx, value)


def _owned(ctx: Auth.types.AuthContext, value: Any) -> dict[str, str]:
    if isinstance(value, dict) and ctx.action in ("create", "create_run", "update"):
        metadata = value.get("metadata")
        if not isinstance(metadata, dict):
            metadata = {}
            value["metadata"] = metadata
        metadata["owner"] = ctx.user.identity
    return {"owner": ctx.user.identity}


_configured_tokens()  # a malformed LONGGRAPH_AUTH_TOKENS stops the server at start, not at a request
