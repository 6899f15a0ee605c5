"""ToM's tree page in a real headless Chromium: it renders, it folds, every node is on it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from longgraph.state.contract import ChunkPart, DocumentIn
from longgraph.state.tom import DocTree, TreeNode
from longgraph.testing.browser import dump_dom, screenshot
from longgraph.treeview import html_page

pytestmark = pytest.mark.e2e


def _tree() -> tuple[DocTree, list[DocumentIn]]:
    text = "Lighthouses guide ships. The keeper lit the lamp at dusk.\n\nThe vault code is 7319 & <secret>."
    docs = [DocumentIn(title="notes.txt", text=text)]
    cut = text.index("The vault")
    leaf_a = TreeNode(id=0, kind="section", number="1", title="Lamps", keywords=["lamp", "dusk"], summary="On lamps.",
                      chunk_id=0, parts=[ChunkPart(doc_index=0, title="notes.txt", start=0, end=cut)])  # fmt: skip
    leaf_b = TreeNode(id=1, kind="section", number="2", title="The vault", keywords=["code"], chunk_id=1,
                      parts=[ChunkPart(doc_index=0, title="notes.txt", start=cut, end=len(text))])  # fmt: skip
    top = TreeNode(id=2, kind="cluster", title="The lighthouse", keywords=["lighthouse"], summary="Lamps and a vault.",
                   children=[0, 1])  # fmt: skip
    return DocTree(nodes=[leaf_a, leaf_b, top], roots=[2], chunk_ids=[0, 1], aggregation="one root"), docs


def test_the_tree_page_renders_in_headless_chromium(tmp_path: Path) -> None:
    tree, docs = _tree()
    page = tmp_path / "tree.html"
    page.write_text(html_page(tree, docs, title="notes.txt"), encoding="utf-8")
    profile = tmp_path / "profile"
    dom = dump_dom(page.as_uri(), profile)
    assert dom.count("<details") == len(tree.nodes)  # one foldable element per node
    for node in tree.nodes:
        assert node.title in dom
    assert "7319 &amp; &lt;secret&gt;." in dom  # document text escaped, not interpreted
    assert re.search(r"<script", dom) is None
    shot = screenshot(page.as_uri(), tmp_path / "tree.png", profile, size="1000,700")
    import matplotlib.image as mpimg

    pixels = mpimg.imread(str(shot))
    assert pixels.shape[0] >= 600 and pixels.shape[1] >= 900
    assert float(pixels.std()) > 0.01  # text was drawn: not a blank page
