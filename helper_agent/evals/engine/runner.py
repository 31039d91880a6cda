"""TfD and EDH evaluation runs: one record per instance, resumable, parallel.

A run walks the instances of a split in a TEACh-layout dataset folder (the built-in benchmark or
TEACh's own download), starts each episode from its game's initial state in the symbolic
environment (EDH: then replays the driver's action history), lets the planner act, and scores the
final state with TEACh's checker and metrics. Records go to an append-only `results.jsonl`; a
re-run skips the instances already there. Workers are separate processes, each with its own
environment and, for the local LLM, its own model; `--llm URL` shares one server instead.

Planners:
- `helper`: the HELPER graph with the configured chat model (the product path).
- `gold`: an oracle. TfD runs the instance's gold program through the executor; EDH replays the
  reference future actions. It measures the ceiling of the world and executor on a dataset.
- `oracle-graph`: an oracle too: the full HELPER graph whose chat model answers every planning call
  with the gold program; it measures the graph and executor without LLM time.
"""

from __future__ import annotations

import functools
import json
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from helper_agent.envs.symbolic import SymbolicEnv
from helper_agent.envs.thor import EnvironmentUnavailable
from helper_agent.evals.engine.agents import GoldAgent, OracleGraphAgent
from helper_agent.evals.engine.executors import Executor, Job, SerialExecutor, local_executor
from helper_agent.evals.engine.harness import run_instance
from helper_agent.evals.engine.methods import build_request
from helper_agent.evals.engine.provenance import code_version
from helper_agent.evals.engine.report import write_outputs
from helper_agent.evals.engine.runfiles import read_spec, write_spec
from helper_agent.evals.engine.spec import ORACLE_PLANNERS, EvalSpec
from helper_agent.evals.engine.store import ResultStore
from helper_agent.graphs.helper.agent import Memories, helper_config
from helper_agent.graphs.registry import build_agent
from helper_agent.llm import ensure_model_dir, local_model_size, make_chat_model
from helper_agent.memory.errors import StoreUnavailableError
from helper_agent.memory.examples import ProgramExample
from helper_agent.teach.formats import TeachDataset
from helper_agent.teach.instances import instance_id_of, instruction_text, load_instance
from helper_agent.teach.metrics import failed_episode


def instance_paths(spec: EvalSpec) -> list[Path]:
    if spec.mode not in ("tfd", "edh"):
        raise ValueError(f"mode must be tfd or edh, not {spec.mode!r}")
    if spec.instances:
        paths = [Path(p) for p in spec.instances]
    else:
        dataset = TeachDataset(spec.data)
        paths = dataset.tfd_paths(spec.split) if spec.mode == "tfd" else dataset.edh_paths(spec.split)
        if not paths:
            raise FileNotFoundError(f"{spec.data}: no {spec.mode} instances in split {spec.split!r}")
    return paths[: spec.limit] if spec.limit else paths


def _instance_id(path: Path) -> str:
    return instance_id_of(path)


# ------------------------------------------------------------------------------------ one episode
_worker_cache: dict[str, Any] = {}


def run_memories(spec: EvalSpec) -> Any:
    """HELPER's memories of the run (`EvalSpec.memory_folder`), opened once per worker."""
    path = spec.memory_folder()
    key = f"memories:{path}"
    if key not in _worker_cache:
        _worker_cache[key] = Memories.at(path)
    return _worker_cache[key]


def _chat(spec: EvalSpec) -> Any:
    key = f"chat:{spec.llm}"
    if key not in _worker_cache:
        _worker_cache[key] = make_chat_model(spec.llm)
    return _worker_cache[key]


def check_chat_model(llm: str) -> None:
    """Raise `LLMUnavailable` when `llm` names no model the episodes could make, before any runs.

    Each episode makes its model in its worker (`_chat`), so a bad spec would otherwise end every
    episode in the same error. A local model is checked by name only (its weights load in the
    workers); any other model is made here and kept, as this process's first episode would keep it
    (a client opens no connection until it is asked)."""
    key = f"chat:{llm}"
    if key in _worker_cache:
        return
    if local_model_size(llm) is not None:
        ensure_model_dir()  # a HELPER_MODEL_DIR that cannot hold the model: said once, not by every episode
        return
    _worker_cache[key] = make_chat_model(llm)


def make_agent(spec: EvalSpec, chat_model: Any = None) -> Any:
    """The agent a spec names (cached per worker process: models and memories load once)."""
    key = (f"agent:{spec.planner}:{sorted(spec.agent_options.items())}:{spec.ablate}:{spec.feedback}:{spec.seed}:"
           f"{spec.memory_dir or spec.out}:{id(chat_model) if chat_model else spec.llm}")
    if key not in _worker_cache:
        if spec.planner == "gold":
            agent: Any = GoldAgent()
        elif spec.planner == "oracle-graph":
            agent = OracleGraphAgent(run_memories(spec), helper_config(spec.ablate, spec.feedback, spec.seed))
        else:  # a method of the registry: helper, llm-planner, prag, embodiedrag, or a plug-in's
            agent = build_agent(spec.planner, build_request(spec, chat_model or _chat(spec)))
        _worker_cache[key] = agent
    return _worker_cache[key]


def run_episode(spec: EvalSpec, path: str, chat_model: Any = None) -> dict[str, Any]:
    """Run and score one instance through the harness; never raises: an error becomes an error record."""
    started = time.perf_counter()
    instance_id = _instance_id(Path(path))
    game_id = instance_id.split(".")[0]
    task_name = None
    try:
        loaded = load_instance(path, spec.mode)
        instance_id, game_id, task_name = loaded.instance_id, loaded.game_id, loaded.task_name
        agent = make_agent(spec, chat_model)
        tags = [spec.mode, spec.split, spec.planner, *(["ablate:" + spec.ablate] if spec.ablate else [])]
        record, _ = run_instance(loaded, agent, SymbolicEnv(), tags=tags,
                                 metadata={"split": spec.split, "ablation": spec.ablate or "none"})
    except (StoreUnavailableError, EnvironmentUnavailable):
        raise  # the memory store or the simulator is down: every episode would fail the same way
    except Exception as exc:  # noqa: BLE001 - one episode's error must not stop the run
        record = failed_episode(instance_id, game_id, task_name).to_teach_dict()
        record.update({"ended_by": "error", "error_message": f"{type(exc).__name__}: {exc}",
                       "traceback": traceback.format_exc(limit=6)})
    record["seconds"] = round(time.perf_counter() - started, 3)
    record["planner"] = spec.planner
    record["oracle"] = spec.planner in ORACLE_PLANNERS
    return record


# ------------------------------------------------------------------------------------ a whole run
def _job(spec_dict: dict[str, Any], path: str, chat_model: Any = None) -> dict[str, Any]:
    """An episode as an executor runs it (the spec travels as a dict to other processes)."""
    return run_episode(EvalSpec(**spec_dict), path, chat_model)


def lost_record(spec: EvalSpec, path: str, reason: str) -> dict[str, Any]:
    """The error record of an episode the executor could not finish (its Ray worker or node died
    more often than its retries allow): scored as an error, like an episode that raised."""
    instance_id = _instance_id(Path(path))
    record = failed_episode(instance_id, instance_id.split(".")[0]).to_teach_dict()
    record.update({"ended_by": "error", "error_message": f"episode lost by the executor: {reason}",
                   "seconds": 0.0, "planner": spec.planner, "oracle": spec.planner in ORACLE_PLANNERS})
    return record


def run_eval(
    spec: EvalSpec,
    progress: Callable[[int, int, dict[str, Any]], None] | None = None,
    chat_model: Any = None,
    executor: Executor | None = None,
) -> dict[str, Any]:
    """Run (or resume) an evaluation; returns the metrics written to `<out>/metrics.json`.

    Episodes run on `executor` (default: this process for one worker, a local process pool for
    `spec.workers`; see `evals/engine/executors.py`); whichever it is, this driver alone appends their
    records to `results.jsonl`. An in-process `chat_model` runs every episode here."""
    out = Path(spec.out)
    out.mkdir(parents=True, exist_ok=True)
    store = ResultStore(out / "results.jsonl")
    spec_file = out / "spec.json"
    previous = read_spec(spec_file)
    if previous is not None:
        for key in ("mode", "split", "planner", "ablate", "feedback", "llm", "agent_options"):
            if previous.get(key, {} if key == "agent_options" else None) != asdict(spec).get(key):
                raise ValueError(f"{out} holds a run with {key}={previous.get(key)!r}; use another --out for {key}={asdict(spec).get(key)!r}")
    write_spec(spec_file, asdict(spec))
    paths = instance_paths(spec)
    todo = unfinished(paths, store.done_ids())
    total = len(paths)
    finished = total - len(todo)
    if progress:
        progress(finished, total, {})
    job: Job = _job
    if chat_model is not None:  # a model object lives in this process: so do its episodes
        if executor is not None and not isinstance(executor, SerialExecutor):
            raise ValueError(f"an in-process chat model cannot run on the {executor.name} executor")
        executor = SerialExecutor()
        job = functools.partial(_job, chat_model=chat_model)
    owned = executor is None
    executor = executor if executor is not None else local_executor(spec.workers)
    outcomes = executor.run(job, asdict(spec), [str(p) for p in todo])
    try:
        for outcome in outcomes:
            record = outcome.record if outcome.record is not None else lost_record(spec, outcome.path, str(outcome.lost))
            record = {**record, "code": code_version()}
            store.append(record)
            finished += 1
            if progress:
                progress(finished, total, record)
    finally:
        outcomes.close()  # a run stopped early: the executor cancels what is still in flight
        if owned:
            executor.close()
    selected = {_instance_id(p) for p in paths}
    records = [r for r in store.records().values() if r["instance_id"] in selected]
    return write_outputs(out, records, spec)


def unfinished(paths: list[Path], done: set[str]) -> list[Path]:
    """The instance files among `paths` that have no result in `done` (a store's recorded ids)."""
    return [p for p in paths if _instance_id(p) not in done]


def examples_from_split(data: str | Path, split: str = "train") -> list[Any]:
    """The `split` TfD instances of a dataset folder as example-memory records (dialogue -> gold program).

    Ids are `<split>:seed<N>:<instance id>` for the built-in benchmark (its seed from manifest.json,
    so two benchmarks' `train_0000` never overwrite each other and the packaged seed-0 examples are
    rewritten, not doubled, by `--train-memory` on the seed-0 benchmark), `<split>:<instance id>`
    otherwise. Instances without a gold program (TEACh's own download has none) are skipped.
    """
    dataset = TeachDataset(data)
    prefix = f"{split}:{_benchmark_seed_tag(Path(data))}"
    records = []
    for instance in dataset.tfd_instances(split):
        extra = (instance.model_extra or {}).get("helper_agent") or {}
        if extra.get("gold_program"):
            records.append(ProgramExample(id=f"{prefix}{instance.instance_id}", task_family=extra.get("family", ""),
                                          dialogue=instruction_text(instance.dialog()), program=extra["gold_program"]))
    return records


def _benchmark_seed_tag(data: Path) -> str:
    """`seed<N>:` for a folder the built-in generator wrote, else nothing."""
    try:
        manifest = json.loads((data / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    if isinstance(manifest, dict) and manifest.get("generator") == "helper-agent" and isinstance(manifest.get("seed"), int):
        return f"seed{manifest['seed']}:"
    return ""


def stratified_examples(records: list[Any], per_family: int) -> list[Any]:
    """The first `per_family` records of each task family, in the split's order (no choosing by outcome)."""
    taken: dict[str, int] = {}
    chosen = []
    for record in records:
        if taken.get(record.task_family, 0) < per_family:
            taken[record.task_family] = taken.get(record.task_family, 0) + 1
            chosen.append(record)
    return chosen


def seed_examples_from_split(spec: EvalSpec, split: str = "train") -> int:
    """Add the dataset's `split` TfD instances (dialogue -> gold program) to the example memory.

    This is the built-in benchmark's memory seeding (train is for that); ids are the instance ids,
    so seeding again rewrites the same records (the packaged train examples among them). Returns
    how many were written.
    """
    records = examples_from_split(spec.data, split)
    if not records:
        raise ValueError(f"{spec.data}: split {split!r} has no TfD instances with gold programs to seed memory from")
    memory = run_memories(spec).examples
    memory.add(records)
    return len(records)
