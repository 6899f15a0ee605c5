"""Tests marked with one ``xdist_group`` run on one worker under ``--dist loadgroup``, as the served
suites rely on (their ``langgraph dev`` servers are per module); see ``tests/xdist_groups.py``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TOY_CONFTEST = "from longgraph.tests.xdist_groups import pytest_collection_modifyitems  # noqa: F401\n"
TOY_TESTS = """
import os
import pytest

def record(name):
    with open(os.environ["TOY_RECORD"], "a") as out:
        out.write(f"{name} {os.environ['PYTEST_XDIST_WORKER']}\\n")

@pytest.mark.xdist_group("together")
@pytest.mark.parametrize("i", range(6))
def test_grouped(i):
    record(f"grouped-{i}")

@pytest.mark.parametrize("i", range(6))
def test_free(i):
    record(f"free-{i}")
"""


def test_grouped_tests_run_on_one_worker(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(TOY_CONFTEST, encoding="utf-8")
    (tmp_path / "test_toy.py").write_text(TOY_TESTS, encoding="utf-8")
    record = tmp_path / "record.txt"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", "--dist", "loadgroup",
         "--rootdir", str(tmp_path), str(tmp_path / "test_toy.py")],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, env={**_without_pytest_vars(), "TOY_RECORD": str(record)},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    ran = dict(line.split() for line in record.read_text(encoding="utf-8").splitlines())
    assert len(ran) == 12, ran
    grouped = {worker for name, worker in ran.items() if name.startswith("grouped-")}
    assert len(grouped) == 1, f"the grouped tests ran on {sorted(grouped)}"
    # Both workers took part, so one worker for the group is the grouping, not a lone worker.
    assert len(set(ran.values())) == 2, ran


def _without_pytest_vars() -> dict[str, str]:
    """The outer run's pytest and xdist variables (its worker's name among them) are not the toy's."""
    return {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
