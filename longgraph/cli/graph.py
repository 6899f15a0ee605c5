"""``longgraph graph show FILE``: build (or load from the cache) PECAN's information-point graph and show it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from longgraph.cli.common import Opt, build_structure, claim_page, endpoint_settings, run_cli, stderr
from longgraph.inert import for_terminal
from longgraph.outputs import claim_output, longgraph_picture

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
        from longgraph.graphs.pecan import build_ip_graph_graph
        from longgraph.graphview import html_page, text_lines, write_png

        inputs = [Path(f) for f in files if f != "-"]
        if png is not None:
            claim_output(png, option="--png", kind="picture", ours=longgraph_picture, inputs=inputs)
        if html is not None:
            claim_page(html, files)
        settings = endpoint_settings(cache, base_url, model)
        if edges:
            settings["pecan_edges"] = edges
        values = build_structure(
            files,
            build_ip_graph_graph(),
            settings=settings,
            what="the information-point graph",
            progress=not debug,
        )
        ip_graph = values["ip_graph"]
        chunks = {c.id: c for c in values["input_chunks"]}
        for line in text_lines(ip_graph, chunks):
            print(for_terminal(line))
        title = ", ".join(files)
        if png is not None:
            write_png(ip_graph, png, title=title)
            stderr.print(f"wrote {png}")
        if html is not None:
            html.write_text(html_page(ip_graph, chunks, title=title), encoding="utf-8")
            stderr.print(f"wrote {html}")

    run_cli(action, debug=debug)
