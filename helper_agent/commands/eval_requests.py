"""`helper eval requests`: the benchmark of everyday requests, run through `helper chat`'s runtime.

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

from helper_agent.chat_runtime import ChatAgent, ChatRuntime, chat_config
from helper_agent.commands import load_chat_model, table_console
from helper_agent.commands.errors import fail
from helper_agent.evals.engine.store import read_records
from helper_agent.evals.studies.requests import SUITES, SuiteFileError, load_suite
from helper_agent.evals.studies.requests.households import household_problems
from helper_agent.evals.studies.requests.run import (
    LABELS,
    METRICS,
    TIME_BUDGET_SECONDS,
    TIMING,
    counts,
    run_suite,
)

console = table_console(132)


def requests(
    suite: str = typer.Option(..., "--suite", help=f"{' or '.join(SUITES)} (packaged), or a suite file in their format. "
                              "Rules are chosen on calibration; reported is only reported."),
    llm: str = typer.Option("local", "--llm", envvar="HELPER_LLM", help="Chat model spec: local, local:1.5b, openai:gpt-4o, or a base URL."),
    out: Path = typer.Option(..., "--out", help="Run folder: results.jsonl, metrics.json, report.md, and the chat's home "
                             "(checkpoints, memories). Re-running the same command resumes."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Run the first N cases only."),
) -> None:
    """Everyday requests in a person's own words: first-try success, success after corrections, false
    claims, unasked changes, taught routines replayed, impossible requests refused, requests not done
    and not said so, doable requests refused; and the seconds a person waits until it is done."""
    try:
        loaded = load_suite(suite)
    except SuiteFileError as exc:
        fail(f"{exc}")
    cases = list(loaded.cases)[:limit] if limit else list(loaded.cases)
    for case in cases:  # a case that cannot be done in its household would score the suite, not the agent
        problems = household_problems(case)
        if problems:
            fail(f"{loaded.source}: case {case.id}: {'; '.join(problems)}")
    chat_model = load_chat_model(llm)
    out.mkdir(parents=True, exist_ok=True)
    runtime = ChatRuntime.open(out / "home")
    agent = ChatAgent(runtime, chat_model, chat_config())
    tally = {"n": 0, "ok": 0}
    try:
        with Progress(TextColumn(f"requests: {loaded.name}"), BarColumn(), MofNCompleteColumn(),
                      TextColumn("success {task.fields[rate]}"), TimeElapsedColumn(), TimeRemainingColumn(),
                      console=console) as bar:
            task = bar.add_task("cases", total=None, rate="-")

            def report(done: int, total: int, record: dict) -> None:
                if record.get("corrected_success") is not None:
                    tally["n"] += 1
                    tally["ok"] += int(bool(record["corrected_success"]))
                rate = f"{100 * tally['ok'] / tally['n']:.0f}%" if tally["n"] else "-"
                bar.update(task, completed=done, total=total, rate=rate)

            try:
                figures = run_suite(loaded, agent, out, llm=llm, limit=limit, progress=report)
            except ValueError as exc:
                fail(f"{exc}")
    finally:
        runtime.close()
    latest = {r["instance_id"]: r for r in read_records(out / "results.jsonl")}
    numbers = counts([latest[c.id] for c in cases if c.id in latest])
    table = Table(title=f"Everyday requests, {loaded.name} suite, --llm {llm}")
    table.add_column("figure")
    table.add_column("%", justify="right")
    table.add_column("cases", justify="right")
    for key in METRICS:
        value = figures[key]
        table.add_row(LABELS[key], "-" if value is None else f"{value:.1f}", f"{numbers[key][0]}/{numbers[key][1]}")
    console.print(table)
    waits = ", ".join(f"{key.replace('_', ' ')} {'-' if figures.get(key) is None else figures[key]}" for key in TIMING)
    console.print(f"waiting (a case never done counts {TIME_BUDGET_SECONDS:.0f} s): {waits}")
    console.print(f"metrics: {out / 'metrics.json'}  report: {out / 'report.md'}  records: {out / 'results.jsonl'}")


def register(app: typer.Typer) -> None:
    """Add `helper eval requests` to `helper eval`."""
    app.command("requests")(requests)
