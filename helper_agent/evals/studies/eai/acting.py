"""What EAI's LLM-Planner adapter uses besides its plans: one constrained LLM call with a bounded
retry (the step-wise methods' own, `graphs/named_steps.ask`), one action in the VirtualHome
environment, the record an episode leaves, and EAI's goal check on a whole step sequence
(`sequence_success`, which the runner writes for the methods it runs itself).

An action goes to `VirtualHomeEnv.act_by_name`, which executes it exactly as EAI's evaluator does. A
step the simulator calls an additional step (already satisfied) changes nothing and is not part of
the executed sequence, as EAI's evaluator skips it; any other failure is reported to the agent with
the simulator's error type and message (ids dropped), and the agent goes on as its method says.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from helper_agent.envs.virtualhome import VirtualHomeEnv
from helper_agent.evals.studies.eai.grammar import Step, render
from helper_agent.graphs.named_steps import ask

__all__ = ["EaiEpisode", "ask", "execute", "sequence_success"]


@dataclass
class EaiEpisode:
    """What one method did on one task; `record()` is its line of `results.jsonl`."""

    answer: list[Step] = field(default_factory=list)  # open loop: the written plan; closed: executed steps
    last_failed: Step | None = None
    failures: list[str] = field(default_factory=list)
    trajectory: list[dict[str, str]] = field(default_factory=list)  # per step: scene_graph, action, observation
    attempts: int = 0
    replans: int = 0
    steps: int = 0  # decisions taken (plans for LLM-Planner, actions for the step-wise methods)
    rejected: int = 0  # answers refused by the parser
    example_ids: list[str] = field(default_factory=list)
    outcome: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """The response EAI scores (as `closed_loop.Episode.text`)."""
        if self.answer:
            return render(self.answer)
        return render([self.last_failed]) if self.last_failed else "{}"


def execute(env: VirtualHomeEnv, step: Step) -> tuple[str, str]:
    """Run `step`; (status, observation): status is "ok", "skipped" (an additional step) or "failed"."""
    outcome = env.act_by_name(*step)
    return outcome.status, outcome.observation


def sequence_success(task_id: str, steps: list[Step]) -> bool:
    """EAI's goal check after the simulator runs every step as EAI's evaluator would (duplicates kept)."""
    env = VirtualHomeEnv(task_id)
    try:
        env.run([env.line(a, *args) for a, args in steps])
    except KeyError:
        return False
    return env.success()
