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
- **No secret in a run**: a run whose ``context`` carries an endpoint key is refused before the server
  stores anything (a run's context is kept in its record and returned by ``runs.list``): the key
  belongs in the server's environment (``LONGGRAPH_API_KEY``).
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

TOKENS_ENV = "LONGGRAPH_AUTH_TOKENS"
SWITCH_ENV = "LONGGRAPH_AUTH"
LOCAL_USER = "local"
SECRET_SETTINGS = frozenset({"api_key"})
"""Context fields that hold a secret (``state/context.py``): never accepted from a client."""

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


def secret_settings_in(run: Mapping[str, Any]) -> list[str]:
    """The secret settings a run's ``context`` (or its config's ``configurable``) carries."""
    kwargs = run.get("kwargs") or {}
    config = kwargs.get("config") or {}
    found: set[str] = set()
    for settings in (kwargs.get("context"), config.get("configurable"), config.get("context")):
        if isinstance(settings, Mapping):
            found |= SECRET_SETTINGS & set(settings)
    return sorted(found)


@auth.on.threads.create_run
async def refuse_secrets_and_stamp_the_run(ctx: Auth.types.AuthContext, value: Any) -> dict[str, str]:
    secrets = secret_settings_in(value)
    if secrets:
        raise Auth.exceptions.HTTPException(
            status_code=400,
            detail=f"a run's context may not carry {', '.join(secrets)}: the server keeps run contexts; "
            "set the endpoint key in the server's environment (LONGGRAPH_API_KEY) instead",
        )
    return _owned(ctx, value)


@auth.on.assistants
async def served_graphs_are_shared(ctx: Auth.types.AuthContext, value: Any) -> dict[str, str] | None:
    """Reading the served graphs is open to every user; assistants a user makes are theirs."""
    if ctx.action in ("read", "search"):
        return None
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
