"""`helper eval eai`: EAI's VirtualHome action sequencing, scored by EAI's own evaluator.

Needs the optional extra: `pip install -e '.[virtualhome]'`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

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
from helper_agent.evals.studies.eai.peers import peer_models, score_outputs, score_peers
from helper_agent.evals.studies.eai.report import (
    COLUMNS,
    apart_label,
    cell,
    comparable,
    our_extras,
    row,
    scored_by_eai,
    unscored_row,
    write_report,
)
from helper_agent.evals.studies.eai.runner import (
    EaiRunSpec,
    check_spec,
    responses,
    run_tasks,
    writes_sequences,
)
from helper_agent.evals.studies.eai.table import table
from helper_agent.evals.studies.eai.tasks import EaiUnavailable, select_tasks
from helper_agent.graphs.options import parse_agent_options
from helper_agent.graphs.registry import method_names

console = table_console(160)


def _progress() -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[note]}"),
                    TimeElapsedColumn(), TimeRemainingColumn(), console=console)


def _table(rows: list[dict[str, Any]], title: str, notes: Sequence[str] = ()) -> None:
    """Our rows and the peers'; EAI's columns only when its evaluator scored the rows; then the notes
    the report carries with them."""
    table = Table(title=title)
    extras = ("llm_calls_per_task", "prompt_tokens_per_task", "seconds_per_task", "prompt_tokens_per_step",
              "seconds_per_step", "full_sequence_success", "examples_sharing_goal_or_name")
    heads = ("LLM calls/task", "prompt tok/task", "s/task", "prompt tok/step", "s/step", "full-seq SR",
             "examples sharing goal/name")
    columns = COLUMNS if scored_by_eai(rows) else ()
    for column in ("row", "tasks", "kept", *columns, *heads):
        table.add_column(column, overflow="fold")
    for r in rows:
        table.add_row(r["name"] if comparable(r) else f"{r['name']} ({apart_label(r)})", str(r["tasks"]), cell(r.get("kept")),
                      *("" if r[c] is None else f"{r[c]:.1f}" for c in columns), *(cell(r.get(e)) for e in extras))
    console.print(table)
    for note in notes:
        console.print(f"[yellow]{note}[/yellow]", highlight=False)


def eai(
    task: str = typer.Option("action-sequencing", help="EAI task (only action-sequencing)."),
    agent: str = typer.Option("helper", help="A registered method: helper, llm-planner (their registry graphs, open "
                              "and closed loop), prag, embodiedrag (closed loop: they act step by step), or any other "
                              "(closed loop: its own graph acts on VirtualHome through the harness)."),
    agent_option: list[str] | None = typer.Option(None, "--agent-option", "-o", help="The method's switches, KEY=VALUE: "
                                                  "prag retrieval=goal+scene|goal, k=N, database=PATH, max_steps=N, "
                                                  "answer=action|thought; embodiedrag graph=subgraph|full, k=N, "
                                                  "max_steps=N; both refuse_futile=on|off. helper's and "
                                                  "llm-planner's mode, k and max_replans are --mode, --k, --max-replans; "
                                                  "their closed loop takes goal_check=on|off, goal_rounds=N, "
                                                  "preconditions=on|off; llm-planner's also preconditions=reported, achievers=on|off, and "
                                                  "goal_steps=on|off in either loop (all off by default)."),
    mode: str = typer.Option("open-loop", help="open-loop (EAI's protocol) or closed-loop (acts, sees failures, corrects)."),
    limit: int | None = typer.Option(None, help="The first N tasks in EAI's order (default: all 342)."),
    skip: int = typer.Option(0, min=0, help="Leave out the first N tasks (a calibration split: --skip 100 --limit 20 "
                             "runs tasks 101-120)."),
    llm: str = typer.Option("local", envvar="HELPER_LLM", help="Chat model: local, local:1.5b, openai:gpt-4o, or a server URL."),
    out: Path = typer.Option(..., help="Run folder: results.jsonl (resumable), scores/, report.md."),
    k: int | None = typer.Option(None, help="helper, llm-planner: retrieved examples (gold sequences of tasks 101-342 "
                                 "that share neither the task's goal nor its name; default 3); 0 = none. "
                                 "prag, embodiedrag: -o k=N."),
    n_ctx: int = typer.Option(8192, help="Context length for a local model (EAI prompts take ~2.4k tokens, examples more)."),
    max_tokens: int = typer.Option(640, help="Answer length bound (tokens)."),
    max_replans: int | None = typer.Option(None, help="Closed loop (helper, llm-planner): corrections / re-plans after "
                                           "failed actions (default 2)."),
    peers: bool = typer.Option(True, "--peers/--no-peers", help="Score the 15 packaged LLM outputs on the same tasks."),
    peers_only: bool = typer.Option(False, "--peers-only", help="Only the peers' table (no agent, no LLM)."),
    peers_dir: Path | None = typer.Option(None, help="Where the peers' scores are cached (default: --out); a cached "
                                          "score is reused only for the same task ids."),
) -> None:
    """EAI VirtualHome action sequencing: our agent and the 15 packaged LLMs, scored by EAI's evaluator."""
    try:
        options = parse_agent_options(agent_option)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    if "database" in options:
        options["database"] = str(Path(options["database"]).resolve())
    if not peers_only and agent in method_names() and not writes_sequences(agent):  # they would be ignored: say so
        if k is not None:
            raise typer.BadParameter(f"{agent} takes its k as --agent-option k=N (--k is for a method with EAI's two "
                                     "modes: helper's and llm-planner's)", param_hint="--k")
        if max_replans is not None:
            raise typer.BadParameter(f"{agent} acts step by step and does not re-plan (--max-replans is helper's and "
                                     "llm-planner's; its step cap is --agent-option max_steps=N)", param_hint="--max-replans")
    spec = EaiRunSpec(agent=agent, mode=mode, llm=llm, limit=limit, k=3 if k is None else k,
                      max_replans=2 if max_replans is None else max_replans, n_ctx=n_ctx, task=task, agent_options=options,
                      skip=skip)
    try:
        if not peers_only:
            check_spec(spec)
        tasks = select_tasks(limit, skip=skip)
    except (ValueError, EaiUnavailable) as exc:
        fail(f"{exc}")
    ids = [t.identifier for t in tasks]
    rows: list[dict[str, Any]] = []
    notes: list[str] = []
    if not peers_only:
        if mode == "closed-loop":
            console.print("[yellow]closed-loop: the agent acts and sees failures — NOT EAI's open-loop protocol[/yellow]")
        chat = load_chat_model(llm, max_tokens=max_tokens, n_ctx=n_ctx)  # a local model needs the long context
        stats = {"done": 0, "seq": 0}
        with _progress() as bar:
            job = bar.add_task(spec.row_name, total=len(tasks), note="")

            def step(record: dict[str, Any]) -> None:
                stats["done"] += 1
                stats["seq"] += int(bool(record.get("sequence_success")))
                bar.update(job, advance=1, note=f"full-seq SR {100 * stats['seq'] / stats['done']:.0f}%")

            try:
                records = run_tasks(spec, chat, out, tasks=tasks, progress=step)
            except ValueError as exc:
                fail(f"{exc}")
        console.print("scoring with EAI's evaluate_results ...")
        extras = our_extras(records)
        try:
            rows.append({**row(spec.row_name, score_outputs(spec.row_name, responses(records), out)), **extras})
        except ValueError as exc:  # too few tasks for EAI's rates: our columns only, EAI's left empty
            console.print(f"[yellow]not scored by EAI's evaluator:[/yellow] {exc}")
            rows.append({**unscored_row(spec.row_name, len(records)), **extras})
            notes.append(f"EAI's columns are empty: {exc}")
            peers = False
    if peers or peers_only:
        with _progress() as bar:
            job = bar.add_task("peers (EAI's evaluator)", total=len(peer_models()), note="")
            scored = score_peers(ids, peers_dir or out, progress=lambda m: bar.update(job, advance=1, note=m))
        rows += [row(name, s) for name, s in sorted(scored.items(), key=lambda kv: -kv[1]["summary"]["goal_evaluation"]["task_success_rate"])]
    which = f"tasks {skip + 1}-{skip + len(ids)}" if skip else f"first {len(ids)} tasks"
    title = f"EAI VirtualHome action sequencing, {which}, % by EAI's evaluate_results"
    if mode == "closed-loop" and not peers_only:
        title += " (our row: CLOSED-LOOP)"
    _table(rows, title, notes)
    console.print(f"report: {write_report(rows, out, title, notes)}")


def eai_table(
    runs: list[Path] = typer.Argument(..., help="Run folders of helper eval eai (or iter_<i>/run of an EAI progressive run)."),
    out: Path = typer.Option(..., help="Where report.md, report.json and eai_table.png go (and the peers' scores)."),
    peers: bool = typer.Option(True, "--peers/--no-peers", help="Add the 15 packaged LLMs on the same tasks."),
    peers_dir: Path | None = typer.Option(None, help="Where the peers' scores are cached (default: --out)."),
) -> None:
    """One table: our EAI runs beside the 15 packaged LLMs, all scored by EAI's evaluator on the same tasks."""
    try:
        written = table(runs, out, peers=peers, peers_dir=peers_dir,
                        progress=lambda name: console.print(f"scored {name}"))
    except (FileNotFoundError, ValueError, EaiUnavailable) as exc:
        fail(f"{exc}")
    _table(written.rows, written.title, written.notes)  # what report.md says, title and notes alike
    console.print(f"report: {written.report}  plot: {out / 'eai_table.png'}")


def register(app: typer.Typer) -> None:
    """Add `helper eval eai` and `helper eval eai-table` to `helper eval`."""
    app.command("eai")(eai)
    app.command("eai-table")(eai_table)
