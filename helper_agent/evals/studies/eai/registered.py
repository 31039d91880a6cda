"""Any registered method on EAI's tasks, through the one harness: the method's own graph acts on
`VirtualHomeEnv` (the environment it is handed), and EAI's goal check scores the state it leaves.

    EAI task --> EpisodeSetup(VirtualHomeEnv at the task's initial graph, request = the task's goals)
        --> engine.harness.run_episode(agent, setup)  (the method's graph, under the episode's LLM budget)
        --> the executed steps (EAI's response), EAI's goal check --> one `results.jsonl` record

The method is built once per run from the registry (`graphs/registry.build_agent`), as `helper eval
tfd` builds it, with its own switches (`--agent-option`). It is told the task the way EAI states it
(the node, edge and action goals) and acts with the environment's vocabulary
(`VirtualHomeEnv.action_vocabulary`: EAI's actions and the task's objects). It never sees the goal
check: the record's `sequence_success` is written here, after the episode.

A method with an experience memory (`graphs/registry.ExperienceUse`) reports its trajectory as
`[action, observation, scene graph]` per step; the record keeps it as `trajectory`, which EAI's
progressive iteration stores (`progressive.experience_records`). What a method reports of itself
beyond that (`AgentResult.details`: its decisions, failed steps, refused answers, retrieved
episodes, its own trajectory form) is kept as it is; `sequence_success` is never the agent's.

EAI scores a response: the executed steps in EAI's JSON, or, when no step succeeded, the last step
that failed (what the agent last tried: EAI's evaluator then reports that step's error), else `{}`.
"""

from __future__ import annotations

import re
import time
from typing import Any

from helper_agent.envs.virtualhome import VirtualHomeEnv
from helper_agent.evals.engine.harness import run_episode
from helper_agent.evals.studies.eai.grammar import Step, render
from helper_agent.evals.studies.eai.tasks import EaiTask
from helper_agent.graphs.base import Agent, EpisodeSetup

SCORED = ("llm_output", "steps", "sequence_success", "usage")  # the environment's and the run's, never the agent's
_SCRIPT = re.compile(r"^\[(\w+)\]")
_ARG = re.compile(r"<([^>]+)> \(\d+\)")


def script_step(line: str) -> Step:
    """`[PUTBACK] <cup> (12) <sink> (3)` -> ("PUTBACK", ("cup", "sink"))."""
    match = _SCRIPT.match(line.strip())
    return (match.group(1).upper() if match else line.strip(), tuple(_ARG.findall(line)))


def trajectory_of(trace: list[list[Any]]) -> list[dict[str, str]]:
    """The agent's `[action, observation, scene graph]` steps as the records keep them (P-RAG's form)."""
    return [{"scene_graph": str(step[2]) if len(step) > 2 else "", "action": str(step[0]) if step else "",
             "observation": str(step[1]) if len(step) > 1 else ""} for step in trace]


def run_registered(agent: Agent, task: EaiTask) -> dict[str, Any]:
    """One task by a registry method: its record (without the run's bookkeeping fields)."""
    began = time.perf_counter()
    env = VirtualHomeEnv(task.identifier)
    setup = EpisodeSetup(env=env, request=task.goal_text, instance_id=task.identifier, tags=["eai"],
                         metadata={"instance_id": task.identifier, "task": task.task_name, "benchmark": "eai"})
    result = run_episode(agent, setup)
    steps = [script_step(line) for line in env.executed]
    response = steps or ([script_step(env.last_failed)] if env.last_failed else [])
    usage = {"llm_calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "llm_seconds": 0.0, **result.usage}
    record: dict[str, Any] = {
        "llm_output": render(response) if response else "{}", "steps": steps, "outcome": result.outcome,
        "log": result.log, "usage": usage, "decisions": env.steps, "failures": env.failures,
        "trajectory": trajectory_of(result.trace), "error_message": result.error,
        **{key: value for key, value in result.details.items() if key not in SCORED},
    }
    decisions = max(int(record["decisions"]), 1)
    record.update(prompt_tokens_per_step=round(usage.get("prompt_tokens", 0) / decisions, 1),
                  llm_seconds_per_step=round(usage.get("llm_seconds", 0.0) / decisions, 3),
                  seconds=round(time.perf_counter() - began, 3), sequence_success=env.success())
    return record
