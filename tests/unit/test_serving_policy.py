"""What a served run may set (``longgraph/serving_policy.py``): the operator's endpoints only, no secret or
server path, no more load than the operator's; the result cache scoped to the user and the endpoint.
The same policy behind a real ``langgraph dev``: ``tests/e2e/test_served_auth.py``."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest

from longgraph.errors import BudgetExhausted, ConfigurationError
from longgraph.graphs.mapreduce import build_graph
from longgraph.serving_policy import (
    SERVED_BUDGETS,
    cache_salt,
    endpoint_identity,
    problems_in_payload,
    screen_served_context,
    served_user,
)
from longgraph.state.context import Context, coerce_context
from longgraph.testing.fakes import FakeProvider, ScriptedChatModel
from longgraph.tests.conftest import QUESTION, planted


@pytest.fixture(autouse=True)
def operator_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("LONGGRAPH_BASE_URL", "LONGGRAPH_EMBEDDING_URL", "LONGGRAPH_ALLOWED_ENDPOINTS",
                 "LONGGRAPH_MAX_CONCURRENCY", "LONGGRAPH_MAX_CALLS", "LONGGRAPH_MAX_PROMPT_TOKENS",
                 "LONGGRAPH_CACHE_PATH", "LONGGRAPH_MODEL", "LONGGRAPH_ALLOWED_MODELS"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LONGGRAPH_BASE_URL", "http://vllm.internal:8000/v1")
    monkeypatch.setenv(
        "LONGGRAPH_ALLOWED_ENDPOINTS", "http://replica.internal:8000/v1, http://embed.internal/v1"
    )
    monkeypatch.setenv("LONGGRAPH_MAX_CONCURRENCY", "8")
    monkeypatch.setenv("LONGGRAPH_ALLOWED_MODELS", "m, qwen-7b")


@pytest.mark.parametrize(
    ("a", "b"),
    [("http://Host:80/v1/", "http://host/v1"), ("HTTPS://h:443/v1", "https://h/v1"), ("http://[::1]:8000/v1", "http://[::1]:8000/v1/")],
)  # fmt: skip
def test_one_endpoint_has_one_identity(a: str, b: str) -> None:
    assert endpoint_identity(a) == endpoint_identity(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [("http://h/v1", "http://h:8001/v1"), ("http://h/v1", "https://h/v1"), ("http://h/v1", "http://user@h/v1"),
     ("http://h/v1", "http://h/v2")],
)  # fmt: skip
def test_different_endpoints_have_different_identities(a: str, b: str) -> None:
    assert endpoint_identity(a) != endpoint_identity(b)


def test_the_operators_and_allowed_endpoints_pass_and_their_user_gets_a_cache_scope() -> None:
    for settings in ({}, {"base_url": "http://VLLM.internal:8000/v1/"}, {"base_url": "http://replica.internal:8000/v1"},
                     {"embedding_url": "http://embed.internal/v1", "model": "m", "max_concurrency": 4, "temperature": 0.0}):  # fmt: skip
        screened = screen_served_context(Context(**settings), "alice")
        assert screened.cache_scope == "user:alice"
        assert (
            screen_served_context(screened, "alice") is screened
        )  # a screened context is not screened again


@pytest.mark.parametrize(
    ("settings", "named"),
    [({"base_url": "http://127.0.0.1:9/v1"}, "base_url"), ({"base_url": ["http://vllm.internal:8000/v1", "http://evil/v1"]}, "base_url"),
     ({"embedding_url": "http://169.254.169.254/v1"}, "embedding_url"), ({"api_key": "sk-x"}, "api_key"),
     ({"cache_path": "/tmp/elsewhere.sqlite"}, "cache_path"), ({"tokenizer": "/etc/passwd"}, "tokenizer"),
     ({"attention_model": "/root"}, "attention_model"), ({"embedding_model": "/root/model"}, "embedding_model"),
     ({"cache_scope": "user:bob"}, "cache_scope"), ({"max_concurrency": 9}, "max_concurrency"),
     ({"max_output_tokens": 4096}, "max_output_tokens"), ({"profile": "smollm2"}, "profile"),
     ({"chunk_size": 1}, "chunk_size"), ({"segment_size": 10}, "segment_size"),
     ({"pecan_chunk_tokens": 5}, "pecan_chunk_tokens"), ({"tom_chunk_tokens": 16}, "tom_chunk_tokens"),
     ({"base_url": "http://vllm.internal:8001/v1"}, "base_url"), ({"embedding_precision": "float32"}, "embedding_precision"),
     ({"attention_precision": "bfloat16"}, "attention_precision"), ({"parse_retries": 100}, "parse_retries"),
     ({"max_collapse_rounds": 1000}, "max_collapse_rounds"), ({"pecan_max_nodes": 100_000}, "pecan_max_nodes"),
     ({"pecan_fixed_k": 100_000}, "pecan_fixed_k"), ({"pecan_patience": 1000}, "pecan_patience"),
     ({"pyramid_fan_in": 1000}, "pyramid_fan_in"), ({"pyramid_question_nodes": 1000}, "pyramid_question_nodes"),
     ({"tom_top_k": 1000}, "tom_top_k"), ({"tom_top_k": 0}, "tom_top_k"),
     ({"pecan_batch_tokens": 300}, "pecan_batch_tokens"), ({"pyramid_leaf_tokens": 1}, "pyramid_leaf_tokens"),
     ({"context_window": 1100}, "context_window"), ({"max_calls": 20_001}, "max_calls"),
     ({"max_prompt_tokens": 10**9}, "max_prompt_tokens"), ({"adaptive_concurrency": False}, "adaptive_concurrency")],
)  # fmt: skip
def test_a_served_run_may_not_name_what_the_operator_decides(settings: dict[str, Any], named: str) -> None:
    with pytest.raises(ConfigurationError, match=f"refused: .*{named}") as refused:
        screen_served_context(Context(**settings), "alice")
    assert "sk-x" not in str(refused.value)


def test_a_served_run_may_lower_the_loops_limits_and_raise_its_sizes() -> None:
    """The other side of the refusals above: less load than the operator's passes."""
    for settings in ({"parse_retries": 0, "max_collapse_rounds": 2, "pecan_max_nodes": 8, "tom_top_k": 3},
                     {"pyramid_fan_in": 2, "pyramid_question_nodes": 1, "pecan_patience": 1, "pecan_fixed_k": 4},
                     {"pecan_batch_tokens": 16_000, "pyramid_leaf_tokens": 512, "context_window": 2048, "chunk_size": 256}):  # fmt: skip
        assert screen_served_context(Context(**settings), "alice").cache_scope == "user:alice"


def test_a_limit_whose_zero_lifts_it_is_refused_at_zero_unless_the_operator_lifted_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LONGGRAPH_TOM_TOP_K", "0")
    assert screen_served_context(Context(tom_top_k=0), "alice").tom_top_k == 0
    assert screen_served_context(Context(tom_top_k=5), "alice").tom_top_k == 5


def test_a_served_run_may_name_only_the_operators_model_or_an_allowed_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An endpoint behind the server's key may serve dearer models than the operator chose (a hosted API
    lists dozens): a budget in calls and tokens is not one in money."""
    for name in ("m", "qwen-7b"):
        assert screen_served_context(Context(model=name), "alice").model == name
    for payload in ({"context": {"model": "o1-pro"}}, {"config": {"configurable": {"model": "M"}}}):
        problems = problems_in_payload(payload)
        assert [p for p in problems if "LONGGRAPH_ALLOWED_MODELS" in p], problems
    with pytest.raises(ConfigurationError, match="refused: model 'o1-pro'"):
        screen_served_context(Context(model="o1-pro"), "alice")
    monkeypatch.setenv("LONGGRAPH_MODEL", "cheap")
    assert screen_served_context(Context(), "alice").model == "cheap"
    assert problems_in_payload({"context": {"model": "cheap"}}) == []
    # Naming none where the operator names one would get the endpoint's first model: another one.
    assert problems_in_payload({"context": {"model": None}}) != []
    with pytest.raises(ConfigurationError, match="the operator's is 'cheap'"):
        screen_served_context(Context(model=None), "alice")


def test_a_served_graph_run_naming_another_model_makes_no_call() -> None:
    model = ScriptedChatModel()
    config: Any = {"configurable": {"langgraph_auth_user_id": "mallory"}}
    with pytest.raises(ConfigurationError, match="model 'o1-pro'"):
        asyncio.run(
            build_graph(FakeProvider(model)).ainvoke(
                {"question": QUESTION, "document": planted(4000)},
                context={"model": "o1-pro", "context_window": 2048},
                config=config,
            )
        )
    assert model.calls == []


def test_payloads_are_searched_at_every_depth_a_context_can_hide() -> None:
    batch = [{"assistant_id": "mapreduce", "context": {"base_url": "http://evil/v1"}}]
    assert problems_in_payload(batch) and "base_url" in problems_in_payload(batch)[0]
    cron = {"payload": {"config": {"configurable": {"api_key": "k"}}}}
    assert any("api_key" in p for p in problems_in_payload(cron))
    assert problems_in_payload({"kwargs": {"context": {"model": "m", "temperature": 0}}}) == []


def test_an_unknown_run_setting_is_refused_as_the_python_api_refuses_it() -> None:
    """The server would drop it and run without it: ``chunk_sise`` meant ``chunk_size``."""
    problems = problems_in_payload({"kwargs": {"context": {"chunk_sise": 300, "temperature": 0}}})
    assert problems == ["'chunk_sise' is not a run setting (docs/configuration.md)"]
    configurable = {
        "config": {"configurable": {"thread_id": "t", "run_id": "r", "langgraph_auth_user_id": "a"}}
    }
    assert problems_in_payload(configurable) == []  # LangGraph's own keys travel in the configurable
    with pytest.raises(ConfigurationError, match="chunk_sise"):
        coerce_context({"chunk_sise": 300})


@pytest.mark.parametrize(
    ("configurable", "said"),
    [({"max_cals": 5}, "did you mean 'max_calls'"), ({"temperture": 0.2}, "did you mean 'temperature'"),
     ({"max_calls": 5}, "is not read"), ({"chunk_size": 900, "thread_id": "t"}, "is not read")],
)  # fmt: skip
def test_a_setting_or_a_near_miss_in_the_configurable_is_refused_not_dropped(
    configurable: dict[str, Any], said: str
) -> None:
    """Settings are read from the run's context only: one in an assistant's configurable was stored and
    never used, a typo as silently as the setting itself."""
    problems = problems_in_payload({"graph_id": "mapreduce", "config": {"configurable": configurable}})
    assert len(problems) == 1 and said in problems[0] and "context" in problems[0], problems
    own = {"thread_id": "t", "checkpoint_ns": "", "assistant_id": "a", "user_id": "u", "x-request-id": "1"}
    assert problems_in_payload({"config": {"configurable": own}}) == []
    copied = {"context": {"max_calls": 5}, "config": {"configurable": {"max_calls": 5, **own}}}
    assert problems_in_payload({"kwargs": copied}) == []  # the server's copy of the run's context
    copied["config"]["configurable"]["max_calls"] = 50  # type: ignore[index]
    assert "is not read" in " ".join(problems_in_payload({"kwargs": copied}))


def test_served_user_is_read_from_the_servers_stamp_only() -> None:
    assert served_user(None) is None and served_user({"thread_id": "t"}) is None
    assert served_user({"langgraph_auth_user_id": "bob"}) == "bob"


def test_a_served_graph_run_naming_another_endpoint_makes_no_call() -> None:
    """The graph-level check: a context merged from an assistant reaches the nodes without the auth
    handler seeing it; the run fails with a typed error before its first request."""
    model = ScriptedChatModel()
    provider = FakeProvider(model)
    graph = build_graph(provider)
    config: Any = {"configurable": {"langgraph_auth_user_id": "mallory"}}
    with pytest.raises(ConfigurationError, match="base_url"):
        asyncio.run(
            graph.ainvoke(
                {"question": QUESTION, "document": planted(4000)},
                context={"base_url": "http://127.0.0.1:9/v1", "model": "m", "context_window": 2048},
                config=config,
            )
        )
    assert model.calls == []


def test_cached_answers_are_kept_apart_per_endpoint_and_per_user(tmp_path: Any) -> None:
    """A user who points a run at their own server must not plant answers for another endpoint's or
    another user's identical question (the cache key held the model name, not the endpoint)."""
    cache = str(tmp_path / "cache.sqlite")
    settings = {"model": "m", "context_window": 2048, "temperature": 0.0, "cache_path": cache}
    inputs = {"question": QUESTION, "document": planted(4000)}

    def calls(url: str, scope: str = "") -> int:
        model = ScriptedChatModel()
        asyncio.run(
            build_graph(FakeProvider(model, url=url)).ainvoke(
                inputs, context={**settings, "cache_scope": scope}
            )
        )
        return len(model.calls)

    first = calls("http://planted.example/v1")
    assert first > 0
    assert calls("http://planted.example/v1") == 0, "the same endpoint's answers are reused"
    assert calls("http://vllm.internal:8000/v1") == first, "another endpoint's answers were served"
    assert calls("http://vllm.internal:8000/v1", "user:bob") == first, "another user's answers were served"


def test_a_served_run_has_a_budget_when_the_operator_sets_none(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without one, what a served run costs is the client's to choose: a few kilobytes of one-word
    documents with a plan ask for one call per document, and the server accepts 300 MB bodies."""
    screened = screen_served_context(Context(), "alice")
    assert (screened.max_calls, screened.max_prompt_tokens) == (20_000, 40_000_000)
    assert screen_served_context(Context(max_calls=50), "alice").max_calls == 50  # lowered: kept
    monkeypatch.setenv("LONGGRAPH_MAX_CALLS", "100000")  # the operator's own budget replaces the default
    assert screen_served_context(Context(), "alice").max_calls == 100_000
    assert screen_served_context(Context(max_calls=50_000), "alice").max_calls == 50_000
    assert problems_in_payload({"context": {"max_calls": 100_001}}) != []


def test_a_served_run_whose_records_never_fit_stops_at_the_budget() -> None:
    """The amplification the default budget bounds, through the real graph: an extraction that always
    fills the output budget makes the records route read each chunk in halves, and halves of halves;
    the served run stops with BudgetExhausted at the (here lowered) default, its calls counted."""

    def full(messages: Any, extras: Any) -> str:
        return '{"records": [' + ", ".join(['{"values": ["x"], "quote": "Note"}'] * 200) + "]}"

    model = ScriptedChatModel(responder=full)
    graph = build_graph(FakeProvider(model))
    config: Any = {"configurable": {"langgraph_auth_user_id": "mallory"}}
    documents = [
        {"title": f"note {i}", "text": f"Note {i} says nothing much at all, " * 20} for i in range(40)
    ]
    plan = {"aggregates": True, "fields": [{"name": "note", "type": "text"}], "key": "note", "value": "note",
            "operation": "count"}  # fmt: skip
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(SERVED_BUDGETS, "max_calls", 30)
        with pytest.raises(BudgetExhausted, match="30"):
            asyncio.run(
                graph.ainvoke(
                    {"question": "How many notes are there?", "documents": documents, "plan": plan},
                    context={
                        "model": "m",
                        "context_window": 2048,
                        "base_url": "http://vllm.internal:8000/v1",
                    },
                    config=config,
                )
            )
    assert 0 < len(model.calls) <= 30


def test_an_input_over_max_input_chars_is_refused_before_any_chunking_or_call() -> None:
    from longgraph.errors import InputError

    for config in ({"configurable": {"langgraph_auth_user_id": "mallory"}}, {}):
        model = ScriptedChatModel()
        with pytest.raises(InputError, match="max_input_chars"):
            asyncio.run(
                build_graph(FakeProvider(model)).ainvoke(
                    {"question": QUESTION, "document": planted(20_000)},
                    context={"model": "m", "context_window": 2048, "max_input_chars": 10_000, "max_calls": 1},
                    config=cast(Any, config),
                )
            )
        assert model.calls == []


def test_the_servers_key_goes_only_to_the_servers_own_endpoints(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LONGGRAPH_API_KEY", "sk-server")
    own = screen_served_context(Context(), "alice")
    assert own.api_key == "sk-server"
    replica = screen_served_context(Context(base_url="http://replica.internal:8000/v1"), "alice")
    assert replica.api_key == "EMPTY"  # allowed, but no key of its own: none, not the server's
    monkeypatch.setenv("LONGGRAPH_ENDPOINT_KEYS", "http://REPLICA.internal:8000/v1/=sk-replica==")
    keyed = screen_served_context(Context(base_url="http://replica.internal:8000/v1"), "bob")
    assert keyed.api_key == "sk-replica=="  # a key is everything after the first "="
    with pytest.raises(
        ConfigurationError, match="different keys"
    ):  # the server's chat key, a third party's embedder
        screen_served_context(Context(embedding_url="http://embed.internal/v1"), "carol")


def test_an_endpoint_key_entry_that_is_not_url_and_key_is_refused_without_showing_a_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LONGGRAPH_ENDPOINT_KEYS", "http://replica.internal:8000/v1 sk-secret")
    with pytest.raises(ConfigurationError, match="URL=KEY") as refused:
        screen_served_context(Context(base_url="http://replica.internal:8000/v1"), "alice")
    assert "sk-secret" not in str(refused.value)


def test_a_served_users_requests_carry_a_salt_of_their_own() -> None:
    alice, bob = cache_salt("user:alice", {}), cache_salt("user:bob", {})
    assert alice and bob and alice != bob and cache_salt("user:alice", {}) == alice
    assert "alice" not in alice  # a digest, not the name
    assert cache_salt("", {}) is None  # no server, no user: no salt (and nothing an endpoint must know)
    assert cache_salt("user:alice", {"LONGGRAPH_CACHE_SALT": "off"}) is None
    with pytest.raises(ConfigurationError, match="LONGGRAPH_CACHE_SALT"):
        cache_salt("user:alice", {"LONGGRAPH_CACHE_SALT": "on"})
