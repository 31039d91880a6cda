"""The methods' EAI adapters behind one call: a task in, its `results.jsonl` record out.

Which method runs in which mode, and its switches (`--agent-option KEY=VALUE` of `helper eval eai`):

- `llm-planner`, open and closed loop: `k` from `--k` (gold plans of tasks 101-342 that share neither
  the task's goal nor its name: `pool.py`),
  `--max-replans` grounded re-plans in the closed loop.

P-RAG and EmbodiedRAG are not here: they run the registry's graphs through the one harness
(`registered.py`), with their own switches (`graphs/prag/agent.py`, `graphs/embodiedrag/agent.py`).
`STEPWISE` names them for the run's `spec.json`, which records their `k` and step cap.

Every record carries the response EAI scores (`llm_output`), the executed or written steps, the
agent's own trajectory (P-RAG's database is built from it), LLM usage and seconds, and
`sequence_success` (EAI's goal check in the simulator, on every executed step).
"""

from __future__ import annotations

from typing import Any

from helper_agent.evals.studies.eai.acting import EaiEpisode, sequence_success
from helper_agent.evals.studies.eai.llm_planner import run_llm_planner
from helper_agent.evals.studies.eai.tasks import EaiTask

STEPWISE = ("prag", "embodiedrag")
OPTIONS = {"llm-planner": ()}
CHOICES: dict[str, tuple[str, ...]] = {}
STEPWISE_DEFAULTS = {"k": 3, "max_steps": 20}  # a step-wise method's `k` and step cap when its switches are not given


def stepwise_setting(options: dict[str, str], key: str) -> int:
    """A step-wise method's `k` or `max_steps`: its switch, else the default."""
    return int(options.get(key, STEPWISE_DEFAULTS[key]))


def check_options(agent: str, mode: str, options: dict[str, str]) -> None:
    """A clear error for a mode the method does not have or a switch it does not know."""
    if agent in STEPWISE and mode != "closed-loop":
        raise ValueError(f"{agent} acts step by step: it has only --mode closed-loop")
    unknown = [key for key in options if key not in OPTIONS.get(agent, ())]
    if unknown:
        known = ", ".join(OPTIONS.get(agent, ())) or "none"
        raise ValueError(f"--agent-option {', '.join(unknown)} is not a switch of {agent} on EAI (it has: {known})")
    for key, allowed in CHOICES.items():
        if key in options and options[key] not in allowed:
            raise ValueError(f"--agent-option {key}={options[key]}: choose {' or '.join(allowed)}")
    for key in ("k", "max_steps"):
        if key in options and (not options[key].isdigit() or int(options[key]) < (0 if key == "k" else 1)):
            raise ValueError(f"--agent-option {key}={options[key]}: a whole number{'' if key == 'k' else ' >= 1'}")


def run_method(agent: str, mode: str, options: dict[str, str], task: EaiTask, chat: Any, *, k: int,
               max_replans: int, memory: Any = None, embedder: Any = None) -> dict[str, Any]:
    """One task by `agent`; its record (without the run's bookkeeping fields)."""
    if agent == "llm-planner":
        episode, env, recorder = run_llm_planner(task, chat, closed_loop=mode == "closed-loop", pool=memory, k=k,
                                                 max_replans=max_replans)
    else:
        raise ValueError(f"no EAI adapter for {agent!r}")
    usage = recorder.summary()
    success = env.success() if env is not None else sequence_success(task.identifier, episode.answer)
    return _record(episode, usage, success)


def _record(episode: EaiEpisode, usage: dict[str, float], success: bool) -> dict[str, Any]:
    steps = max(episode.steps, 1)
    return {
        "llm_output": episode.text, "steps": episode.answer, "attempts": episode.attempts, "replans": episode.replans,
        "failures": episode.failures, "usage": usage, "examples": episode.example_ids, "outcome": episode.outcome,
        "decisions": episode.steps, "rejected": episode.rejected, "trajectory": episode.trajectory,
        "prompt_tokens_per_step": round(usage.get("prompt_tokens", 0) / steps, 1),
        "llm_seconds_per_step": round(usage.get("llm_seconds", 0.0) / steps, 3),
        "sequence_success": bool(success), **episode.extra,
    }
