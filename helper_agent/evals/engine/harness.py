"""The one episode harness: any agent, any environment; a TEACh instance scored by `teach/`.

    instance file --teach.load_instance--> initial state, dialogue, task (EDH: history replayed)
        --> agent.run(setup) on the environment --> final objects --> TEACh metrics --> one record

The evaluation runner, `helper run --instance`, the personalization suite and the everyday-requests
benchmark go through here; `run_episode`, the part that runs the agent, is also how EAI's tasks run a
registered method and how the everyday-requests benchmark acts. The agent is handed the checker's
unmet conditions as a sentence when it asks for feedback, never the checker itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from helper_agent.config import get_settings
from helper_agent.envs.base import Environment
from helper_agent.graphs.base import Agent, AgentResult, EpisodeSetup, Reference
from helper_agent.llm import LLMBudget, LLMBudgetExceeded
from helper_agent.teach import check_task, feedback_from_progress
from helper_agent.teach.evaluation import score_edh_episode, score_tfd_episode
from helper_agent.teach.instances import NON_WORLD_ACTIONS, LoadedInstance
from helper_agent.teach.tasks import Task


def checker_feedback(task: Task, env: Environment) -> Callable[[], str]:
    """A feedback source for evaluations: the task's unmet conditions, as HELPER's sentence."""
    return lambda: feedback_from_progress(check_task(task, env.objects_metadata()))


def reference_of(loaded: LoadedInstance) -> Reference:
    future = [(a.action_name, a.oid) for a in getattr(loaded.instance, "driver_actions_future", [])
              if a.action_name not in NON_WORLD_ACTIONS]
    return Reference(gold_program=loaded.gold_program, future_actions=future, replay=loaded.mode == "edh")


def run_episode(agent: Agent, setup: EpisodeSetup) -> AgentResult:
    """Let `agent` act on `setup.env` under the episode's LLM budget; its own account of the episode.

    The one place an agent is run for an evaluation: a TEACh instance (`run_instance`) and any other
    benchmark that reads its own tasks and scores the environment afterwards (EAI's VirtualHome tasks,
    `evals/studies/eai/registered.py`) both go through here."""
    try:
        with LLMBudget.from_settings():  # HELPER_LLM_BUDGET_SECONDS per episode (unset: no limit)
            return agent.run(setup)
    except LLMBudgetExceeded as exc:
        # The episode ran out of LLM time: what the agent did so far is still scored.
        return AgentResult(outcome="llm_budget", log=[f"stopped: {exc}"], error=str(exc))


def run_instance(
    loaded: LoadedInstance,
    agent: Agent,
    env: Environment,
    *,
    feedback: bool = True,
    tags: list[str] | None = None,
    metadata: dict[str, str] | None = None,
) -> tuple[dict[str, Any], AgentResult]:
    """Start `env` at the instance, let `agent` act, and score the final state.

    Returns the TEACh-style record (metrics plus what the agent reported) and the agent's result.
    """
    loaded.start(env)
    initial_objects = env.objects_metadata()
    request, clipped = clip_dialogue(loaded.dialogue, get_settings().max_dialogue_chars)
    setup = EpisodeSetup(
        env=env,
        request=request,
        instance_id=loaded.instance_id,
        feedback=checker_feedback(loaded.task, env) if feedback else None,
        tags=list(tags or []),
        metadata={"instance_id": loaded.instance_id, "task": loaded.task_name, **(metadata or {})},
        reference=reference_of(loaded) if agent.oracle else None,
    )
    result = run_episode(agent, setup)
    final_objects = env.objects_metadata()
    steps, failures = env.steps, env.failures
    kwargs: dict[str, Any] = {"task_name": loaded.task_name, "num_api_fails": failures}
    if loaded.mode == "tfd":
        metrics, _ = score_tfd_episode(loaded.instance, loaded.task, initial_objects, final_objects, steps, **kwargs)  # type: ignore[arg-type]
    else:
        metrics, _ = score_edh_episode(loaded.instance, final_objects, steps, **kwargs)  # type: ignore[arg-type]
    record = metrics.to_teach_dict()
    limits = get_settings()  # HELPER_MAX_STEPS / HELPER_MAX_FAILURES, what the agents stopped at
    ended_by = ("step_limit" if steps >= limits.max_steps else "failure_limit" if failures >= limits.max_failures
                else "llm_budget" if result.outcome == "llm_budget" else "done")
    usage = {"llm_calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "llm_seconds": 0.0, **result.usage}
    usage.pop("seconds_per_call", None)
    record.update({
        "task_name": loaded.task_name,
        "family": loaded.family,
        "dialogue": loaded.dialogue,  # what the agent was asked (`helper trace` shows it)
        "ended_by": ended_by,
        "outcome": result.outcome,
        "steps": steps,
        "failures": failures,
        "program": result.program,
        "log": result.log,
        "agent": agent.name,
        "subgoals": result.trace,
        **usage,
    })
    if clipped:
        record["input_notes"] = [clipped]
    return record, result


def clip_dialogue(text: str, limit: int) -> tuple[str, str | None]:
    """`text` cut to `limit` characters for the prompts, and a note saying so (None when it fits).

    A 1 MB dialogue once went whole into every LLM call, far past the local model's 4,096-token
    context. The start (the task is usually asked first) and the end (the latest corrections) are
    kept, a quarter and three quarters of the room, with a marker where the middle was cut."""
    if len(text) <= limit:
        return text, None
    marker = f"\n[... {len(text) - limit} characters of the dialogue left out ...]\n"
    room = max(limit - len(marker), 2)
    head = room // 4
    clipped = text[:head] + marker + text[len(text) - (room - head):]
    return clipped, (f"dialogue clipped from {len(text)} to {len(clipped)} characters for the prompts "
                     "(HELPER_MAX_DIALOGUE_CHARS)")
