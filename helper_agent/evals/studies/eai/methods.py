"""P-RAG's and EmbodiedRAG's EAI adapters behind one call: a task in, its `results.jsonl` record out
(until they run through the registry's graphs as HELPER and LLM-Planner do: `registered.py`).

Their switches (`--agent-option KEY=VALUE` of `helper eval eai`):

- `prag`, closed loop: `retrieval=goal+scene|goal`, `k=N` (stored episodes per prompt, default 3),
  `database=PATH` (an experience database; none: iteration 0), `max_steps=N` (default 20),
  `answer=action|thought` (a one-line thought before the action; default action, the paper's).
- `embodiedrag`, closed loop: `graph=subgraph|full`, `k=N` (entities per query, default 3),
  `max_steps=N` (default 20).
- both step-wise methods: `refuse_futile=on|off` (default off, the papers' agents): leave out of a
  step's grammar the steps already taken from the same simulator state (`acting.tried_here`).

Every record carries the response EAI scores (`llm_output`), the executed steps, the agent's own
trajectory (P-RAG's database is built from it), LLM usage and seconds, and `sequence_success` (EAI's
goal check in the simulator, on every executed step).
"""

from __future__ import annotations

from typing import Any

from helper_agent.evals.studies.eai.acting import EaiEpisode
from helper_agent.evals.studies.eai.embodiedrag import EmbodiedRAGEaiConfig, run_embodiedrag
from helper_agent.evals.studies.eai.prag import PRAGEaiConfig, run_prag
from helper_agent.evals.studies.eai.registered import sequence_success
from helper_agent.evals.studies.eai.tasks import EaiTask
from helper_agent.memory.experience import ExperienceMemory

STEPWISE = ("prag", "embodiedrag")
OPTIONS = {"prag": ("retrieval", "k", "database", "max_steps", "answer", "refuse_futile"),
           "embodiedrag": ("graph", "k", "max_steps", "refuse_futile")}
CHOICES = {"retrieval": ("goal+scene", "goal"), "graph": ("subgraph", "full"), "answer": ("action", "thought"),
           "refuse_futile": ("on", "off")}
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


def run_method(agent: str, mode: str, options: dict[str, str], task: EaiTask, chat: Any, *,
               embedder: Any = None) -> dict[str, Any]:
    """One task by `agent`; its record (without the run's bookkeeping fields)."""
    if agent == "prag":
        config = PRAGEaiConfig(retrieval=options.get("retrieval", "goal+scene"),  # type: ignore[arg-type]
                               k=stepwise_setting(options, "k"), max_steps=stepwise_setting(options, "max_steps"),
                               answer=options.get("answer", "action"),  # type: ignore[arg-type]
                               refuse_futile=options.get("refuse_futile") == "on")
        path = options.get("database")
        database = ExperienceMemory(path=path, embedder=embedder) if path else None
        episode, env, recorder = run_prag(task, chat, database=database, config=config)
    elif agent == "embodiedrag":
        config = EmbodiedRAGEaiConfig(graph=options.get("graph", "subgraph"),  # type: ignore[arg-type]
                                      k=stepwise_setting(options, "k"), max_steps=stepwise_setting(options, "max_steps"),
                                      refuse_futile=options.get("refuse_futile") == "on")
        episode, env, recorder = run_embodiedrag(task, chat, config=config, embedder=embedder)
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
