"""Progressive self-iteration on EAI's VirtualHome tasks: P-RAG's, for any method with an experience
memory (`graphs/registry.ExperienceUse`; P-RAG is the one built in).

    iteration 0: no database                          -> pass 0 over the tasks -> records R0
    iteration i: database Di = R0 + ... + R(i-1)      -> pass i over the same tasks -> records Ri

A pass is an ordinary `helper eval eai --agent <method> --mode closed-loop` run (`iter_<i>/run/`,
resumable, scored by EAI's evaluator). A record of the database is one episode of a pass: the goal
the agent was given (EAI's node, edge and action goals), the agent's own trajectory (per step the
scene graph it saw, its action and the environment's answer) and the done flag, which is the
environment's: EAI's goal check on the state the episode ended in (`sequence_success`, written by
the runner, never seen by the agent). Nothing else goes in: no gold sequence, no evaluator score.

Iteration 0 has no database, so its pass does not depend on the retrieval switches: a run with
`retrieval=goal` can adopt the iteration 0 of a `goal+scene` run (`iteration0_from`) when the
settings that decide an episode (model, tasks, step cap) are the same.

Layout of `out`: `progressive.json` (the settings), `iter_<i>/database/` (Di, rebuilt from the
passes' records when missing), `iter_<i>/run/`, and `metrics.json`, `report.md`,
`sr_by_iteration.png` for the whole run, with the tasks whose outcome changed between iterations.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from helper_agent.evals.engine.plots import figure
from helper_agent.evals.studies.eai.peers import score_outputs
from helper_agent.evals.studies.eai.report import our_extras, row
from helper_agent.evals.studies.eai.runner import (
    EaiRunSpec,
    acting,
    load_results,
    load_spec,
    responses,
    run_tasks,
    same_settings,
)
from helper_agent.evals.studies.eai.tasks import EaiTask, select_tasks
from helper_agent.files import atomic_write_json, atomic_write_text, read_json_object
from helper_agent.graphs.registry import experience_use
from helper_agent.memory.experience import Experience, ExperienceMemory, ExperienceStep

#: progress(iteration, finished tasks, total tasks)
Progress = Callable[[int, int, int], None]


@dataclass
class EaiProgressiveSpec:
    out: str
    iterations: int = 4
    limit: int | None = None
    llm: str = "local"
    agent_options: dict[str, str] = field(default_factory=dict)  # retrieval, k, max_steps
    n_ctx: int = 8192
    skip: int = 0  # tasks left out before the first one iterated (`select_tasks`)
    agent: str = "prag"  # any registered method with an experience memory (`ExperienceUse`)

    def check(self) -> None:
        if self.iterations < 1:
            raise ValueError("iterations must be >= 1")
        option = experience_use(self.agent).option
        if option in self.agent_options:
            raise ValueError(f"the progressive run chooses each iteration's database; do not pass {option}=")

    def label(self) -> str:
        options = "/".join(f"{k}={v}" for k, v in sorted(self.agent_options.items()))
        return "/".join(p for p in (self.agent, "EAI self-iteration", options) if p)


def iter_dir(spec: EaiProgressiveSpec, i: int) -> Path:
    return Path(spec.out) / f"iter_{i}"


def pass_spec(spec: EaiProgressiveSpec, i: int) -> EaiRunSpec:
    use = experience_use(spec.agent)
    options = dict(spec.agent_options)
    if i == 0:  # no database: the switches that act only through what is retrieved act not at all
        options = {k: v for k, v in options.items() if k not in use.retrieval_options}
    else:
        options[use.option] = str((iter_dir(spec, i) / "database").resolve())
    return EaiRunSpec(agent=spec.agent, mode="closed-loop", llm=spec.llm, limit=spec.limit, n_ctx=spec.n_ctx,
                      agent_options=options, skip=spec.skip)


def experience_records(tasks: list[EaiTask], run_dir: Path, iteration: int) -> list[Any]:
    """One `Experience` per task of a finished pass: goal, the agent's own trajectory, done flag."""
    by_id = {r["identifier"]: r for r in load_results(run_dir)}
    out = []
    for task in tasks:
        record = by_id.get(task.identifier)
        if record is None:
            raise RuntimeError(f"{run_dir}: task {task.identifier} has no result yet (the pass is not finished)")
        steps = [ExperienceStep(scene_graph=str(s.get("scene_graph", "")), action=str(s.get("action", "")),
                                observation=str(s.get("observation", ""))) for s in record.get("trajectory") or []]
        out.append(Experience(id=f"r{iteration}:{task.identifier}", goal=task.goal_text, steps=steps,
                              done=bool(record.get("sequence_success")), info={"task": task.identifier, "iteration": iteration}))
    return out


def build_database(spec: EaiProgressiveSpec, i: int, tasks: list[EaiTask], embedder: Any = None) -> int:
    """Di from the passes 0..i-1, one committed round each (rebuilt unless complete); its record count."""
    folder = iter_dir(spec, i)
    marker = folder / "database.json"
    memory = ExperienceMemory(path=str(folder / "database"), embedder=embedder)
    if marker.exists() and memory.count() == int(read_json_object(marker).get("records", -1)):
        return memory.count()
    memory.clear()
    for j in range(i):
        memory.commit_iteration(experience_records(tasks, iter_dir(spec, j) / "run", j))
    atomic_write_json(marker, {"records": memory.count(), "rounds": i}, indent=None)
    return memory.count()


def adopt_iteration0(spec: EaiProgressiveSpec, source: Path) -> bool:
    """Copy `source`'s iteration-0 pass when this run has none and both were run with the same
    settings (iteration 0 keeps only the switches that act without a database); whether it did."""
    mine, theirs = iter_dir(spec, 0) / "run", source / "iter_0" / "run"
    if (mine / "results.jsonl").exists() or not (theirs / "spec.json").exists():
        return False
    found = load_spec(theirs / "spec.json")
    if not same_settings(pass_spec(spec, 0), found):
        raise ValueError(f"{theirs}: its iteration 0 ran with other settings ({asdict(acting(found))}); cannot adopt it")
    mine.mkdir(parents=True, exist_ok=True)
    for name in ("spec.json", "results.jsonl"):
        shutil.copyfile(theirs / name, mine / name)
    atomic_write_json(mine / "adopted_from.json", {"source": str(theirs)}, indent=None)
    return True


def changes(before: dict[str, bool], after: dict[str, bool]) -> dict[str, list[str]]:
    return {"gained": sorted(t for t, ok in after.items() if ok and not before.get(t)),
            "lost": sorted(t for t, ok in after.items() if not ok and before.get(t))}


def run_eai_progressive(spec: EaiProgressiveSpec, chat: Any, *, progress: Progress | None = None,
                        embedder: Any = None, tasks: list[EaiTask] | None = None,
                        iteration0_from: Path | None = None) -> dict[str, Any]:
    """Run (or resume) every iteration; the metrics (also written to `metrics.json`)."""
    spec.check()
    out = Path(spec.out)
    out.mkdir(parents=True, exist_ok=True)
    recorded = out / "progressive.json"
    if recorded.exists():
        old = {**asdict(EaiProgressiveSpec(out=spec.out)), **read_json_object(recorded)}
        if {k: v for k, v in old.items() if k not in ("out", "iterations")} != {k: v for k, v in asdict(spec).items() if k not in ("out", "iterations")}:
            raise ValueError(f"{out} holds a progressive run with other settings ({old}); choose another --out")
    atomic_write_json(recorded, asdict(spec))
    tasks = tasks if tasks is not None else select_tasks(spec.limit, skip=spec.skip)
    if iteration0_from is not None:
        adopt_iteration0(spec, iteration0_from)
    rows, outcomes = [], []
    for i in range(spec.iterations):
        records_in = build_database(spec, i, tasks, embedder) if i else 0
        done = [0]

        def step(record: dict[str, Any], i: int = i, done: list[int] = done) -> None:
            done[0] += 1
            if progress:
                progress(i, done[0], len(tasks))

        run_dir = iter_dir(spec, i) / "run"
        records = run_tasks(pass_spec(spec, i), chat, run_dir, tasks=tasks, progress=step)
        outcome = {r["identifier"]: bool(r.get("sequence_success")) for r in records}
        name = f"{spec.agent}-iter{i}"
        try:
            scored = row(name, score_outputs(name, responses(records), run_dir))
        except ValueError:  # too few tasks for EAI's rates
            scored = {}
        rows.append({"iteration": i, "database_records": records_in, "tasks": len(records),
                     "done_rate": round(100.0 * sum(outcome.values()) / max(len(outcome), 1), 2),
                     "eai_task_success": scored.get("task_success"), "eai_execution_success": scored.get("execution_success"),
                     **our_extras(records), **(changes(outcomes[-1], outcome) if outcomes else {"gained": [], "lost": []})})
        outcomes.append(outcome)
    metrics = {"label": spec.label(), "iterations": rows}
    atomic_write_json(out / "metrics.json", metrics)
    atomic_write_text(out / "report.md", markdown(metrics))
    plot(metrics, out / "sr_by_iteration.png")
    return metrics


def markdown(metrics: dict[str, Any]) -> str:
    lines = [f"## {metrics['label']}", "",
             "done rate: the environment's goal check at the end of each episode (what the database records); "
             "EAI task SR: EAI's evaluator on the executed sequence.", "",
             "| iteration | database records | tasks | done rate | EAI task SR | EAI exec SR | LLM calls/task | prompt tok/task | s/task | gained | lost |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in metrics["iterations"]:
        lines.append(f"| {r['iteration']} | {r['database_records']} | {r['tasks']} | {r['done_rate']} | {r['eai_task_success']} "
                     f"| {r['eai_execution_success']} | {r.get('llm_calls_per_task')} | {r.get('prompt_tokens_per_task')} "
                     f"| {r.get('seconds_per_task')} | {' '.join(r['gained']) or '-'} | {' '.join(r['lost']) or '-'} |")
    return "\n".join(lines) + "\n"


def plot(metrics: dict[str, Any], path: Path) -> Path:
    its = [r["iteration"] for r in metrics["iterations"]]
    with figure(path, (5, 3.2)) as (_, ax):
        ax.plot(its, [r["done_rate"] for r in metrics["iterations"]], marker="o", label="done rate (environment)")
        eai = [r["eai_task_success"] for r in metrics["iterations"]]
        if all(v is not None for v in eai):
            ax.plot(its, eai, marker="s", label="EAI task success")
        ax.set_xticks(its)
        ax.set_xlabel("iteration")
        ax.set_ylabel("%")
        ax.set_title(metrics["label"], fontsize=8)
        ax.legend(fontsize=7)
    return path
