"""Every method on EAI's tasks, through the one harness: the method's own graph (from the registry)
acts on `VirtualHomeEnv` (the environment it is handed), and EAI's goal check scores what it left.

    EAI task --> EpisodeSetup(VirtualHomeEnv at the task's initial graph, request = the task's goals,
                              prompt = EAI's task input)
        --> engine.harness.run_episode(agent, setup)  (the method's graph, under the episode's LLM budget)
        --> the response EAI scores, EAI's goal check --> one `results.jsonl` record

The method is built once per run from the registry (`graphs/registry.build_agent`), as `helper eval
tfd` builds it, with its own switches (`--agent-option`, and the run's `--mode`, `--k`,
`--max-replans` for a method that has them: `runner.run_options`). It is told the task the way EAI
states it (the node, edge and action goals, and EAI's whole prompt for a method that answers in EAI's
form) and acts with the environment's vocabulary (`VirtualHomeEnv.action_vocabulary`: EAI's actions
and the task's objects). Examples come from the benchmark (`memory.GoldExamples`: the cross-task pool,
each re-checked against the evaluated task), and the record says which were handed out.

It never sees the goal check; the record's `sequence_success` is written here, after the episode:

- **closed loop** (the method acts): the response is the executed steps (when none executed, the
  step the method last tried, so that EAI's evaluator files the task under that step's error rather
  than under "parsing"), and the goal check runs on the environment as the episode left it;
- **open loop** (EAI's protocol: the method writes the whole sequence and acts on nothing): the
  response is the sequence as written (`AgentResult.program`), and `sequence_success` replays every
  written step on a fresh environment as EAI's evaluator does (duplicates kept).

A method with an experience memory (`graphs/registry.ExperienceUse`) reports its trajectory as
`[action, observation, scene graph]` per step; the record keeps it as `trajectory`, which EAI's
progressive iteration stores (`progressive.experience_records`). What a method reports of itself
beyond that (`AgentResult.details`: attempts, re-plans, its decisions, failed steps, refused answers,
retrieved episodes, its own trajectory form) is kept as it is; the fields the scorer writes
(`SCORED`: the response, the steps, `sequence_success`, usage, seconds) are never the agent's.
"""

from __future__ import annotations

import re
import time
from typing import Any

from helper_agent.envs.virtualhome import VirtualHomeEnv
from helper_agent.evals.engine.harness import run_episode
from helper_agent.evals.studies.eai.grammar import Step, parse_steps, render
from helper_agent.evals.studies.eai.memory import GoldExamples
from helper_agent.evals.studies.eai.tasks import EaiTask
from helper_agent.graphs.base import Agent, EpisodeSetup

_SCRIPT = re.compile(r"^\[(\w+)\]")
_ARG = re.compile(r"<([^>]+)> \(\d+\)")
#: The record's fields the scorer writes; a method's `details` never replaces them.
SCORED = ("llm_output", "steps", "sequence_success", "seconds", "usage")


def script_step(line: str) -> Step:
    """`[PUTBACK] <cup> (12) <sink> (3)` -> ("PUTBACK", ("cup", "sink"))."""
    match = _SCRIPT.match(line.strip())
    return (match.group(1).upper() if match else line.strip(), tuple(_ARG.findall(line)))


def trajectory_of(trace: list[list[Any]]) -> list[dict[str, str]]:
    """The agent's `[action, observation, scene graph]` steps as the records keep them (P-RAG's form)."""
    return [{"scene_graph": str(step[2]) if len(step) > 2 else "", "action": str(step[0]) if step else "",
             "observation": str(step[1]) if len(step) > 1 else ""} for step in trace]


def sequence_success(task_id: str, steps: list[Step]) -> bool:
    """EAI's goal check after the simulator runs every step as EAI's evaluator would (duplicates kept)."""
    env = VirtualHomeEnv(task_id)
    try:
        env.run([env.line(a, *args) for a, args in steps])
    except KeyError:
        return False
    return env.success()


def run_registered(agent: Agent, task: EaiTask, *, open_loop: bool = False,
                   examples: GoldExamples | None = None) -> dict[str, Any]:
    """One task by a registry method: its record (without the run's bookkeeping fields)."""
    began = time.perf_counter()
    env = VirtualHomeEnv(task.identifier)
    setup = EpisodeSetup(env=env, request=task.goal_text, prompt=task.prompt, instance_id=task.identifier, tags=["eai"],
                         metadata={"instance_id": task.identifier, "task": task.task_name, "benchmark": "eai"})
    result = run_episode(agent, setup)
    details = dict(result.details)
    tried = details.pop("last_tried", None)
    if open_loop:
        steps, llm_output = parse_steps(result.program), result.program or "{}"
        success = sequence_success(task.identifier, steps)
    else:
        steps = [script_step(line) for line in env.executed]
        # when no step succeeded: the step the method last tried (one naming an unknown object never
        # reaches the simulator), else the simulator's last failed step
        last = (tried[0], tuple(tried[1])) if tried else script_step(env.last_failed) if env.last_failed else None
        llm_output = render(steps) if steps else render([last]) if last else "{}"
        success = env.success()
    given = examples.given.pop(task.identifier, None) if examples is not None else None
    if given is not None:
        details["examples"] = given  # what the benchmark handed out, not what the agent says it used
    usage = {"llm_calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "llm_seconds": 0.0, **result.usage}
    record: dict[str, Any] = {"decisions": env.steps, "failures": env.failures, "error_message": result.error,
                              "outcome": result.outcome, "log": result.log, "trajectory": trajectory_of(result.trace),
                              **{k: v for k, v in details.items() if k not in SCORED}}
    decisions = max(int(record["decisions"]), 1)
    record.update({
        "llm_output": llm_output, "steps": steps, "usage": usage,
        "prompt_tokens_per_step": round(usage.get("prompt_tokens", 0) / decisions, 1),
        "llm_seconds_per_step": round(usage.get("llm_seconds", 0.0) / decisions, 3),
        "seconds": round(time.perf_counter() - began, 3), "sequence_success": success,
    })
    return record
