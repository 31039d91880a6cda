"""`helper eval progressive`: P-RAG's progressive iteration, for any registered method with an experience
memory (`graphs/registry.ExperienceUse`), registered on `helper eval` by `register`."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from helper_agent.commands import check_chat_model, load_chat_model, table_console
from helper_agent.commands.errors import fail
from helper_agent.commands.eval_executor import (
    EXECUTOR,
    RAY_ADDRESS,
    RAY_NUM_CPUS,
    RAY_NUM_GPUS,
    executor_from_options,
)
from helper_agent.evals.studies.eai.progressive import EaiProgressiveSpec, run_eai_progressive
from helper_agent.evals.studies.eai.tasks import EaiUnavailable
from helper_agent.evals.studies.progressive import ProgressiveSpec, run_progressive
from helper_agent.graphs.options import parse_agent_options
from helper_agent.graphs.registry import check_agent_options, experience_use, method_names

console = table_console(160)


def progressive(
    benchmark: str = typer.Option("teach", help="teach: TEACh-layout episodes (--data); eai: EAI's VirtualHome "
                                  "action-sequencing tasks (self-iteration over the first --limit tasks)."),
    data: Path | None = typer.Option(None, help="A TEACh-layout folder (the built-in benchmark or TEACh's download); "
                                     "--benchmark teach only."),
    iterations: int = typer.Option(4, help="Passes: iteration 0 starts with an empty database."),
    train_split: str = typer.Option("self", help="train: build the database on --train-limit train episodes, then "
                                    "evaluate --split; self: iterate the evaluation split itself (self-iteration)."),
    train_limit: int | None = typer.Option(100, help="Train episodes per database-building pass (train mode)."),
    split: str = typer.Option("valid_unseen", help="The evaluation split."),
    limit: int | None = typer.Option(None, help="Evaluate the first N episodes of --split only."),
    skip: int = typer.Option(0, min=0, help="--benchmark eai: leave out the first N tasks (a calibration split)."),
    agent: str = typer.Option("prag", "--agent", help="The method: any registered method with an experience "
                              "memory, which reads each iteration's database (P-RAG: database=PATH)."),
    agent_option: list[str] | None = typer.Option(None, "--agent-option", "-o",
                                                  help="The method's switches, KEY=VALUE: retrieval=goal+scene|goal, k=N, max_steps=N."),
    llm: str = typer.Option("local", envvar="HELPER_LLM", help="Chat model: local, local:1.5b, or an OpenAI-compatible URL."),
    workers: int = typer.Option(1, help="Worker processes per pass."),
    seed: int = typer.Option(0, help="Seed for sampling retries and search."),
    out: Path = typer.Option(..., help="Run folder: iter_<i>/{database,train,eval}, metrics.json, report.md, "
                             "sr_by_iteration.png. Re-running resumes."),
    iteration0_from: Path | None = typer.Option(None, help="Adopt iteration 0's episodes from this run instead of "
                                               "running them again: with an empty database, runs that differ "
                                               "only in retrieval=/k= or in --limit share them. Only the "
                                               "episodes the current agent code ran are adopted."),
    adopt_other_code: bool = typer.Option(False, "--adopt-other-code", help="With --iteration0-from: adopt "
                                          "episodes that other agent code ran as well (a change you know "
                                          "leaves the agent as it was; the report says which code ran them)."),
    executor: str = EXECUTOR, ray_address: str | None = RAY_ADDRESS, ray_num_cpus: float = RAY_NUM_CPUS,
    ray_num_gpus: float = RAY_NUM_GPUS,
) -> None:
    """Run a method's progressive iteration (P-RAG's) and write SR/GC per iteration (resumable)."""
    if benchmark not in ("teach", "eai"):
        raise typer.BadParameter("--benchmark takes teach or eai")
    if agent not in method_names():
        raise typer.BadParameter(f"--agent takes {', '.join(method_names())}")
    try:
        experience_use(agent)
    except ValueError as exc:
        raise typer.BadParameter(f"--agent {exc}") from None
    if benchmark == "eai":
        if train_split != "self":
            raise typer.BadParameter("--benchmark eai runs the self-iteration (--train-split self)")
        _eai(agent, iterations, limit, agent_option, llm, out, iteration0_from, skip)
        return
    if skip:
        raise typer.BadParameter("--skip is for --benchmark eai (TEACh's splits are chosen with --split)")
    if data is None:
        raise typer.BadParameter("--data is required with --benchmark teach")
    if train_split not in ("train", "self"):
        raise typer.BadParameter("--train-split takes train or self")
    try:
        options = parse_agent_options(agent_option)
        spec = ProgressiveSpec(data=str(data), out=str(out), iterations=iterations, train_split=train_split,  # type: ignore[arg-type]
                               split=split, limit=limit, train_limit=train_limit, llm=llm, agent=agent,
                               agent_options=options, workers=workers, seed=seed,
                               iteration0_from=str(iteration0_from) if iteration0_from else None,
                               adopt_other_code=adopt_other_code)
        spec.check()
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    check_chat_model(llm)
    runs_on = executor_from_options(executor, workers, ray_address, ray_num_cpus, ray_num_gpus)
    console.print(f"[bold]{spec.label()}[/bold]")
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console) as bar:
        tasks: dict[tuple[int, str], int] = {}

        def report(i: int, phase: str, finished: int, total: int) -> None:
            key = (i, phase)
            if key not in tasks:
                what = {"database": "database", "train": "train pass", "eval": f"{split} pass"}[phase]
                tasks[key] = bar.add_task(f"iteration {i}: {what}", total=total)
            bar.update(tasks[key], completed=finished, total=total)

        try:
            with runs_on:  # one executor (one Ray cluster) for every pass
                metrics = run_progressive(spec, report, executor=runs_on)
        except (FileNotFoundError, ValueError) as exc:
            fail(f"{exc}")
    table = Table(title=f"{metrics['label']}: SR and GC in % by iteration")
    for column in ("iteration", "database records", "SR", "GC", "episodes", "LLM calls/ep", "prompt tok/ep", "s/ep"):
        table.add_column(column)
    for r in metrics["iterations"]:
        e = r["eval"]
        table.add_row(str(r["iteration"]), str(r["database_records"]), f"{e['SR']:.2f}", f"{e['GC']:.2f}",
                      str(e["episodes"]), str(e["llm_calls"]), str(e["prompt_tokens"]), str(e["seconds"]))
    console.print(table)
    console.print(f"metrics: {out / 'metrics.json'}  report: {out / 'report.md'}  plot: {out / 'sr_by_iteration.png'}")


def _eai(agent: str, iterations: int, limit: int | None, agent_option: list[str] | None, llm: str, out: Path,
         iteration0_from: Path | None, skip: int = 0) -> None:
    """The method's self-iteration on EAI's tasks (`evals/studies/eai/progressive.py`)."""
    try:
        spec = EaiProgressiveSpec(out=str(out), iterations=iterations, limit=limit, llm=llm,
                                  agent_options=parse_agent_options(agent_option), skip=skip, agent=agent)
        spec.check()
        check_agent_options(agent, spec.agent_options)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    chat = load_chat_model(llm, max_tokens=640, n_ctx=spec.n_ctx)
    console.print(f"[bold]{spec.label()}[/bold]")
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console) as bar:
        jobs: dict[int, int] = {}

        def report(i: int, finished: int, total: int) -> None:
            if i not in jobs:
                jobs[i] = bar.add_task(f"iteration {i}", total=total)
            bar.update(jobs[i], completed=finished, total=total)

        try:
            metrics = run_eai_progressive(spec, chat, progress=report, iteration0_from=iteration0_from)
        except (FileNotFoundError, ValueError, RuntimeError, EaiUnavailable) as exc:
            fail(f"{exc}")
    table = Table(title=f"{metrics['label']}: by iteration (%)")
    for column in ("iteration", "database records", "done rate", "EAI task SR", "EAI exec SR", "gained", "lost",
                   "LLM calls/task", "prompt tok/task", "s/task"):
        table.add_column(column, overflow="fold")
    for r in metrics["iterations"]:
        table.add_row(str(r["iteration"]), str(r["database_records"]), str(r["done_rate"]), str(r["eai_task_success"]),
                      str(r["eai_execution_success"]), " ".join(r["gained"]), " ".join(r["lost"]),
                      str(r.get("llm_calls_per_task")), str(r.get("prompt_tokens_per_task")), str(r.get("seconds_per_task")))
    console.print(table)
    console.print(f"metrics: {out / 'metrics.json'}  report: {out / 'report.md'}  plot: {out / 'sr_by_iteration.png'}")


def register(app: typer.Typer) -> None:
    """Add `helper eval progressive` to `helper eval`."""
    app.command("progressive")(progressive)
