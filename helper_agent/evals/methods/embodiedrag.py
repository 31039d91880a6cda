"""EmbodiedRAG as a method of the registry: the graph of `graphs/embodiedrag` with a scene-graph memory.

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
from pathlib import Path
from typing import TYPE_CHECKING, Any

from helper_agent.evals.methods import check_known, option, positive_option

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from helper_agent.evals.agents import AgentResult, EpisodeSetup
    from helper_agent.evals.runner import EvalSpec
    from helper_agent.graphs.embodiedrag import EmbodiedRAGConfig
    from helper_agent.memory.scene_graph import SceneGraphMemory

OPTIONS = ("graph", "k", "max_steps", "attributes", "refuse_futile", "admissible")


def config_from_options(options: dict[str, str], *, seed: int = 0, feedback: int = 0) -> EmbodiedRAGConfig:
    from helper_agent.config import get_settings
    from helper_agent.graphs.embodiedrag import EmbodiedRAGConfig

    check_known(options, OPTIONS, "embodiedrag")
    graph = option(options, "graph", "subgraph", ("subgraph", "full"))
    attributes = option(options, "attributes", "all", ("all", "named"))
    return EmbodiedRAGConfig(graph=graph, k=positive_option(options, "k", get_settings().scene_graph_k),  # type: ignore[arg-type]
                             max_steps=positive_option(options, "max_steps", 30), attributes=attributes,  # type: ignore[arg-type]
                             feedback_rounds=feedback, seed=seed,
                             refuse_futile=option(options, "refuse_futile", "on", ("on", "off")) == "on",
                             admissible=option(options, "admissible", "on", ("on", "off")) == "on")


def scene_graph_memory(path: str | None, graph_id: str) -> SceneGraphMemory:
    """The run's scene-graph store: its folder, or its own collection on a configured Chroma server."""
    from helper_agent.evals.agents import server_namespace
    from helper_agent.memory.scene_graph import SceneGraphMemory
    from helper_agent.memory.settings import get_memory_settings

    if get_memory_settings().chroma_host:
        prefix = f"{server_namespace(path)}." if path else ""
        return SceneGraphMemory(graph_id=graph_id, collection=prefix + SceneGraphMemory.default_collection)
    return SceneGraphMemory(graph_id=graph_id, **({"path": path} if path else {}))


class EmbodiedRAGAgent:
    """Runs the EmbodiedRAG graph on the environment it is handed; one scene graph per episode."""

    oracle = False

    def __init__(self, chat_model: BaseChatModel, config: EmbodiedRAGConfig, memory_path: str | None = None,
                 name: str = "embodiedrag") -> None:
        from helper_agent.graphs.embodiedrag import build_graph

        self.name = name
        self.chat_model = chat_model
        self.config = config
        self.memory_path = memory_path
        self.graph = build_graph()
        self._memory: SceneGraphMemory | None = None

    def memory(self, graph_id: str) -> SceneGraphMemory:
        if self._memory is None:
            self._memory = scene_graph_memory(self.memory_path, graph_id)
        self._memory.graph_id = graph_id  # one store, one graph per episode
        return self._memory

    def run(self, setup: EpisodeSetup) -> AgentResult:
        from helper_agent.evals.agents import AgentResult
        from helper_agent.graphs.embodiedrag import EmbodiedRAGContext, recursion_limit

        graph_id = setup.instance_id or f"episode-{uuid.uuid4().hex[:8]}"
        context = EmbodiedRAGContext(env=setup.env, chat_model=self.chat_model, scene_graph=self.memory(graph_id),
                                     feedback=setup.feedback, config=self.config, tags=list(setup.tags),
                                     metadata=dict(setup.metadata))
        state = self.graph.invoke(
            {"request": setup.request},
            config={"run_name": f"{self.name}:{setup.instance_id}", "tags": context.tags,
                    "metadata": context.metadata, "recursion_limit": recursion_limit(self.config.max_steps)},
            context=context,
        )
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


def build(spec: EvalSpec, chat_model: BaseChatModel) -> EmbodiedRAGAgent:
    config = config_from_options(spec.agent_options, seed=spec.seed, feedback=spec.feedback)
    path = None if spec.shared_memory else spec.memory_dir or str(Path(spec.out) / "memory")
    return EmbodiedRAGAgent(chat_model, config, memory_path=path)
