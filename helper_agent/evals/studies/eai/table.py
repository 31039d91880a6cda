"""One table of EAI runs: our methods (and their switches) beside the 15 packaged LLMs.

Each run folder of `helper eval eai` (or an iteration of `helper eval progressive --benchmark eai`)
holds its responses; this scores every one of them and every peer on the same task ids with EAI's
evaluator in one invocation (scores cached per run folder and per peer, keyed by the task ids), and
writes `report.md`, `report.json` and `eai_table.png`. Runs on different task ids are refused: a
table compares like with like, and so a row whose retrieved examples share its tasks' goal or task
name (`examples_sharing_goal_or_name` above 0, counted from the records and the task data) is listed
apart in the report, labelled, and left out of the plot. On tasks too few for EAI's rates the table is of our own columns
(costs, full-sequence success), without the peers, and says so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from helper_agent.evals.engine.plots import figure
from helper_agent.evals.studies.eai.peers import score_outputs, score_peers
from helper_agent.evals.studies.eai.report import (
    apart_label,
    comparable,
    our_extras,
    row,
    scored_by_eai,
    unscored_row,
    write_report,
)
from helper_agent.evals.studies.eai.runner import load_results, load_spec, responses


def run_name(run_dir: Path) -> str:
    """The row name a run folder's spec gives (`EaiRunSpec.row_name`)."""
    return load_spec(run_dir / "spec.json").row_name


def our_rows(run_dirs: Sequence[Path], progress: Callable[[str], None] | None = None
             ) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """A row per run folder, the task ids they share (all must have the same ones), and notes.

    Rows EAI's evaluator cannot score (too few tasks for its rates) keep our own columns and leave
    EAI's empty, and a note says why: a run stopped at 40 tasks still shows its costs and full-sequence
    success instead of no table at all."""
    rows, ids, notes = [], None, []
    for folder in run_dirs:
        if not (folder / "spec.json").exists():
            raise FileNotFoundError(f"{folder}: no spec.json (not a helper eval eai run folder)")
        records = load_results(folder)
        these = [r["identifier"] for r in records]
        if ids is None:
            ids = these
        elif these != ids:
            raise ValueError(f"{folder}: its {len(these)} tasks are not the first run's {len(ids)} tasks "
                             "(finish it, or compare runs over the same --limit)")
        name = run_name(folder)
        if any(r["name"] == name for r in rows):  # the same settings twice (two progressive runs' iteration 0)
            name += "@" + ("/".join(folder.parts[-3:-1]) if folder.name == "run" else folder.name)
        try:
            scored = row(name, score_outputs(name, responses(records), folder))
        except ValueError as exc:  # too few tasks for EAI's rates
            scored = unscored_row(name, len(records))
            if not notes:
                notes.append(f"EAI's columns are empty: {exc}")
        rows.append({**scored, **our_extras(records), "folder": str(folder)})
        if progress:
            progress(name)
    return rows, ids or [], notes


class EaiTable(NamedTuple):
    """What `table` wrote: the rows, the report's path, its title and its notes (what a reader of the
    table must know, e.g. that the peers are left out); the CLI prints the same title and notes."""

    rows: list[dict[str, Any]]
    report: Path
    title: str
    notes: list[str]


def table(run_dirs: Sequence[Path], out: Path, *, peers: bool = True, peers_dir: Path | None = None,
          progress: Callable[[str], None] | None = None) -> EaiTable:
    """Score, write the report and the plot."""
    rows, ids, notes = our_rows(run_dirs, progress)
    scored = scored_by_eai(rows)
    if peers and ids and scored:
        rows += [row(name, s) for name, s in score_peers(ids, peers_dir or out, progress=progress).items()]
    elif peers and ids:
        notes.append("the 15 peers are left out: EAI's evaluator cannot score these tasks for them either")
    rows.sort(key=lambda r: -(r["task_success"] if scored else r["full_sequence_success"]))
    apart = [r for r in rows if not comparable(r)]
    if apart:
        notes.append(f"{len(apart)} row(s) retrieved examples that share the task's goal or task name and are listed "
                     "apart, not ranked with the peers and not plotted: "
                     + "; ".join(f"{r['name']}: {apart_label(r)}" for r in apart))
    title = (f"EAI VirtualHome action sequencing, {len(ids)} tasks, % by EAI's evaluate_results" if scored else
             f"EAI VirtualHome action sequencing, {len(ids)} tasks, full-sequence success (EAI's goal check, ours)")
    out.mkdir(parents=True, exist_ok=True)
    report = write_report(rows, out, title, notes)
    plot([r for r in rows if comparable(r)], out / "eai_table.png", title)
    return EaiTable(rows, report, title, notes)


def plot(rows: list[dict[str, Any]], path: Path, title: str) -> Path:
    """Task and execution success per row (full-sequence success when EAI's evaluator scored none),
    ours in colour and the peers in grey (matplotlib, no display)."""
    names = [r["name"] for r in rows]
    scored = scored_by_eai(rows)
    bars = ([("task_success", "task success", "tab:blue", "0.55"), ("execution_success", "execution success", "tab:orange", "0.8")]
            if scored else [("full_sequence_success", "full-sequence success (ours)", "tab:blue", "0.55")])
    height = 0.8 / len(bars)
    with figure(path, (10, 0.32 * len(rows) + 1.5)) as (_, ax):
        y = range(len(rows))
        ours = [str(n).startswith("ours-") for n in names]
        for j, (key, label, colour, grey) in enumerate(bars):
            offset = (len(bars) - 1) / 2 * height - j * height
            ax.barh([i - offset for i in y], [r[key] for r in rows], height=height, label=label,
                    color=[colour if o else grey for o in ours])
        ax.set_yticks(list(y), names, fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel("% of the tasks EAI's evaluator keeps" if scored else "% of the tasks")
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=7, loc="lower right")
    return path
