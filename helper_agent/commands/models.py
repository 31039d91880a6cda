"""`helper models`: the embedded local models, and their OpenVINO folders made once from the GGUF files."""

from __future__ import annotations

import typer
from rich.table import Table

from helper_agent.commands import table_console
from helper_agent.llm import LOCAL_MODELS, LOCAL_RUNTIMES, openvino_model_dir, prepare_openvino_model
from helper_agent.llm.openvino_models import converter_dir, is_prepared

app = typer.Typer(no_args_is_help=True)
console = table_console(132)


@app.command("list")
def list_models() -> None:
    """The embedded models `--llm local[:SIZE][@RUNTIME]` takes, and whether each is ready for OpenVINO."""
    table = Table(title=f"local models (runtimes: {', '.join(LOCAL_RUNTIMES)}; the first is the default)")
    for column in ("size", "model", "OpenVINO folder", "ready"):
        table.add_column(column)
    for size, model in LOCAL_MODELS.items():
        table.add_row(size, model.name, str(openvino_model_dir(size)), "yes" if is_prepared(size) else "no")
    console.print(table)
    console.print(f"converter venv: {converter_dir()}")


@app.command("prepare")
def prepare(
    size: list[str] = typer.Option(["0.5b"], "--size", help="Which local model (repeatable): " + ", ".join(LOCAL_MODELS)),
) -> None:
    """Convert the local models' GGUF files to OpenVINO folders (once per machine; `make install-local` runs it)."""
    for name in size:
        if name not in LOCAL_MODELS:
            raise typer.BadParameter(f"unknown local model {name!r}; choose one of {', '.join(LOCAL_MODELS)}")
        folder = prepare_openvino_model(name, log=True)
        typer.echo(f"{name}: {folder}")
