"""The served graphs' auth handlers as functions: tokens, loopback-only without tokens, secrets refused,
ownership stamped. The same handlers behind a real ``langgraph dev`` with two users:
``tests/e2e/test_served_auth.py``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langgraph_sdk import Auth

from longgraph.auth import (
    LOCAL_USER,
    own_assistants_and_shared_graphs,
    refuse_settings_and_stamp_the_run,
    refuse_settings_in_crons,
    refuse_settings_in_threads,
    tokens_from,
    user_for,
)
from longgraph.errors import ConfigurationError
from longgraph.serving_policy import problems_in_payload

TOKENS = {"tok-alice": "alice", "tok-bob": "bob"}


def test_tokens_are_user_token_pairs() -> None:
    assert tokens_from(" alice:tok-alice , bob:tok-bob,") == TOKENS
    assert tokens_from("") == {}


@pytest.mark.parametrize(
    ("raw", "message"),
    [("s3cret", "entry 1 is not user:token"), ("alice:tok-a,bob:", "entry 2 is not user:token"),
     (":s3cret", "entry 1"), ("alice:s3cret,bob:s3cret", "users 'alice' and 'bob' share a token")],
)  # fmt: skip
def test_a_malformed_token_list_is_a_configuration_error_that_shows_no_token(raw: str, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message) as raised:
        tokens_from(raw)
    assert "s3cret" not in str(raised.value)


@pytest.mark.parametrize("host", ["127.0.0.1", "::1", "10.0.0.5", None])
def test_with_tokens_only_a_valid_bearer_token_passes(host: str | None) -> None:
    assert user_for("Bearer tok-bob", host, TOKENS) == "bob"
    for header, detail in [(None, "missing"), ("tok-bob", "missing"), ("Bearer ", "missing"),
                           ("Bearer tok-eve", "invalid"), ("Basic tok-bob", "missing")]:  # fmt: skip
        with pytest.raises(Auth.exceptions.HTTPException) as refused:
            user_for(header, host, TOKENS)
        assert refused.value.status_code == 401 and detail in str(refused.value.detail)


def test_without_tokens_only_loopback_clients_are_served() -> None:
    for host in ("127.0.0.1", "127.8.0.1", "::1", "localhost"):
        assert user_for(None, host, {}) == LOCAL_USER
    for host in ("10.0.0.5", "192.168.1.2", "2001:db8::1", None, "example.com"):
        with pytest.raises(Auth.exceptions.HTTPException) as refused:
            user_for("Bearer anything", host, {})
        assert refused.value.status_code == 401 and "LONGGRAPH_AUTH_TOKENS" in str(refused.value.detail)


def _run(context: dict[str, Any] | None = None, configurable: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "metadata": {},
        "kwargs": {"input": {}, "context": context, "config": {"configurable": configurable or {}}},
    }


class _User:
    identity = "alice"
    is_authenticated = True
    display_name = "alice"
    permissions: tuple[str, ...] = ()


@pytest.fixture(autouse=True)
def operator_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """An operator who lets runs name the model "m" (``LONGGRAPH_ALLOWED_MODELS``)."""
    monkeypatch.delenv("LONGGRAPH_MODEL", raising=False)
    monkeypatch.setenv("LONGGRAPH_ALLOWED_MODELS", "m")


def _ctx(action: str) -> Any:
    return Auth.types.AuthContext(resource="threads", action=action, user=_User(), permissions=[])  # type: ignore[arg-type]


def test_a_run_carrying_an_endpoint_key_is_refused_before_it_is_stored(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LONGGRAPH_BASE_URL", "http://h/v1")
    assert problems_in_payload(_run({"base_url": "http://h/v1"})) == []
    assert any("api_key" in p for p in problems_in_payload(_run({"api_key": "sk-1"})))
    assert any("api_key" in p for p in problems_in_payload(_run(configurable={"api_key": "sk-1"})))
    value = _run({"api_key": "sk-secret", "model": "m"})
    with pytest.raises(Auth.exceptions.HTTPException) as refused:
        asyncio.run(refuse_settings_and_stamp_the_run(_ctx("create_run"), value))
    assert refused.value.status_code == 400
    assert "api_key" in str(refused.value.detail) and "sk-secret" not in str(refused.value.detail)


def test_a_run_is_stamped_with_its_owner_and_filtered_by_it() -> None:
    value = _run({"model": "m"})
    assert asyncio.run(refuse_settings_and_stamp_the_run(_ctx("create_run"), value)) == {"owner": "alice"}
    assert value["metadata"] == {"owner": "alice"}


@pytest.mark.parametrize(
    ("handler", "action", "value"),
    [
        (refuse_settings_in_crons, "create", {"assistant_id": "a", "schedule": "* * * * *", "payload": {"context": {"api_key": "k"}}}),
        (refuse_settings_in_crons, "update", {"payload": {"config": {"configurable": {"cache_path": "/tmp/x"}}}}),
        (own_assistants_and_shared_graphs, "create", {"graph_id": "mapreduce", "context": {"api_key": "k"}}),
        (own_assistants_and_shared_graphs, "update", {"config": {"configurable": {"base_url": "http://evil/v1"}}}),
        (own_assistants_and_shared_graphs, "create", {"graph_id": "mapreduce", "context": {"tokenizer": "/etc/shadow"}}),
        (refuse_settings_in_threads, "create", {"metadata": {}, "config": {"configurable": {"attention_model": "/srv"}}}),
        (refuse_settings_and_stamp_the_run, "create_run", {"kwargs": {"context": {"max_concurrency": 100000}}}),
        (refuse_settings_and_stamp_the_run, "create_run", {"kwargs": {"context": {"embedding_url": "http://10.0.0.1/v1"}}}),
        (refuse_settings_and_stamp_the_run, "create_run", {"kwargs": {"context": {"cache_scope": "user:bob"}}}),
        (refuse_settings_and_stamp_the_run, "create_run", {"kwargs": {"context": {"model": "o1-pro"}}}),
        (own_assistants_and_shared_graphs, "create", {"graph_id": "mapreduce", "context": {"model": "o1-pro"}}),
    ],
)  # fmt: skip
def test_every_door_refuses_secrets_server_paths_foreign_endpoints_and_more_load(
    handler: Any, action: str, value: dict[str, Any]
) -> None:
    with pytest.raises(Auth.exceptions.HTTPException) as refused:
        asyncio.run(handler(_ctx(action), value))
    assert refused.value.status_code == 400 and "refused" in str(refused.value.detail)


def test_a_users_assistant_is_theirs_and_the_served_graphs_are_everyones() -> None:
    value = {"graph_id": "mapreduce", "metadata": {"created_by": "system"}, "context": {"model": "m"}}
    assert asyncio.run(own_assistants_and_shared_graphs(_ctx("create"), value)) == {"owner": "alice"}
    assert value["metadata"] == {"owner": "alice"}, "a user's assistant passed for the server's own"
    seen = asyncio.run(own_assistants_and_shared_graphs(_ctx("search"), {}))
    assert seen == {"$or": [{"owner": "alice"}, {"created_by": "system"}]}
    assert asyncio.run(own_assistants_and_shared_graphs(_ctx("delete"), {})) == {"owner": "alice"}


@pytest.mark.parametrize(
    "graph_input",
    [
        {"question": "Q?", "document": "x" * 2_001},
        {"question": "Q?", "documents": [{"title": "t", "text": "x" * 1_000}, "y" * 1_001]},
        {"question": "q" * 2_001, "document": ""},
    ],
)
def test_a_run_over_the_operators_input_limit_is_refused_before_it_is_queued(
    monkeypatch: pytest.MonkeyPatch, graph_input: dict[str, Any]
) -> None:
    monkeypatch.setenv("LONGGRAPH_MAX_INPUT_CHARS", "2000")
    value = _run({"model": "m"})
    value["kwargs"]["input"] = graph_input
    with pytest.raises(Auth.exceptions.HTTPException) as refused:
        asyncio.run(refuse_settings_and_stamp_the_run(_ctx("create_run"), value))
    assert refused.value.status_code == 413 and "max_input_chars" in str(refused.value.detail)
    small = _run({"model": "m"})
    small["kwargs"]["input"] = {"question": "Q?", "document": "x" * 1_000}
    assert asyncio.run(refuse_settings_and_stamp_the_run(_ctx("create_run"), small)) == {"owner": "alice"}


@pytest.mark.parametrize("action", ["create", "update"])
def test_a_cron_over_the_operators_input_limit_is_refused_as_a_run_is(
    monkeypatch: pytest.MonkeyPatch, action: str
) -> None:
    """A cron runs its input on every tick: five 5M-character crons were stored on a 1M-limit server."""
    monkeypatch.setenv("LONGGRAPH_MAX_INPUT_CHARS", "2000")
    cron = {
        "assistant_id": "a",
        "schedule": "0 0 1 1 *",
        "payload": {"input": {"question": "Q?", "document": "x" * 2_001}},
    }
    with pytest.raises(Auth.exceptions.HTTPException) as refused:
        asyncio.run(refuse_settings_in_crons(_ctx(action), cron))
    assert refused.value.status_code == 413 and "2,003 characters" in str(refused.value.detail)  # with "Q?"
    cron["payload"]["input"]["document"] = "x" * 1_000
    assert asyncio.run(refuse_settings_in_crons(_ctx(action), cron)) == {"owner": "alice"}


def test_without_an_operator_limit_a_served_run_gets_one_sized_to_the_machine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("LONGGRAPH_MAX_INPUT_CHARS", raising=False)
    from longgraph.serving_policy import served_operator

    limit = served_operator().max_input_chars
    assert limit is not None and limit >= 1_000_000
    value = _run({"model": "m", "max_input_chars": limit + 1})
    with pytest.raises(Auth.exceptions.HTTPException):  # a run may lower it, never raise it
        asyncio.run(refuse_settings_and_stamp_the_run(_ctx("create_run"), value))
