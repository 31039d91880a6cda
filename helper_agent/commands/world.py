"""`helper world`: the embedded household world on its own (scenes, pictures, scripted demo).

Input files are read with the limits of the settings (`HELPER_MAX_SCENE_OBJECTS`,
`HELPER_MAX_GRID_CELLS`, `HELPER_MAX_INPUT_BYTES`); their errors reach the CLI's error boundary,
which prints the file and the field in one line.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from helper_agent.commands.errors import GuardedGroup
from helper_agent.config import Settings
from helper_agent.envs.symbolic import SymbolicEnv
from helper_agent.tools.scripted import SCRIPTS, ScriptedDriver, ScriptError
from helper_agent.world.alfred import load_alfred_floorplan
from helper_agent.world.generator import generate_scene
from helper_agent.world.metadata import load_state_file, save_state_file
from helper_agent.world.render import render_top_down

app = typer.Typer(no_args_is_help=True, cls=GuardedGroup)
console = Console()


@app.command()
def demo(
    seed: int = typer.Option(3, help="Scene seed."),
    task: str = typer.Option("coffee", help="Scripted goal: coffee, water_plant, toast, boil_potato, clean_plate, slice_tomato."),
    out: Path = typer.Option(Path("out/world-demo"), help="Folder for pictures and the final state."),
) -> None:
    """Run a scripted episode in a generated kitchen and write before/after pictures."""
    if task not in SCRIPTS:
        raise typer.BadParameter(f"unknown task {task!r}; choose from {', '.join(SCRIPTS)}")
    env = SymbolicEnv()
    env.reset(seed, room_type="Kitchen")
    out.mkdir(parents=True, exist_ok=True)
    before = env.render(out / "before.png")
    driver = ScriptedDriver(env)
    error = None
    try:
        SCRIPTS[task](driver)
    except ScriptError as exc:
        error = str(exc)
    table = Table(title=f"{task} in {env.state.scene_name}")
    table.add_column("#", justify="right")
    table.add_column("action")
    table.add_column("object")
    table.add_column("ok")
    for n, r in enumerate(driver.log, 1):
        if r.object_id or not r.success:
            table.add_row(str(n), r.action, r.object_id or "", "yes" if r.success else f"[red]{r.error}[/red]")
    console.print(table)
    after = env.render(out / "after.png")
    (out / "final_state.json").write_text(json.dumps(env.metadata(), indent=1))
    console.print(f"steps: {env.steps}  failed actions: {env.failures}  (navigation steps are counted, not listed)")
    console.print(f"pictures: {before}  {after}\nfinal state: {out / 'final_state.json'}")
    if error:
        console.print(f"[red]script failed:[/red] {error}")
        raise typer.Exit(1)


@app.command()
def scene(
    seed: int = typer.Option(0, help="Scene seed."),
    room: str = typer.Option("Kitchen", help="Kitchen, LivingRoom, Bedroom or Bathroom."),
    out: Path = typer.Option(Path("out/scene.json"), help="Where to write the state JSON."),
    png: Path | None = typer.Option(None, help="Also write a top-down picture here."),
    alfred: Path | None = typer.Option(None, help="Build from ALFRED layout files in this folder instead of generating."),
    floorplan: int = typer.Option(1, help="With --alfred: the AI2-THOR floor plan number (1-30, 201-230, 301-330, 401-430)."),
) -> None:
    """Generate a scene (or build one from an AI2-THOR floor plan) and save its state."""
    if alfred is not None:
        settings = Settings()
        state = load_alfred_floorplan(
            alfred, floorplan, seed, max_grid_cells=settings.max_grid_cells, max_bytes=settings.max_input_bytes
        )
    else:
        state = generate_scene(seed, room)
    out.parent.mkdir(parents=True, exist_ok=True)
    save_state_file(state, out)
    console.print(f"{state.scene_name}: {len(state.objects)} objects, {state.width}x{state.depth} cells -> {out}")
    if png is not None:
        console.print(f"picture: {render_top_down(state, png)}")


@app.command()
def show(
    state_file: Path = typer.Argument(..., help="A state JSON written by `helper world scene` or an AI2-THOR object list."),
    png: Path = typer.Option(Path("out/state.png"), help="Where to write the picture."),
) -> None:
    """Draw a saved state from above."""
    settings = Settings()
    state = load_state_file(
        state_file,
        max_objects=settings.max_scene_objects,
        max_grid_cells=settings.max_grid_cells,
        max_bytes=settings.max_input_bytes,
    )
    console.print(f"picture: {render_top_down(state, png)}")
