"""The ``longgraph`` command, one module per command group.

``ask``, ``demo`` and ``strategies`` (``cli/ask.py``); ``show`` — saved results as a page (``cli/show.py``); ``batch`` — a corpus of questions (``cli/batch.py``); ``model`` — the embedded model server
(``cli/model.py``); ``eval`` (``cli/eval.py``); ``tree`` — ToM's document tree (``cli/tree.py``); ``graph`` — PECAN's information-point graph (``cli/graph.py``); ``synth`` —
Pyramid-Align training data (``cli/synth.py``); what
they share (``cli/common.py``). Errors are one line
on stderr with a non-zero exit code; ``--debug`` shows the traceback.
"""

from __future__ import annotations

import typer

from longgraph.cli.ask import ask, demo, strategies
from longgraph.cli.batch import batch
from longgraph.cli.checkpoints import checkpoints_app
from longgraph.cli.eval import eval_app
from longgraph.cli.graph import graph_app
from longgraph.cli.model import model_app
from longgraph.cli.show import show
from longgraph.cli.synth import synth
from longgraph.cli.tree import tree_app

app = typer.Typer(
    name="longgraph",
    help="Read documents far longer than a model's context window (LLM×MapReduce and friends).",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.command()(ask)
app.command()(batch)
app.command()(demo)
app.command()(strategies)
app.command()(show)
app.command()(synth)
app.add_typer(model_app, name="model", help="The embedded model server (vLLM on CPU, SmolLM2-135M).")
app.add_typer(eval_app, name="eval")
app.add_typer(tree_app, name="tree")
app.add_typer(graph_app, name="graph")
app.add_typer(checkpoints_app, name="checkpoints")


def main() -> None:
    app()


__all__ = ["app", "main"]
