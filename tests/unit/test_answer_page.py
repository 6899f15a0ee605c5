"""The answer page (``longgraph/answerview.py``) read back as a browser would parse it: every evidence span
highlighted at its offsets, one strip cell per chunk with its status, a panel per chunk, hostile text
inert, results side by side, and the page of a saved result whose documents moved."""

from __future__ import annotations

import asyncio
from html.parser import HTMLParser
from typing import Any

import pytest

from longgraph.answerview import CONTEXT_CHARS, AnswerView, html_page
from longgraph.api import aask
from longgraph.outputs import PAGE_MARK
from longgraph.state.contract import ChunkPart, ChunkReport, DocumentIn, Evidence, GraphOutput
from longgraph.testing.fakes import FakeProvider, ScriptedChatModel, oracle_responder
from longgraph.tests.conftest import FACT, FAKE_SETTINGS, QUESTION, planted

HOSTILE = '<script>alert("x")</script></div></mark><img src=x onerror=alert(1)> & "quotes"'


class Page(HTMLParser):
    """The elements a test checks: marks (with their text), strip cells, panels, scripts, and every tag."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.marks: list[dict[str, Any]] = []
        self.cells: list[dict[str, str | None]] = []
        self.panels: list[dict[str, str | None]] = []
        self.tags: list[str] = []
        self._open_mark: dict[str, Any] | None = None
        self.feed(page)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        found = dict(attrs)
        if tag == "mark" and "data-start" in found:
            self._open_mark = {**found, "text": ""}
        classes = (found.get("class") or "").split()
        if tag == "a" and "cell" in classes:
            self.cells.append(found)
        if tag == "section" and "panel" in classes:
            self.panels.append(found)

    def handle_endtag(self, tag: str) -> None:
        if tag == "mark" and self._open_mark is not None:
            self.marks.append(self._open_mark)
            self._open_mark = None

    def handle_data(self, data: str) -> None:
        if self._open_mark is not None:
            self._open_mark["text"] += data


def answered(strategy: str, text: str, question: str = QUESTION) -> GraphOutput:
    provider = FakeProvider(ScriptedChatModel(responder=oracle_responder))
    result = asyncio.run(
        aask(question, text, strategy=strategy, llm=provider, **{**FAKE_SETTINGS, "cache_path": ""})
    )
    assert isinstance(result, GraphOutput)
    return result


@pytest.mark.parametrize("strategy", ["mapreduce", "segment-plus", "tom", "pecan"])
def test_every_evidence_span_is_highlighted_at_its_offsets_and_every_chunk_has_a_cell(strategy: str) -> None:
    text = planted(24_000)
    result = answered(strategy, text)
    page = result.to_html()
    parsed = Page(page)
    assert PAGE_MARK in page and "script" not in parsed.tags
    assert result.evidence and FACT in " ".join(e.text for e in result.evidence)
    for k, evidence in enumerate(result.evidence):
        covering = [m for m in parsed.marks if f"0-{k}" in m["data-ev"].split()]
        assert covering, f"evidence {k} is not highlighted"
        for mark in covering:  # each highlighted stretch is the document's text at the offsets it names
            assert mark["text"] == text[int(mark["data-start"]) : int(mark["data-end"])]
        assert min(int(m["data-start"]) for m in covering) == evidence.start
        assert max(int(m["data-end"]) for m in covering) == evidence.end
        assert f'id="ev-0-{k}"' in page and f'href="#ev-0-{k}"' in page
    assert [c["data-chunk"] for c in parsed.cells] == [str(c.id) for c in result.chunks]
    assert [c["data-status"] for c in parsed.cells] == [c.status for c in result.chunks]
    assert [p["id"] for p in parsed.panels] == [f"chunk-0-{c.id}" for c in result.chunks]
    assert all(c["href"] == f"#chunk-0-{c['data-chunk']}" for c in parsed.cells)


def test_hostile_text_from_the_document_the_model_and_the_titles_stays_text() -> None:
    text = f"{HOSTILE}\n\n{FACT}\n\n{HOSTILE}"
    start = text.index(FACT)
    chunk = ChunkReport(id=0, parts=[ChunkPart(doc_index=0, title=HOSTILE, start=0, end=len(text))], tokens=40,
                        status="used", reason=HOSTILE, answer=HOSTILE, raw_output=HOSTILE, extracted=HOSTILE)  # fmt: skip
    evidence = Evidence(chunk_id=0, doc_index=0, title=HOSTILE, start=start, end=start + len(FACT), text=FACT)
    result = GraphOutput(answer=HOSTILE, rationale=HOSTILE, supported=True, support="extractive",
                         evidence=[evidence], chunks=[chunk], strategy=HOSTILE)  # fmt: skip
    result.stats.notes = [HOSTILE]
    page = html_page([AnswerView(HOSTILE, result)], [DocumentIn(title=HOSTILE, text=text)])
    parsed = Page(page)
    assert "script" not in parsed.tags and "img" not in parsed.tags
    assert "<script>" not in page and "<img" not in page and "</div></mark>" not in page
    assert page.count("&lt;script&gt;") >= 8  # each place the text appears, escaped
    assert [m["text"] for m in parsed.marks] == [FACT]


def test_results_side_by_side_share_one_axis_and_keep_their_own_colours() -> None:
    text = planted(24_000)
    results = [answered(s, text) for s in ("mapreduce", "pecan")]
    views = [AnswerView(QUESTION, r) for r in results]
    parsed = Page(html_page(views, [DocumentIn(text=text)]))
    for index, result in enumerate(results):
        cells = [c for c in parsed.cells if c["id"].startswith(f"cell-{index}-")]
        assert len(cells) == len(result.chunks)
        assert any(f"r{index}" in m["class"].split() for m in parsed.marks)
    # The same characters sit at the same place on both strips: the last cells end at 100%.
    ends = []
    for index in range(2):
        last = [c for c in parsed.cells if c["id"].startswith(f"cell-{index}-")][-1]
        style = dict(part.split(":", 1) for part in (last["style"] or "").split(";"))
        left = float(style["left"].rstrip("%"))
        width = float(style["width"].split(",")[1].rstrip("%)"))
        ends.append(left + width)
    assert ends[0] == pytest.approx(100.0, abs=0.05) and ends[1] == pytest.approx(100.0, abs=0.05)


def test_without_its_documents_a_page_shows_the_quoted_evidence() -> None:
    result = answered("mapreduce", planted(12_000))
    page = html_page([AnswerView(QUESTION, result)], None)
    assert "not at hand" in page and FACT.replace("'", "&#x27;") in page
    assert len(Page(page).cells) == len(result.chunks)


def test_a_long_document_page_holds_neighbourhoods_not_the_text() -> None:
    text = planted(400_000)
    result = answered("mapreduce", text)
    page = result.to_html()
    windows = Page(page).marks
    assert windows and len(page) < 200_000  # the strip and the evidence's neighbourhoods only
    evidence = result.evidence[0]
    assert text[max(0, evidence.start - CONTEXT_CHARS) : evidence.start][-50:].replace("'", "&#x27;") in page
