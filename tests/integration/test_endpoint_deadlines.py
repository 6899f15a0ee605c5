"""``--timeout`` is a deadline for every request a run makes, the model listing included.

httpx's timeout bounds each read; an endpoint answering ``GET /models`` a byte at a time passes every
read within it and, without a whole-request deadline, held ``ask --timeout 10 --retries 1`` for
minutes. The stub's ``trickle_s`` answers the listing so.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from longgraph.testing.faults import StubConfig
from longgraph.testing.stub_server import run_stub_in_thread
from longgraph.tests.conftest import QUESTION, planted
from longgraph.tests.integration.support import run_longgraph, stub_cli_args

pytestmark = pytest.mark.integration


def test_a_trickled_model_listing_ends_at_the_timeout_with_one_clear_line(tmp_path: Path) -> None:
    (tmp_path / "doc.txt").write_text(planted(3_000), encoding="utf-8")
    with run_stub_in_thread(StubConfig(trickle_s=0.5)) as stub:  # its ~150-byte listing takes 75 s
        args = ["ask", str(tmp_path / "doc.txt"), "-q", QUESTION, "--no-cache",
                *stub_cli_args(stub.base_url, model=None, context_window=None), "--timeout", "2", "--retries", "1"]  # fmt: skip
        started = time.monotonic()
        done = run_longgraph(args, home=tmp_path, timeout=60)
        took = time.monotonic() - started
        chats = stub.stats()["requests"]
    assert done.returncode == 3, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "could not list models" in lines[0] and "no answer within 2 s" in lines[0], (
        lines
    )
    assert took < 30, f"{took:.1f} s"  # the deadline (2 s), not the trickle (75 s)
    assert chats == 0
