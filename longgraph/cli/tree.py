"""``longgraph tree show FILE``: build (or load from the cache) ToM's document tree and show it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from longgraph.cli.common import Opt, build_structure, claim_page, endpoint_settings, run_cli, stderr
from longgraph.inert import for_terminal

tree_app = typer.Typer(
    name="tree", help="ToM's document tree: build it and look at it.", no_args_is_help=True
)


@tree_app.command()
def show(
    files: Annotated[list[str], typer.Argument(help="Text files ('-' for stdin).")],
    html: Annotated[
        Path | None, Opt("--html", help="Also write a self-contained page to browse the tree.")
    ] = None,
    base_url: Annotated[
        list[str] | None, Opt(help="OpenAI-compatible base URL(s) (default: the embedded server).")
    ] = None,
    model: Annotated[str | None, Opt()] = None,
    chunk_tokens: Annotated[int | None, Opt("--chunk-tokens", help="ToM block size (default 1,000).")] = None,
    cache: Annotated[
        str | None, Opt(help="Result cache file (the tree is kept there for later questions).")
    ] = None,
    debug: Annotated[bool, Opt()] = False,
) -> None:
    """Print the document tree of FILES (titles, keywords, which chunk each leaf came from)."""

    def action() -> None:
        from longgraph.graphs.tom import build_tree_graph
        from longgraph.state.contract import DocumentIn
        from longgraph.treeview import html_page, text_lines

        if html is not None:
            claim_page(html, files)
        settings = {**endpoint_settings(cache, base_url, model), "tom_top_k": 0}
        if chunk_tokens:
            settings["tom_chunk_tokens"] = chunk_tokens
        values = build_structure(
            files, build_tree_graph(), settings=settings, what="the document tree", progress=not debug
        )
        documents = values["documents"]
        tree = values["doc_tree"]
        docs = [DocumentIn.model_validate(d) for d in documents]
        for line in text_lines(tree, docs):
            print(for_terminal(line))
        if html is not None:
            html.write_text(html_page(tree, docs, title=", ".join(files)), encoding="utf-8")
            stderr.print(f"wrote {html}")

    run_cli(action, debug=debug)
