"""Closed-loop action sequencing (NOT EAI's protocol; labelled so in every output).

HELPER acts in the VirtualHome environment: it writes a sequence as in the open loop, executes it
step by step, and when an action fails it corrects: it is re-prompted with what has been executed
and the failure (the simulator's error type and message, HELPER's diagnosis input) and writes the
remaining actions from the current state, under the same grammar, a bounded number of times. A
step the simulator calls an additional step (already satisfied) is skipped, as EAI's evaluator
skips it. The executed sequence is what EAI's evaluator scores; the agent never checks the goal.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from langchain_core.messages import HumanMessage

from helper_agent.evals.studies.eai.grammar import Step, render
from helper_agent.evals.studies.eai.open_loop import HelperSequencer
from helper_agent.evals.studies.eai.tasks import EaiTask
from helper_agent.llm import UsageRecorder

if TYPE_CHECKING:
    from helper_agent.envs.virtualhome import VirtualHomeEnv


@dataclass
class Episode:
    """What the agent did: the executed steps, the last step it tried and could not do, and its costs."""

    executed: list[Step]
    last_failed: Step | None = None
    failures: list[str] = field(default_factory=list)
    replans: int = 0
    attempts: int = 0
    usage: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0
    example_ids: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The response EAI scores: the executed steps.

        When nothing executed, the step the agent last tried, so that EAI's evaluator files the task
        under that step's execution error rather than under "parsing"; `{}` only when the agent wrote
        no step at all.
        """
        if self.executed:
            return render(self.executed)
        return render([self.last_failed]) if self.last_failed else "{}"


def correction_request(executed: list[Step], failed: Step, error: str) -> str:
    done = render(executed) if executed else "(nothing yet)"
    action, args = failed
    return (f"\n\nYou have executed these actions, which succeeded:\n{done}\n"
            f"The next action {action} {list(args)} failed: {error}\n"
            "Output, in the same JSON format, only the actions that remain to be done from the current state "
            "so that all the node goals, edge goals and action goals are satisfied.")


class HelperActor:
    """HELPER in the closed loop: plan, execute, and on a failure re-plan the rest from feedback."""

    name = "helper"

    def __init__(self, sequencer: HelperSequencer, *, max_replans: int = 2, max_actions: int = 60) -> None:
        self.sequencer, self.max_replans, self.max_actions = sequencer, max_replans, max_actions

    def act(self, task: EaiTask, env: VirtualHomeEnv) -> Episode:
        started = time.perf_counter()
        recorder = UsageRecorder()
        examples = self.sequencer.examples(task)
        base = self.sequencer.messages(task, examples)
        _, plan, attempts, _ = self.sequencer.ask(task, base, recorder)
        episode = Episode([], attempts=attempts, example_ids=[e.task.identifier for e in examples])
        queue = list(plan)
        while queue and env.steps < self.max_actions:
            step = queue.pop(0)
            outcome = env.step(step[0], "|".join(step[1]))
            if outcome.result.success:
                episode.executed.append(step)
                continue
            if env.last_error_type == "additional_step":
                continue  # already satisfied: EAI's evaluator skips such a step too
            episode.failures.append(f"{step[0]} {list(step[1])}: {outcome.result.error}")
            episode.last_failed = step
            if episode.replans >= self.max_replans:
                break
            episode.replans += 1
            messages = [base[0], HumanMessage(str(base[1].content) + correction_request(
                episode.executed, step, outcome.result.error))]
            _, queue, used, _ = self.sequencer.ask(task, messages, recorder)
            episode.attempts += used
        episode.usage = recorder.summary()
        episode.seconds = round(time.perf_counter() - started, 3)
        return episode
