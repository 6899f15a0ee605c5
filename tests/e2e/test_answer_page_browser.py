"""Answer pages in a real headless Chromium: for mapreduce, Segment+, ToM and PECAN results and for two
strategies side by side, the DOM Chromium builds has each evidence span highlighted at its offsets, one
strip cell per chunk with its status, a chunk's panel shown when its cell is followed, and no script
from a hostile document; the screenshots are drawn pages, not blank ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from longgraph.answerview import AnswerView, html_page
from longgraph.state.contract import DocumentIn, GraphOutput
from longgraph.testing.browser import dump_dom, screenshot
from longgraph.tests.conftest import FACT, QUESTION, planted
from longgraph.tests.unit.test_answer_page import HOSTILE, Page, answered

pytestmark = pytest.mark.e2e

TEXT = planted(24_000, at=0.6) + f"\n\n{HOSTILE}\n"


def _check(dom: str, views: list[GraphOutput]) -> None:
    parsed = Page(dom)
    assert "img" not in parsed.tags and "alert" not in "".join(parsed.tags)
    assert dom.count("<script") == 0  # the document's <script> is text
    for index, result in enumerate(views):
        cells = [c for c in parsed.cells if (c["id"] or "").startswith(f"cell-{index}-")]
        assert [c["data-status"] for c in cells] == [c.status for c in result.chunks]
        for k, evidence in enumerate(result.evidence):
            covering = [m for m in parsed.marks if f"{index}-{k}" in m["data-ev"].split()]
            assert covering and all(
                m["text"] == TEXT[int(m["data-start"]) : int(m["data-end"])] for m in covering
            )
            assert min(int(m["data-start"]) for m in covering) == evidence.start
            assert max(int(m["data-end"]) for m in covering) == evidence.end


def _drawn(picture: Path) -> None:
    import matplotlib.image as mpimg

    pixels = mpimg.imread(str(picture))
    assert pixels.shape[0] >= 800 and pixels.shape[1] >= 1100 and float(pixels.std()) > 0.01


@pytest.mark.parametrize("strategy", ["mapreduce", "segment-plus", "tom", "pecan"])
def test_a_results_page_in_chromium(strategy: str, tmp_path: Path) -> None:
    result = answered(strategy, TEXT)
    assert FACT in " ".join(e.text for e in result.evidence)
    page = tmp_path / "answer.html"
    page.write_text(result.to_html(), encoding="utf-8")
    profile = tmp_path / "profile"
    _check(dump_dom(page.as_uri(), profile), [result])
    _drawn(screenshot(page.as_uri(), tmp_path / "answer.png", profile))
    # Following a used chunk's cell shows its panel (CSS :target, no script): the picture changes.
    used = next(c for c in result.chunks if c.status == "used")
    opened = screenshot(f"{page.as_uri()}#chunk-0-{used.id}", tmp_path / "panel.png", profile)
    import matplotlib.image as mpimg

    assert (mpimg.imread(str(opened)) != mpimg.imread(str(tmp_path / "answer.png"))).any()


def test_two_strategies_side_by_side_in_chromium(tmp_path: Path) -> None:
    results = [answered(s, TEXT) for s in ("mapreduce", "tom")]
    page = tmp_path / "side.html"
    page.write_text(
        html_page([AnswerView(QUESTION, r) for r in results], [DocumentIn(text=TEXT)]), encoding="utf-8"
    )
    profile = tmp_path / "profile"
    dom = dump_dom(page.as_uri(), profile)
    _check(dom, results)
    assert dom.count('class="col"') == 2
    _drawn(screenshot(page.as_uri(), tmp_path / "side.png", profile, size="1400,900"))
