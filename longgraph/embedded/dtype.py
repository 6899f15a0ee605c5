"""Which dtype the embedded vLLM server computes in: bfloat16 where this CPU does it fast, else float32.

Measured, not assumed: on a 2-core AMD EPYC with AVX2 and no AVX-512 (November 2026) a 2048² bfloat16
matrix product ran at 0.2 GFLOP/s against 58 GFLOP/s in float32, and the server, started in bfloat16
as the recipe said, took ~13 minutes for 12K prompt tokens that the same recipe serves in ~10 s on a
CPU with native bfloat16. Reading the CPU flags would need a table of which instruction sets make
bfloat16 fast in PyTorch's CPU kernels; timing one small product in each dtype answers directly, in
the interpreter vLLM will run in, for ~2 s at start-up (the server itself takes 25–90 s).
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass

from longgraph.embedded.common import logger

SLOWDOWN_LIMIT = 2.0
"""bfloat16 is kept while it is at most this many times slower than float32 (it halves the memory)."""

_PROBE = """
import json, time, torch
def rate(dtype):
    a = torch.randn(384, 384).to(dtype); b = torch.randn(384, 384).to(dtype)
    a @ b
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter(); a @ b; best = min(best, time.perf_counter() - t)
    return best
print(json.dumps({"float32": rate(torch.float32), "bfloat16": rate(torch.bfloat16)}))
"""


@dataclass(frozen=True)
class DtypeChoice:
    dtype: str
    reason: str


def choose_dtype(requested: str, python: str) -> DtypeChoice:
    """``requested`` unless it is ``auto``; for ``auto``, time a matrix product in both dtypes with
    ``python`` (vLLM's interpreter) and keep bfloat16 unless it is over :data:`SLOWDOWN_LIMIT` times
    slower. A probe that fails picks float32: slower to start nothing, never 300 times slower."""
    if requested != "auto":
        return DtypeChoice(requested, "set explicitly")
    try:
        done = subprocess.run([python, "-c", _PROBE], capture_output=True, text=True, timeout=120, check=True)
        seconds = json.loads(done.stdout.strip().splitlines()[-1])
        ratio = float(seconds["bfloat16"]) / max(float(seconds["float32"]), 1e-9)
    except (OSError, subprocess.SubprocessError, ValueError, KeyError, IndexError) as exc:
        logger.warning("could not time bfloat16 on this CPU (%s); the server computes in float32", exc)
        return DtypeChoice("float32", f"the bfloat16 probe failed ({type(exc).__name__})")
    return decide(ratio)


def decide(ratio: float) -> DtypeChoice:
    """The choice for a measured bfloat16 / float32 time ratio."""
    if ratio <= SLOWDOWN_LIMIT:
        return DtypeChoice("bfloat16", f"bfloat16 timed at {ratio:.2f}x float32 on this CPU")
    return DtypeChoice("float32", f"bfloat16 timed at {ratio:.0f}x slower than float32 on this CPU")
