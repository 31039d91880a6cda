"""P-RAG's progressive iteration: passes over a task set, each retrieving from the episodes of the
passes before it.

    iteration 0: database D0 (empty)                -> pass 0 -> records R0
    iteration i: database Di = R0 + ... + R(i-1)    -> pass i -> records Ri

A record is one finished episode: the goal instruction (the dialogue the agent was given), the
scene graph, action and observation of every step (the agent's own trajectory, from the harness
record), and the done flag. The done flag is the environment's: the harness's `success` for that
episode, written here, in the evaluation layer; the agent only ever reads the database. Nothing
else of the instance goes in: no gold program, no gold plan, no reference trajectory.

Two modes (`train_split`):
- "train": the passes that build the database run over the first `train_limit` train episodes;
  at every iteration the evaluation split is run with the same database Di (its results never
  enter the database).
- "self": the evaluation split itself is iterated ("self-iteration", as the paper labels it).

Layout of `out`: `iter_<i>/database/` (Di, kept, so an iteration can be re-run: delete its
`eval/` and run again), `iter_<i>/train/` (train mode), `iter_<i>/eval/` (both: `runner.run_eval`
outputs, resumable), and `metrics.json`, `report.md`, `sr_by_iteration.png` for the whole run.
Di is rebuilt from the stored pass results (never copied from a live store) and marked complete in
`iter_<i>/database.json`; a pass whose episodes are not all recorded is resumed first.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from helper_agent.evals.engine.executors import Executor
from helper_agent.evals.engine.plots import figure
from helper_agent.evals.engine.provenance import code_counts, code_note, code_version
from helper_agent.evals.engine.runfiles import SPEC_FILE, read_progressive_spec, read_spec, write_spec
from helper_agent.evals.engine.runner import instance_paths, run_eval
from helper_agent.evals.engine.spec import EvalSpec
from helper_agent.evals.engine.store import ResultStore
from helper_agent.files import (
    atomic_write_json,
    atomic_write_text,
    read_json_model,
)
from helper_agent.graphs.registry import experience_use
from helper_agent.memory.experience import Experience, ExperienceMemory, ExperienceStep
from helper_agent.teach.instances import instance_id_of, load_instance


class DatabaseMarker(BaseModel):
    """`iter_<i>/database.json`: how many records the built database Di holds."""

    records: int = Field(ge=0)

TrainSplit = Literal["train", "self"]
#: progress(iteration, phase ("train"/"eval"/"database"), finished, total)
Progress = Callable[[int, str, int, int], None]


@dataclass
class ProgressiveSpec:
    data: str
    out: str
    iterations: int = 4
    train_split: TrainSplit = "self"
    split: str = "valid_unseen"
    limit: int | None = None
    train_limit: int | None = 100
    llm: str = "local"
    agent: str = "prag"
    agent_options: dict[str, str] = field(default_factory=dict)
    workers: int = 1
    seed: int = 0
    iteration0_from: str | None = None  # another run whose iteration-0 passes this one adopts
    adopt_other_code: bool = False  # adopt iteration-0 episodes that other agent code ran, too

    def label(self) -> str:
        options = "/".join(f"{k}={v}" for k, v in sorted(self.agent_options.items()))
        mode = "self-iteration" if self.train_split == "self" else f"train({self.train_limit})->{self.split}"
        return "/".join(p for p in (self.agent, mode, options) if p)

    def check(self) -> None:
        if self.train_split not in ("train", "self"):
            raise ValueError(f"train_split must be 'train' or 'self', not {self.train_split!r}")
        if self.iterations < 1:
            raise ValueError("iterations must be >= 1")
        option = experience_use(self.agent).option
        if option in self.agent_options:
            raise ValueError(f"the progressive run chooses each iteration's database; do not pass {option}=")
        if self.iteration0_from and Path(self.iteration0_from).resolve() == Path(self.out).resolve():
            raise ValueError("--iteration0-from names the run's own folder")


def _iter_dir(spec: ProgressiveSpec, i: int) -> Path:
    return Path(spec.out) / f"iter_{i}"


def pass_spec(spec: ProgressiveSpec, i: int, phase: str) -> EvalSpec:
    """The evaluation of one pass: `phase` "train" (train split) or "eval" (the evaluation split)."""
    database = (_iter_dir(spec, i) / "database").resolve()
    train = phase == "train"
    return EvalSpec(mode="tfd", data=spec.data, split="train" if train else spec.split,
                    out=str(_iter_dir(spec, i) / phase), limit=spec.train_limit if train else spec.limit,
                    llm=spec.llm, workers=spec.workers, feedback=0, planner=spec.agent, seed=spec.seed,
                    agent_options={**spec.agent_options, experience_use(spec.agent).option: str(database)})


def follow_move(run: EvalSpec) -> bool:
    """If the pass was recorded in another place (the run folder was moved or copied, say from
    `/tmp/runs` into a repository), point its recorded database at this place; whether it did.

    A pass's database is always its own iteration's `database/` (`pass_spec`), so a recorded path
    that ends in the same `iter_<i>/database` is the same database, and the pass resumes instead of
    being refused as a run with other switches."""
    spec_file = Path(run.out) / "spec.json"
    recorded = read_spec(spec_file)
    if recorded is None:
        return False
    options = recorded.get("agent_options") or {}
    option = experience_use(run.planner).option
    old, new = str(options.get(option, "")), run.agent_options[option]
    if not old or old == new or Path(old).parts[-2:] != Path(new).parts[-2:]:
        return False
    recorded["agent_options"] = {**options, option: new}
    write_spec(spec_file, recorded)
    return True


def source_phase(spec: ProgressiveSpec) -> str:
    """The pass whose episodes enter the database: the train pass, or the evaluation pass itself."""
    return "train" if spec.train_split == "train" else "eval"


# ------------------------------------------------------------------------------------ records
def experience_records(run: EvalSpec, iteration: int) -> list[Any]:
    """One `Experience` per episode of a finished pass: goal, the agent's trajectory, done flag.

    The goal is the instruction the agent was handed (the instance's dialogue); the trajectory is
    the agent's own (`[action, observation, scene graph]` per step, as `PRAGAgent` reports it);
    `done` is the harness's success. Nothing else of the instance is read.
    """
    records = ResultStore(Path(run.out) / "results.jsonl").records()
    out = []
    for path in instance_paths(run):
        iid = instance_id_of(path)
        record = records.get(iid)
        if record is None:
            raise RuntimeError(f"{run.out}: episode {iid} has no result yet (the pass is not finished)")
        goal = load_instance(path, run.mode).dialogue
        steps = [ExperienceStep(action=str(s[0]), observation=str(s[1]), scene_graph=str(s[2]))
                 for s in record.get("subgoals") or [] if isinstance(s, list) and len(s) == 3]
        out.append(Experience(id=f"r{iteration}:{iid}", goal=goal, steps=steps, done=bool(record.get("success")),
                              info={"instance_id": iid, "iteration": iteration, "split": run.split}))
    return out


def build_database(spec: ProgressiveSpec, i: int, progress: Progress | None = None) -> int:
    """Di: the records of passes 0..i-1 committed in order, one round per pass; its record count.

    A marked database is reused only if it still holds the marked number of records: a run folder
    copied or kept without its `database/` (it is derived data, rebuilt from the passes' results)
    gets it rebuilt instead of an empty database passed off as Di."""
    folder = _iter_dir(spec, i)
    marker = folder / "database.json"
    if marker.exists():
        marked = read_json_model(marker, DatabaseMarker).records
        if marked == 0 or ((folder / "database").is_dir() and ExperienceMemory(path=str(folder / "database")).count() == marked):
            return marked
        marker.unlink()
    folder.mkdir(parents=True, exist_ok=True)
    memory = ExperienceMemory(path=str(folder / "database"))
    memory.clear()  # a build that crashed half-way starts again
    for j in range(i):
        if progress:
            progress(i, "database", j, i)
        memory.commit_iteration(experience_records(pass_spec(spec, j, source_phase(spec)), j))
    count = memory.count()
    atomic_write_json(marker, {"records": count, "rounds": i, "policy": memory.policy}, indent=None)
    if progress:
        progress(i, "database", i, i)
    return count


# ------------------------------------------------------------------------------ iteration 0
def retrieval_switches(agent: str) -> frozenset[str]:
    """Switches that act only through the retrieved records (the method declares them,
    `ExperienceUse.retrieval_options`): with iteration 0's empty database they change nothing, so
    runs that differ only in them have the same iteration 0."""
    return frozenset(experience_use(agent).retrieval_options)


def adopt_iteration0(spec: ProgressiveSpec) -> list[str]:
    """Copy the iteration-0 episodes of `spec.iteration0_from` into this run; the phases adopted.

    Iteration 0 runs on an empty database, so its episodes do not depend on the retrieval switches,
    nor on each other: an ablation (`retrieval=goal`, another `k`) can start from the main run's
    iteration 0 instead of paying for the same episodes again, and a 50-episode run from a 20-episode
    one (its first 20 are adopted, the pass runs the other 30). Everything else that decides an
    episode must match (data, split, model, agent, its other switches, seed); only the episodes
    this run has are copied, so a source with more episodes, or one stopped mid-pass, is fine. The
    evaluation pass is adopted from a self-iteration or a train-mode run alike (both evaluate the
    split on an empty database); a train pass only from a train-mode run that made one (otherwise
    this run makes its own). A phase this run already has is never overwritten, and each adopted
    phase says where it came from and how many episodes (`adopted_from.json`).

    Only episodes that the code running now ran are adopted (a record's `code`, see `provenance`):
    an episode of an agent since changed runs again, or a table would compare two agents under one
    label. `adopt_other_code` adopts them anyway, for a change its author knows leaves the agent as
    it was; `adopted_from.json` then counts them by code.
    """
    source = Path(str(spec.iteration0_from))
    theirs = read_progressive_spec(source)
    if theirs is None:
        raise FileNotFoundError(f"--iteration0-from {source}: no progressive.json (not a progressive run folder)")
    ours = asdict(spec)
    for key in ("data", "split", "llm", "agent", "seed"):
        if theirs.get(key) != ours[key]:
            raise ValueError(f"--iteration0-from {source}: it ran {key}={theirs.get(key)!r}, this run {key}={ours[key]!r}")
    retrieval = retrieval_switches(spec.agent)
    decisive = {k: v for k, v in spec.agent_options.items() if k not in retrieval}
    their_decisive = {k: v for k, v in (theirs.get("agent_options") or {}).items() if k not in retrieval}
    if decisive != their_decisive:
        raise ValueError(f"--iteration0-from {source}: its switches {their_decisive} differ from {decisive} "
                         f"beyond {', '.join(sorted(retrieval))}")
    phases = ["eval"]
    if (spec.train_split == "train" and spec.iterations > 1 and theirs.get("train_split") == "train"
            and theirs.get("iterations", 1) > 1):
        phases.insert(0, "train")  # otherwise this run makes its own train pass
    adopted = []
    for phase in phases:
        target = _iter_dir(spec, 0) / phase
        if (target / "results.jsonl").exists():
            continue
        results = source / "iter_0" / phase / "results.jsonl"
        theirs_records = ResultStore(results).records() if results.exists() else {}
        ours_ids = [instance_id_of(p) for p in instance_paths(pass_spec(spec, 0, phase))]
        records = [theirs_records[i] for i in ours_ids if i in theirs_records]
        current = code_version()
        other_code = [r for r in records if r.get("code") != current]
        if not spec.adopt_other_code:
            records = [r for r in records if r.get("code") == current]
        if not records and not other_code:
            continue
        if records:
            store = ResultStore(target / "results.jsonl")  # run_eval writes this run's spec.json, runs the rest
            for record in records:
                store.append(record)
        target.mkdir(parents=True, exist_ok=True)  # said even when every episode was another code's
        atomic_write_json(target / "adopted_from.json",
            {"source": str(source / "iter_0" / phase), "episodes": len(records), "of": len(ours_ids),
             "code": code_counts(records),
             "not_adopted_other_code": 0 if spec.adopt_other_code else len(other_code),
             "why": "iteration 0 runs on an empty database, so neither the retrieval switches nor the other "
             "episodes change an episode"})
        if records:
            adopted.append(phase)
    return adopted


# ------------------------------------------------------------------------------------ the run
def action_sequences(records: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Each recorded episode's actions, in order, by instance id."""
    return {str(r["instance_id"]): [str(step[0]) for step in r.get("subgoals") or []] for r in records}


def changed_episodes(baseline: dict[str, list[str]], current: dict[str, list[str]]) -> tuple[int, int]:
    """(episodes acting otherwise than in the baseline, episodes both have).

    With SR flat, this is what says whether the database changed the agent at all: iteration 0
    runs with an empty one, so an episode that acts the same at iteration i took nothing from it."""
    common = baseline.keys() & current.keys()
    return sum(baseline[i] != current[i] for i in common), len(common)


def _pass_summary(records: list[dict[str, Any]], metrics: dict[str, Any]) -> dict[str, Any]:

    def mean(key: str) -> float:
        values = [float(r.get(key, 0) or 0) for r in records]
        return round(statistics.fmean(values), 3) if values else 0.0

    return {
        "SR": metrics["overall"]["SR"], "GC": metrics["overall"]["GC"], "episodes": metrics["overall"]["episodes"],
        "llm_calls": mean("llm_calls"), "prompt_tokens": mean("prompt_tokens"),
        "prompt_tokens_evaluated": mean("prompt_tokens_evaluated"), "llm_seconds": mean("llm_seconds"),
        "seconds": mean("seconds"), "retrieve_seconds": mean("retrieve_seconds"), "act_seconds": mean("act_seconds"),
        "env_steps": mean("traj_len"), "env_failures": mean("failures"), "errors": metrics["ended_by"]["error"],
        "code": dict(metrics.get("code") or {}),
    }


def run_progressive(spec: ProgressiveSpec, progress: Callable[[int, str, int, int], None] | None = None,
                    chat_model: Any = None, executor: Executor | None = None) -> dict[str, Any]:
    """Run (or resume) every iteration; returns the metrics written to `<out>/metrics.json`.
    Every pass runs its episodes on `executor` (default: `spec.workers` local processes)."""
    spec.check()
    out = Path(spec.out)
    out.mkdir(parents=True, exist_ok=True)
    previous = read_progressive_spec(out)
    if previous is not None:
        for key in ("data", "train_split", "split", "limit", "train_limit", "llm", "agent", "agent_options", "seed"):
            if previous.get(key) != asdict(spec).get(key):
                raise ValueError(f"{out} holds a progressive run with {key}={previous.get(key)!r}; use another --out")
    atomic_write_json(out / SPEC_FILE, asdict(spec))
    if spec.iteration0_from:
        adopt_iteration0(spec)

    iterations = []
    baseline: dict[str, list[str]] = {}  # iteration 0's actions per evaluated episode
    for i in range(spec.iterations):
        size = build_database(spec, i, progress)
        row: dict[str, Any] = {"iteration": i, "database_records": size}
        phases = ["eval"]
        if spec.train_split == "train" and i < spec.iterations - 1:
            phases.insert(0, "train")  # the last train pass would feed no evaluation
        for phase in phases:
            run = pass_spec(spec, i, phase)

            def tick(finished: int, total: int, _record: dict[str, Any], i: int = i, phase: str = phase) -> None:
                if progress:
                    progress(i, phase, finished, total)

            follow_move(run)
            metrics = run_eval(run, tick, chat_model=chat_model, executor=executor)
            records = list(ResultStore(Path(run.out) / "results.jsonl").records().values())
            row[phase] = _pass_summary(records, metrics)
        actions = action_sequences(records)  # the phase loop ends with the evaluation pass
        baseline = baseline or actions
        row["eval"]["changed_from_iteration0"], row["eval"]["compared_with_iteration0"] = \
            changed_episodes(baseline, actions)
        row["SR"], row["GC"] = row["eval"]["SR"], row["eval"]["GC"]
        iterations.append(row)
    return write_progressive_outputs(spec, iterations)


def write_progressive_outputs(spec: ProgressiveSpec, iterations: list[dict[str, Any]]) -> dict[str, Any]:
    out = Path(spec.out)
    metrics = {"label": spec.label(), "mode": "self-iteration" if spec.train_split == "self" else "train",
               "run": asdict(spec), "iterations": iterations,
               "SR_by_iteration": [r["SR"] for r in iterations], "GC_by_iteration": [r["GC"] for r in iterations]}
    atomic_write_json(out / "metrics.json", metrics)
    atomic_write_text(out / "report.md", progressive_report(metrics))
    plot_sr_by_iteration(metrics, out / "sr_by_iteration.png")
    return metrics


def progressive_report(metrics: dict[str, Any]) -> str:
    run = metrics["run"]
    where = ("self-iteration: the evaluation split itself is iterated (its own episodes fill the database)"
             if run["train_split"] == "self"
             else f"database built by passes over {run['train_limit']} train episodes; {run['split']} evaluated with it")
    lines = [f"# Progressive iteration: {metrics['label']}", "", f"- {where}",
             f"- evaluation split: {run['split']} (limit {run['limit'] or 'all'}); done flag written from the "
             "harness's success; no gold program, plan or reference trajectory is used",
             *([f"- iteration 0 adopted from {run['iteration0_from']}, the episodes it has "
                + ("whatever code ran them" if run.get("adopt_other_code") else "that the current agent code ran")
                + " (an empty database: neither the retrieval switches nor the other episodes change one); "
                "`iter_0/*/adopted_from.json` says how many"] if run.get("iteration0_from") else []), "",
             "| iteration | database records | SR | GC | episodes | acting otherwise than at iteration 0 | "
             "environment failures/ep | LLM calls/ep | prompt tokens/ep | evaluated tokens/ep | LLM s/ep | s/ep | "
             "retrieval s/ep | acting s/ep |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in metrics["iterations"]:
        e = r["eval"]
        changed = (f"{e['changed_from_iteration0']} of {e['compared_with_iteration0']}"
                   if r["iteration"] and "changed_from_iteration0" in e else "")
        lines.append(f"| {r['iteration']} | {r['database_records']} | {e['SR']:.2f} | {e['GC']:.2f} | {e['episodes']} | "
                     f"{changed} | {e.get('env_failures', '')} | {e['llm_calls']} | {e['prompt_tokens']} | "
                     f"{e['prompt_tokens_evaluated']} | {e['llm_seconds']} | {e['seconds']} | {e['retrieve_seconds']} | "
                     f"{e['act_seconds']} |")
    lines += ["", "An episode acts otherwise when its sequence of actions differs from its own at iteration 0 "
              "(an empty database): the share of episodes the retrieved experience changed at all."]
    # An adopted iteration 0, or a pass resumed in a later session, may have run other code.
    code = code_note([(f"iteration {r['iteration']} {phase}", r[phase].get("code") or {})
                      for r in metrics["iterations"] for phase in ("train", "eval") if phase in r])
    if code:
        lines += ["", code]
    return "\n".join(lines) + "\n"


def plot_sr_by_iteration(metrics: dict[str, Any], path: Path) -> Path:
    xs = [r["iteration"] for r in metrics["iterations"]]
    with figure(path, (5, 3.5)) as (_, ax):
        ax.plot(xs, metrics["SR_by_iteration"], marker="o", label="SR")
        ax.plot(xs, metrics["GC_by_iteration"], marker="s", linestyle="--", label="GC")
        ax.set_xticks(xs)
        ax.set_xlabel("iteration")
        ax.set_ylabel("%")
        ax.set_ylim(0, 100)
        ax.set_title(metrics["label"], fontsize=8)
        ax.legend()
    return path
