"""Run-scoped dependencies of the sequence graph: where examples come from and the loop's bounds."""

from __future__ import annotations

from dataclasses import dataclass, field

from helper_agent.envs.base import ActionVocabulary, NamesActions
from helper_agent.graphs.base import RunContext
from helper_agent.graphs.declarations import Aids
from helper_agent.graphs.registry import ExampleSource


@dataclass
class SequenceConfig:
    """What a run of HELPER's sequence writer does (the switches of `agent.py`)."""

    closed_loop: bool = False  # open loop: write once; closed loop: execute and correct
    k: int = 3  # examples in the prompt (0: none)
    max_steps: int = 40  # steps an answer may have (the grammar's bound)
    max_replans: int = 2  # corrections after a failed step (closed loop)
    max_actions: int = 60  # steps the closed loop may take in the environment
    retries: int = 1  # an answer that cannot be executed as written is asked again this many times
    retry_temperature: float = 0.7
    # goal check (issue 53; off by default, so the published rows run as before): when the queue has
    # run (or the corrections are used up), the goal conditions the task states are compared with what
    # the environment shows (`graphs/goal_conditions.py`), and the unmet ones asked for, `goal_rounds` times
    goal_check: bool = False
    goal_rounds: int = 2
    # what the environment declares, through `graphs/declarations.py` (all off by default, HELPER as
    # published): `preconditions=on` is HELPER's pre-condition check (a failed step is tried again
    # after approaching its object), `reported` first makes true what the environment says the step
    # lacked and passes over a step it says can never succeed; `goal_steps` gives the sequence writer
    # the steps that make the task's stated conditions true, and each example the ones its sequence took
    aids: Aids = field(default_factory=Aids)


@dataclass
class SequenceContext(RunContext):
    graph_name = "HELPER sequence"

    examples: ExampleSource | None = None
    config: SequenceConfig | None = None

    def settings(self) -> SequenceConfig:
        return self.config or SequenceConfig()

    def vocabulary(self) -> ActionVocabulary:
        """The environment's vocabulary: the grammar and the checks are built from it."""
        env = self.environment()
        if not isinstance(env, NamesActions):
            raise TypeError(f"HELPER writes action sequences only for an environment that names its actions; "
                            f"{type(env).__name__} does not (use mode=program)")
        return env.action_vocabulary()
