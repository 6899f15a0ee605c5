"""The run context: everything a run may be configured with, in one typed place.

Set per call (``graph.invoke(input, context={...})``), by environment variables (``LONGGRAPH_<FIELD>``,
read when a context is built, so a partial ``context={...}`` still picks up the environment), or by
CLI flags (which build the same object). Nodes read it from ``runtime.context``; nothing is read
from module globals.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from longgraph.errors import ConfigurationError

TaskFamily = Literal["qa", "mc", "retrieval", "code", "math", "summary"]
StructuredMode = Literal["auto", "json_schema", "text"]
EdgeSetting = Literal["auto", "attention", "embedding"]
EmbeddingPrecision = Literal["auto", "float32", "bfloat16"]
VerifySetting = Literal["auto", "on", "off"]
PlanSetting = Literal["auto", "on", "off"]
UnconfirmedSetting = Literal["show", "withhold"]
LayoutSetting = Literal["auto", "shared_prefix", "question_first"]
ENV_PREFIX = "LONGGRAPH_"
DEFAULT_WINDOW = 8192
"""L when neither the context nor the endpoint says (vLLM reports ``max_model_len``)."""
MAX_CONCURRENCY = 4096
MAX_RETRIES = 100
MAX_WINDOW = 1 << 24
"""16.7M tokens: larger than any served model's window; a bigger ``context_window`` is a typo."""


def _env(name: str, default: Any, cast: Callable[[str], Any] = str) -> Callable[[], Any]:
    """A default factory that reads ``LONGGRAPH_<NAME>`` when the context is built."""

    def factory() -> Any:
        raw = os.environ.get(ENV_PREFIX + name.upper())
        if raw is None or raw == "":
            return default
        try:
            return cast(raw)
        except ValueError as exc:
            raise ConfigurationError(f"{ENV_PREFIX}{name.upper()}={raw!r} is not valid: {exc}") from exc

    return factory


def _urls(raw: str) -> str | list[str]:
    parts = [p.strip() for p in raw.split(",") if p.strip()]
    return parts[0] if len(parts) == 1 else parts


def _bool(raw: str) -> bool:
    value = raw.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ValueError("expected true or false")


def _optional_int(raw: str) -> int | None:
    return None if raw.lower() in ("", "none", "auto") else int(raw)


def _optional_float(raw: str) -> float | None:
    return None if raw.lower() in ("", "none", "auto") else float(raw)


def _check_url(name: str, url: object) -> None:
    """A settings error for a URL no HTTP client could use (named, credentials redacted)."""
    from urllib.parse import urlsplit

    from longgraph.redact import redact_url

    if not isinstance(url, str) or not url.strip():
        raise ConfigurationError(f"{name} is empty: give an http(s) URL such as http://localhost:8000/v1")
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in url):  # a trailing newline too: the
        # client would send it, and the failure would come from deep inside the HTTP library
        raise ConfigurationError(f"{name} {redact_url(url)!r} holds spaces or control characters")
    try:
        parts = urlsplit(url.strip())
        port = parts.port  # a port that is no number (http://h:abc/v1) raises here
    except ValueError as exc:
        raise ConfigurationError(f"{name} {redact_url(url)!r} is not a valid URL ({exc})") from exc
    if parts.scheme not in ("http", "https") or not parts.netloc or not parts.hostname:
        raise ConfigurationError(
            f"{name} {redact_url(url)!r} is not an http(s) URL (expected e.g. http://host:8000/v1)"
        )
    if port == 0:
        raise ConfigurationError(f"{name} {redact_url(url)!r}: port 0 is no port")


CHOICES: dict[str, tuple[str, ...]] = {
    "task": get_args(TaskFamily),
    "structured_output": get_args(StructuredMode),
    "embedding_precision": get_args(EmbeddingPrecision),
    "attention_precision": get_args(EmbeddingPrecision),
    "verify_answers": get_args(VerifySetting),
    "on_unconfirmed": get_args(UnconfirmedSetting),
    "plan_records": get_args(PlanSetting),
    "prompt_layout": get_args(LayoutSetting),
    "pecan_edges": get_args(EdgeSetting),
    "prompt_variant": ("compact", "paper"),
}
"""Settings that take one of a few words, and the words."""

POSITIVE_COUNTS = (
    "max_output_tokens",
    "max_concurrency",
    "max_collapse_rounds",
    "segment_size",
    "rag_top_k",
    "tom_chunk_tokens",
    "rag_chunk_tokens",
    "embedding_piece_tokens",
    "pecan_chunk_tokens",
    "pecan_batch_tokens",
    "pecan_patience",
    "pecan_max_nodes",
    "pecan_fixed_k",
    "pyramid_fan_in",
    "pyramid_question_nodes",
    "pyramid_leaf_tokens",
    "context_window",
    "chunk_size",
)
"""Settings that count tokens, calls or nodes: whole numbers from 1 to ``MAX_WINDOW``."""

UNSET_ALLOWED = frozenset(
    {"pyramid_leaf_tokens", "context_window", "chunk_size", "frequency_penalty", "min_note_strength"}
)
"""Settings that may be left unset (derived from the model or the prompt, or the model's default)."""

RANGES: dict[str, tuple[float, float]] = {
    "min_note_strength": (0.0, 1.0),
    "max_failed_fraction": (0.0, 1.0),
    "frequency_penalty": (-2.0, 2.0),
    "temperature": (0.0, 2.0),
}
"""Settings that are a number within bounds."""


def _is_count(value: object, low: int, high: int | None) -> bool:
    """A whole number (not a bool) from ``low`` to ``high`` (no upper bound: None)."""
    return (
        isinstance(value, int)
        and not isinstance(value, bool)
        and low <= value
        and (high is None or value <= high)
    )


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


@dataclass(kw_only=True)
class Context:
    """Configuration of one run. Every field has a default; see the README's configuration table."""

    base_url: str | list[str] | None = field(default_factory=_env("base_url", None, _urls))
    """One OpenAI-compatible base URL (``http://host:port/v1``) or several replicas. None: the embedded server."""
    api_key: str = field(default_factory=_env("api_key", "EMPTY"), repr=False)
    """Sent as the bearer token; never logged, never in results or errors."""
    model: str | None = field(default_factory=_env("model", None))
    """The served model name. None: the first model the endpoint lists."""
    context_window: int | None = field(default_factory=_env("context_window", None, _optional_int))
    """L: the most tokens one LLM call may use (prompt plus output). None: the served model's
    ``max_model_len`` from ``/v1/models`` (vLLM reports it), else 8192."""
    chunk_size: int | None = field(default_factory=_env("chunk_size", None, _optional_int))
    """Tokens of document text per chunk. None: the served model's measured setting when longgraph has
    one (:data:`longgraph.endpoint.MODEL_PROFILES`: 1,500 for the embedded SmolLM2), else derived from L
    minus prompt, question and output."""
    profile: str = ""
    """The model whose measured settings filled in what the run left unset (set when the endpoint is
    resolved, said in the result's notes); empty: none applied."""
    max_output_tokens: int = field(default_factory=_env("max_output_tokens", 512, int))
    temperature: float = field(default_factory=_env("temperature", 0.0, float))
    """0 (greedy): the same question gets the same answer, as a reader of the result expects and as every
    published figure here was measured. The LLM×MapReduce paper sampled at 0.7: set it for that (or for
    varied Pyramid-Align data)."""
    max_concurrency: int = field(default_factory=_env("max_concurrency", 16, int))
    """Most requests in flight to each endpoint from this process."""
    adaptive_concurrency: bool = field(default_factory=_env("adaptive_concurrency", True, _bool))
    """Fewer requests in flight while the server is overloaded (429/503 answers, a growing vLLM queue
    at ``/metrics``), climbing back to ``max_concurrency`` as it drains (``longgraph/concurrency.py``)."""
    read_while_chunking: bool = field(default_factory=_env("read_while_chunking", True, _bool))
    """Each chunk's first reading leaves as soon as the chunk is final, while the rest of a long input is
    still being chunked (``nodes/early_calls.py``). False: calls leave only after chunking, as a dry run
    and a run interrupted after its chunk node need."""
    task: TaskFamily = field(default_factory=_env("task", "qa"))
    """Task family: picks the confidence rubric and answer instructions of the prompts."""
    request_timeout: float = field(default_factory=_env("request_timeout", 120.0, float))
    """Seconds before one HTTP request is abandoned (and retried)."""
    max_retries: int = field(default_factory=_env("max_retries", 3, int))
    """Retries per request on connection errors, timeouts, 429 and 5xx, with exponential backoff."""
    parse_retries: int = field(default_factory=_env("parse_retries", 1, int))
    """Extra attempts when a model answer cannot be parsed; then the chunk is recorded as failed."""
    structured_output: StructuredMode = field(default_factory=_env("structured_output", "auto"))
    """json_schema: constrained decoding (vLLM). text: the paper's labelled protocol, parsed tolerantly.
    auto: json_schema, falling back to text for an endpoint that rejects it."""
    tokenizer: str | None = field(default_factory=_env("tokenizer", None))
    """Path to the served model's tokenizer (exact counts); None: cl100k_base, offline."""
    max_collapse_rounds: int = field(default_factory=_env("max_collapse_rounds", 5, int))
    max_failed_fraction: float = field(default_factory=_env("max_failed_fraction", 0.2, float))
    """A run whose share of failed chunks exceeds this raises instead of answering from the rest.
    0.2: in 401 evaluation runs with SmolLM2 no chunk failed at all (failures come from a broken
    endpoint or prompt, not from a healthy model), while an answer from under four fifths of a document
    may well have missed what was asked; a run within the budget says how many chunks it answered from
    (and the CLI exits 4)."""
    max_calls: int | None = field(default_factory=_env("max_calls", None, _optional_int))
    """Most model calls one run may send (a batch: the whole corpus). The call that would pass it is
    not sent: the run stops with ``BudgetExhausted`` naming what was left undone (``longgraph/spending.py``).
    None: no limit. Result-cache hits are free."""
    max_prompt_tokens: int | None = field(default_factory=_env("max_prompt_tokens", None, _optional_int))
    """Most prompt tokens one run may send, counted before each call with the run's tokenizer (the
    server's count when it reports more). None: no limit."""
    prepare_timeout_s: float | None = field(default_factory=_env("prepare_timeout_s", None, _optional_float))
    """Seconds a run's input may take to be prepared — counted and cut into chunks, waiting for the
    process's one slot for large inputs included (``nodes/prepare.py``) — before its chunks are read;
    past it the run stops with an ``InputError`` saying how far it got. None: no limit (a served run's
    default is the operator's, else ``SERVED_BUDGETS``' 60 s: a near-limit document otherwise holds the
    server's cores for a minute before the budget that refuses its first read is even consulted)."""
    max_input_chars: int | None = field(default_factory=_env("max_input_chars", None, _optional_int))
    """Most characters one run's input may hold (question, titles and texts); a longer one is an
    ``InputError`` before any chunking or call. None: no limit (a served run's default is the
    operator's, sized to the server's memory: ``longgraph/serving_policy.py``)."""
    cache_path: str | None = field(default_factory=_env("cache_path", None))
    """SQLite file for the persistent result cache of map/collapse calls. None: no cache."""
    cache_scope: str = ""
    """Whose cached answers a run reads and writes (part of every cache key). A served run's is its
    authenticated user, set by the server (``longgraph/serving_policy.py``); empty elsewhere."""
    prompt_variant: str = field(default_factory=_env("prompt_variant", "compact"))
    """Prompts and protocol: "compact" (answer first, in words copied from the text, checked against
    the source; the default for every model) or "paper" (the papers' own prompts and protocols, e.g.
    LLM×MapReduce's four fields with self-reported confidence: the faithful variant)."""
    frequency_penalty: float | None = field(default_factory=_env("frequency_penalty", None, float))
    """OpenAI ``frequency_penalty`` on every call. None: 0.5 with the compact protocol, 0 with the paper's
    (measured with SmolLM2 on 30 needle chunks: 41 → 11 completion tokens per map call, the planted
    sentence still copied 5 of 5 times — chunks without the answer stop repeating a confabulation to
    the length cap)."""
    verify_answers: VerifySetting = field(default_factory=_env("verify_answers", "auto"))
    """A final answer its words do not confirm (a whole sentence, a paraphrase, a yes or no, a choice,
    a value worked out over several quotes: ``nodes/checks``) is put to the model in one verification
    call (``prompts/verify.toml``): "on" asks; "off" leaves it ``unconfirmed``. "auto": on, except for a
    model whose measured profile says it cannot verify (``longgraph/embedded/catalog.py``: the embedded
    SmolLM2-135M and Qwen2.5-Coder-0.5B answer it at chance: ``verify_probe``), which gets "off"."""
    on_unconfirmed: UnconfirmedSetting = field(default_factory=_env("on_unconfirmed", "show"))
    """An answer nothing confirms or refutes (verdict ``unconfirmed``): "show" returns it as the model gave
    it when some of its own words stand in a verified quote, ``supported`` False, with the quotes it
    rests on (the CLI marks it ``[UNCONFIRMED]``), so a user of a model that cannot verify still sees
    what it found; "withhold" answers NO INFORMATION and lists it first among the candidates. A refuted
    answer, or one in words of its own only, is withheld either way."""
    min_note_strength: float | None = field(default_factory=_env("min_note_strength", None, float))
    """Notes whose evidence-based confidence is under this share of the strongest note's are set aside
    before the final stage (reported ``filtered``); 0 keeps every verified note. Unset: the model's
    profile's (0.5 for the embedded models, whose reduce follows whatever note it reads), else 0: that
    confidence weighs the question's words in a note's quote, so the note on a chain's other hop,
    sharing few of them, would be the first set aside."""
    reread: bool = field(default_factory=_env("reread", True, _bool))
    """Compact protocol: a chunk that answered without quoting its text, but holds a sentence sharing at
    least half the question's words, is read once more, that sentence with its neighbours alone
    (``nodes/read.py``). Never with "paper"."""
    plan_records: PlanSetting = field(default_factory=_env("plan_records", "auto"))
    """``mapreduce``, ``segment-plus`` and ``tom`` (and their ablations) first plan the question (one call,
    ``nodes/records/``): one that aggregates (counts, sums, compares, ranks, groups, lists every one,
    follows a chain) is answered from records every chunk gives, computed by code; any other keeps the
    strategy's path. "off": no plan, no call. "auto": on, except for a model whose measured profile says
    it cannot plan (``longgraph/embedded/catalog.py``). The ``records`` strategy always plans."""
    prompt_layout: LayoutSetting = field(default_factory=_env("prompt_layout", "auto"))
    """Where a per-chunk prompt states the question. "shared_prefix": instructions, then the chunk,
    then the question, so that every question's call on a chunk shares its prefix (vLLM's prefix cache
    then computes a chunk once for all the questions asked of it). "question_first": the question also
    before the chunk, the layout a small model answers best from. "auto": the model's measured profile
    (``longgraph/embedded/catalog.py``), else "shared_prefix"."""
    segment_size: int = field(default_factory=_env("segment_size", 3000, int))
    """Segment+ segment size in tokens (the paper's best setting)."""
    tom_top_k: int = field(default_factory=_env("tom_top_k", 7, int))
    """ToM's query-aware compression: build the tree from the chunks most similar to the question
    (7, the paper's; 0: the whole document)."""
    tom_chunk_tokens: int = field(default_factory=_env("tom_chunk_tokens", 1000, int))
    """ToM's block size (the paper's 1,000 tokens; it uses 8,000 for InfiniteBench's ultra-long inputs)."""
    rag_top_k: int = field(default_factory=_env("rag_top_k", 5, int))
    """RAG baselines: how many retrieved chunks to show the model (Loong §4 uses 5, 10, 30, 50)."""
    rag_chunk_tokens: int = field(default_factory=_env("rag_chunk_tokens", 1024, int))
    """RAG baselines: tokens per retrieval chunk (Loong §4 uses 1024); capped by what the window holds."""
    embedding_url: str | None = field(default_factory=_env("embedding_url", None))
    """An OpenAI-compatible base URL serving ``/embeddings`` for ``rag-embed``. None: the bundled
    all-MiniLM-L6-v2 on the CPU, offline."""
    embedding_model: str | None = field(default_factory=_env("embedding_model", None))
    """With ``embedding_url``: the served model (None: the endpoint's first). Without: a local
    sentence-transformers folder to use instead of the bundled all-MiniLM-L6-v2."""
    embedding_precision: EmbeddingPrecision = field(default_factory=_env("embedding_precision", "auto"))
    """The local embedder's arithmetic: "bfloat16" runs 2.9x faster on a CPU with AMX or AVX512-BF16
    (measured: 24,000 against 8,200 word pieces per second on two cores, cosine to float32 >= 0.998,
    the same retrieval ranks: ``evals/bench/embedding_backends.py``) and far slower on one without;
    "auto" picks it where the CPU has those units, else "float32". Vectors are cached per precision."""
    embedding_piece_tokens: int = field(default_factory=_env("embedding_piece_tokens", 128, int))
    """Tokens per embedded piece: a chunk is embedded in pieces this long and scored by its best piece,
    so one relevant sentence is not averaged away in a 1024-token chunk. 128: what all-MiniLM-L6-v2 was
    trained on (its tokenizer truncates there); capped by the model's own limit."""

    pecan_chunk_tokens: int = field(default_factory=_env("pecan_chunk_tokens", 300, int))
    """PECAN's level-1 nodes: chunks of this many tokens (the paper's 300)."""
    pecan_batch_tokens: int = field(default_factory=_env("pecan_batch_tokens", 8000, int))
    """PECAN's threshold ``s``: a batch of nodes is filled in order up to this many tokens before the
    model writes its Information Points (the paper's 8K; never more than the window allows)."""
    pecan_edges: EdgeSetting = field(default_factory=_env("pecan_edges", "auto"))
    """How PECAN weighs its edges and the question's relevance: "attention" (a local model's attention,
    as the paper; needs ``attention_model``), "embedding" (embedding similarity, labelled as such), or
    "auto" (attention when a local model is at hand — the embedded server's — else embedding)."""
    attention_model: str | None = field(default_factory=_env("attention_model", None))
    """A local ``transformers`` model folder PECAN reads attention from (teacher-forcing the prompts).
    None: the embedded SmolLM2 folder when the run uses the embedded server."""
    attention_precision: EmbeddingPrecision = field(default_factory=_env("attention_precision", "auto"))
    """The attention reader's arithmetic, chosen as ``embedding_precision`` is: "bfloat16" read a
    6,948-token batch in 5.6 s against 14.5–15.0 s in float32 on two AMX cores, with the same strongest
    member for each of the 12 points and the same top three (weights within 0.002:
    ``evals/bench/pecan_costs.py --attention-tokens``); "auto" picks it where the CPU has the units."""
    pecan_patience: int = field(default_factory=_env("pecan_patience", 2, int))
    """PECAN's stop patience ``p``: the search ends after this many "Yes" answers (the paper finds F1
    saturating near 5; 1 is the base algorithm)."""
    pecan_max_nodes: int = field(default_factory=_env("pecan_max_nodes", 24, int))
    """The most nodes PECAN's search retrieves beyond the top level (the bound is recorded when hit);
    the search prompt's window bounds it too."""
    pecan_fixed_k: int = field(default_factory=_env("pecan_fixed_k", 8, int))
    """The ``pecan-fixed-k`` ablation: retrieve exactly this many nodes, asking no Yes/No question."""
    pyramid_fan_in: int = field(default_factory=_env("pyramid_fan_in", 3, int))
    """Pyramid-Align: how many lower nodes one upper node synthesises (the paper's "about three"; fewer
    when the window forces it)."""
    pyramid_leaf_tokens: int | None = field(default_factory=_env("pyramid_leaf_tokens", None, _optional_int))
    """Pyramid-Align's leaf (chunk) size; unset: what the synthesis prompt holds over ``pyramid_fan_in``,
    so that that many leaves fit one upper node's prompt."""
    pyramid_question_nodes: int = field(default_factory=_env("pyramid_question_nodes", 3, int))
    """Pyramid-Align: how many nodes (the seeded draw first, then others in a seeded order) are asked for
    a question before the document is filtered as "no question" (small models sometimes write a
    statement instead)."""

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Reject settings that cannot work, naming the field, before any call is made."""
        for name, allowed in CHOICES.items():
            value = getattr(self, name)
            if value not in allowed:
                raise ConfigurationError(f"{name} {value!r}: expected one of {', '.join(allowed)}")
        for name in POSITIVE_COUNTS:
            value = getattr(self, name)
            unset_allowed = name in UNSET_ALLOWED
            if (value is not None or not unset_allowed) and not _is_count(value, 1, MAX_WINDOW):
                raise ConfigurationError(
                    f"{name} must be a positive integer up to {MAX_WINDOW:,}"
                    + (" or unset" if unset_allowed else "")
                    + f", got {value!r}"
                )
        for name in ("max_calls", "max_prompt_tokens"):
            value = getattr(self, name)
            if value is not None and not _is_count(value, 1, None):
                raise ConfigurationError(f"{name} must be a positive integer or unset, got {value!r}")
        for name in ("max_retries", "parse_retries"):
            if not _is_count(value := getattr(self, name), 0, MAX_RETRIES):
                raise ConfigurationError(
                    f"{name} must be a whole number from 0 to {MAX_RETRIES}, got {value!r}"
                )
        if not _is_count(self.tom_top_k, 0, None):
            raise ConfigurationError(f"tom_top_k must be a whole number >= 0, got {self.tom_top_k!r}")
        for name, (low, high) in RANGES.items():
            value = getattr(self, name)
            if (value is not None or name not in UNSET_ALLOWED) and (
                not _is_number(value) or not low <= value <= high
            ):
                raise ConfigurationError(f"{name} must be in [{low:g}, {high:g}], got {value!r}")
        self._check_relations()
        if self.cache_path:
            from longgraph.redact import refuse_url_like_path

            refuse_url_like_path(str(self.cache_path), "cache_path")
        for url in [self.base_url] if isinstance(self.base_url, str) else list(self.base_url or []):
            _check_url("base_url", url)
        if self.embedding_url is not None:
            _check_url("embedding_url", self.embedding_url)

    def _check_relations(self) -> None:
        """Limits one setting puts on another, and bounds that are not a plain range."""
        if self.max_concurrency > MAX_CONCURRENCY:
            raise ConfigurationError(
                f"max_concurrency must be at most {MAX_CONCURRENCY} requests in flight, got {self.max_concurrency!r}"
            )
        if self.context_window is not None and self.max_output_tokens >= self.context_window:
            raise ConfigurationError(
                f"max_output_tokens ({self.max_output_tokens}) must be smaller than context_window "
                f"({self.context_window})"
            )
        if not _is_number(self.request_timeout) or not 0 < self.request_timeout <= 86400:
            raise ConfigurationError(
                f"request_timeout must be positive seconds, at most a day, got {self.request_timeout!r}"
            )
        if self.prepare_timeout_s is not None and not (
            _is_number(self.prepare_timeout_s) and 0 < self.prepare_timeout_s <= 86400
        ):
            raise ConfigurationError(
                f"prepare_timeout_s must be positive seconds, at most a day, got {self.prepare_timeout_s!r}"
            )

    @property
    def penalty(self) -> float:
        """The frequency penalty in effect (see ``frequency_penalty``)."""
        if self.frequency_penalty is not None:
            return float(self.frequency_penalty)
        return 0.5 if self.prompt_variant == "compact" else 0.0

    @property
    def window(self) -> int:
        """L, once resolved (``nodes/kit.py`` fills it in from the endpoint before any node runs)."""
        return self.context_window if self.context_window is not None else DEFAULT_WINDOW

    @property
    def base_urls(self) -> list[str]:
        if self.base_url is None:
            return []
        return [self.base_url] if isinstance(self.base_url, str) else list(self.base_url)

    def replace(self, **changes: Any) -> Context:
        return dataclasses.replace(self, **changes)

    def public_dict(self) -> dict[str, Any]:
        """The settings without the secret: safe for logs, results and cache keys."""
        data = dataclasses.asdict(self)
        data.pop("api_key", None)
        return data


def coerce_context(value: Context | dict[str, Any] | None) -> Context:
    """Build a context from a dict (unknown keys are an error, not silently ignored)."""
    if value is None:
        return Context()
    if isinstance(value, Context):
        return value
    known = {f.name for f in dataclasses.fields(Context)}
    unknown = sorted(set(value) - known)
    if unknown:
        raise ConfigurationError(f"unknown context setting(s): {', '.join(unknown)}")
    return Context(**value)
