"""EmbodiedRAG as a method: the graph of this package with a scene-graph memory.

Switches (`--agent-option KEY=VALUE`):
- `graph=subgraph|full`: EmbodiedRAG's retrieved subgraph (default), or the baseline that puts the
  whole known scene graph in every planning prompt;
- `k=N`: entities kept per query (default: the memory settings' `scene_graph_k`, 3);
- `max_steps=N`: ReAct steps per episode (default 30);
- `attributes=all|named`: every observed state of a retrieved entity, or only the self-query's;
- `refuse_futile=on|off`: leave out of a step's grammar what was already done from the current
  view and changed nothing (default on);
- `admissible=on|off`: offer only actions the environment can accept, on entities whose type
  affords them and with the hands they need (default on); off offers every action on every id.
`--feedback N` (the shared switch) lets `done()` ask the feedback source N times.
"""

from __future__ import annotations

import uuid
from typing import Any

from langchain_core.language_models import BaseChatModel

from helper_agent.config import get_settings
from helper_agent.graphs.base import AgentResult, EpisodeSetup, GraphAgent
from helper_agent.graphs.embodiedrag.configuration import EmbodiedRAGConfig
from helper_agent.graphs.embodiedrag.context import EmbodiedRAGContext
from helper_agent.graphs.embodiedrag.graph import build_graph, recursion_limit
from helper_agent.graphs.options import check_known, on_off, option, positive_option
from helper_agent.graphs.registry import BuildRequest, Method
from helper_agent.memory.folders import open_run_memory
from helper_agent.memory.scene_graph import SceneGraphMemory

OPTIONS = ("graph", "k", "max_steps", "attributes", "refuse_futile", "admissible")


def config_from_options(options: dict[str, str], *, seed: int = 0, feedback: int = 0) -> EmbodiedRAGConfig:
    check_known(options, OPTIONS, "embodiedrag")
    graph = option(options, "graph", "subgraph", ("subgraph", "full"))
    attributes = option(options, "attributes", "all", ("all", "named"))
    return EmbodiedRAGConfig(graph=graph, k=positive_option(options, "k", get_settings().scene_graph_k),  # type: ignore[arg-type]
                             max_steps=positive_option(options, "max_steps", 30), attributes=attributes,  # type: ignore[arg-type]
                             feedback_rounds=feedback, seed=seed, refuse_futile=on_off(options, "refuse_futile"),
                             admissible=on_off(options, "admissible"))


class EmbodiedRAGAgent(GraphAgent):
    """Runs the EmbodiedRAG graph on the environment it is handed; one scene graph per episode."""

    def __init__(self, chat_model: BaseChatModel, config: EmbodiedRAGConfig, memory_path: str | None = None,
                 name: str = "embodiedrag") -> None:
        super().__init__(name, chat_model, build_graph(), recursion_limit(config.max_steps))
        self.config = config
        self.memory_path = memory_path
        self._memory: SceneGraphMemory | None = None

    def memory(self, graph_id: str) -> SceneGraphMemory:
        """The run's scene-graph store (its folder, or its own collection on a Chroma server),
        opened once; one graph per episode."""
        if self._memory is None:
            self._memory = open_run_memory(SceneGraphMemory, self.memory_path, graph_id=graph_id)
        self._memory.graph_id = graph_id
        return self._memory

    def context(self, setup: EpisodeSetup) -> EmbodiedRAGContext:
        graph_id = setup.instance_id or f"episode-{uuid.uuid4().hex[:8]}"
        return EmbodiedRAGContext(env=setup.env, chat_model=self.chat_model, scene_graph=self.memory(graph_id),
                                  feedback=setup.feedback, config=self.config, tags=list(setup.tags),
                                  metadata=dict(setup.metadata))

    def result(self, state: dict[str, Any], context: Any, seconds: float) -> AgentResult:
        actions = "\n".join(step.get("action", "") for step in state.get("history", []))
        return AgentResult(outcome=state.get("outcome", ""), program=actions, log=list(state.get("log", [])),
                           usage={**context.usage.summary(), **step_usage(context)})


def step_usage(context: Any) -> dict[str, float]:
    """Per planning step figures for the benchmark and the comparison (means over the episode)."""
    react = [c for c in context.usage.calls if c.name == "embodiedrag:react"]
    meter = context.meter
    n = len(react)
    return {
        "react_steps": n,
        "react_prompt_tokens": round(sum(c.prompt_tokens for c in react) / n, 1) if n else 0.0,
        "react_seconds": round(sum(c.seconds for c in react) / n, 3) if n else 0.0,
        "retrieve_seconds": round(sum(meter.retrieve_seconds) / len(meter.retrieve_seconds), 4) if meter.retrieve_seconds else 0.0,
        "entities_shown": round(sum(meter.shown) / len(meter.shown), 1) if meter.shown else 0.0,
        "entities_known": max(meter.known) if meter.known else 0,
        "context_overflow": int(meter.context_overflow),
        "futile_rejections": meter.futile_rejections,
    }


def build(request: BuildRequest) -> EmbodiedRAGAgent:
    config = config_from_options(request.options, seed=request.seed, feedback=request.feedback)
    return EmbodiedRAGAgent(request.chat_model, config, memory_path=request.memory_dir)


METHOD = Method(
    name="embodiedrag",
    summary="EmbodiedRAG (Booker et al. 2024): ReAct planning over a retrieved scene subgraph",
    build=build,
    options=OPTIONS,
    check=config_from_options,
)
