"""LLM-Planner as a method: the graph of this package, its few-shot pool built from the run's train
split (or read from a user's knn_set-format file).

Switches (`--agent-option KEY=VALUE`):
- `replan=on|off` grounded re-planning (Algorithm 1) or the paper's static setting;
- `k=9` in-context examples; `retriever=knn|random`;
- `pool=FILE` a knn_set.json-format pool instead of the train split; `pool_size=100` examples drawn
  from the train split, stratified over its task families (the paper: 100, over ALFRED's 7 types);
- `replan_steps=60` steps a subgoal may take before it counts as stuck; `max_replans=6`;
- `mode=subgoals|open-loop|closed-loop`: ALFRED-style subgoals run by the low-level controller (the
  default), or, on an environment that acts by name (`envs/base.NamesActions`, EAI's VirtualHome),
  plans of its own actions (`named/`): written once (open loop, EAI's protocol: the first plan is
  the answer) or executed with grounded re-planning (closed loop). These take `k` (0: none; the
  examples are the solved tasks a benchmark lends, `BuildRequest.examples`) and `max_replans`;
- `goal_check=off|on` (closed loop, named actions only; off by default): after a plan has run, the
  goal conditions the task states are checked against what the environment shows, and the planner
  re-plans for the unmet ones, at most `goal_rounds=2` times (`named/nodes.py`, issue 53);
- `preconditions=off|on|reported` (closed loop, named actions only; off by default): a step that
  fails is tried once more after approaching its object (`graphs/approach.py`); `reported` first
  takes the steps that make true what the environment says the step lacked (VirtualHome: "character
  is FACING to tv" -> TURNTO tv) and passes over a step the environment says its object can never
  take (VirtualHome's affordance error), going on with the plan;
- `achievers=off|on` (with `goal_check=on`; off by default): each unmet condition a re-plan names
  comes with the step that makes it true by the environment's effects ("computer is ON (SWITCHON
  computer)", `graphs/goal_conditions.achieving_steps`);
- `goal_steps=off|on` (named actions, open or closed loop; off by default): LLM-Planner's
  "Step-by-step instructions" for a task that states its goal, the task's and each example's alike:
  the steps that make its stated conditions true by the environment's effects
  (`graphs/goal_conditions.goal_instructions`);
- `subgoals=off|on` (closed loop, named actions only; off by default): each plan is over the
  subgoals open now alone (the achieving steps of the stated conditions not met yet and the action
  goals not done, `graphs/declarations.subgoal_steps`), shown as its step-by-step instructions, the
  examples in the same form, and each step is taken with the pre-condition check on the reported
  lacks (issue 62). The three go through `graphs/declarations.py`, as every method's do.

The train-split pool: each train episode's dialogue is the instruction, and its plan is converted from
the episode's reference actions (the gold program as the executor ran it) by `plan_from_actions`,
as ALFRED's gold high-level plans come from its expert trajectories. The evaluation layer reads the
train split (`BuildRequest.training`); valid splits are never read.
"""

from __future__ import annotations

import hashlib
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from helper_agent.graphs.base import AgentResult, EpisodeSetup, GraphAgent
from helper_agent.graphs.declarations import SWITCHES, aids_from_options
from helper_agent.graphs.llm_planner.configuration import LLMPlannerConfig
from helper_agent.graphs.llm_planner.context import LLMPlannerContext
from helper_agent.graphs.llm_planner.graph import build_graph
from helper_agent.graphs.llm_planner.named.agent import NamedPlanAgent
from helper_agent.graphs.llm_planner.named.context import NamedPlanConfig
from helper_agent.graphs.llm_planner.plans import PlanVocabulary, actions_in, plan_from_actions
from helper_agent.graphs.options import count_option, option, positive_option
from helper_agent.graphs.registry import BuildRequest, Method, TrainingEpisode
from helper_agent.memory.fewshot import FewShotMemory, PlanExample, load_knn_set
from helper_agent.world.catalog import load_catalog

OPTIONS = ("replan", "k", "retriever", "pool", "pool_size", "replan_steps", "max_replans", "mode", "goal_check",
           "goal_rounds", "achievers", *SWITCHES)
MODES = ("subgoals", "open-loop", "closed-loop")
SUBGOALS_ONLY = ("replan", "retriever", "pool", "pool_size", "replan_steps")
NAMED_ONLY = ("goal_check", "goal_rounds", "achievers", *SWITCHES)


class LLMPlannerAgent(GraphAgent):
    """LLM-Planner on the environment it is handed; it never scores itself."""

    def __init__(self, chat_model: BaseChatModel, pool: FewShotMemory, vocabulary: PlanVocabulary,
                 config: LLMPlannerConfig | None = None, name: str = "llm-planner") -> None:
        super().__init__(name, chat_model, build_graph())
        self.pool = pool
        self.vocabulary = vocabulary
        self.config = config or LLMPlannerConfig()

    def context(self, setup: EpisodeSetup) -> LLMPlannerContext:
        return LLMPlannerContext(env=setup.env, chat_model=self.chat_model, pool=self.pool, vocabulary=self.vocabulary,
                                 config=self.config, tags=list(setup.tags), metadata=dict(setup.metadata))

    def result(self, state: dict[str, Any], context: Any, seconds: float) -> AgentResult:
        log = list(state.get("log", []))
        plans = [line for line in log if line.startswith(("plan:", "replan:"))]
        usage = {**context.usage.summary(), "replans": float(state.get("replans", 0))}
        return AgentResult(outcome=state.get("outcome", ""), program="\n".join(plans), log=log, usage=usage,
                           trace=list(state.get("trace") or []), error=state.get("error") or None)


# --------------------------------------------------------------------------- the few-shot pool
def plan_examples(episodes: list[TrainingEpisode]) -> list[PlanExample]:
    """(instruction, high-level plan) for every train episode whose reference actions convert to a plan."""
    examples = []
    for episode in episodes:
        plan = plan_from_actions([(action, oid, True) for action, oid in episode.actions], {})
        if not plan:
            continue
        examples.append(PlanExample(
            id=episode.id, instruction=episode.instruction, plan=[list(step) for step in plan],
            visible_objects=sorted({o for _, o in plan}), task_type=episode.family,
        ))
    return examples


def stratified(examples: list[PlanExample], size: int, seed: int = 0) -> list[PlanExample]:
    """`size` examples spread evenly over task types (round-robin over types, each type shuffled)."""
    by_type: dict[str, list[PlanExample]] = defaultdict(list)
    for example in sorted(examples, key=lambda e: e.id):
        by_type[example.task_type].append(example)
    rng = random.Random(seed)
    for items in by_type.values():
        rng.shuffle(items)
    chosen: list[PlanExample] = []
    while len(chosen) < size and any(by_type.values()):
        for task_type in sorted(by_type):
            if by_type[task_type] and len(chosen) < size:
                chosen.append(by_type[task_type].pop())
    return chosen


def pool_memory(request: BuildRequest, pool_file: str | None, pool_size: int) -> FewShotMemory:
    """The run's pool, built once into its memory folder (a Chroma collection per source).

    `helper run` (shared memory, no dataset) uses the user's few-shot memory, or `pool=FILE`.
    """
    kwargs: dict[str, Any] = {"path": request.memory_dir} if request.memory_dir else {}
    if not pool_file and not request.data:
        memory = FewShotMemory(**kwargs)
        if memory.count() == 0:
            raise ValueError("LLM-Planner's few-shot pool is empty: pass -o pool=FILE (knn_set.json format), "
                             "or import examples into the fewshot memory")
        return memory
    source = (f"file:{Path(pool_file).expanduser().resolve()}" if pool_file
              else f"train:{Path(request.data).resolve()}:{pool_size}")
    collection = "llmp_pool_" + hashlib.sha256(source.encode()).hexdigest()[:12]
    memory = FewShotMemory(collection=collection, **kwargs)
    if memory.count() == 0:
        if pool_file:
            records = load_knn_set(pool_file)
        else:
            records = stratified(plan_examples(request.training() if request.training else []), pool_size, request.seed)
        if not records:
            raise ValueError(f"{pool_file or request.data}: no examples for LLM-Planner's pool")
        memory.add(records)
    return memory


def vocabulary_for(pool: FewShotMemory) -> PlanVocabulary:
    """Allowed actions: ALFRED's and any the pool's plans use; objects: the environment's catalog."""
    return PlanVocabulary.build(actions_in(r.hlp() for r in pool.list()), load_catalog().names())


def named_config(options: dict[str, str], seed: int = 0) -> NamedPlanConfig | None:
    """The named-action planner's settings (None: `mode=subgoals`); a `ValueError` for a bad switch."""
    try:
        mode = option(options, "mode", "subgoals", MODES)
        if mode == "subgoals":
            given = [key for key in NAMED_ONLY if key in options]
            if given:
                raise ValueError(f"{', '.join(given)}: a switch of mode=closed-loop, not of mode=subgoals")
            return None
        given = [key for key in SUBGOALS_ONLY if key in options]
        if given:
            raise ValueError(f"{', '.join(given)}: a switch of mode=subgoals, not of mode={mode}")
        goal_check = option(options, "goal_check", "off", ("on", "off")) == "on"
        aids = aids_from_options(options)
        achievers = option(options, "achievers", "off", ("on", "off")) == "on"
        if (goal_check or aids.preconditions != "off" or aids.subgoals) and mode != "closed-loop":
            raise ValueError("goal_check=on, preconditions=on and subgoals=on need mode=closed-loop: "
                             "the open loop acts on nothing")
        if achievers and not goal_check:
            raise ValueError("achievers=on names steps for the unmet goal conditions: it needs goal_check=on")
        return NamedPlanConfig(aids=aids, achievers=achievers, closed_loop=mode == "closed-loop",
                               k=count_option(options, "k", 3), max_replans=count_option(options, "max_replans", 2),
                               seed=seed, goal_check=goal_check, goal_rounds=count_option(options, "goal_rounds", 2))
    except ValueError as exc:
        raise ValueError(f"llm-planner: {exc}") from None


def check(options: dict[str, str]) -> None:
    if named_config(options) is None:
        config_from(options)


def config_from(options: dict[str, str], seed: int = 0) -> LLMPlannerConfig:
    try:
        return LLMPlannerConfig(
            k=positive_option(options, "k", 9),
            retriever=option(options, "retriever", "knn", ("knn", "random")),
            replan=option(options, "replan", "on", ("on", "off")) == "on",
            replan_steps=positive_option(options, "replan_steps", 60),
            max_replans=positive_option(options, "max_replans", 6),
            seed=seed,
        )
    except ValueError as exc:
        raise ValueError(f"llm-planner: {exc}") from None


def build(request: BuildRequest) -> LLMPlannerAgent | NamedPlanAgent:
    named = named_config(request.options, request.seed)
    if named is not None:
        return NamedPlanAgent(request.chat_model, named, request.examples)
    config = config_from(request.options, request.seed)
    pool = pool_memory(request, request.options.get("pool"), positive_option(request.options, "pool_size", 100))
    return LLMPlannerAgent(request.chat_model, pool, vocabulary_for(pool), config)


METHOD = Method(
    name="llm-planner",
    summary="LLM-Planner (Song et al. 2023): kNN few-shot high-level plans with grounded re-planning",
    build=build,
    options=OPTIONS,
    check=check,
)
