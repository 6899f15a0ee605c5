"""``longgraph ask FILE -q Q1 -q Q2 -q Q1`` over HTTP against the stub: each answer printed after its
question, the first question first, a question asked twice answered once and printed at both places."""

from __future__ import annotations

from pathlib import Path

import pytest

from longgraph.testing.stub_server import run_stub_in_thread
from longgraph.tests.conftest import QUESTION, planted
from longgraph.tests.integration.support import run_longgraph, stub_cli_args

pytestmark = pytest.mark.integration

OTHER = "Who wrote the letter about the harbour?"


def test_several_questions_each_answered_after_its_question(tmp_path: Path) -> None:
    (tmp_path / "doc.txt").write_text(planted(9_000), encoding="utf-8")
    with run_stub_in_thread() as stub:
        args = [
            "ask",
            str(tmp_path / "doc.txt"),
            "-q",
            QUESTION,
            "-q",
            OTHER,
            "-q",
            f" {QUESTION}",
            "--no-cache",
        ]
        done = run_longgraph([*args, *stub_cli_args(stub.base_url)], home=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    blocks = [b for b in done.stdout.split("Q: ")[1:]]
    assert len(blocks) == 3 and blocks[0].startswith(QUESTION), done.stdout
    asked = sorted(b.splitlines()[0].strip() for b in blocks)
    assert asked == sorted([QUESTION, QUESTION, OTHER])
    for block in blocks:
        if block.startswith(QUESTION) or block.startswith(f" {QUESTION}"):
            assert "smoked plums" in block, block
