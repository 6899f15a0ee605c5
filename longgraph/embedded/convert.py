"""Converting a GGUF file into a safetensors folder vLLM can load, in a fresh interpreter."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

from longgraph.embedded.common import _INSTALL_HINT, _LOG_TAIL_LINES, EmbeddedServerError, _offline_env


def _require_modules(*names: str) -> None:
    missing = [name for name in names if importlib.util.find_spec(name) is None]
    if missing:
        raise EmbeddedServerError(f"missing Python package(s) {', '.join(missing)}; {_INSTALL_HINT}")


# argv = [gguf_dir, gguf_name, out_dir, architecture]. transformers reads the architecture's own tensor
# layout from the GGUF (Qwen2's q/k/v biases, tied embeddings); the class name is written into the
# config because vLLM picks its implementation by it.
_CONVERT_SCRIPT = """
import sys
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

src, name, out, architecture = sys.argv[1:5]
tokenizer = AutoTokenizer.from_pretrained(src, gguf_file=name)
model = AutoModelForCausalLM.from_pretrained(src, gguf_file=name)
# save_pretrained refuses a model loaded from GGUF while the quantizer marks are present; the weights
# are already dequantised, so drop the marks and save plain bf16 safetensors that vLLM can load.
model.hf_quantizer = None
if hasattr(model.config, "quantization_config"):
    del model.config.quantization_config
model.config.architectures = [architecture]
model.to(torch.bfloat16).save_pretrained(out)
tokenizer.save_pretrained(out)
"""


def convert_gguf(
    gguf: Path, out_dir: Path, architecture: str, *, timeout: float = 1800.0, python: str | None = None
) -> None:
    """Write ``gguf`` as bf16 safetensors plus its tokenizer into the existing folder ``out_dir``.

    Runs in a subprocess: it imports torch and transformers (seconds, gigabytes) that a CLI printing a
    URL should not pay for. Raises :class:`EmbeddedServerError` (with the output's tail) on failure or
    timeout; the caller owns ``out_dir`` and removes it then.
    """
    _require_modules("torch", "transformers", "gguf", "accelerate")
    try:
        proc = subprocess.run(
            [
                python or sys.executable,
                "-c",
                _CONVERT_SCRIPT,
                str(gguf.parent),
                gguf.name,
                str(out_dir),
                architecture,
            ],
            env=_offline_env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise EmbeddedServerError(f"model conversion timed out after {timeout:.0f} s") from exc
    if proc.returncode != 0 or not any(out_dir.glob("*.safetensors")):
        tail = "\n".join((proc.stderr or proc.stdout).splitlines()[-_LOG_TAIL_LINES:])
        raise EmbeddedServerError(
            f"model conversion failed (exit code {proc.returncode})", log_tail=tail or None
        )
