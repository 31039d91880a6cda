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
  affords them and with the hands they need (default on); off offers every action on every id;
- `goal_steps=on`, `preconditions=on|reported`, `subgoals=on` (off by default; where the agent acts
  by names): what the environment declares, through `graphs/declarations.py` (`named.py` says how
  EmbodiedRAG uses each; `subgoals=on` makes each ReAct step's action a choice among the subgoals
  open now).
`--feedback N` (the shared switch) lets `done()` ask the feedback source N times.

In an environment it acts in by names (`envs/base.ActsByName`: VirtualHome's EAI tasks) the agent
runs `named.py`'s loop on the environment's vocabulary and scene graph; there `max_steps` defaults
to 20 and `refuse_futile` to off (the paper's agent, as its EAI rows were measured), `k` to 3, and
`attributes` and `admissible` have nothing to act on (states are shown whole; the vocabulary is
the environment's); `--feedback` is not used (the agent stops at its own `done()`).
"""

from __future__ import annotations

import uuid
from typing import Any

from langchain_core.language_models import BaseChatModel

from helper_agent.config import get_settings
from helper_agent.envs.base import ActsByName
from helper_agent.graphs.base import AgentResult, EpisodeSetup, GraphAgent
from helper_agent.graphs.declarations import SWITCHES, aids_from_options, refuse_declared_aids
from helper_agent.graphs.embodiedrag.configuration import EmbodiedRAGConfig
from helper_agent.graphs.embodiedrag.context import EmbodiedRAGContext
from helper_agent.graphs.embodiedrag.graph import build_graph, recursion_limit
from helper_agent.graphs.embodiedrag.named import (
    NamedEmbodiedRAGConfig,
    NamedEmbodiedRAGContext,
    build_named_graph,
)
from helper_agent.graphs.options import check_known, on_off, option, positive_option
from helper_agent.graphs.registry import BuildRequest, Method
from helper_agent.memory.folders import open_run_memory
from helper_agent.memory.scene_graph import SceneGraphMemory

OPTIONS = ("graph", "k", "max_steps", "attributes", "refuse_futile", "admissible", *SWITCHES)
NAMED = NamedEmbodiedRAGConfig()  # the defaults where the agent acts by names


def config_from_options(options: dict[str, str], *, seed: int = 0, feedback: int = 0) -> EmbodiedRAGConfig:
    check_known(options, OPTIONS, "embodiedrag")
    graph = option(options, "graph", "subgraph", ("subgraph", "full"))
    attributes = option(options, "attributes", "all", ("all", "named"))
    return EmbodiedRAGConfig(graph=graph, k=positive_option(options, "k", get_settings().scene_graph_k),  # type: ignore[arg-type]
                             max_steps=positive_option(options, "max_steps", 30), attributes=attributes,  # type: ignore[arg-type]
                             feedback_rounds=feedback, seed=seed, refuse_futile=on_off(options, "refuse_futile"),
                             admissible=on_off(options, "admissible"), subgoals=aids_from_options(options).subgoals)


def named_config_from_options(options: dict[str, str]) -> NamedEmbodiedRAGConfig:
    """The switches where the agent acts by names (`ActsByName`), with that loop's defaults."""
    check_known(options, OPTIONS, "embodiedrag")
    return NamedEmbodiedRAGConfig(graph=option(options, "graph", NAMED.graph, ("subgraph", "full")),  # type: ignore[arg-type]
                                  k=positive_option(options, "k", NAMED.k),
                                  max_steps=positive_option(options, "max_steps", NAMED.max_steps),
                                  refuse_futile=on_off(options, "refuse_futile", "on" if NAMED.refuse_futile else "off"),
                                  aids=aids_from_options(options))


def check_options(options: dict[str, str]) -> None:
    """Both loops' readings of the switches (a bad value fails before the run, whichever world)."""
    config_from_options(options)
    named_config_from_options(options)


class MemoryOpener:
    """The run's scene-graph store (its folder, or its own collection on a Chroma server), opened
    once and shared by the episodes; one graph per episode."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self._memory: SceneGraphMemory | None = None

    def __call__(self, graph_id: str) -> SceneGraphMemory:
        if self._memory is None:
            self._memory = open_run_memory(SceneGraphMemory, self.path, graph_id=graph_id)
        self._memory.graph_id = graph_id
        return self._memory


class NamedEmbodiedRAGAgent(GraphAgent):
    """Runs `named.py`'s loop on an environment it acts in by names. The subgraph mode keeps the
    episode's scene graph in the run's store and removes it after the episode; the full-graph
    baseline needs none."""

    def __init__(self, chat_model: BaseChatModel, config: NamedEmbodiedRAGConfig, memory: MemoryOpener,
                 name: str = "embodiedrag") -> None:
        super().__init__(name, chat_model, build_named_graph(), recursion_limit(config.max_steps))
        self.config = config
        self.memory = memory

    def context(self, setup: EpisodeSetup) -> NamedEmbodiedRAGContext:
        memory = None
        if self.config.graph == "subgraph":
            memory = self.memory(f"{setup.instance_id or 'episode'}-{uuid.uuid4().hex[:8]}")
        return NamedEmbodiedRAGContext(env=setup.env, chat_model=self.chat_model, memory=memory, config=self.config,
                                       tags=list(setup.tags), metadata=dict(setup.metadata))

    def release(self, context: Any) -> None:
        """The episode's graph leaves the store with it: nothing of it is a result worth keeping."""
        if context.memory is not None:
            context.memory.clear()

    def result(self, state: dict[str, Any], context: Any, seconds: float) -> AgentResult:
        episode, shown, chars = context.episode, context.shown, context.prompt_chars
        episode.extra.update(graph=self.config.graph, entities_shown_per_step=round(sum(shown) / max(len(shown), 1), 1),
                             prompt_chars_per_step=round(sum(chars) / max(len(chars), 1), 1),
                             retrieve_seconds=round(sum(context.retrieve_seconds), 3))
        program = "\n".join(s["action"] for s in episode.trajectory)
        return AgentResult(outcome=episode.outcome, program=program, usage=context.usage.summary(),
                           details=episode.details())


class EmbodiedRAGAgent(GraphAgent):
    """Runs the EmbodiedRAG graph on the environment it is handed; one scene graph per episode."""

    def __init__(self, chat_model: BaseChatModel, config: EmbodiedRAGConfig, memory_path: str | None = None,
                 name: str = "embodiedrag", named: NamedEmbodiedRAGConfig | None = None) -> None:
        super().__init__(name, chat_model, build_graph(), recursion_limit(config.max_steps))
        self.config = config
        self.memory_path = memory_path
        self.memory = MemoryOpener(memory_path)
        self.named = NamedEmbodiedRAGAgent(chat_model, named or NamedEmbodiedRAGConfig(), self.memory, name)

    def run(self, setup: EpisodeSetup) -> AgentResult:
        if isinstance(setup.env, ActsByName):
            return self.named.run(setup)
        refuse_declared_aids(self.named.config.aids, setup.env)
        return super().run(setup)

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
    return EmbodiedRAGAgent(request.chat_model, config, memory_path=request.memory_dir,
                            named=named_config_from_options(request.options))


METHOD = Method(
    name="embodiedrag",
    summary="EmbodiedRAG (Booker et al. 2024): ReAct planning over a retrieved scene subgraph",
    build=build,
    options=OPTIONS,
    check=check_options,
)
