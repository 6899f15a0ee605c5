"""``longgraph tree show FILE``: build (or load from the cache) ToM's document tree and show it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any, cast

import typer

from longgraph.cli.common import Opt, progress_bars, read_document, run_cli, stderr

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
        from longgraph.api import prepare_context
        from longgraph.cache import default_cache_path
        from longgraph.graphs.tom import build_tree_graph
        from longgraph.llm import default_provider
        from longgraph.nodes.runtime import Progress as ProgressEvent
        from longgraph.state.contract import DocumentIn
        from longgraph.state.tom import ToMState
        from longgraph.treeview import html_page, text_lines

        documents = []
        for path in files:
            title, text, _ = read_document(path)
            documents.append({"title": title, "text": text})
        settings: dict[str, Any] = {
            "tom_top_k": 0,
            "cache_path": cache or str(default_cache_path()),
            "temperature": 0.0,
        }
        if base_url:
            settings["base_url"] = base_url[0] if len(base_url) == 1 else base_url
        if model:
            settings["model"] = model
        if chunk_tokens:
            settings["tom_chunk_tokens"] = chunk_tokens
        context = prepare_context(None, settings, on_notice=lambda m: stderr.print(m))
        graph = build_tree_graph(default_provider)
        values: dict[str, Any] = {}

        graph_input = cast(ToMState, {"question": "(the document tree)", "documents": documents})

        async def run() -> None:
            with progress_bars(not debug and stderr.is_terminal) as on_progress:
                async for mode, payload in graph.astream(
                    graph_input, context=context, stream_mode=["custom", "values"]
                ):
                    if mode == "custom" and on_progress is not None:
                        on_progress(cast(ProgressEvent, payload))
                    elif mode == "values":
                        values.update(cast(dict[str, Any], payload))

        asyncio.run(run())
        tree = values["doc_tree"]
        docs = [DocumentIn.model_validate(d) for d in documents]
        for line in text_lines(tree, docs):
            print(line)
        if html is not None:
            html.write_text(html_page(tree, docs, title=", ".join(files)), encoding="utf-8")
            stderr.print(f"wrote {html}")

    run_cli(action, debug=debug)
