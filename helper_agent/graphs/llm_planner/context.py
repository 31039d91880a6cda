"""Run-scoped dependencies of the LLM-Planner graph (LangGraph's runtime `context`).

The caller hands the graph the environment to act on, the chat model, the few-shot pool and the
plan vocabulary (allowed actions and the environment's object classes). The low-level controller
(an `Executor` with HELPER's extras off) is built on first use and lives for the episode, so object
bindings and everything observed carry over between re-plans.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from helper_agent.graphs.base import RunContext
from helper_agent.graphs.llm_planner.configuration import LLMPlannerConfig
from helper_agent.graphs.llm_planner.controller import Controller, make_controller
from helper_agent.graphs.llm_planner.plans import ALFRED_ACTIONS, PlanVocabulary
from helper_agent.memory.fewshot import FewShotMemory, PlanExample
from helper_agent.world.catalog import load_catalog


@dataclass
class LLMPlannerContext(RunContext):
    graph_name = "LLM-Planner"

    pool: FewShotMemory | None = None  # the few-shot pool (kNN over instructions)
    vocabulary: PlanVocabulary | None = None  # first plan: allowed actions x the environment's object classes
    config: LLMPlannerConfig = field(default_factory=LLMPlannerConfig)
    controller_: Controller | None = None
    _all_examples: list[PlanExample] | None = None

    def controller(self) -> Controller:
        if self.controller_ is None:
            self.controller_ = make_controller(self.environment(), self.config)
        return self.controller_

    def retrieve(self, request: str) -> list[PlanExample]:
        """k examples: the nearest by instruction (kNN) or a random draw seeded by run and request."""
        if self.pool is None:
            return []
        k = self.config.k
        if self.config.retriever == "random":
            if self._all_examples is None:
                self._all_examples = self.pool.list()
            rng = random.Random(f"{self.config.seed}:{request}")
            return rng.sample(self._all_examples, min(k, len(self._all_examples)))
        return [hit.record for hit in self.pool.retrieve(request, k=k)]

    def first_vocabulary(self) -> PlanVocabulary:
        if self.vocabulary is None:
            self.vocabulary = PlanVocabulary.build(ALFRED_ACTIONS, load_catalog().names())
        return self.vocabulary

    def seen_objects(self) -> list[str]:
        """The object classes observed so far (what the re-planner sees)."""
        return sorted(self.controller().executor.tracker.types_seen())
