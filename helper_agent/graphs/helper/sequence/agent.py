"""HELPER's sequence writer as an agent: the graph of this package on the environment it is handed.

Its account (`AgentResult`): `program` is the first sequence as written (the open loop's answer, in
the form of `graphs/action_sequences`), and `details` the counts a benchmark keeps (attempts,
corrections, failures, the problems of the last answer, the step it last tried). It never scores
itself: what the environment ran, or a benchmark's replay of the written answer, is scored outside.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel

from helper_agent.graphs.base import AgentResult, EpisodeSetup, GraphAgent
from helper_agent.graphs.helper.sequence.context import SequenceConfig, SequenceContext
from helper_agent.graphs.helper.sequence.graph import build_graph
from helper_agent.graphs.registry import ExampleSource


class SequenceAgent(GraphAgent):
    """HELPER writing whole action sequences (open loop) or acting and correcting (closed loop)."""

    def __init__(self, chat_model: BaseChatModel, config: SequenceConfig, examples: ExampleSource | None = None,
                 name: str = "helper") -> None:
        rounds = config.max_replans + (config.goal_rounds if config.goal_check else 0)
        super().__init__(name, chat_model, build_graph(), recursion_limit=8 * (rounds + 2))
        self.config = config
        self.examples = examples

    def context(self, setup: EpisodeSetup) -> SequenceContext:
        return SequenceContext(env=setup.env, chat_model=self.chat_model, examples=self.examples, config=self.config,
                               tags=list(setup.tags), metadata=dict(setup.metadata))

    def inputs(self, setup: EpisodeSetup) -> dict[str, Any]:
        return {"request": setup.request, "prompt": setup.prompt, "instance_id": setup.instance_id}

    def result(self, state: dict[str, Any], context: Any, seconds: float) -> AgentResult:
        details: dict[str, Any] = {"attempts": int(state.get("attempts", 0)), "problems": list(state.get("problems") or []),
                                   "examples": [e["id"] for e in state.get("examples") or []]}
        if self.config.closed_loop:
            details.update(replans=int(state.get("replans", 0)), failures=list(state.get("failures") or []),
                           decisions=1 + int(state.get("replans", 0)))
            if self.config.goal_check:
                details.update(goal_rounds=int(state.get("goal_rounds", 0)), unmet=list(state.get("unmet") or []))
                details["decisions"] += details["goal_rounds"]
            if state.get("failed"):
                details["last_tried"] = state["failed"]
        return AgentResult(outcome=state.get("outcome", ""), program=state.get("answer", ""),
                           log=list(state.get("log", [])), usage=context.usage.summary(), details=details)
