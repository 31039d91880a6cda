"""EmbodiedRAG's flow as a LangGraph `StateGraph`.

    start --(subgraph)--> self_query --> retrieve --> think --> act --(more)--> retrieve
          '--(full)------------------------^                      '--(done, limits)--> finish -> END

Every step re-retrieves: the memory was synced from the last observation, and the last thought's
needs join the self-query's. With `graph="full"` the whole known scene graph replaces retrieval.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from helper_agent.graphs.embodiedrag import nodes
from helper_agent.graphs.embodiedrag.context import EmbodiedRAGContext
from helper_agent.graphs.embodiedrag.state import EmbodiedRAGInput, EmbodiedRAGState

__all__ = ["build_graph", "graph", "recursion_limit"]


def build_graph(checkpointer: Any = None) -> Any:
    builder = StateGraph(EmbodiedRAGState, context_schema=EmbodiedRAGContext, input_schema=EmbodiedRAGInput)
    builder.add_node("start", nodes.start)
    builder.add_node("self_query", nodes.self_query)
    builder.add_node("retrieve", nodes.retrieve)
    builder.add_node("think", nodes.think)
    builder.add_node("act", nodes.act)
    builder.add_node("finish", nodes.finish)
    builder.add_edge(START, "start")
    builder.add_conditional_edges("start", nodes.after_start, ["self_query", "retrieve", "finish"])
    builder.add_conditional_edges("self_query", nodes.after_self_query, ["retrieve", "finish"])
    builder.add_edge("retrieve", "think")
    builder.add_conditional_edges("think", nodes.after_think, ["act", "finish"])
    builder.add_conditional_edges("act", nodes.after_act, ["retrieve", "finish"])
    builder.add_edge("finish", END)
    return builder.compile(checkpointer=checkpointer, name="embodiedrag")


def recursion_limit(max_steps: int) -> int:
    """LangGraph supersteps for `max_steps` ReAct steps (retrieve, think, act each) and the rest."""
    return 3 * max_steps + 10


graph = build_graph()
