"""LLM-Planner's low-level controller: one (action, object) subgoal at a time, with the executor's
primitives (binding, navigation on the grid, systematic search for unseen objects) and none of
HELPER's extras: no pre-condition checks, no corrective moves, no retry on another instance, no
LLM locator. A subgoal whose action fails, whose object cannot be found, or which takes more than
`replan_steps` steps ends with that status; the graph decides whether to re-plan.

Each object class of a plan is one program object ("llmp:<Class>"), so "Navigation apple,
PickupObject apple" act on one apple. PutObject and PourObject act with what is in hand.
"""

from __future__ import annotations

from dataclasses import dataclass

from helper_agent.envs.base import Environment
from helper_agent.graphs.llm_planner.configuration import LLMPlannerConfig
from helper_agent.graphs.llm_planner.plans import Step
from helper_agent.program.subgoals import ObjectRef, Subgoal, SubgoalKind
from helper_agent.tools.executor import Executor, ExecutorConfig, Prechecks

HELD_KEY = "llmp:held"

KINDS: dict[str, SubgoalKind] = {
    "Navigation": SubgoalKind.NAVIGATE, "PickupObject": SubgoalKind.PICKUP, "PutObject": SubgoalKind.PLACE,
    "OpenObject": SubgoalKind.OPEN, "CloseObject": SubgoalKind.CLOSE, "ToggleObjectOn": SubgoalKind.TOGGLE_ON,
    "ToggleObjectOff": SubgoalKind.TOGGLE_OFF, "SliceObject": SubgoalKind.SLICE, "PourObject": SubgoalKind.POUR,
}
WITH_HELD = (SubgoalKind.PLACE, SubgoalKind.POUR)


@dataclass
class StepOutcome:
    status: str  # done, failed, not_found, timeout, step_limit, failure_limit
    error: str = ""
    actions: int = 0


def make_controller(env: Environment, config: LLMPlannerConfig) -> Controller:
    """The executor with HELPER's extras off (it still walks, binds, and searches unseen objects)."""
    return Controller(Executor(env, config=ExecutorConfig(
        prechecks=Prechecks.off(), max_steps=config.max_steps, max_failures=config.max_failures,
        corrective_moves=False, retry_other_instance=False, initial_scan=True, search_unseen=True, seed=config.seed,
    )), config)


def ref_of(obj: str) -> ObjectRef:
    return ObjectRef(f"llmp:{obj}", obj)


class Controller:
    """Runs subgoals for one episode; remembers what it has just put down.

    A plan names objects by class only. After each put, the class is bound afresh (nearest first),
    so "PutObject sinkbasin, ToggleObjectOn faucet, ToggleObjectOff faucet, PickupObject pot" takes
    the pot from the sink. But "PutObject diningtable, Navigation pan" asks to go to *another* pan:
    the agent is already at the one it put down, so a Navigation right after a put does not choose
    what was put down since the last Navigation.
    """

    def __init__(self, executor: Executor, config: LLMPlannerConfig) -> None:
        self.executor = executor
        self.config = config
        self.put_here: list[str] = []  # objects put down since the last Navigation

    def run_step(self, step: Step) -> StepOutcome:
        """Execute one subgoal. With re-planning on, a subgoal gets `replan_steps` steps at most."""
        executor, config = self.executor, self.config
        action, obj = step
        kind = KINDS.get(action)
        if kind is None:
            return StepOutcome("failed", f"{action} is not an action the controller knows")
        held = executor.tracker.held_id
        if kind in WITH_HELD:
            if held is None:
                return StepOutcome("failed", f"{action} {obj}: nothing is in hand")
            executor.bindings[HELD_KEY] = held
            subgoal = Subgoal(kind, ObjectRef(HELD_KEY, executor.env_type(held)), ref_of(obj))
        else:
            subgoal = Subgoal(kind, ref_of(obj))
        avoided: list[str] = []
        if kind is SubgoalKind.NAVIGATE and executor.grounding.bound(ref_of(obj)) is None:
            avoided = [oid for oid in self.put_here if executor.env_type(oid) == obj]
            for oid in avoided:
                executor.grounding.exclude(ref_of(obj).instance_key, oid)
        env = executor.env
        budget = config.max_steps
        if config.replan and config.replan_steps > 0:
            budget = min(config.max_steps, env.steps + config.replan_steps)
        executor.config.max_steps = budget
        try:
            result = executor.run([subgoal])
        finally:
            executor.config.max_steps = config.max_steps
            excluded = executor.grounding.excluded.get(ref_of(obj).instance_key, set())
            excluded.difference_update(avoided)
        if kind is SubgoalKind.NAVIGATE:
            self.put_here.clear()
        actions = [a for t in result.trace for a in t.actions]
        status = result.status
        if status == "step_limit" and env.steps < config.max_steps:
            return StepOutcome("timeout", f"{action} {obj}: not finished after {config.replan_steps} steps", len(actions))
        if status == "done" and kind is SubgoalKind.PLACE and held is not None:
            self.put_here.append(held)
            executor.bindings.pop(HELD_KEY, None)
            for key, oid in list(executor.bindings.items()):
                if oid == held:
                    executor.bindings.pop(key)
        return StepOutcome(status, result.error, len(actions))
