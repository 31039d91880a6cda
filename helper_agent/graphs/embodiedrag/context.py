"""Run-scoped dependencies of the EmbodiedRAG graph (LangGraph's runtime `context`).

The caller hands the environment, the chat model and the scene-graph memory (one `graph_id` per
episode); the graph builds the episode's `EpisodeScene` (executor, alias table) on its first node
and keeps it here, since a live executor is not state. The agent never scores itself: `feedback`
is the harness's sentence source, used only with `feedback_rounds > 0`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from langchain_core.language_models import BaseChatModel

from helper_agent.envs.base import Environment
from helper_agent.graphs.embodiedrag.configuration import EmbodiedRAGConfig
from helper_agent.graphs.embodiedrag.scene import EpisodeScene
from helper_agent.llm import UsageRecorder
from helper_agent.memory.scene_graph import SceneGraphMemory


class MissingEnvironment(RuntimeError):
    """The graph was invoked without an environment in its context."""


@dataclass
class StepMeter:
    """Per planning step: prompt characters, entities shown, and seconds spent retrieving."""

    shown: list[int] = field(default_factory=list)
    known: list[int] = field(default_factory=list)
    retrieve_seconds: list[float] = field(default_factory=list)
    context_overflow: bool = False
    futile_rejections: int = 0  # answers refused for an action known to change nothing from here


@dataclass
class EmbodiedRAGContext:
    env: Environment | None = None
    chat_model: BaseChatModel | None = None
    scene_graph: SceneGraphMemory | None = None
    feedback: Callable[[], str] | None = None
    config: EmbodiedRAGConfig = field(default_factory=EmbodiedRAGConfig)
    usage: UsageRecorder = field(default_factory=UsageRecorder)
    meter: StepMeter = field(default_factory=StepMeter)
    scene: EpisodeScene | None = None
    tags: list[str] = field(default_factory=list)
    metadata: dict[str, str] = field(default_factory=dict)

    def environment(self) -> Environment:
        if self.env is None:
            raise MissingEnvironment("the EmbodiedRAG graph needs an environment: pass EmbodiedRAGContext(env=...)")
        return self.env

    def chat(self) -> BaseChatModel:
        if self.chat_model is None:
            from helper_agent.config import get_settings
            from helper_agent.llm import make_chat_model

            self.chat_model = make_chat_model(get_settings().llm, temperature=get_settings().temperature)
        return self.chat_model

    def memory(self) -> SceneGraphMemory:
        if self.scene_graph is None:
            self.scene_graph = SceneGraphMemory(graph_id="default")
        return self.scene_graph

    def episode_scene(self) -> EpisodeScene:
        if self.scene is None:
            self.scene = EpisodeScene(self.environment(), self.memory())
        return self.scene
