"""Run-scoped dependencies of the P-RAG graph (LangGraph's runtime `context`).

The caller hands the environment, the chat model and the experience database to read from (None:
an empty database, iteration 0). The agent only reads the database: writing an iteration's records
is the evaluation layer's job (`evals/studies/progressive.py`), since the done flag comes from the
environment's scoring, which the agent never sees.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from helper_agent.graphs.base import RunContext
from helper_agent.graphs.prag.configuration import PRAGConfig
from helper_agent.graphs.prag.scene import EpisodeWorld
from helper_agent.graphs.steps import StepMeter
from helper_agent.memory.experience import ExperienceMemory


@dataclass
class PRAGContext(RunContext):
    graph_name = "P-RAG"

    experience: ExperienceMemory | None = None
    config: PRAGConfig = field(default_factory=PRAGConfig)
    meter: StepMeter = field(default_factory=StepMeter)
    world: EpisodeWorld | None = None

    def episode_world(self) -> EpisodeWorld:
        if self.world is None:
            self.world = EpisodeWorld(self.environment())
        return self.world
