"""Run-scoped dependencies of the named-action planner: its examples' source and its bounds."""

from __future__ import annotations

from dataclasses import dataclass, field

from helper_agent.envs.base import ActionVocabulary, NamesActions
from helper_agent.graphs.base import RunContext
from helper_agent.graphs.declarations import Aids
from helper_agent.graphs.registry import ExampleSource


@dataclass
class NamedPlanConfig:
    closed_loop: bool = False  # open loop: the first plan is the answer; closed loop: execute and re-plan
    k: int = 3  # in-context examples (0: none)
    max_replans: int = 2
    max_plan_steps: int = 40
    retries: int = 1  # a plan the parser refuses is asked again this many times (temperature 0.7)
    retry_temperature: float = 0.7
    seed: int = 0
    # goal check (issue 53, idea (a); off by default, so the published rows run as before): after a plan
    # has run, compare the goal conditions the task states with what the environment shows
    # (`graphs/goal_conditions.py`) and re-plan for the unmet ones, at most `goal_rounds` times; every
    # re-plan then names the unmet conditions, and may name the objects they name besides those seen.
    goal_check: bool = False
    goal_rounds: int = 2
    # what the environment declares, used through `graphs/declarations.py` (all off by default):
    # `goal_steps` gives the query's and every example's "Step-by-step instructions" (the steps that
    # make its stated conditions true; LLM-Planner's prompt has the field for ALFRED's annotated
    # instructions, which EAI's tasks lack); `preconditions` tries a failed step again after
    # approaching its object, with `reported` first after making true what the step lacked
    aids: Aids = field(default_factory=Aids)
    # achieving steps (with the goal check; off by default): each unmet condition the re-plan names
    # comes with the step that makes it true by the environment's own effects ("computer is ON
    # (SWITCHON computer)", `goal_conditions.achieving_steps`)
    achievers: bool = False


@dataclass
class NamedPlanContext(RunContext):
    graph_name = "LLM-Planner (named actions)"

    examples: ExampleSource | None = None
    config: NamedPlanConfig | None = None

    def settings(self) -> NamedPlanConfig:
        return self.config or NamedPlanConfig()

    def vocabulary(self) -> ActionVocabulary:
        env = self.environment()
        if not isinstance(env, NamesActions):
            raise TypeError(f"LLM-Planner plans named actions only for an environment that names them; "
                            f"{type(env).__name__} does not (use mode=subgoals)")
        return env.action_vocabulary()
