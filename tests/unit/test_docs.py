"""The docs cannot drift from the code where a test can hold them to it: the configuration reference's
defaults are the typed settings' (``state/context.py``), and every relative link in the README and
``docs/`` leads to a file that exists."""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path

import pytest

from longgraph.state.context import Context

ROOT = Path(__file__).resolve().parents[2]
FILLED_IN_BY_LONGGRAPH = frozenset({"profile", "cache_scope"})
"""Fields a user does not set (named in the reference's prose, not its table)."""
_ROW = re.compile(r"^\| (`[^|]+`) \| ([^|]+) \|", re.MULTILINE)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def documented_defaults() -> dict[str, str]:
    """Setting → its default as the reference's table writes it (a row naming several settings gives
    their defaults separated by commas, in order)."""
    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    found: dict[str, str] = {}
    for names_cell, default_cell in _ROW.findall(text):
        names = re.findall(r"`([a-z_]+)`", names_cell)
        parts = [p.strip() for p in default_cell.split(", ")]
        defaults = (
            parts if len(names) > 1 and len(parts) == len(names) else [default_cell.strip()] * len(names)
        )
        found.update(zip(names, defaults, strict=True))
    return found


def _literal(written: str) -> str | None:
    """The value a default cell states literally (``512``, ``true``, `` `auto` ``), or None for prose."""
    written = written.strip()
    if _NUMBER.fullmatch(written) or written in ("true", "false"):
        return written
    quoted = re.fullmatch(r"`([^`]+)`", written)
    return quoted.group(1) if quoted else None


def test_every_setting_is_in_the_reference_with_its_default(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith("LONGGRAPH_")]:
        monkeypatch.delenv(name)
    defaults = {f.name: getattr(Context(), f.name) for f in dataclasses.fields(Context)}
    documented = documented_defaults()
    assert sorted(set(defaults) - set(documented) - FILLED_IN_BY_LONGGRAPH) == [], "settings missing"
    assert sorted(set(documented) - set(defaults)) == [], "documented settings that do not exist"
    wrong = []
    for name, written in documented.items():
        value, literal = defaults[name], _literal(written)
        if value is None:
            ok = literal is None  # prose: "none", "derived", "the endpoint's …"
        elif isinstance(value, bool):
            ok = literal == str(value).lower()
        elif isinstance(value, int | float):
            ok = literal is not None and _NUMBER.fullmatch(literal) is not None and float(literal) == value
        else:
            ok = literal == value
        if not ok:
            wrong.append(f"{name}: documented {written!r}, the code's {value!r}")
    assert wrong == []


def test_the_check_sees_a_wrong_default() -> None:
    """The comparison above is not vacuous: a table cell of 0.7 for a default of 0 is caught."""
    assert _literal("0.7") == "0.7" and float("0.7") != Context().temperature
    assert _literal("none (served: the operator's)") is None and _literal("`auto`") == "auto"


_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _anchors(page: Path) -> set[str]:
    """The heading anchors GitHub makes of a page: lower case, punctuation dropped, spaces as ``-``."""
    headings = re.findall(r"^#{1,6} (.+)$", _without_code(page.read_text(encoding="utf-8")), re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def _without_code(text: str) -> str:
    return re.sub(r"```.*?```", "", text, flags=re.DOTALL)


def _relative_links(page: Path) -> list[str]:
    """Links to files of the repository (``path``, ``path#anchor`` or ``#anchor``), not to the web."""
    text = _without_code(page.read_text(encoding="utf-8"))
    return [target for target in _LINK.findall(text) if not re.match(r"^[a-z][a-z0-9+.-]*:", target)]


def _broken(page: Path, link: str) -> bool:
    path, _, anchor = link.partition("#")
    target = (page.parent / path) if path else page
    if not target.exists():
        return True
    return bool(anchor) and target.suffix == ".md" and anchor not in _anchors(target)


PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_leads_to_a_file_and_its_heading(page: Path) -> None:
    assert [link for link in _relative_links(page) if _broken(page, link)] == []


def test_the_link_check_sees_a_broken_link(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# Top\n## Users and tokens\n[a](missing.md) [b](#users-and-tokens) [c](#nope) [d](page.md#top)"
    )
    assert [link for link in _relative_links(page) if _broken(page, link)] == ["missing.md", "#nope"]
    assert sum(len(_relative_links(p)) for p in PAGES) >= 5  # the real pages have links to check
