"""`helper bench`: the built-in TEACh-format benchmark."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from helper_agent.commands.errors import fail
from helper_agent.evals.benchmark import generate_benchmark
from helper_agent.evals.engine.runner import examples_from_split, stratified_examples

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
    sizes = {"train": train, "valid_seen": valid_seen, "valid_unseen": valid_unseen}
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), console=console) as bar:
        tasks = {split: bar.add_task(split, total=size) for split, size in sizes.items()}

        def report(split: str, done: int, total: int) -> None:
            bar.update(tasks[split], completed=done)

        try:
            summaries = generate_benchmark(out, seed=seed, sizes=sizes, progress=report, overwrite=force,
                                           distractors=distractors)
        except (FileExistsError, ValueError) as exc:
            fail(f"{exc}")
    table = Table(title=f"benchmark written to {out}")
    for column in ("split", "TfD", "EDH", "families", "mean gold length", "gold failures"):
        table.add_column(column)
    for split, s in summaries.items():
        table.add_row(split, str(s.tfd), str(s.edh), str(len(s.families)), f"{s.mean_reference_length:.1f}", str(len(s.gold_failures)))
    console.print(table)
    if any(s.gold_failures for s in summaries.values()):
        console.print("[red]some gold programs failed; see manifest.json[/red]")
        raise typer.Exit(1)


@app.command("export-examples")
def export_examples(
    data: Path = typer.Option(..., help="A TEACh-layout folder with gold programs (the built-in benchmark)."),
    out: Path = typer.Option(..., help="JSON Lines file to write (the example memory's seed format)."),
    split: str = typer.Option("train", help="The split to take examples from."),
    per_family: int = typer.Option(0, min=0, help="Keep the first N episodes of each task family (0: all)."),
    allow_eval_split: bool = typer.Option(False, "--allow-eval-split",
                                          help="Allow a valid/test split (its results are then no longer held out)."),
) -> None:
    """Write a split's (dialogue, gold program) pairs as example-memory records, e.g. to package or import them."""
    if split != "train" and not allow_eval_split:
        fail(f"split {split!r} is an evaluation split: examples from it would leak into "
             "the results it is scored on; pass --allow-eval-split if that is what you want")
    try:
        records = examples_from_split(data, split)
    except (FileNotFoundError, ValueError) as exc:
        fail(f"{exc}")
    if not records:
        fail(f"{data}: split {split!r} has no TfD instances with gold programs")
    if per_family:
        records = stratified_examples(records, per_family)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record.model_dump(exclude_none=True, exclude_defaults=True) | {"id": record.id},
                                    ensure_ascii=False) + "\n")
    tmp.replace(out)
    families = {r.task_family for r in records}
    console.print(f"wrote {len(records)} examples ({len(families)} task families) from {data} {split} to {out}")
