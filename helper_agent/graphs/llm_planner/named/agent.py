"""LLM-Planner over named actions as an agent; its account, never a score.

`program` is the first plan in the sequence form of `graphs/action_sequences` (the open loop's
answer); `details` the counts a benchmark keeps (plans asked, attempts, re-plans, rejected plans,
failures, the step it last tried; with the goal check, its goal re-plans and the conditions its own
check still found unmet).
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel

from helper_agent.graphs.action_sequences import render
from helper_agent.graphs.base import AgentResult, EpisodeSetup, GraphAgent
from helper_agent.graphs.llm_planner.named.context import NamedPlanConfig, NamedPlanContext
from helper_agent.graphs.llm_planner.named.graph import build_graph
from helper_agent.graphs.registry import ExampleSource


class NamedPlanAgent(GraphAgent):
    def __init__(self, chat_model: BaseChatModel, config: NamedPlanConfig, examples: ExampleSource | None = None,
                 name: str = "llm-planner") -> None:
        rounds = config.max_replans + (config.goal_rounds if config.goal_check else 0)
        super().__init__(name, chat_model, build_graph(), recursion_limit=8 * (rounds + 2))
        self.config = config
        self.examples = examples

    def context(self, setup: EpisodeSetup) -> NamedPlanContext:
        return NamedPlanContext(env=setup.env, chat_model=self.chat_model, examples=self.examples, config=self.config,
                                tags=list(setup.tags), metadata=dict(setup.metadata))

    def inputs(self, setup: EpisodeSetup) -> dict[str, Any]:
        return {"request": setup.request, "instance_id": setup.instance_id}

    def result(self, state: dict[str, Any], context: Any, seconds: float) -> AgentResult:
        written = [(a, tuple(args)) for a, args in state.get("written") or []]
        details: dict[str, Any] = {key: int(state.get(key, 0)) for key in ("attempts", "replans", "decisions", "rejected")}
        if context.settings().goal_check:
            details.update(goal_rounds=int(state.get("goal_rounds", 0)), unmet=list(state.get("unmet") or []))
        details.update(failures=list(state.get("failures") or []), examples=[e["id"] for e in state.get("examples") or []])
        if state.get("last_tried"):
            details["last_tried"] = state["last_tried"]
        return AgentResult(outcome=state.get("outcome", ""), program=render(written) if written else "",
                           log=list(state.get("log", [])), usage=context.usage.summary(), details=details)
