"""LLM-Planner as a method of the registry: the graph of `graphs/llm_planner`, its few-shot pool
built from the benchmark's train split (or read from a user's knn_set-format file).

Switches (`--agent-option KEY=VALUE`):
- `replan=on|off` grounded re-planning (Algorithm 1) or the paper's static setting;
- `k=9` in-context examples; `retriever=knn|random`;
- `pool=FILE` a knn_set.json-format pool instead of the train split; `pool_size=100` examples drawn
  from the train split, stratified over its task families (the paper: 100, over ALFRED's 7 types);
- `replan_steps=60` steps a subgoal may take before it counts as stuck; `max_replans=6`.

The train-split pool: each train episode's dialogue is the instruction, and its plan is converted from
the episode's reference actions (the gold program as the executor ran it) by `plan_from_actions`,
as ALFRED's gold high-level plans come from its expert trajectories. Valid splits are never read.
"""

from __future__ import annotations

import hashlib
import random
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from helper_agent.evals.agents import AgentResult, EpisodeSetup
from helper_agent.evals.methods import check_known, option, positive_option
from helper_agent.graphs.llm_planner import LLMPlannerConfig, LLMPlannerContext, PlanVocabulary, build_graph
from helper_agent.graphs.llm_planner.plans import actions_in, plan_from_actions
from helper_agent.memory.fewshot import FewShotMemory, PlanExample, load_knn_set

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from helper_agent.evals.runner import EvalSpec

OPTIONS = ("replan", "k", "retriever", "pool", "pool_size", "replan_steps", "max_replans")


class LLMPlannerAgent:
    """LLM-Planner on the environment it is handed; it never scores itself."""

    oracle = False

    def __init__(self, chat_model: BaseChatModel, pool: FewShotMemory, vocabulary: PlanVocabulary,
                 config: LLMPlannerConfig | None = None, name: str = "llm-planner") -> None:
        self.name = name
        self.chat_model = chat_model
        self.pool = pool
        self.vocabulary = vocabulary
        self.config = config or LLMPlannerConfig()
        self.graph = build_graph()

    def run(self, setup: EpisodeSetup) -> AgentResult:
        context = LLMPlannerContext(env=setup.env, chat_model=self.chat_model, pool=self.pool, vocabulary=self.vocabulary,
                                    config=self.config, tags=list(setup.tags), metadata=dict(setup.metadata))
        state = self.graph.invoke({"request": setup.request},
                                  config={"run_name": f"{self.name}:{setup.instance_id}", "tags": context.tags,
                                          "metadata": context.metadata, "recursion_limit": 100},
                                  context=context)
        log = list(state.get("log", []))
        plans = [line for line in log if line.startswith(("plan:", "replan:"))]
        usage = {**context.usage.summary(), "replans": float(state.get("replans", 0))}
        return AgentResult(outcome=state.get("outcome", ""), program="\n".join(plans), log=log, usage=usage,
                           trace=list(state.get("trace") or []), error=state.get("error") or None)


# --------------------------------------------------------------------------- the few-shot pool
def train_examples(data: str, split: str = "train") -> list[PlanExample]:
    """(dialogue, high-level plan) for every TfD instance of `split`, plans converted from the
    reference actions. Only the train split is meant here: the caller passes nothing else."""
    from helper_agent.teach.formats import TeachDataset
    from helper_agent.teach.instances import instruction_text

    examples = []
    for instance in TeachDataset(data).tfd_instances(split):
        extra = (instance.model_extra or {}).get("helper_agent") or {}
        actions = [(a.action_name, a.oid, True) for a in getattr(instance, "driver_actions_future", [])]
        plan = plan_from_actions(actions, {})
        if not plan:
            continue
        examples.append(PlanExample(
            id=f"{split}:{instance.instance_id}", instruction=instruction_text(instance.dialog()),
            plan=[list(step) for step in plan], visible_objects=sorted({o for _, o in plan}),
            task_type=str(extra.get("family", "")),
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


def pool_memory(spec: EvalSpec, pool_file: str | None, pool_size: int) -> FewShotMemory:
    """The run's pool, built once into its memory folder (a Chroma collection per source).

    `helper run` (shared memory, no dataset) uses the user's few-shot memory, or `pool=FILE`.
    """
    path = None if spec.shared_memory else spec.memory_dir or str(Path(spec.out) / "memory")
    kwargs: dict[str, Any] = {"path": path} if path else {}
    if not pool_file and not spec.data:
        memory = FewShotMemory(**kwargs)
        if memory.count() == 0:
            raise ValueError("LLM-Planner's few-shot pool is empty: pass -o pool=FILE (knn_set.json format), "
                             "or import examples into the fewshot memory")
        return memory
    source = f"file:{Path(pool_file).expanduser().resolve()}" if pool_file else f"train:{Path(spec.data).resolve()}:{pool_size}"
    collection = "llmp_pool_" + hashlib.sha256(source.encode()).hexdigest()[:12]
    memory = FewShotMemory(collection=collection, **kwargs)
    if memory.count() == 0:
        if pool_file:
            records = load_knn_set(pool_file)
        else:
            records = stratified(train_examples(spec.data, "train"), pool_size, spec.seed)
        if not records:
            raise ValueError(f"{pool_file or spec.data}: no examples for LLM-Planner's pool")
        memory.add(records)
    return memory


def vocabulary_for(pool: FewShotMemory) -> PlanVocabulary:
    """Allowed actions: ALFRED's and any the pool's plans use; objects: the environment's catalog."""
    from helper_agent.world.catalog import load_catalog

    return PlanVocabulary.build(actions_in(r.hlp() for r in pool.list()), load_catalog().names())


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


def build(spec: EvalSpec, chat_model: BaseChatModel) -> Any:
    check_known(spec.agent_options, OPTIONS, "llm-planner")
    config = config_from(spec.agent_options, spec.seed)
    pool = pool_memory(spec, spec.agent_options.get("pool"), positive_option(spec.agent_options, "pool_size", 100))
    return LLMPlannerAgent(chat_model, pool, vocabulary_for(pool), config)
