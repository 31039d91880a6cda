"""Run-scoped dependencies of the EmbodiedRAG graph (LangGraph's runtime `context`).

The caller hands the environment, the chat model and the scene-graph memory (one `graph_id` per
episode); the graph builds the episode's `EpisodeScene` (executor, alias table) on its first node
and keeps it here, since a live executor is not state. The agent never scores itself: `feedback`
is the harness's sentence source, used only with `feedback_rounds > 0`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from helper_agent.graphs.base import RunContext
from helper_agent.graphs.embodiedrag.configuration import EmbodiedRAGConfig
from helper_agent.graphs.embodiedrag.scene import EpisodeScene
from helper_agent.graphs.steps import StepMeter
from helper_agent.memory.scene_graph import SceneGraphMemory


@dataclass
class EmbodiedRAGContext(RunContext):
    graph_name = "EmbodiedRAG"

    scene_graph: SceneGraphMemory | None = None
    feedback: Callable[[], str] | None = None
    config: EmbodiedRAGConfig = field(default_factory=EmbodiedRAGConfig)
    meter: StepMeter = field(default_factory=StepMeter)
    scene: EpisodeScene | None = None

    def memory(self) -> SceneGraphMemory:
        if self.scene_graph is None:
            self.scene_graph = SceneGraphMemory(graph_id="default")
        return self.scene_graph

    def episode_scene(self) -> EpisodeScene:
        if self.scene is None:
            self.scene = EpisodeScene(self.environment(), self.memory())
        return self.scene
