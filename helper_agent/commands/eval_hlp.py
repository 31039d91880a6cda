"""`helper eval hlp`: LLM-Planner's leave-one-out HLP accuracy on a knn_set.json-format pool.

Registered on the `helper eval` app by `register`.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from helper_agent.commands import load_chat_model, table_console
from helper_agent.commands.errors import fail
from helper_agent.evals.studies.hlp import MODES, HLPOptions, run_hlp
from helper_agent.memory.errors import ImportFormatError
from helper_agent.memory.fewshot import load_knn_set

console = table_console(160)


def hlp(
    pool: Path = typer.Option(..., "--pool", help="A pool in the format of LLM-Planner's knn_set.json (user-provided)."),
    out: Path = typer.Option(..., "--out", help="Run folder (results.jsonl is resumable, metrics.json is written)."),
    k: int = typer.Option(9, "--k", help="In-context examples per prompt."),
    retriever: str = typer.Option("knn", "--retriever", help="knn (instruction embedding) or random."),
    llm: str = typer.Option("local", "--llm", envvar="HELPER_LLM", help="Chat model spec: local, local:1.5b, an OpenAI-compatible URL, ..."),
    instructions: str = typer.Option("goal", "--instructions", help="goal, goal+step, or both."),
    limit: int | None = typer.Option(None, "--limit", help="Evaluate only the first N examples (each still uses all others as its pool)."),
    seed: int = typer.Option(0, "--seed"),
    visible: bool = typer.Option(False, "--visible/--no-visible", help="Show each example's visible objects (they name the plan's objects)."),
) -> None:
    """Plan every example with the other examples as its pool; exact-match HLP accuracy and in-order recall."""
    modes = list(MODES) if instructions == "both" else [instructions]
    if retriever not in ("knn", "random") or any(m not in MODES for m in modes):
        raise typer.BadParameter("--retriever takes knn or random; --instructions takes goal, goal+step or both")
    try:
        examples = load_knn_set(pool)
    except ImportFormatError as exc:
        fail(f"{exc}")
    chat = load_chat_model(llm)
    options = HLPOptions(k=k, retriever=retriever, modes=modes, limit=limit, seed=seed, visible=visible)
    scores = {"n": 0, "exact": 0}
    with Progress(TextColumn(f"HLP {retriever} k={k}"), BarColumn(), MofNCompleteColumn(), TextColumn("exact {task.fields[acc]}"),
                  TimeElapsedColumn(), TimeRemainingColumn(), console=console) as bar:
        task = bar.add_task("hlp", total=None, acc="-")

        def report(done: int, total: int, record: dict) -> None:
            if record:
                scores["n"] += 1
                scores["exact"] += int(bool(record.get("exact")))
            acc = f"{100 * scores['exact'] / scores['n']:.1f}%" if scores["n"] else "-"
            bar.update(task, completed=done, total=total, acc=acc)

        try:
            metrics = run_hlp(examples, chat, out, options, progress=report)
        except ValueError as exc:
            fail(f"{exc}")
    table = Table(title=f"LOOCV HLP on {pool.name}: {retriever}, k={k}, {llm} (paper, text-davinci-003: {metrics['paper_HLP_accuracy']})")
    for column in ("instructions", "task type", "examples", "HLP accuracy %", "in-order recall %",
                   "in-order precision %", "steps (gold)", "unparsed"):
        table.add_column(column)
    for mode in modes:
        if mode not in metrics:
            continue
        rows = [("overall", metrics[mode]["overall"]), *metrics[mode]["by_task_type"].items()]
        for name, f in rows:
            table.add_row(mode, name, str(f["examples"]), f"{f['HLP_accuracy']:.2f}", f"{f['in_order']:.2f}",
                          f"{f['in_order_precision']:.2f}", f"{f['predicted_steps']:.1f} ({f['gold_steps']:.1f})", str(f["unparsed"]))
    console.print(table)
    console.print(f"results: {out / 'results.jsonl'}  metrics: {out / 'metrics.json'}")


def register(app: typer.Typer) -> None:
    """Add `helper eval hlp` to `helper eval`."""
    app.command("hlp")(hlp)
