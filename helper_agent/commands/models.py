"""`helper models`: the embedded local models, and their OpenVINO folders made once from the GGUF files.

The weights are those `HELPER_LOCAL_WEIGHTS` names, or each model's own (`openvino_models.DEFAULT_WEIGHTS`,
made by OpenVINO GenAI from the file with no converter); `--weights int8|int4` makes the converter's
folders (`make install-converter`)."""

from __future__ import annotations

import typer
from rich.table import Table

from helper_agent.commands import table_console
from helper_agent.llm import LOCAL_MODELS, LOCAL_RUNTIMES, openvino_model_dir, prepare_openvino_model
from helper_agent.llm.openvino_models import WEIGHT_FORMATS, converter_dir, default_weights, is_prepared

app = typer.Typer(no_args_is_help=True)
console = table_console(132)


@app.command("list")
def list_models() -> None:
    """The embedded models `--llm local[:SIZE][@RUNTIME]` takes, and whether each is ready for OpenVINO."""
    table = Table(title=f"local models (runtimes: {', '.join(LOCAL_RUNTIMES)}; the first is the default)")
    for column in ("size", "model", "weights", "OpenVINO folder", "ready"):
        table.add_column(column)
    for size, model in LOCAL_MODELS.items():
        weights = default_weights(size)
        table.add_row(size, model.name, weights, str(openvino_model_dir(size, weights)),
                      "yes" if is_prepared(size, weights) else "no")
    console.print(table)
    console.print(f"converter venv (int8 and int4 weights only): {converter_dir()}")


@app.command("prepare")
def prepare(
    size: list[str] = typer.Option(["0.5b"], "--size", help="Which local model (repeatable): " + ", ".join(LOCAL_MODELS)),
    weights: str | None = typer.Option(None, "--weights", help="q8, gguf, int8 or int4 (default: HELPER_LOCAL_WEIGHTS, or each model's own: q8 for the 0.5B, gguf for the 1.5B)"),
) -> None:
    """Make the local models' OpenVINO folders from their GGUF files (once per machine; `make install-local` runs it)."""
    if weights is not None and weights not in WEIGHT_FORMATS:
        raise typer.BadParameter(f"unknown weights {weights!r}; choose one of {', '.join(WEIGHT_FORMATS)}")
    for name in size:
        if name not in LOCAL_MODELS:
            raise typer.BadParameter(f"unknown local model {name!r}; choose one of {', '.join(LOCAL_MODELS)}")
        folder = prepare_openvino_model(name, weights, log=True)
        typer.echo(f"{name}: {folder}")
