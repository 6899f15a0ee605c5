"""Does one user's flood of near-limit documents slow another user's short run on the same server?

``python -m longgraph.evals.bench.served_isolation [--chars 36000000] [--flood 4] [--latency 0.2]``

One stub (a subprocess, fixed latency per call) is the model. ``langgraph dev`` (auth on, users alice
and bob) is started twice, side by side in one run: once with one slot for large inputs
(``LONGGRAPH_LARGE_INPUT_SLOTS=1``, the default) and once with none (``0``: every large input prepared
at once, as before the slot). In each, bob's short mapreduce run is timed on the idle server (median of
three), then alice sends ``--flood`` runs of ``--chars``-character documents at once (``max_calls: 1``:
they stop at their budget after chunking, or at ``prepare_timeout_s``), and bob's run is timed again,
one run after another, until all of alice's have ended (median and slowest). Printed: bob's idle and flooded seconds and their ratio
for each setting, what alice's runs ended with, and ``flooded_over_idle`` (with the slot). Target:
at most 2. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langgraph_sdk import get_client

from longgraph.evals.bench import load_average, print_figures
from longgraph.testing.langgraph_dev import run_langgraph_dev
from longgraph.testing.stub_server import STUB_SETTINGS, StubConfig, run_stub_in_subprocess

GRAPH = "mapreduce"
FILLER = (
    "The committee met on a grey morning to discuss the harvest, the state of the roads and the price "
    "of bread in the valley villages, and as usual nobody agreed on anything of consequence. "
)


def planted(chars: int, fact: str) -> str:
    """``chars`` characters of filler with ``fact`` in the middle."""
    filler = (FILLER * (chars // len(FILLER) + 1))[:chars]
    cut = filler.rfind(" ", 0, len(filler) // 2) + 1
    return filler[:cut] + "\n\n" + fact + "\n\n" + filler[cut:]


def _bob_input(i: int) -> dict[str, Any]:
    fact = f"The code word is zephyr{i}{secrets.token_hex(3)}."  # new text: no cached answer
    return {"question": "What is the code word?", "document": planted(6_000, fact=fact)}


async def _bob(url: str, token: str, context: dict[str, Any], i: int) -> float:
    client = get_client(url=url, timeout=600, headers={"Authorization": f"Bearer {token}"})
    started = time.perf_counter()
    await client.runs.wait(None, GRAPH, input=_bob_input(i), context=context, raise_error=False)
    return time.perf_counter() - started


async def _alice(url: str, token: str, context: dict[str, Any], document: str) -> str:
    client = get_client(url=url, timeout=900, headers={"Authorization": f"Bearer {token}"})
    raw = await client.runs.wait(
        None, GRAPH, input={"question": "What is the code word?", "document": document},
        context={**context, "max_calls": 1}, raise_error=False,
    )  # fmt: skip
    error = raw.get("__error__") if isinstance(raw, dict) else None
    return str(error.get("error")) if isinstance(error, dict) else "answered"


async def _scenario(
    url: str, tokens: dict[str, str], context: dict[str, Any], chars: int, flood: int
) -> dict[str, Any]:
    await _bob(url, tokens["bob"], context, 0)  # the kit and the endpoint looked up
    idle = statistics.median([await _bob(url, tokens["bob"], context, i) for i in range(1, 4)])
    document = planted(chars, fact="The code word is granite.")
    started = time.perf_counter()
    alice = [asyncio.create_task(_alice(url, tokens["alice"], context, document)) for _ in range(flood)]
    await asyncio.sleep(2.0)  # the requests are sent
    flooded: list[float] = []
    while not all(task.done() for task in alice):  # bob's runs, one after another, until alice's end
        flooded.append(await _bob(url, tokens["bob"], context, 4 + len(flooded)))
    outcomes = await asyncio.gather(*alice)
    return {
        "idle_s": round(idle, 3),
        "flooded_runs": len(flooded),
        "flooded_s": round(statistics.median(flooded), 3),
        "flooded_max_s": round(max(flooded), 3),
        "flooded_over_idle": round(statistics.median(flooded) / idle, 2),
        "flooded_max_over_idle": round(max(flooded) / idle, 2),
        "alice": ", ".join(f"{outcomes.count(o)} {o}" for o in sorted(set(outcomes))),
        "alice_done_s": round(time.perf_counter() - started, 1),
    }


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--chars", type=int, default=36_000_000)
    parser.add_argument("--flood", type=int, default=4)
    parser.add_argument("--latency", type=float, default=0.2)
    args = parser.parse_args(argv)
    tokens = {user: f"tok-{user}-{secrets.token_hex(8)}" for user in ("alice", "bob")}
    context = {key: value for key, value in STUB_SETTINGS.items() if key != "model"}
    figures: dict[str, Any] = {"load_before": load_average()}
    with run_stub_in_subprocess(StubConfig(model="stub", latency_s=args.latency)) as stub:
        for slots in ("1", "0"):
            env = {
                "LONGGRAPH_BASE_URL": stub.base_url, "LONGGRAPH_MODEL": "stub",
                "LONGGRAPH_AUTH_TOKENS": ",".join(f"{u}:{t}" for u, t in tokens.items()),
                "LONGGRAPH_USER_RUNS": str(args.flood + 2), "LONGGRAPH_MAX_INPUT_CHARS": str(args.chars + 10_000),
                "LONGGRAPH_LARGE_INPUT_SLOTS": slots,
            }  # fmt: skip
            with (
                tempfile.TemporaryDirectory(prefix="longgraph-isolation-") as workdir,
                run_langgraph_dev(Path(workdir), allow_blocking=True, env=env) as server,
            ):
                measured = asyncio.run(_scenario(server.url, tokens, context, args.chars, args.flood))
            label = "one_slot" if slots == "1" else "no_slot"
            figures.update({f"{label}_{key}": value for key, value in measured.items()})
    figures["flooded_over_idle"] = figures["one_slot_flooded_over_idle"]
    figures["load_after"] = load_average()
    print_figures("served isolation", figures)
    return figures


if __name__ == "__main__":
    main()
