"""`helper models`: the embedded local models, and their OpenVINO folders made once from the GGUF files.

The weights are those `HELPER_LOCAL_WEIGHTS` names (default `gguf`: the file's own quantization, no
converter); `--weights int8|int4` makes the converter's folders (`make install-converter`)."""

from __future__ import annotations

import typer
from rich.table import Table

from helper_agent.commands import table_console
from helper_agent.config import get_settings
from helper_agent.llm import LOCAL_MODELS, LOCAL_RUNTIMES, openvino_model_dir, prepare_openvino_model
from helper_agent.llm.openvino_models import WEIGHT_FORMATS, converter_dir, is_prepared

app = typer.Typer(no_args_is_help=True)
console = table_console(132)


@app.command("list")
def list_models() -> None:
    """The embedded models `--llm local[:SIZE][@RUNTIME]` takes, and whether each is ready for OpenVINO."""
    weights = get_settings().local_weights
    table = Table(title=f"local models (runtimes: {', '.join(LOCAL_RUNTIMES)}; the first is the default; "
                        f"OpenVINO weights: {weights})")
    for column in ("size", "model", "OpenVINO folder", "ready"):
        table.add_column(column)
    for size, model in LOCAL_MODELS.items():
        table.add_row(size, model.name, str(openvino_model_dir(size, weights)), "yes" if is_prepared(size, weights) else "no")
    console.print(table)
    console.print(f"converter venv (int8 and int4 weights only): {converter_dir()}")


@app.command("prepare")
def prepare(
    size: list[str] = typer.Option(["0.5b"], "--size", help="Which local model (repeatable): " + ", ".join(LOCAL_MODELS)),
    weights: str | None = typer.Option(None, "--weights", help="gguf, int8 or int4 (default: HELPER_LOCAL_WEIGHTS, gguf)"),
) -> None:
    """Make the local models' OpenVINO folders from their GGUF files (once per machine; `make install-local` runs it)."""
    weights = weights or get_settings().local_weights
    if weights not in WEIGHT_FORMATS:
        raise typer.BadParameter(f"unknown weights {weights!r}; choose one of {', '.join(WEIGHT_FORMATS)}")
    for name in size:
        if name not in LOCAL_MODELS:
            raise typer.BadParameter(f"unknown local model {name!r}; choose one of {', '.join(LOCAL_MODELS)}")
        folder = prepare_openvino_model(name, weights, log=True)
        typer.echo(f"{name}: {folder}")
