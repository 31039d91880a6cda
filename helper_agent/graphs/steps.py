"""The step loop's records, shared by the two methods that act one LLM-chosen action at a time
(P-RAG and EmbodiedRAG): one step of the trajectory as the state carries it, and the meter of where
an episode's time goes besides the LLM. Each method fills the fields it has."""

from __future__ import annotations

from dataclasses import dataclass, field

from typing_extensions import TypedDict


class Step(TypedDict, total=False):
    """One step of the trajectory: what the agent saw and thought, its action, what came back."""

    scene_graph: str  # the observation the agent acted on (P-RAG)
    thought: str  # the ReAct thought before the action (EmbodiedRAG)
    action: str
    observation: str
    before: str  # fingerprint of what the agent saw when it acted (`object_actions.observation_fingerprint`)
    changed: bool  # whether the action changed anything the agent sees
    state: str  # fingerprint of everything the agent knew when it acted (`known_state_fingerprint`)
    program: str  # with `subgoals=on`, the chosen part's program (`declarations.choose_part`)


@dataclass
class StepMeter:
    """Per step: seconds spent retrieving and acting, entities shown and known, and the answers
    refused. A change of P-RAG's retrieved set invalidates llama.cpp's cached prompt prefix after
    the goal, so it is counted too."""

    retrieve_seconds: list[float] = field(default_factory=list)
    act_seconds: list[float] = field(default_factory=list)
    shown: list[int] = field(default_factory=list)
    known: list[int] = field(default_factory=list)
    experience_changes: int = 0
    parse_rejections: int = 0
    futile_rejections: int = 0  # answers refused for an action known to change nothing from here
    context_overflow: bool = False
