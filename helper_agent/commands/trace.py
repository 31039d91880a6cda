"""`helper trace RUN_DIR INSTANCE`: one episode of an evaluation run, node by node, without LangSmith.

Everything comes from what the run already wrote to `RUN_DIR/results.jsonl`: the graph's log (one
line per node visit: retrieve, plan, validate, execute, locate, correct, feedback, replan, memorize,
finish), the final program, the subgoals, the LLM usage and the checker's verdict.

The subgoal table is the executor's own (every subgoal run of the episode, with its outcome and
actions) when the record carries it (`subgoals`); older records hold only the program, so the table
is then the final program compiled again, its rows marked from the last `execute` log line
(completed, where it stopped, not reached).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table

from helper_agent.commands import program_syntax
from helper_agent.commands.errors import CommandInputError
from helper_agent.evals.engine.runfiles import read_spec
from helper_agent.evals.engine.store import ResultStore
from helper_agent.program import ProgramError, compile_program
from helper_agent.teach.instances import load_instance

console = Console()

_EXECUTE = re.compile(r"^execute: (?P<status>\w+) after (?P<done>\d+)/(?P<total>\d+) subgoals")


def find_record(run_dir: Path, instance: str) -> dict[str, Any]:
    """The latest record of `instance` (an instance id, its file name or path, or a unique prefix)."""
    results = run_dir / "results.jsonl"
    if not results.is_file():
        raise CommandInputError(f"{run_dir}: no results.jsonl (is it a `helper eval` output folder?)")
    try:
        records = ResultStore(results).records()
    except ValueError as exc:
        raise CommandInputError(str(exc)) from None
    name = Path(instance).name.removesuffix(".json")
    for key in (instance, name):
        if key in records:
            return records[key]
    matches = sorted(i for i in records if i.startswith(name))
    if len(matches) == 1:
        return records[matches[0]]
    if matches:
        raise CommandInputError(f"{instance!r} names {len(matches)} episodes of {run_dir}: {', '.join(matches[:8])}")
    known = ", ".join(sorted(records)[:8]) + (", ..." if len(records) > 8 else "")
    raise CommandInputError(f"{run_dir}: no episode {instance!r} in results.jsonl (it has {known or 'none'})")


def check_shown_fields(record: dict[str, Any], where: str) -> None:
    """The fields the trace prints, with the types a run writes; a damaged record is refused in one line
    naming the field (a `log` that was an int, or a list nested 900 deep, was a traceback)."""
    instance = record.get("instance_id")
    for name in ("log",):
        value = record.get(name)
        if value is not None and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            raise CommandInputError(f"{where}: episode {instance}: field {name!r} must be a list of strings, "
                                    f"not {_kind(value)}")
    for name in ("program", "dialogue", "task_name", "family", "agent", "planner", "error_message", "traceback"):
        value = record.get(name)
        if value is not None and not isinstance(value, str):
            raise CommandInputError(f"{where}: episode {instance}: field {name!r} must be a string, not {_kind(value)}")
    for name in ("subgoals", "trace"):
        value = record.get(name)
        if value is not None and not (isinstance(value, list) and all(
                isinstance(row, list) and len(row) == 3 and all(isinstance(c, str | int | float) for c in row)
                for row in value)):
            raise CommandInputError(f"{where}: episode {instance}: field {name!r} must be a list of "
                                    "[subgoal, outcome, actions] rows")


def _kind(value: Any) -> str:
    if isinstance(value, list) and any(isinstance(v, list | dict) for v in value):
        return "a list holding lists or objects"
    return "a list holding non-strings" if isinstance(value, list) else type(value).__name__


def _dialogue_from_dataset(spec: dict[str, Any], record: dict[str, Any]) -> str:
    """An older record's dialogue, read from the run's dataset ("" when it cannot be found)."""
    mode, data, split = spec.get("mode"), spec.get("data"), spec.get("split")
    if not (isinstance(mode, str) and isinstance(data, str) and data and isinstance(split, str)):
        return ""
    path = Path(data) / f"{mode}_instances" / split / f"{record.get('instance_id')}.json"
    try:
        return load_instance(path, mode).dialogue if path.is_file() else ""
    except Exception:  # noqa: BLE001 - only a courtesy: the trace shows without it
        return ""


def node_rows(log: list[str]) -> list[tuple[str, str]]:
    """(node, what it did) per log line."""
    rows = []
    for line in log:
        node, _, detail = line.partition(": ")
        rows.append((node, detail) if detail else ("", line))
    return rows


def subgoal_rows(record: dict[str, Any]) -> tuple[list[tuple[str, str, str]], str]:
    """(subgoal, outcome, actions) rows and the table's title."""
    recorded = record.get("subgoals") or record.get("trace")
    if recorded:
        return [(str(s), str(status), str(actions)) for s, status, actions in recorded], "subgoals (every execute segment)"
    program = record.get("program") or ""
    if not program.strip():
        return [], "subgoals: the episode has no program"
    try:
        planned = [s.describe() for s in compile_program(program).subgoals]
    except ProgramError as err:
        return [], f"subgoals: the program does not compile ({err})"
    last = next((m for m in map(_EXECUTE.match, reversed(record.get("log") or [])) if m), None)
    rows = []
    for n, subgoal in enumerate(planned):
        if last is None:
            outcome = "not run"
        elif n < int(last["done"]):
            outcome = "done"
        elif n == int(last["done"]) and last["status"] != "done":
            outcome = last["status"]
        else:
            outcome = "not reached"
        rows.append((subgoal, outcome, ""))
    return rows, "subgoals of the final program (outcomes from the last execute line of the log)"


def _colour(outcome: str) -> str:
    return "green" if outcome == "done" else "yellow" if outcome in ("skipped", "not reached", "not run") else "red"


def trace(
    run_dir: Path = typer.Argument(..., help="An evaluation's output folder (holds results.jsonl)."),
    instance: str = typer.Argument(..., help="The episode: instance id (valid_unseen_0003.tfd), file name or unique prefix."),
) -> None:
    """Print one episode of a run node by node: the graph's log, the program, the subgoals, LLM
    usage and the checker's verdict (from RUN_DIR/results.jsonl, no LangSmith needed)."""
    record = find_record(run_dir, instance)
    check_shown_fields(record, str(run_dir / "results.jsonl"))
    spec_file = run_dir / "spec.json"
    label = ""
    spec: dict[str, Any] = {}
    if spec_file.is_file():
        try:
            spec = read_spec(spec_file) or {}
            label = "/".join(str(spec.get(k)) for k in ("mode", "split", "planner") if spec.get(k))
        except (OSError, ValueError):
            label, spec = "", {}
    header = [f"[bold]{record['instance_id']}[/bold]", f"task {record.get('task_name', '?')}"]
    if record.get("family"):
        header.append(f"({record['family']})")
    header.append(f"agent {record.get('agent') or record.get('planner', '?')}")
    if record.get("oracle"):
        header.append("[yellow]ORACLE[/yellow]")
    if label:
        header.append(f"run {label}")
    console.print("  ".join(header), highlight=False)
    dialogue = record.get("dialogue") or _dialogue_from_dataset(spec if isinstance(spec, dict) else {}, record)
    if dialogue:
        console.print(Panel(escape(dialogue), title="dialogue"))

    nodes = Table(title="node by node")
    nodes.add_column("#", justify="right")
    nodes.add_column("node")
    nodes.add_column("what happened")
    for n, (node, detail) in enumerate(node_rows(record.get("log") or []), 1):
        nodes.add_row(str(n), node, detail)
    console.print(nodes)

    if (record.get("program") or "").strip():
        console.print(Panel(program_syntax(record["program"]),
                            title="program"))
    rows, title = subgoal_rows(record)
    table = Table(title=title)
    table.add_column("#", justify="right")
    table.add_column("subgoal")
    table.add_column("outcome")
    table.add_column("actions", justify="right")
    for n, (subgoal, outcome, actions) in enumerate(rows, 1):
        colour = _colour(outcome)
        table.add_row(str(n), subgoal, f"[{colour}]{outcome}[/{colour}]", actions)
    console.print(table)

    console.print(f"LLM: {record.get('llm_calls', 0)} calls, {record.get('prompt_tokens', 0)} prompt + "
                  f"{record.get('completion_tokens', 0)} completion tokens, {record.get('llm_seconds', 0)} s; "
                  f"episode {record.get('seconds', '?')} s", highlight=False)
    verdict = "[green]task done[/green]" if record.get("success") else "[red]task not done[/red]"
    console.print(f"checker: {verdict}, goal conditions {record.get('completed_goal_conditions', '?')}/"
                  f"{record.get('total_goal_conditions', '?')}; steps {record.get('steps', '?')}, failed actions "
                  f"{record.get('failures', '?')}; ended by {record.get('ended_by', '?')}, outcome {record.get('outcome', '?')}")
    if record.get("error_message"):
        console.print(f"[red]error:[/red] {record['error_message']}", highlight=False)
        if record.get("traceback"):
            console.print(f"[dim]{record['traceback']}[/dim]", highlight=False)
