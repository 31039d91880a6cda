"""Run-scoped dependencies of the P-RAG graph (LangGraph's runtime `context`).

The caller hands the environment, the chat model and the experience database to read from (None:
an empty database, iteration 0). The agent only reads the database: writing an iteration's records
is the evaluation layer's job (`evals/progressive.py`), since the done flag comes from the
environment's scoring, which the agent never sees.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from langchain_core.language_models import BaseChatModel

from helper_agent.envs.base import Environment
from helper_agent.graphs.prag.configuration import PRAGConfig
from helper_agent.graphs.prag.scene import EpisodeWorld
from helper_agent.llm import UsageRecorder
from helper_agent.memory.experience import ExperienceMemory


class MissingEnvironment(RuntimeError):
    """The graph was invoked without an environment in its context."""


@dataclass
class StepMeter:
    """Where an episode's time goes besides the LLM: retrieval and acting, and how often the
    retrieved set changed (each change invalidates llama.cpp's cached prompt prefix after the goal)."""

    retrieve_seconds: list[float] = field(default_factory=list)
    act_seconds: list[float] = field(default_factory=list)
    experience_changes: int = 0
    parse_rejections: int = 0
    futile_rejections: int = 0  # answers refused for an action known to change nothing from here


@dataclass
class PRAGContext:
    env: Environment | None = None
    chat_model: BaseChatModel | None = None
    experience: ExperienceMemory | None = None
    config: PRAGConfig = field(default_factory=PRAGConfig)
    usage: UsageRecorder = field(default_factory=UsageRecorder)
    meter: StepMeter = field(default_factory=StepMeter)
    world: EpisodeWorld | None = None
    tags: list[str] = field(default_factory=list)
    metadata: dict[str, str] = field(default_factory=dict)

    def environment(self) -> Environment:
        if self.env is None:
            raise MissingEnvironment("the P-RAG graph needs an environment: pass PRAGContext(env=...)")
        return self.env

    def chat(self) -> BaseChatModel:
        if self.chat_model is None:
            from helper_agent.config import get_settings
            from helper_agent.llm import make_chat_model

            self.chat_model = make_chat_model(get_settings().llm, temperature=get_settings().temperature)
        return self.chat_model

    def episode_world(self) -> EpisodeWorld:
        if self.world is None:
            self.world = EpisodeWorld(self.environment())
        return self.world
