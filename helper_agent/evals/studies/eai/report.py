"""The comparison table: our rows beside the 15 packaged LLMs, every row from EAI's evaluator.

Columns are EAI's summary fields, percentages of the `kept` tasks (its evaluator drops a task whose
own gold final state fails its goal check): task success, execution success, and its error
breakdown. Our rows add LLM calls, prompt tokens and seconds per task (and per step for the methods
that decide step by step), the share of answers that begin with a listed action order
(`steps.copies_a_list`), the share of tasks whose full sequence (repeated action names kept)
satisfies EAI's goal check in the simulator, and `examples_sharing_goal_or_name`: how many retrieved
examples (over all the row's tasks) share their task's goal text or task name, counted by the scorer
from the records' example ids and EAI's task data (`pool.shared_examples`), never taken from the
agent. A row where it is above 0 is not comparable with the 15 peers (who saw no examples): the
report lists it apart, labelled so, and the plot leaves it out.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from helper_agent.evals.studies.eai.pool import shared_examples
from helper_agent.evals.studies.eai.steps import copies_a_list
from helper_agent.files import atomic_write_json, atomic_write_text

COLUMNS = ("task_success", "execution_success", "parsing", "hallucination", "arg_number", "wrong_order",
           "missing_step", "affordance", "additional_step")
#: Our rows' own columns (empty for the peers): LLM calls, prompt tokens and seconds per task, the
#: step-wise methods' per-step costs, and the full-sequence success.
EXTRAS = ("llm_calls_per_task", "prompt_tokens_per_task", "llm_seconds_per_task", "seconds_per_task", "steps_per_task",
          "prompt_tokens_per_step", "seconds_per_step", "entities_shown_per_step", "copied_list_order",
          "full_sequence_success", "examples_sharing_goal_or_name")
#: How a row whose examples share its tasks' goal or name is labelled (it is never ranked with the peers).
SAME_GOAL_LABEL = "leave-one-out, same-goal examples (not comparable)"
SAME_TASK_LABEL = "its own earlier episodes of the same tasks (not comparable)"


def row(name: str, score: dict[str, Any]) -> dict[str, Any]:
    """One table row from a `score_outputs` record."""
    summary = score["summary"]
    goal, trajectory = summary["goal_evaluation"], summary["trajectory_evaluation"]
    grammar, runtime = trajectory["grammar_error"], trajectory["runtime_error"]
    return {
        "name": name, "tasks": len(score["ids"]), "kept": score.get("kept"),
        "task_success": goal["task_success_rate"], "execution_success": trajectory["execution_success_rate"],
        "parsing": grammar["parsing"], "hallucination": grammar["hallucination"],
        "arg_number": grammar["predicate_argument_number"], "wrong_order": runtime["wrong_order"],
        "missing_step": runtime["missing_step"], "affordance": runtime["affordance_error"],
        "additional_step": runtime["additional_step"],
    }


def unscored_row(name: str, tasks: int) -> dict[str, Any]:
    """A row EAI's evaluator could not score: its rates divide by the number of node, edge and action
    goals, so a few tasks that lack one kind cannot be scored. EAI's columns stay empty (not zero);
    our own columns, added by the caller, still say what the run did."""
    return {"name": name, "tasks": tasks, "kept": None, **dict.fromkeys(COLUMNS)}


def scored_by_eai(rows: Sequence[dict[str, Any]]) -> bool:
    """Whether EAI's evaluator scored the rows. Rows on the same tasks are all scored or none (its
    rates depend only on the tasks' goals), so one empty row means a table of our columns only."""
    return all(r["task_success"] is not None for r in rows)


def our_extras(records: list[dict[str, Any]]) -> dict[str, Any]:
    """LLM cost per task and the full-sequence success (ours, not EAI's evaluator)."""
    n = max(len(records), 1)
    usage = [r.get("usage", {}) for r in records]
    return {
        "llm_seconds_per_task": round(sum(u.get("llm_seconds", 0.0) for u in usage) / n, 2),
        "prompt_tokens_per_task": round(sum(u.get("prompt_tokens", 0) for u in usage) / n, 1),
        "max_prompt_tokens_per_call": max((u.get("prompt_tokens", 0) / max(u.get("llm_calls", 1), 1) for u in usage), default=0),
        "llm_calls_per_task": round(sum(u.get("llm_calls", 0) for u in usage) / n, 2),
        "full_sequence_success": round(100.0 * sum(bool(r.get("sequence_success")) for r in records) / n, 2),
        "seconds_per_task": round(sum(float(r.get("seconds", 0.0)) for r in records) / n, 2),
        "copied_list_order": round(100.0 * sum(copies_a_list([s[0] for s in r.get("steps") or []]) for r in records) / n, 2),
        "examples_sharing_goal_or_name": shared_examples(records),
        **per_step(records),
    }


def comparable(row: dict[str, Any]) -> bool:
    """Whether a row may be ranked with the peers: none of its retrieved examples shares its task's
    goal or task name (the peers' rows, which retrieve nothing, have no count and are comparable)."""
    return not row.get("examples_sharing_goal_or_name")


def apart_label(row: dict[str, Any]) -> str:
    """Why a row is kept apart: P-RAG's self-iteration (`db=` in its name) retrieves its own earlier
    episodes of the same tasks; a `--k` row retrieved other tasks' gold sequences with the same goal."""
    return SAME_TASK_LABEL if "db=" in str(row.get("name")) else SAME_GOAL_LABEL


def per_step(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The step-wise methods' cost per decision (`decisions`: plans or actions asked of the LLM):
    prompt tokens and seconds per step, what EmbodiedRAG's subgraph-vs-full claim is about."""
    decisions = sum(int(r.get("decisions", 0)) for r in records)
    if not decisions:
        return {}
    usage = [r.get("usage", {}) for r in records]
    out = {"steps_per_task": round(decisions / max(len(records), 1), 2),
           "prompt_tokens_per_step": round(sum(u.get("prompt_tokens", 0) for u in usage) / decisions, 1),
           "seconds_per_step": round(sum(float(r.get("seconds", 0.0)) for r in records) / decisions, 3),
           "llm_seconds_per_step": round(sum(u.get("llm_seconds", 0.0) for u in usage) / decisions, 3)}
    shown = [r["entities_shown_per_step"] for r in records if "entities_shown_per_step" in r]
    if shown:
        out["entities_shown_per_step"] = round(sum(shown) / len(shown), 1)
    return out


def cell(value: Any) -> str:
    """A table cell: empty for a value nobody measured (None), not the word None."""
    return "" if value is None else str(value)


def markdown(rows: list[dict[str, Any]], title: str, notes: Sequence[str] = ()) -> str:
    """The table of comparable rows, then (if any) the rows whose examples share their tasks' goal
    or name, under their own heading and labelled row by row."""
    head = ["name", "tasks", "kept", *COLUMNS, *EXTRAS]

    def table(selected: list[dict[str, Any]], label: bool = False) -> list[str]:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for r in selected:
            cells = [cell(r.get(h)) for h in head]
            if label:
                cells[0] += f" ({apart_label(r)})"
            lines.append("| " + " | ".join(cells) + " |")
        return lines

    apart = [r for r in rows if not comparable(r)]
    lines = [f"## {title}", "", *(f"- {note}" for note in notes), *([""] if notes else []),
             *table([r for r in rows if comparable(r)])]
    if apart:
        lines += ["", "### Not comparable with the peers: retrieved examples share the task's goal or task name", "",
                  "Left out of the ranking above and of the plot; `examples_sharing_goal_or_name` counts them.", "",
                  *table(apart, label=True)]
    return "\n".join(lines) + "\n"


def write_report(rows: list[dict[str, Any]], run_dir: Path, title: str, notes: Sequence[str] = ()) -> Path:
    atomic_write_json(run_dir / "report.json", rows)
    path = run_dir / "report.md"
    atomic_write_text(path, markdown(rows, title, notes))
    return path
