"""`helper bench`: the built-in TEACh-format benchmark."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

app = typer.Typer(no_args_is_help=True)
console = Console()


@app.command()
def generate(
    out: Path = typer.Option(..., help="Folder to write games/, edh_instances/, tfd_instances/ into."),
    seed: int = typer.Option(0, help="Benchmark seed: fixes scenes, tasks and dialogues."),
    train: int = typer.Option(500, help="TfD episodes in train."),
    valid_seen: int = typer.Option(200, help="TfD episodes in valid_seen."),
    valid_unseen: int = typer.Option(200, help="TfD episodes in valid_unseen."),
    force: bool = typer.Option(False, "--force", help="Replace splits that already hold files."),
    distractors: int = typer.Option(0, min=0, help="Extra distractor objects per scene (EmbodiedRAG's large homes); "
                                    "the same episodes and goals as without them."),
) -> None:
    """Write the built-in benchmark in TEACh's formats (deterministic from the seed)."""
    from helper_agent.evals.benchmark import generate_benchmark

    sizes = {"train": train, "valid_seen": valid_seen, "valid_unseen": valid_unseen}
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), console=console) as bar:
        tasks = {split: bar.add_task(split, total=size) for split, size in sizes.items()}

        def report(split: str, done: int, total: int) -> None:
            bar.update(tasks[split], completed=done)

        try:
            summaries = generate_benchmark(out, seed=seed, sizes=sizes, progress=report, overwrite=force,
                                           distractors=distractors)
        except FileExistsError as exc:
            console.print(f"[red]error:[/red] {exc}")
            raise typer.Exit(2) from None
    table = Table(title=f"benchmark written to {out}")
    for column in ("split", "TfD", "EDH", "families", "mean gold length", "gold failures"):
        table.add_column(column)
    for split, s in summaries.items():
        table.add_row(split, str(s.tfd), str(s.edh), str(len(s.families)), f"{s.mean_reference_length:.1f}", str(len(s.gold_failures)))
    console.print(table)
    if any(s.gold_failures for s in summaries.values()):
        console.print("[red]some gold programs failed; see manifest.json[/red]")
        raise typer.Exit(1)
