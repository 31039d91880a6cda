"""The toy method: one LangGraph node asks the chat model for one low-level action and does it.

Switch: `-o times=N` does the action N times (default 1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from helper_agent.graphs.base import AgentResult, EpisodeSetup, GraphAgent, RunContext
from helper_agent.graphs.options import positive_option
from helper_agent.graphs.registry import BuildRequest, Method


class ToyState(TypedDict, total=False):
    request: str
    outcome: str
    log: list[str]


@dataclass
class ToyContext(RunContext):
    graph_name = "toy"

    times: int = 1


def act(state: ToyState, runtime: Runtime[ToyContext], config: RunnableConfig) -> dict[str, Any]:
    ctx = ToyContext.of(runtime)
    reply = ctx.chat().invoke([HumanMessage(state["request"])], config=ctx.llm_config(config, "toy:act"))
    action = str(reply.content).strip()
    results = [ctx.environment().step(action).result.success for _ in range(ctx.times)]
    return {"outcome": "done" if all(results) else "failed", "log": [f"act: {action} x{ctx.times}"]}


def build_graph() -> Any:
    builder = StateGraph(ToyState, context_schema=ToyContext)
    builder.add_node("act", act)
    builder.add_edge(START, "act")
    builder.add_edge("act", END)
    return builder.compile(name="toy")


class ToyAgent(GraphAgent):
    def __init__(self, request: BuildRequest) -> None:
        super().__init__("toy", request.chat_model, build_graph())
        self.times = positive_option(request.options, "times", 1)

    def context(self, setup: EpisodeSetup) -> ToyContext:
        return ToyContext(env=setup.env, chat_model=self.chat_model, times=self.times, tags=list(setup.tags),
                          metadata=dict(setup.metadata))

    def result(self, state: dict[str, Any], context: Any, seconds: float) -> AgentResult:
        return AgentResult(outcome=state["outcome"], log=list(state["log"]), usage=context.usage.summary())


METHOD = Method(name="toy", summary="A toy: one LLM-chosen action", build=ToyAgent, options=("times",),
                check=lambda options: positive_option(options, "times", 1))
