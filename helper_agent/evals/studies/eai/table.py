"""One table of EAI runs: our methods (and their switches) beside the 15 packaged LLMs.

Each run folder of `helper eval eai` (or an iteration of `helper eval progressive --benchmark eai`)
holds its responses; this scores every one of them and every peer on the same task ids with EAI's
evaluator in one invocation (scores cached per run folder and per peer, keyed by the task ids), and
writes `report.md`, `report.json` and `eai_table.png`. Runs on different task ids are refused: a
table compares like with like.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from helper_agent.evals.engine.plots import figure
from helper_agent.evals.studies.eai.peers import score_outputs, score_peers
from helper_agent.evals.studies.eai.report import our_extras, row, write_report
from helper_agent.evals.studies.eai.runner import EaiRunSpec, load_results, responses
from helper_agent.files import read_json_object


def run_name(run_dir: Path) -> str:
    """The row name a run folder's spec gives (`EaiRunSpec.row_name`)."""
    spec = read_json_object(run_dir / "spec.json")
    return EaiRunSpec(**{**spec, "agent_options": dict(spec.get("agent_options") or {})}).row_name


def our_rows(run_dirs: Sequence[Path], progress: Callable[[str], None] | None = None) -> tuple[list[dict[str, Any]], list[str]]:
    """A scored row per run folder, and the task ids they share (all must have the same ones)."""
    rows, ids = [], None
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
        rows.append({**row(name, score_outputs(name, responses(records), folder)), **our_extras(records),
                     "folder": str(folder)})
        if progress:
            progress(name)
    return rows, ids or []


def table(run_dirs: Sequence[Path], out: Path, *, peers: bool = True, peers_dir: Path | None = None,
          progress: Callable[[str], None] | None = None) -> tuple[list[dict[str, Any]], Path]:
    """Score, write the report and the plot; (rows, report path)."""
    rows, ids = our_rows(run_dirs, progress)
    if peers and ids:
        scored = score_peers(ids, peers_dir or out, progress=progress)
        rows += [row(name, s) for name, s in scored.items()]
    rows.sort(key=lambda r: -r["task_success"])
    title = f"EAI VirtualHome action sequencing, {len(ids)} tasks, % by EAI's evaluate_results"
    out.mkdir(parents=True, exist_ok=True)
    report = write_report(rows, out, title)
    plot(rows, out / "eai_table.png", title)
    return rows, report


def plot(rows: list[dict[str, Any]], path: Path, title: str) -> Path:
    """Task and execution success per row, ours in colour and the peers in grey (matplotlib, no display)."""
    names = [r["name"] for r in rows]
    with figure(path, (10, 0.32 * len(rows) + 1.5)) as (_, ax):
        y = range(len(rows))
        ours = [str(n).startswith("ours-") for n in names]
        ax.barh([i + 0.2 for i in y], [r["task_success"] for r in rows], height=0.4, label="task success",
                color=["tab:blue" if o else "0.55" for o in ours])
        ax.barh([i - 0.2 for i in y], [r["execution_success"] for r in rows], height=0.4, label="execution success",
                color=["tab:orange" if o else "0.8" for o in ours])
        ax.set_yticks(list(y), names, fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel("% of the tasks EAI's evaluator keeps")
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=7, loc="lower right")
    return path
