"""Runs an agent over EAI tasks into a resumable `results.jsonl`, then scores it with EAI's evaluator.

The method is built once from the registry, with its own switches and, for a method with EAI's two
modes (a `mode` switch: HELPER, LLM-Planner), the run's `--mode`, `--k` and `--max-replans`
(`run_options`), and lent the cross-task gold pool (`memory.GoldExamples`); each task runs through
the one harness (`registered.run_registered`), as does every other registered method (P-RAG and
EmbodiedRAG act step by step, closed loop only, with their own switches).

One line per task: the response EAI scores (`llm_output`), the steps, LLM usage and seconds, and
`sequence_success` (`registered.py`): EAI's goal check after executing *every* step in the simulator. EAI's
evaluator reads the response with `json.loads`, which keeps only the last of repeated keys, so a
sequence that repeats an action name (WALK, WALK, ...) is scored on a collapsed sequence; the
second figure shows what that costs (it is ours, not EAI's, and labelled so).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from helper_agent.evals.engine.provenance import code_version
from helper_agent.evals.engine.store import append_line
from helper_agent.evals.studies.eai.memory import GoldExamples
from helper_agent.evals.studies.eai.methods import STEPWISE, stepwise_setting
from helper_agent.evals.studies.eai.registered import run_registered
from helper_agent.evals.studies.eai.tasks import EaiTask, select_tasks
from helper_agent.files import (
    FileFormatError,
    atomic_write_json,
    parse_json_text,
    read_bounded,
    read_json_object,
)
from helper_agent.graphs.registry import (
    BuildRequest,
    UnknownAgent,
    build_agent,
    check_agent_options,
    get_method,
    method_names,
)

MODES = ("open-loop", "closed-loop")
#: The run's settings a method that writes whole sequences takes as its own switches (`run_options`).
RUN_SWITCHES = ("mode", "k", "max_steps", "max_replans")
POOL = "cross-task"
LEGACY_POOL = "leave-one-out"


@dataclass(frozen=True)
class EaiRunSpec:
    """What a run is; stored as `spec.json` so a resumed run cannot mix settings."""

    agent: str = "helper"
    mode: str = "open-loop"
    llm: str = "local"
    limit: int | None = None
    k: int = 3
    max_steps: int = 40
    max_replans: int = 2
    n_ctx: int = 8192
    task: str = "action-sequencing"
    agent_options: dict[str, str] = field(default_factory=dict)  # the method's own switches (`-o`)
    skip: int = 0  # tasks left out before the first one run (`select_tasks`)
    #: Where gold examples come from (`pool.py`): "cross-task" (tasks 101-342, never the task's goal or
    #: name; the only pool a run may use), "none" (a row that retrieves no gold example), or
    #: "leave-one-out" (all 342 but the task itself: only a folder written before the rule says so).
    pool: str = POOL

    @property
    def row_name(self) -> str:
        """`ours-<agent>-<mode>-<llm>[-k<k>[-cross]][-<switches>]`: unique per row of a table. Rows
        with cross-task examples end `-k<k>-cross`; the old leave-one-out rows keep their `-k<k>`."""
        llm = self.llm.replace("/", "-").replace(":", "-")
        parts = [f"ours-{self.agent}-{self.mode}-{llm}"]
        if writes_sequences(self.agent):
            parts.append(f"k{self.k}")
            if self.k > 0 and self.pool == POOL:
                parts.append("cross")
        parts += [f"{key}={value}" for key, value in sorted(self.agent_options.items()) if key != "database"]
        if "database" in self.agent_options:
            parts.append("db=" + Path(self.agent_options["database"]).parent.name)
        return "-".join(parts).replace("/", "-").replace("+", "_")


def writes_sequences(agent: str) -> bool:
    """Whether `agent` has EAI's two protocols (a `mode` switch: it writes the whole sequence, open
    loop, or acts and corrects it, closed loop) and takes `--k` examples, which are other tasks' gold
    sequences; a method without one acts on the environment step by step (closed loop only)."""
    try:
        return "mode" in get_method(agent).options
    except UnknownAgent:
        return False


def run_options(spec: EaiRunSpec) -> dict[str, str]:
    """The method's switches for the run: its `--agent-option`s, and the run's `--mode`, `--k`,
    `max_steps` and `--max-replans` for each of them the method has (`RUN_SWITCHES`)."""
    options = dict(spec.agent_options)
    if writes_sequences(spec.agent):
        known = get_method(spec.agent).options
        settings = {"mode": spec.mode, "k": spec.k, "max_steps": spec.max_steps, "max_replans": spec.max_replans}
        options.update({key: str(value) for key, value in settings.items() if key in known})
    return options


def check_spec(spec: EaiRunSpec) -> None:
    if spec.task != "action-sequencing":
        raise ValueError("only --task action-sequencing is implemented")
    if spec.pool != POOL:
        raise ValueError(f"examples come only from the cross-task pool (pool.py), not {spec.pool!r}: "
                         f"{LEGACY_POOL!r} describes run folders written before that rule")
    if spec.mode not in MODES:
        raise ValueError(f"--mode takes {' or '.join(MODES)}")
    if spec.agent not in method_names():
        raise ValueError(f"--agent takes {', '.join(method_names())}")
    if writes_sequences(spec.agent):
        given = [key for key in RUN_SWITCHES if key in spec.agent_options]
        if given:
            raise ValueError(f"--agent-option {', '.join(given)}: on EAI these are the run's --mode, --k, "
                             "--max-replans (and max_steps), not the method's -o")
    elif spec.mode != "closed-loop":
        how = "step by step" if spec.agent in STEPWISE else "on the environment"
        raise ValueError(f"{spec.agent} acts {how}: it has only --mode closed-loop")
    check_agent_options(spec.agent, run_options(spec))


def acting(spec: EaiRunSpec) -> EaiRunSpec:
    """`spec` with the settings that act: a step-wise method (P-RAG, EmbodiedRAG) takes `k` and its step
    cap from its switches (defaults 3 and 20) and never re-plans, so `spec.json` says which cap stopped
    its episodes rather than the whole-plan methods' 40; a run without gold examples has pool "none"."""
    if not writes_sequences(spec.agent) or spec.k <= 0:
        spec = replace(spec, pool="none")
    if spec.agent not in STEPWISE:
        return spec
    options = spec.agent_options
    return replace(spec, k=stepwise_setting(options, "k"), max_steps=stepwise_setting(options, "max_steps"),
                   max_replans=0)


def load_spec(path: Path) -> EaiRunSpec:
    """A run's stored `spec.json`; a field added since has its default, a field dropped since is ignored,
    except `pool`: a folder written before it retrieved leave-one-out from all 342 tasks."""
    stored = read_json_object(path)
    known = {f.name for f in fields(EaiRunSpec)}
    values = {key: value for key, value in stored.items() if key in known}
    values.setdefault("pool", LEGACY_POOL)
    if not isinstance(values.get("agent_options", {}), dict):
        raise FileFormatError(f"{path}: agent_options: expected a JSON object")
    return EaiRunSpec(**values)


def same_settings(a: EaiRunSpec, b: EaiRunSpec) -> bool:
    """Whether two runs act alike on a task (the task limit aside); folders written before `acting`
    recorded a step-wise method's unused k, max_steps and max_replans, and still match."""
    def settings(spec: EaiRunSpec) -> dict[str, Any]:
        return {key: value for key, value in asdict(acting(spec)).items() if key != "limit"}
    return settings(a) == settings(b)


def _read(path: Path) -> list[dict[str, Any]]:
    """The records of an EAI results file; a damaged line is one error naming the file and line, and
    a last line without its newline (cut by a crash; it runs again) is not read."""
    if not path.exists():
        return []
    records = []
    for number, line in enumerate(read_bounded(path).split(b"\n")[:-1], 1):
        if line.strip():
            record = parse_json_text(line, f"{path}: line {number}")
            if not isinstance(record, dict):
                raise FileFormatError(f"{path}: line {number}: expected a JSON object, got {type(record).__name__}")
            records.append(record)
    return records


def load_results(run_dir: Path) -> list[dict[str, Any]]:
    return _read(run_dir / "results.jsonl")


def run_tasks(spec: EaiRunSpec, chat: Any, run_dir: Path, *, tasks: list[EaiTask] | None = None,
              memory: Any = None, progress: Callable[[dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    """Run (or resume) `spec` into `run_dir/results.jsonl`; returns all records in task order."""
    check_spec(spec)
    run_dir.mkdir(parents=True, exist_ok=True)
    spec_path = run_dir / "spec.json"
    if spec_path.exists():
        old = load_spec(spec_path)
        if not same_settings(old, spec):
            raise ValueError(f"{run_dir} holds a run with other settings ({asdict(acting(old))}); choose another --out")
    atomic_write_json(spec_path, asdict(acting(spec)))
    tasks = tasks if tasks is not None else select_tasks(spec.limit, skip=spec.skip)
    done = {r["identifier"] for r in load_results(run_dir)}
    examples = GoldExamples(tasks, memory)
    agent = build_agent(spec.agent, BuildRequest(chat_model=chat, options=run_options(spec),
                                                 memory_dir=str(run_dir / "memory"), examples=examples))
    results_path = run_dir / "results.jsonl"
    for task in tasks:
        if task.identifier in done:
            continue
        record: dict[str, Any] = {"identifier": task.identifier, "task_name": task.task_name, "mode": spec.mode,
                                  "code": code_version()}
        record.update(run_registered(agent, task, open_loop=spec.mode == "open-loop", examples=examples))
        append_line(results_path, record)
        if progress:
            progress(record)
    order = {t.identifier: i for i, t in enumerate(tasks)}
    return sorted((r for r in load_results(run_dir) if r["identifier"] in order), key=lambda r: order[r["identifier"]])


def responses(records: list[dict[str, Any]]) -> list[dict[str, str]]:
    """EAI's response format: `[{"identifier": ..., "llm_output": ...}, ...]`."""
    return [{"identifier": r["identifier"], "llm_output": r["llm_output"]} for r in records]
