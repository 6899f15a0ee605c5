"""The source states contracts, not case histories: no numbered round of work ("session 45's split")
in any module, prompt or docstring of the package, the README or the docs (a commit message is where
such history belongs). Tests may name their own data."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("longgraph", "graphs", "nodes", "state", "prompts", "evals", "docs")
HISTORY = re.compile(r"\bsessions?[ -]\d+", re.IGNORECASE)


def _files() -> list[Path]:
    found = [ROOT / "README.md"]
    for folder in SOURCES:
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in (".py", ".toml", ".md") and "results" not in path.parts:
                found.append(path)
    return found


def test_no_numbered_rounds_of_work_in_the_source_or_the_docs() -> None:
    files = _files()
    assert len(files) > 100  # the walk found the package, not an empty folder
    cited = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()[:80]}"
        for path in files
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if HISTORY.search(line)
    ]
    assert not cited, "\n".join(cited[:20])
