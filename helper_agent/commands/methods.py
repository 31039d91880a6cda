"""`helper methods`: the registered methods (built-in and plug-ins), and `langgraph.json` from them."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.table import Table

from helper_agent.commands import table_console
from helper_agent.graphs.registry import get_method, method_names
from helper_agent.serving_methods import graph_attribute, langgraph_config

app = typer.Typer(no_args_is_help=True)
console = table_console(132)


@app.command("list")
def list_methods() -> None:
    """Every method `--agent` takes: what it is, its switches (`-o KEY=VALUE`), how it is served."""
    table = Table(title="methods")
    for column in ("name", "method", "switches", "served as"):
        table.add_column(column)
    for name in method_names():
        method = get_method(name)
        served = method.served_graph or f"helper_agent.serving_methods:{graph_attribute(name)}"
        table.add_row(name, method.summary, ", ".join(method.options) or "-", served)
    console.print(table)


@app.command("langgraph-json")
def langgraph_json(
    out: Path | None = typer.Option(None, help="Write the file here (e.g. langgraph.json); default: print it."),
) -> None:
    """`langgraph.json` for the LangGraph server, one assistant per registered method."""
    text = json.dumps(langgraph_config(), indent=2) + "\n"
    if out is None:
        typer.echo(text, nl=False)
    else:
        out.write_text(text, encoding="utf-8")
        console.print(f"wrote {out}")
