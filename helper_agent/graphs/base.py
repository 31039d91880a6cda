"""What every method shares: the agent protocol the harness runs, the run-context base its graph
reads, and the adapter that runs a compiled graph as an agent.

An agent is handed an `EpisodeSetup` (the live environment, the request, and a feedback source)
and acts; it returns what it did as an `AgentResult`. It never scores itself: the harness checks
the environment afterwards (habitat-lab's split: the benchmark owns the loop and the metrics).
Oracles are agents too, labelled as such; only they are handed the episode's `Reference`.

A method's runtime context (LangGraph's `runtime.context`) subclasses `RunContext`, which holds
what every graph needs: the environment it acts on, the chat model, the usage recorder, and the
tags and metadata its LLM calls are traced with. Before this base each of the four methods wrote
the same accessors, the same `_ctx`, and the same LLM call config, and three of the four copies of
the config had drifted (they dropped the node's callback manager, so their LLM calls started new
root runs in a trace instead of nesting under the node).

`GraphAgent` invokes a method's compiled graph with its context and turns the final state into an
`AgentResult` through the method's one `result` function; the rest of a method's agent is how it
builds its context.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, runtime_checkable

from langchain_core.callbacks import BaseCallbackManager
from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

import helper_agent.llm as llm
from helper_agent.config import get_settings
from helper_agent.envs.base import Environment


# ------------------------------------------------------------------------------ the agent protocol
@dataclass
class Reference:
    """What only an oracle may see: the episode's gold program and reference future actions."""

    gold_program: str | None = None
    future_actions: list[tuple[str, str | None]] = field(default_factory=list)
    replay: bool = False  # EDH: the gold agent replays the reference future actions


@dataclass
class EpisodeSetup:
    """What an agent is handed for one episode."""

    env: Environment
    request: str  # the dialogue, or a person's request
    instance_id: str = ""
    user: str | None = None
    feedback: Callable[[], str] | None = None  # answers "is the task done?"; None: no feedback
    tags: list[str] = field(default_factory=list)
    metadata: dict[str, str] = field(default_factory=dict)
    reference: Reference | None = None  # filled by the harness for oracles only
    # The benchmark's own wording of the task, when it has one (EAI's task input: the prompt every
    # published model got); a method that answers in the benchmark's form builds on it. "": none.
    prompt: str = ""


@dataclass
class AgentResult:
    """What an agent reports about its episode (its own account, not a score)."""

    outcome: str
    program: str = ""
    log: list[str] = field(default_factory=list)
    usage: dict[str, float] = field(default_factory=dict)
    trace: list[list[Any]] = field(default_factory=list)  # [subgoal, status, actions] per subgoal run
    error: str | None = None
    # The one line the agent said at the end (what `helper chat` prints), for agents that answer a
    # person; "" for the others. `helper eval requests` reads its claim (done, stored, refused).
    reply: str = ""
    # What the agent reports of itself beyond usage, for a benchmark to keep as it is (its decisions,
    # the answers it refused, the stored episodes it retrieved, its trajectory): never a score.
    details: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Agent(Protocol):
    name: str
    oracle: bool

    def run(self, setup: EpisodeSetup) -> AgentResult: ...


# ------------------------------------------------------------------------------ the run context
class MissingEnvironment(RuntimeError):
    """The graph was invoked without an environment in its context."""


C = TypeVar("C", bound="RunContext")


@dataclass
class RunContext:
    """Run-scoped dependencies every method's graph reads (a method's context adds its own).

    Nothing here is checkpointed; a resumed run gets a fresh context. The chat model has a default
    built from the settings on first use, so a graph also runs under the LangGraph server; the
    environment has none and must be given: an agent never builds its world.
    """

    env: Environment | None = None  # the environment the agent acts on (required)
    chat_model: BaseChatModel | None = None
    usage: llm.UsageRecorder = field(default_factory=llm.UsageRecorder)
    tags: list[str] = field(default_factory=list)
    metadata: dict[str, str] = field(default_factory=dict)

    #: the method's name in error messages ("the P-RAG graph needs an environment")
    graph_name = "agent"

    @classmethod
    def of(cls: type[C], runtime: Runtime[C]) -> C:
        """The node's context: the one the run was invoked with, or the defaults."""
        return runtime.context if runtime.context is not None else cls()

    def environment(self) -> Environment:
        if self.env is None:
            raise MissingEnvironment(f"the {self.graph_name} graph needs an environment: pass {type(self).__name__}(env=...)")
        return self.env

    def chat(self) -> BaseChatModel:
        if self.chat_model is None:
            self.chat_model = llm.make_chat_model(get_settings().llm, temperature=get_settings().temperature)
        return self.chat_model

    def llm_config(self, config: RunnableConfig, name: str) -> dict[str, Any]:
        """An LLM call's config: named, tagged, and counted by the usage recorder.

        Inside a node, `config["callbacks"]` is the node's callback manager: keeping it makes the
        call a child of the node's run (a trace reads plan -> LLM call, with its tokens); a bare
        list of handlers would start a new root run with only the usage recorder."""
        given = config.get("callbacks")
        callbacks: Any
        if isinstance(given, BaseCallbackManager):
            callbacks = given.copy()
            if self.usage not in callbacks.handlers:
                callbacks.add_handler(self.usage, inherit=True)
        else:
            callbacks = list(given or []) if isinstance(given, list) else []
            if self.usage not in callbacks:
                callbacks.append(self.usage)
        return {"run_name": name, "tags": [*self.tags, name], "metadata": dict(self.metadata), "callbacks": callbacks}


# ------------------------------------------------------------------------------ graph agents
class GraphAgent:
    """A method's compiled graph as an agent: build the context, invoke, turn the state into a result.

    A method's agent gives `context(setup)` and `result(state, context, seconds)`; the graph is
    invoked with the run name `<agent>:<instance>` and the context's tags and metadata, so every
    method's episode reads the same way in a trace.
    """

    oracle = False

    def __init__(self, name: str, chat_model: BaseChatModel, graph: Any, recursion_limit: int = 100) -> None:
        self.name = name
        self.chat_model = chat_model
        self.graph = graph
        self.recursion_limit = recursion_limit

    def context(self, setup: EpisodeSetup) -> RunContext:
        raise NotImplementedError

    def inputs(self, setup: EpisodeSetup) -> dict[str, Any]:
        """The graph's input for the episode (every method starts from the request)."""
        return {"request": setup.request}

    def result(self, state: dict[str, Any], context: Any, seconds: float) -> AgentResult:
        raise NotImplementedError

    def release(self, context: Any) -> None:
        """Let go of what the episode held (a method's per-episode store); after the episode, whatever
        way it ended. Nothing by default."""

    def run(self, setup: EpisodeSetup) -> AgentResult:
        began = time.perf_counter()
        context = self.context(setup)
        try:
            state = self.graph.invoke(
                self.inputs(setup),
                config={"run_name": f"{self.name}:{setup.instance_id}", "tags": context.tags,
                        "metadata": context.metadata, "recursion_limit": self.recursion_limit},
                context=context,
            )
        finally:
            self.release(context)
        return self.result(state, context, time.perf_counter() - began)
