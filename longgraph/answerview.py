"""Showing an answer to a person: one self-contained page with the answer, the spans of the documents
it rests on, and what became of every chunk.

Why a page: a long-document answer is only as good as a reader's ability to check it, and offsets in
JSON are not checkable by eye. The page puts each evidence span in its neighbourhood of the document,
highlighted and linked from the answer, and lays every chunk out as one cell of a strip, coloured by
its fate (used, no information, unsupported, filtered, failed), sized by the share of the documents it
covers, so several strategies' strips over the same documents line up and show where they diverged.

Built to be safe and to stay usable:

* **No script, nothing loaded**: styles are inline; a cell of the strip is a link to its chunk's
  panel, shown by the CSS ``:target`` rule (a click, no JavaScript). Every text from a document or a
  model is escaped, so a document holding ``<script>`` or ``</div>`` is text on the page.
* **Neighbourhoods, not whole documents**: a 1.28M-token corpus is megabytes of text; the page holds
  the evidence spans with :data:`CONTEXT_CHARS` either side (overlapping ones merged) and each chunk's
  opening lines, so it opens at once whatever the length.
"""

from __future__ import annotations

import html
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from longgraph.outputs import PAGE_MARK
from longgraph.state.contract import ChunkReport, DocumentIn, Evidence, GraphOutput

CONTEXT_CHARS = 600
"""Characters of the document shown either side of an evidence span."""
PREVIEW_CHARS = 400
"""Characters of a chunk's own text shown in its panel."""
STATUSES = ("used", "no_information", "unsupported", "filtered", "failed")
_COLOURS = {
    "used": "#2e8b57",
    "no_information": "#c9ccd3",
    "unsupported": "#e0a030",
    "filtered": "#8aa0c8",
    "failed": "#c0392b",
}
_MARKS = ("#fff0a0", "#b8e0ff", "#f8c8e8", "#c8f0c0")
"""Highlight of each result's evidence (side by side: one colour per result)."""


@dataclass(frozen=True)
class AnswerView:
    """One result to show: the question it answers and a label (the strategy, by default)."""

    question: str
    result: GraphOutput
    label: str = ""

    @property
    def name(self) -> str:
        return self.label or self.result.strategy or "result"


def html_page(views: Sequence[AnswerView], documents: Sequence[DocumentIn] | None, *, title: str = "") -> str:
    """The page for ``views`` (one result, or several side by side over the same ``documents``).
    ``documents`` None: the documents are not at hand (a saved result whose files moved); the page
    shows the evidence's own quoted text instead of its neighbourhoods."""
    if not views:
        raise ValueError("html_page needs at least one result")
    esc = html.escape
    heading = title or (
        views[0].question if len({v.question for v in views}) == 1 else "Answers side by side"
    )
    extent = _extent(views, documents)
    several_questions = len({v.question for v in views}) > 1
    columns = "".join(_column(i, v, extent, show_question=several_questions) for i, v in enumerate(views))
    body = (
        f"<h1>{esc(heading)}</h1>"
        f'<div class="cols" style="grid-template-columns:repeat({len(views)},minmax(0,1fr))">{columns}</div>'
        f"{_legend()}"
        f"<h2>Where the answers come from</h2>{_documents_section(views, documents)}"
        f"{''.join(_panels(i, v, documents) for i, v in enumerate(views))}"
    )
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">{PAGE_MARK}'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{esc(heading)}</title><style>{_STYLE}</style></head><body>{body}</body></html>"
    )


def _column(index: int, view: AnswerView, extent: list[tuple[int, int]], *, show_question: bool) -> str:
    """One result: its answer, how it was checked, its evidence links, its figures and its chunk strip."""
    esc = html.escape
    result = view.result
    status = result.verdict or (
        "supported" if result.supported else "not checked" if result.supported is None else "not supported"
    )
    how = result.verdict_reason or {
        "extractive": "read in the text (its words are in the quoted evidence)",
        "derived": "worked out from the evidence (a count, sum, comparison or verdict over it)",
        "none": "no verified evidence supports an answer",
    }.get(result.support or "", "this strategy does not check its answer against the text")
    confidence = "–" if result.confidence is None else f"{result.confidence:.2f} / 5"
    evidence = "".join(
        f'<li><a href="#ev-{index}-{k}">{esc(e.title or f"document {e.doc_index + 1}")}, characters '
        f"{e.start:,}–{e.end:,}</a>{'' if e.verified else ' <b>(not found in the text)</b>'}: "
        f"<q>{esc(_clip(e.text, 200))}</q></li>"
        for k, e in enumerate(result.evidence)
    )
    candidates = "".join(
        (
            f'<li><a href="#chunk-{index}-{c.chunk_id}">chunk {c.chunk_id}</a>'
            if c.chunk_id is not None
            else "<li>the model's answer"
        )
        + f": {esc(_clip(c.answer, 160))} "
        + f'<span class="why">({esc(c.reason)})</span></li>'
        for c in result.candidates
    )
    stats = result.stats
    notes = "".join(f"<li>{esc(n)}</li>" for n in stats.notes)
    counts = ", ".join(f"{sum(c.status == s for c in result.chunks)} {s.replace('_', ' ')}" for s in STATUSES)
    return (
        f'<section class="col" data-view="{index}"><h2 class="label" style="border-color:{_MARKS[index % len(_MARKS)]}">'
        f"{esc(view.name)}</h2>"
        + (f'<p class="q">{esc(view.question)}</p>' if show_question and view.question else "")
        + f'<p class="answer">{esc(result.answer)}</p>'
        f'<p><span class="badge {status.replace(" ", "-")}">{status}</span> '
        f'<span class="support">{esc(result.support or "unchecked")}</span>: {esc(how)}; confidence {confidence}</p>'
        + (f'<p class="rationale">{esc(_clip(result.rationale, 600))}</p>' if result.rationale else "")
        + (f"<h3>Evidence</h3><ol>{evidence}</ol>" if evidence else "")
        + (f"<h3>Closest answers that did not stand</h3><ul>{candidates}</ul>" if candidates else "")
        + f'<h3>Chunks</h3><p class="counts">{len(result.chunks)} chunks: {counts}</p>'
        f"{_strip(index, result.chunks, extent)}"
        f'<p class="figures">{stats.llm_calls} calls ({stats.failed_calls} failed, {stats.cached_calls} cached), '
        f"{stats.prompt_tokens:,} prompt + {stats.completion_tokens:,} completion tokens, {stats.seconds:.1f} s</p>"
        + (
            f"<details><summary>Run notes ({len(stats.notes)})</summary><ul>{notes}</ul></details>"
            if notes
            else ""
        )
        + "</section>"
    )


def _extent(views: Sequence[AnswerView], documents: Sequence[DocumentIn] | None) -> list[tuple[int, int]]:
    """(offset, length) of each document on the strip's common axis: documents laid end to end (their
    lengths from the documents, else from the furthest chunk any result read in them)."""
    if documents is not None:
        lengths = [len(d.text) for d in documents]
    else:
        count = 1 + max((p.doc_index for v in views for c in v.result.chunks for p in c.parts), default=0)
        lengths = [0] * count
        for v in views:
            for c in v.result.chunks:
                for p in c.parts:
                    lengths[p.doc_index] = max(lengths[p.doc_index], p.end)
    out, offset = [], 0
    for length in lengths:
        out.append((offset, max(length, 1)))
        offset += max(length, 1)
    return out


def _strip(index: int, chunks: Sequence[ChunkReport], extent: list[tuple[int, int]]) -> str:
    """One cell per chunk, placed and sized by the characters it covers on the common axis."""
    total = sum(length for _, length in extent) or 1
    cells = []
    for c in chunks:
        spans = [
            (extent[p.doc_index][0] + p.start, extent[p.doc_index][0] + p.end)
            for p in c.parts
            if p.doc_index < len(extent)
        ]
        left = min((s for s, _ in spans), default=0)
        width = sum(e - s for s, e in spans)
        tip = f"chunk {c.id}: {c.status.replace('_', ' ')}" + (f" — {c.reason}" if c.reason else "")
        cells.append(
            f'<a class="cell {c.status}" id="cell-{index}-{c.id}" href="#chunk-{index}-{c.id}" data-chunk="{c.id}" '
            f'data-status="{c.status}" title="{html.escape(_clip(tip, 300))}" '
            f'style="left:{100 * left / total:.4f}%;width:max(2px,{100 * width / total:.4f}%)"></a>'
        )
    bounds = "".join(
        f'<span class="docedge" style="left:{100 * offset / total:.4f}%"></span>' for offset, _ in extent[1:]
    )
    return f'<div class="strip" data-view="{index}">{"".join(cells)}{bounds}</div>'


def _panels(index: int, view: AnswerView, documents: Sequence[DocumentIn] | None) -> str:
    """A panel per chunk, shown when its cell is clicked (``:target``): its fate, note and raw output."""
    esc = html.escape
    out = []
    for c in view.result.chunks:
        where = "; ".join(
            f"{esc(p.title or f'document {p.doc_index + 1}')} characters {p.start:,}–{p.end:,}"
            for p in c.parts
        )
        rows = [
            ("status", c.status.replace("_", " ")),
            ("reason", c.reason),
            ("note", c.answer),
            ("quoted", c.extracted),
            ("confidence", _number(c.confidence)),
            ("model's confidence", _number(c.model_confidence)),
            ("support", _number(c.support)),
            ("relevance", _number(c.relevance)),
        ]
        table = "".join(f"<tr><th>{k}</th><td>{esc(v)}</td></tr>" for k, v in rows if v)
        raw = f"<h4>Raw output</h4><pre>{esc(c.raw_output)}</pre>" if c.raw_output else ""
        text = ""
        if documents is not None and c.parts:
            p = c.parts[0]
            if p.doc_index < len(documents):
                opening = documents[p.doc_index].text[p.start : min(p.end, p.start + PREVIEW_CHARS)]
                more = "…" if p.end - p.start > PREVIEW_CHARS else ""
                text = f"<h4>Its text begins</h4><pre>{esc(opening)}{more}</pre>"
        out.append(
            f'<section class="panel" id="chunk-{index}-{c.id}" data-chunk="{c.id}" data-status="{c.status}">'
            f'<a class="close" href="#cell-{index}-{c.id}">close</a><h3>{esc(view.name)}: chunk {c.id} '
            f'<span class="dot {c.status}"></span></h3><p>{where}, {c.tokens:,} tokens</p>'
            f"<table>{table}</table>{raw}{text}</section>"
        )
    return "".join(out)


def _documents_section(views: Sequence[AnswerView], documents: Sequence[DocumentIn] | None) -> str:
    """Each document's evidence neighbourhoods, every span highlighted in its result's colour."""
    esc = html.escape
    cited = [(v, k, e) for v, view in enumerate(views) for k, e in enumerate(view.result.evidence)]
    if not cited:
        return "<p>No answer cites evidence.</p>"
    if documents is None:
        items = "".join(
            f'<li id="ev-{v}-{k}"><mark class="ev r{v}">{esc(e.text)}</mark> '
            f"({esc(e.title or f'document {e.doc_index + 1}')}, characters {e.start:,}–{e.end:,})</li>"
            for v, k, e in cited
        )
        return f"<p>The documents are not at hand: the evidence as it was quoted.</p><ul>{items}</ul>"
    out = []
    for doc_index, doc in enumerate(documents):
        spans = [(v, k, e) for v, k, e in cited if e.doc_index == doc_index and _fits(e, doc)]
        if not spans:
            continue
        windows = _windows([(e.start, e.end) for _, _, e in spans], len(doc.text))
        parts = [_window(doc_index, doc.text, lo, hi, spans) for lo, hi in windows]
        out.append(
            f'<section class="doc" data-doc="{doc_index}"><h3>{esc(doc.title or f"document {doc_index + 1}")} '
            f'<span class="why">({len(doc.text):,} characters)</span></h3>{"".join(parts)}</section>'
        )
    lost = [
        (v, k, e)
        for v, k, e in cited
        if e.doc_index >= len(documents) or not _fits(e, documents[e.doc_index])
    ]
    if lost:
        out.append(
            "<p>Evidence whose offsets are not in the documents given (quoted as recorded):</p><ul>"
            + "".join(f'<li id="ev-{v}-{k}">{esc(e.text)}</li>' for v, k, e in lost)
            + "</ul>"
        )
    return "".join(out)


def _fits(e: Evidence, doc: DocumentIn) -> bool:
    return 0 <= e.start < e.end <= len(doc.text)


def _windows(spans: Sequence[tuple[int, int]], length: int) -> list[tuple[int, int]]:
    """The neighbourhoods of ``spans``: each widened by :data:`CONTEXT_CHARS`, overlapping ones merged."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted((max(0, s - CONTEXT_CHARS), min(length, e + CONTEXT_CHARS)) for s, e in spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _window(doc_index: int, text: str, lo: int, hi: int, spans: Sequence[tuple[int, int, Evidence]]) -> str:
    """One neighbourhood: its text cut at every span edge, covered stretches marked with the
    (result, evidence) pairs covering them and their offsets in the document."""
    esc = html.escape
    inside = [(v, k, e) for v, k, e in spans if lo <= e.start and e.end <= hi]
    edges = sorted({lo, hi, *(e.start for *_, e in inside), *(e.end for *_, e in inside)})
    anchors: dict[int, list[str]] = {}
    for v, k, e in inside:
        anchors.setdefault(e.start, []).append(f'<a class="anchor" id="ev-{v}-{k}"></a>')
    pieces = [f'<p class="cut">… character {lo:,} …</p>' if lo > 0 else ""]
    for start, end in itertools.pairwise(edges):
        covering = [(v, k) for v, k, e in inside if e.start <= start and end <= e.end]
        pieces.extend(anchors.get(start, []))
        if covering:
            views = sorted({v for v, _ in covering})
            pairs = " ".join(f"{v}-{k}" for v, k in covering)
            pieces.append(
                f'<mark class="ev {" ".join(f"r{v}" for v in views)}{" shared" if len(views) > 1 else ""}" '
                f'data-doc="{doc_index}" data-start="{start}" '
                f'data-end="{end}" data-ev="{pairs}">{esc(text[start:end])}</mark>'
            )
        else:
            pieces.append(esc(text[start:end]))
    pieces.append(f'<p class="cut">… character {hi:,} …</p>' if hi < len(text) else "")
    return f'<div class="window" data-doc="{doc_index}" data-start="{lo}" data-end="{hi}">{"".join(pieces)}</div>'


def _legend() -> str:
    return (
        '<p class="legend">'
        + " ".join(f'<span class="dot {s}"></span> {s.replace("_", " ")}' for s in STATUSES)
        + " — click a chunk for its note, reason and raw output.</p>"
    )


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


_STYLE = (
    "body{font:15px/1.5 system-ui,sans-serif;margin:1.5em auto;max-width:75em;padding:0 1em;color:#222}"
    "h1{font-size:1.35em}h2{font-size:1.15em;margin-top:1.4em}h3{font-size:1em;margin:.9em 0 .3em}"
    ".cols{display:grid;gap:1.2em}.col{border:1px solid #dde;border-radius:6px;padding:.4em .9em;min-width:0}"
    ".label{border-bottom:4px solid;padding-bottom:.2em}.answer{font-size:1.2em;font-weight:600;overflow-wrap:anywhere}"
    ".q{color:#555}.badge{padding:.1em .5em;border-radius:3px;color:#fff;background:#888}"
    ".badge.supported{background:#2e8b57}.badge.not-supported,.badge.refuted{background:#c0392b}"
    ".badge.unconfirmed{background:#d08a1a}.support{font-weight:600}"
    ".why,.figures,.counts{color:#666;font-size:.9em}.rationale{color:#333;font-style:italic}"
    ".strip{position:relative;height:28px;background:#f4f4f7;border:1px solid #ccd;margin:.3em 0}"
    ".cell{position:absolute;top:0;bottom:0;box-shadow:inset -1px 0 #fff}.cell:hover{outline:2px solid #222}"
    ".docedge{position:absolute;top:-3px;bottom:-3px;border-left:2px dashed #333}"
    + "".join(f".{s}{{background:{c}}}" for s, c in _COLOURS.items())
    + ".dot{display:inline-block;width:.9em;height:.9em;border-radius:2px;vertical-align:middle}"
    ".doc{border-top:1px solid #dde}.window{white-space:pre-wrap;font-family:Georgia,serif;background:#fafafa;"
    "padding:.6em .9em;margin:.5em 0;border-left:3px solid #ccd;overflow-wrap:anywhere}"
    ".cut{color:#999;font:italic .85em system-ui,sans-serif;margin:0}mark.ev{padding:0 1px}"
    + "".join(f"mark.r{i}{{background:{c}}}" for i, c in enumerate(_MARKS))
    + f"mark.shared{{background:repeating-linear-gradient(135deg,{_MARKS[0]} 0 8px,{_MARKS[1]} 8px 16px)}}"
    + "mark.ev:target,.anchor:target+mark{outline:2px solid #222}"
    ".panel{display:none;position:fixed;right:1em;top:1em;bottom:1em;width:min(40em,90vw);overflow:auto;"
    "background:#fff;border:2px solid #444;border-radius:6px;padding:.6em 1em;box-shadow:0 4px 24px #0004}"
    ".panel:target{display:block}.panel table{border-collapse:collapse}.panel th{text-align:left;"
    "vertical-align:top;padding-right:1em;color:#555;white-space:nowrap}.close{float:right}"
    "pre{white-space:pre-wrap;background:#f7f7fa;padding:.5em;font-size:.85em;overflow-wrap:anywhere}"
    ".legend{font-size:.9em;color:#444}"
)
