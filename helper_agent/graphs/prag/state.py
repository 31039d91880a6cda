"""The P-RAG graph's state: plain JSON-friendly values (the live executor is in the context)."""

from __future__ import annotations

from typing_extensions import TypedDict

from helper_agent.graphs.steps import Step


class PRAGInput(TypedDict):
    request: str


class PRAGState(TypedDict, total=False):
    request: str
    scene_graph: str  # the current observation as text
    shown_ids: list[str]  # ids an action may name this step
    remembered_ids: list[str]  # seen before and out of view: only `goto` may name them
    held: str | None
    experience: str  # the retrieved episodes, as the prompt shows them
    experience_ids: list[str]
    history: list[Step]
    step: int
    finished: bool
    outcome: str
    log: list[str]
