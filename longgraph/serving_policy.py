"""What a run of a served longgraph may set, decided by the server's operator, not by its users.

A served run's context comes from a client (a run, an assistant, a cron), so every field of it is
hostile input. Without a policy, a user could name their own ``base_url`` and receive the server's
endpoint key in ``Authorization``, make the server send requests to any address it can reach, write a
SQLite file anywhere through ``cache_path``, load files through ``tokenizer`` or ``attention_model``, or
raise ``max_concurrency`` past what the operator's model server was sized for. So, on a served run:

- **Secrets, server paths and hardware fits** (:data:`OPERATOR_ONLY`) come from the server's environment only. A run,
  assistant or cron that names one is refused (by ``longgraph/auth.py`` before anything is stored, and
  again here before the run's first request: assistants' and crons' contexts are merged into runs).
- **Endpoints** (:data:`ENDPOINT_SETTINGS`): a run may name only the server's own (``LONGGRAPH_BASE_URL``,
  ``LONGGRAPH_EMBEDDING_URL``) or one the operator lists in ``LONGGRAPH_ALLOWED_ENDPOINTS``. The server's
  key is therefore sent to no endpoint the operator did not choose.
- **The model** (``model``): a run may name only the operator's (``LONGGRAPH_MODEL``) or one the operator
  lists in ``LONGGRAPH_ALLOWED_MODELS``. An endpoint may serve dearer models than the one the operator
  chose (a hosted API behind the server's key lists dozens), and a budget in calls and tokens is not one
  in money.
- **Load** (:data:`LOWER_ONLY`, :data:`RAISE_ONLY`, :data:`DERIVED_FLOORS`): a run may lower, never
  raise, what the operator set for concurrency, retries, budgets, output and the loops' limits; and
  raise, never lower, its block sizes and window (smaller blocks, more calls).
- **A budget** (:data:`SERVED_BUDGETS`) where the operator sets none: a run's calls and prompt tokens
  are bounded whatever it sends.
- **The result cache** is scoped to the run's user (``cache_scope``): one user's answers never serve
  another's question.

Which run is served is read from the run's own config: the LangGraph server stamps every run with the
authenticated user (``langgraph_auth_user_id``); ``longgraph.ask``, the CLI and a graph invoked from
Python carry none and are their owner's to configure.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import math
import os
import weakref
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

from longgraph.errors import ConfigurationError
from longgraph.redact import redact_url
from longgraph.state.context import Context

ALLOWED_ENDPOINTS_ENV = "LONGGRAPH_ALLOWED_ENDPOINTS"
ALLOWED_MODELS_ENV = "LONGGRAPH_ALLOWED_MODELS"
SECRET_SETTINGS = frozenset({"api_key"})
"""Settings that hold a secret: never accepted from a client, never stored in a run or assistant."""
SERVER_PATH_SETTINGS = frozenset(
    {"cache_path", "tokenizer", "attention_model", "embedding_model", "cache_scope", "profile"}
)
"""Settings that name files on the server (or who owns its cache): the operator's."""
SERVER_HARDWARE_SETTINGS = frozenset({"embedding_precision", "attention_precision"})
"""Settings that fit the server's CPU: a run choosing bfloat16 on a CPU without units for it would
embed (or read attention) several times slower, and each precision keeps its own copy of the model in
memory."""
SHARED_LIMIT_SETTINGS = frozenset({"adaptive_concurrency"})
"""How the limit on calls in flight that every run on an endpoint shares behaves: a run turning
adaptation off would turn it off for every user of that endpoint."""
OPERATOR_ONLY = SECRET_SETTINGS | SERVER_PATH_SETTINGS | SERVER_HARDWARE_SETTINGS | SHARED_LIMIT_SETTINGS
ENDPOINT_SETTINGS = frozenset({"base_url", "embedding_url"})
LOWER_ONLY = (
    "max_concurrency",
    "max_retries",
    "parse_retries",
    "request_timeout",
    "max_calls",
    "max_prompt_tokens",
    "max_input_chars",
    "prepare_timeout_s",
    "max_output_tokens",
    "max_collapse_rounds",
    "tom_top_k",
    "pecan_max_nodes",
    "pecan_fixed_k",
    "pecan_patience",
    "pyramid_fan_in",
    "pyramid_question_nodes",
)
"""Limits a run may lower, never raise: each bounds how many calls a run makes (``parse_retries`` asks
again for every unreadable answer, ``pecan_max_nodes`` is how many search turns PECAN takes, each up
to a window long; a larger ``pyramid_fan_in`` makes smaller leaves)."""
ZERO_MEANS_ALL = frozenset({"tom_top_k"})
"""Limits whose 0 lifts the limit (``tom_top_k: 0`` keeps every chunk): 0 is the highest value."""
RAISE_ONLY = (
    "segment_size",
    "tom_chunk_tokens",
    "pecan_chunk_tokens",
    "pecan_batch_tokens",
    "rag_chunk_tokens",
    "embedding_piece_tokens",
)
"""Block sizes a run may raise, never lower: the number of model calls (and embeddings) grows as they
shrink (``chunk_size: 1`` on a 100K-token document asked the operator's model about 100K times;
``pecan_batch_tokens: 300`` made a 50K-token document's first PECAN stage 191 calls, not 8)."""
MIN_SERVED_CHUNK = 256
"""The smallest ``chunk_size`` (and ``pyramid_leaf_tokens``) a served run may ask for when the operator
sets none: the operator's own is derived from the window, so there is no operator value to compare
with before the endpoint answers."""
MIN_SERVED_WINDOW = 2048
"""The smallest ``context_window`` a served run may ask for when the operator sets none (the window is
then the endpoint's, unknown before it answers). A smaller window cuts a document into more, smaller
calls: ``context_window: 1100`` made a 50K-token document's map stage 136 calls, not 36."""
DERIVED_FLOORS = {
    "chunk_size": MIN_SERVED_CHUNK,
    "pyramid_leaf_tokens": MIN_SERVED_CHUNK,
    "context_window": MIN_SERVED_WINDOW,
}
"""Sizes a run may raise, never lower, that the operator usually leaves to be derived: the operator's
value is the floor when set, else these."""


def _input_chars_for_this_machine() -> int:
    """A served run's input limit when the operator sets none: the server's memory over 640 bytes per
    character. Measured: a 1.28M-token (5.6M-character) mapreduce run peaks 86 MB above its process's
    start, about 16 bytes a character; 40 such runs at once (the server's jobs and their queues) then
    fit in memory. 24 GB gives 40M characters (about 9M tokens)."""
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        memory = 8 * 2**30
    return max(1_000_000, memory // 640)


SERVED_BUDGETS = {
    "max_calls": 20_000,
    "max_prompt_tokens": 40_000_000,
    "max_input_chars": _input_chars_for_this_machine(),
    "prepare_timeout_s": 60.0,
}
"""The spending budget of a served run when the operator sets none (``LONGGRAPH_MAX_CALLS``,
``LONGGRAPH_MAX_PROMPT_TOKENS``): without one, a run's cost is the client's to choose. Measured by dry
run: 1,000 one-word documents with a ``plan`` (a few kilobytes of request) ask for 998 map calls, one
per document, and the server accepts request bodies of 300 MB; a 1.28M-token document read by
mapreduce is 847 map calls (its dry-run bound, every retry and collapse round taken, is 13,526
calls and 91M prompt tokens). An operator who wants more sets their own; a run may lower it, never
raise it or lift it."""
SERVED_USER_KEY = "langgraph_auth_user_id"
"""The key the LangGraph server puts in every run's ``configurable``: the authenticated user."""


def served_user(configurable: Mapping[str, Any] | None) -> str | None:
    """The user a served run acts for; None outside a LangGraph server."""
    if not configurable or SERVED_USER_KEY not in configurable:
        return None
    return str(configurable.get(SERVED_USER_KEY) or "")


def endpoint_identity(url: str) -> str:
    """One spelling per endpoint: scheme and host lower-cased, default port dropped, no trailing slash
    (``HTTP://Host:80/v1/`` and ``http://host/v1`` are one endpoint; ``http://host/v1`` and
    ``http://host:8001/v1`` are two)."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise ConfigurationError(f"{redact_url(url)!r} is not a URL ({exc})") from exc
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    default = {"http": 80, "https": 443}.get(scheme)
    netloc = host if port is None or port == default else f"{host}:{port}"
    if parts.username or parts.password:
        netloc = f"{parts.username or ''}:{parts.password or ''}@{netloc}"
    path = parts.path.rstrip("/")
    return f"{scheme}://{netloc}{path}" + (f"?{parts.query}" if parts.query else "")


def _urls(value: str | list[str] | None) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def allowed_endpoints(operator: Context, environ: Mapping[str, str] | None = None) -> frozenset[str]:
    """The endpoints a served run may name: the operator's own and those listed in the allow-list."""
    listed = _listed(ALLOWED_ENDPOINTS_ENV, environ)
    own = [*operator.base_urls, *_urls(operator.embedding_url)]
    return frozenset(endpoint_identity(url) for url in [*own, *listed])


def allowed_models(operator: Context, environ: Mapping[str, str] | None = None) -> frozenset[str]:
    """The models a served run may name: the operator's own and those listed in the allow-list (names
    as the endpoint spells them, compared exactly)."""
    listed = _listed(ALLOWED_MODELS_ENV, environ)
    return frozenset([*listed, *([operator.model] if operator.model else [])])


def _listed(name: str, environ: Mapping[str, str] | None) -> list[str]:
    """The comma-separated entries of the operator's allow-list ``name``."""
    raw = (os.environ if environ is None else environ).get(name, "")
    return [part.strip() for part in raw.split(",") if part.strip()]


def _model_problem(settings: Mapping[str, Any], operator: Context) -> list[str]:
    """Why a run may not name its ``model``, if it names one other than the operator's. Naming none where
    the operator names one is naming another: without a name the endpoint's first model is used."""
    if "model" not in settings or settings["model"] == operator.model:
        return []
    value = settings["model"]
    if isinstance(value, str) and value in allowed_models(operator):
        return []
    own = repr(operator.model) if operator.model else "the endpoint's first"
    return [
        f"model {str(value)[:80]!r} is not a model this server's runs may use (the operator's is {own}; "
        f"others are listed in {ALLOWED_MODELS_ENV})"
    ]


def setting_problems(settings: Mapping[str, Any], operator: Context) -> list[str]:
    """Why a served run may not carry ``settings`` (a client's context), one reason per setting."""
    problems: list[str] = []
    for name in sorted(OPERATOR_ONLY & set(settings)):
        where = "the server's environment" if name in SECRET_SETTINGS else "the server's settings"
        problems.append(f"{name} is set by the server's operator ({where}), not by a run")
    problems += _model_problem(settings, operator)
    allowed = allowed_endpoints(operator)
    for name in sorted(ENDPOINT_SETTINGS & set(settings)):
        raw = settings[name]
        urls = _urls(raw) if isinstance(raw, str | list) else [repr(raw)]
        for url in urls:
            if not isinstance(url, str) or endpoint_identity(url) not in allowed:
                problems.append(
                    f"{name} {redact_url(str(url))!r} is not an endpoint this server may call "
                    f"(the operator lists them in {ALLOWED_ENDPOINTS_ENV})"
                )
    for name in LOWER_ONLY:
        if name not in settings or settings[name] is None:
            continue
        ceiling = getattr(operator, name)
        value = settings[name]
        if (
            ceiling is not None
            and isinstance(value, int | float)
            and _load(name, value) > _load(name, ceiling)
        ):
            problems.append(f"{name} {value!r} is above this server's {ceiling!r} (a run may only lower it)")
    floors = {name: getattr(operator, name) for name in RAISE_ONLY}
    for name, derived in DERIVED_FLOORS.items():
        own = getattr(operator, name)
        floors[name] = derived if own is None else own
    for name, floor in floors.items():
        value = settings.get(name)
        if floor is not None and isinstance(value, int | float) and value < floor:
            problems.append(f"{name} {value!r} is below this server's {floor!r} (a run may only raise it)")
    return problems


def _load(name: str, value: float) -> float:
    """``value`` as an amount of load: a limit's 0 that lifts it (:data:`ZERO_MEANS_ALL`) is unbounded."""
    return math.inf if name in ZERO_MEANS_ALL and value == 0 else value


def client_settings(context: Context, operator: Context) -> dict[str, Any]:
    """The fields of a coerced run context that differ from the operator's: what the client set."""
    return {
        f.name: getattr(context, f.name)
        for f in dataclasses.fields(Context)
        if getattr(context, f.name) != getattr(operator, f.name)
    }


_SCREENED: weakref.WeakValueDictionary[int, Context] = weakref.WeakValueDictionary()
"""Contexts this process screened or resolved from a screened one (by identity: a client cannot forge
one). A graph run inside a served node (Pyramid-Align's mapreduce answer) gets its parent's resolved
context and the parent's user; screening it again would refuse the server's own resolution."""


def mark_screened(context: Context) -> Context:
    _SCREENED[id(context)] = context
    return context


def served_operator() -> Context:
    """The operator's settings for served runs: the server's environment, with :data:`SERVED_BUDGETS`
    where it sets no budget."""
    operator = Context()
    unset = {name: limit for name, limit in SERVED_BUDGETS.items() if getattr(operator, name) is None}
    return operator.replace(**unset) if unset else operator


def screen_served_context(context: Context, user: str) -> Context:
    """The context a served run of ``user`` runs with, or :class:`ConfigurationError` naming every
    setting it may not carry. Called before the run's first request. A budget the run leaves unset
    (or unsets) is the operator's."""
    if _SCREENED.get(id(context)) is context:
        return context
    operator = served_operator()
    problems = setting_problems(client_settings(context, Context()), operator)
    if problems:
        raise ConfigurationError("refused: " + "; ".join(problems))
    budgets = {name: getattr(operator, name) for name in SERVED_BUDGETS if getattr(context, name) is None}
    key = endpoint_key(context, operator)
    return mark_screened(context.replace(cache_scope=f"user:{user}", api_key=key, **budgets))


CACHE_SALT_ENV = "LONGGRAPH_CACHE_SALT"


def cache_salt(scope: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The ``cache_salt`` a served run's requests carry: one per user (``scope``, the run's
    ``cache_scope``), so that vLLM's prefix cache is shared among one user's requests and never
    between two users' — a cached prefix answers faster, which would tell one user what another sent
    (CVE-2025-46570). None outside a server (no scope), or when the operator sets
    ``LONGGRAPH_CACHE_SALT=off`` for an endpoint that refuses fields it does not know (OpenAI's own API)."""
    setting = (os.environ if environ is None else environ).get(CACHE_SALT_ENV, "user").strip().lower()
    if setting not in ("user", "off"):
        raise ConfigurationError(f"{CACHE_SALT_ENV} is 'user' or 'off' (got {setting[:40]!r})")
    if not scope or setting == "off":
        return None
    return hashlib.sha256(f"longgraph-cache-salt:{scope}".encode()).hexdigest()[:32]


ENDPOINT_KEYS_ENV = "LONGGRAPH_ENDPOINT_KEYS"
"""The keys of allowed endpoints: ``URL=KEY`` entries separated by commas (a key is everything after
the entry's first ``=``). An allowed endpoint not listed gets no key."""


def endpoint_keys(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Endpoint identity → its key, from :data:`ENDPOINT_KEYS_ENV`."""
    keys: dict[str, str] = {}
    for number, entry in enumerate(_listed(ENDPOINT_KEYS_ENV, environ), start=1):
        url, sep, key = entry.partition("=")
        if not sep or not key.strip() or "://" not in url:
            raise ConfigurationError(
                f"{ENDPOINT_KEYS_ENV}: entry {number} is not URL=KEY (not shown: it may hold a key)"
            )
        keys[endpoint_identity(url)] = key.strip()
    return keys


def endpoint_key(context: Context, operator: Context, environ: Mapping[str, str] | None = None) -> str:
    """The key a served run sends: the operator's (``LONGGRAPH_API_KEY``) only when every endpoint it
    talks to is the operator's own; an allowed endpoint's own key from :data:`ENDPOINT_KEYS_ENV`; none
    ("EMPTY") for an allowed endpoint without one. One run holds one key, so a run whose endpoints would
    need two keys is refused. Before, the operator's key went to every allowed endpoint: an operator
    who allowed a third party's endpoint handed it the key."""
    own = {endpoint_identity(url) for url in [*operator.base_urls, *_urls(operator.embedding_url)]}
    listed = endpoint_keys(environ)
    used = [endpoint_identity(url) for url in [*context.base_urls, *_urls(context.embedding_url)]]
    keys = {operator.api_key if url in own else listed.get(url, "EMPTY") for url in used}
    if len(keys) > 1:
        raise ConfigurationError(
            "refused: the run's endpoints take different keys (the operator's, an allowed endpoint's own, "
            f"or none: {ENDPOINT_KEYS_ENV}); name endpoints that share one"
        )
    return keys.pop() if keys else operator.api_key


def problems_in_payload(value: Any) -> list[str]:
    """The settings problems of everything a client sends that a run's context is built from: a run's
    ``context`` and ``config.configurable``, an assistant's or cron's the same, at any depth of the
    payload's ``context``/``config``/``configurable`` keys (a batch of runs included)."""
    operator = served_operator()
    found: list[str] = []
    for key, settings in _settings_maps(value):
        found += setting_problems(settings, operator)
        if key == "context":
            found += [
                f"{name!r} is not a run setting (docs/configuration.md)"
                for name in unknown_settings(settings)
            ]
    for configurable, context in _configurables(value):
        found += unread_in_configurable(configurable, context)
    return sorted(set(found))


def unread_in_configurable(configurable: Mapping[str, Any], context: Mapping[str, Any]) -> list[str]:
    """A run setting, or a near miss of one, in ``config.configurable`` that is not the server's copy
    of the same ``context`` entry: longgraph reads its settings from the run's ``context`` only, so the
    server would keep it and run without it. The configurable also carries LangGraph's own keys
    (``thread_id``, ``langgraph_auth_user_id``, …) and a caller's, so only names that are settings or
    within one or two letters of one are refused."""
    names = [f.name for f in dataclasses.fields(Context)]
    found = []
    for key in map(str, configurable):
        if key in context and context[key] == configurable[key]:
            continue  # the server copies a run's context into its configurable
        if key in names:
            found.append(f"{key!r} in config.configurable is not read: run settings go in the run's context")
        elif near := difflib.get_close_matches(key, names, n=1, cutoff=0.8):
            found.append(
                f"{key!r} in config.configurable is not a run setting (did you mean {near[0]!r}? "
                "run settings go in the run's context)"
            )
    return found


def unknown_settings(settings: Mapping[str, Any]) -> list[str]:
    """The keys of a run's context that are no :class:`Context` field: refused as the Python API refuses
    them (``coerce_context``), where the server would drop them and run without what was meant."""
    return sorted(str(k) for k in set(settings) - {f.name for f in dataclasses.fields(Context)})


def _configurables(value: Any, depth: int = 0) -> Iterable[tuple[Mapping[str, Any], Mapping[str, Any]]]:
    """Each ``config.configurable`` of a payload, at any depth, with the ``context`` beside its
    ``config`` (empty when there is none)."""
    if depth > 6:
        return
    if isinstance(value, Mapping):
        config = value.get("config")
        if isinstance(config, Mapping) and isinstance(config.get("configurable"), Mapping):
            context = value.get("context")
            yield config["configurable"], context if isinstance(context, Mapping) else {}
        for inner in value.values():
            if isinstance(inner, Mapping | list | tuple):
                yield from _configurables(inner, depth + 1)
    elif isinstance(value, list | tuple):
        for inner in value:
            yield from _configurables(inner, depth + 1)


def _settings_maps(value: Any, depth: int = 0) -> Iterable[tuple[str, Mapping[str, Any]]]:
    if depth > 6:
        return
    if isinstance(value, Mapping):
        for key, inner in value.items():
            if key in ("context", "configurable") and isinstance(inner, Mapping):
                yield key, inner
            if isinstance(inner, Mapping | list | tuple):
                yield from _settings_maps(inner, depth + 1)
    elif isinstance(value, list | tuple):
        for inner in value:
            yield from _settings_maps(inner, depth + 1)


def input_chars(graph_input: Any) -> int:
    """How many characters a run's input holds (question, document, documents' titles and texts), read
    from the raw payload without validating it: what ``max_input_chars`` bounds."""
    if not isinstance(graph_input, Mapping):
        return 0
    size = 0
    for key in ("question", "document"):
        if isinstance(graph_input.get(key), str):
            size += len(graph_input[key])
    documents = graph_input.get("documents")
    if isinstance(documents, list):
        for doc in documents:
            if isinstance(doc, str):
                size += len(doc)
            elif isinstance(doc, Mapping):
                size += sum(len(doc[k]) for k in ("title", "text") if isinstance(doc.get(k), str))
    return size
