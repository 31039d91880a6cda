"""The EmbodiedRAG graph's state: plain JSON-friendly values (the live executor is in the context)."""

from __future__ import annotations

from typing import Any

from typing_extensions import TypedDict

from helper_agent.graphs.steps import Step


class EmbodiedRAGInput(TypedDict):
    request: str


class EmbodiedRAGState(TypedDict, total=False):
    request: str
    # The self-query: [label, [attributes]] per task-relevant object the LLM named.
    queries: list[list[Any]]
    # What the planner's last thought asked for (labels), retrieved too at the next step.
    thought_queries: list[str]
    graph_text: str  # the (sub)graph shown in the next planning prompt
    shown_ids: list[str]  # entity ids in it: the ids the next action may name
    history: list[Step]
    step: int
    feedback_left: int
    finished: bool
    outcome: str
    log: list[str]
