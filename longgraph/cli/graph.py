"""``longgraph graph show FILE``: build (or load from the cache) PECAN's information-point graph and show it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any, cast

import typer

from longgraph.cli.common import Opt, progress_bars, read_document, run_cli, stderr

graph_app = typer.Typer(
    name="graph", help="PECAN's information-point graph: build it and look at it.", no_args_is_help=True
)


@graph_app.command()
def show(
    files: Annotated[list[str], typer.Argument(help="Text files ('-' for stdin).")],
    png: Annotated[
        Path | None, Opt("--png", help="Write the graph as a picture (levels, weighted edges).")
    ] = None,
    html: Annotated[
        Path | None, Opt("--html", help="Write a self-contained page (the picture and every node).")
    ] = None,
    edges: Annotated[
        str | None, Opt(help="attention, embedding or auto (default: the pecan_edges setting).")
    ] = None,
    base_url: Annotated[
        list[str] | None, Opt(help="OpenAI-compatible base URL(s) (default: the embedded server).")
    ] = None,
    model: Annotated[str | None, Opt()] = None,
    cache: Annotated[
        str | None, Opt(help="Result cache file (the graph is kept there for later questions).")
    ] = None,
    debug: Annotated[bool, Opt()] = False,
) -> None:
    """Print PECAN's graph of FILES (levels, each node's heaviest edges); --png and --html draw it."""

    def action() -> None:
        from longgraph.api import prepare_context
        from longgraph.cache import default_cache_path
        from longgraph.graphs.pecan import build_ip_graph_graph
        from longgraph.graphview import html_page, text_lines, write_png
        from longgraph.llm import default_provider
        from longgraph.nodes.runtime import Progress as ProgressEvent
        from longgraph.state.pecan import PecanState

        documents = []
        for path in files:
            title, text, _ = read_document(path)
            documents.append({"title": title, "text": text})
        settings: dict[str, Any] = {"cache_path": cache or str(default_cache_path()), "temperature": 0.0}
        if base_url:
            settings["base_url"] = base_url[0] if len(base_url) == 1 else base_url
        if model:
            settings["model"] = model
        if edges:
            settings["pecan_edges"] = edges
        context = prepare_context(None, settings, on_notice=lambda m: stderr.print(m))
        graph = build_ip_graph_graph(default_provider)
        values: dict[str, Any] = {}
        graph_input = cast(PecanState, {"question": "(the information-point graph)", "documents": documents})

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
        ip_graph = values["ip_graph"]
        chunks = {c.id: c for c in values["input_chunks"]}
        for line in text_lines(ip_graph, chunks):
            print(line)
        title = ", ".join(files)
        if png is not None:
            write_png(ip_graph, png, title=title)
            stderr.print(f"wrote {png}")
        if html is not None:
            html.write_text(html_page(ip_graph, chunks, title=title), encoding="utf-8")
            stderr.print(f"wrote {html}")

    run_cli(action, debug=debug)
