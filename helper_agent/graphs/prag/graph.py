"""P-RAG's step loop as a LangGraph `StateGraph`.

    observe --> retrieve --> choose --> act --(more)--> observe
       '--(a limit while looking around)-------'--(done(), step cap, limits)--> finish -> END
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from helper_agent.graphs.prag import nodes
from helper_agent.graphs.prag.context import PRAGContext
from helper_agent.graphs.prag.state import PRAGInput, PRAGState

__all__ = ["build_graph", "graph", "recursion_limit"]


def build_graph(checkpointer: Any = None) -> Any:
    builder = StateGraph(PRAGState, context_schema=PRAGContext, input_schema=PRAGInput)
    builder.add_node("observe", nodes.observe)
    builder.add_node("retrieve", nodes.retrieve)
    builder.add_node("choose", nodes.choose)
    builder.add_node("act", nodes.act)
    builder.add_node("finish", nodes.finish)
    builder.add_edge(START, "observe")
    builder.add_conditional_edges("observe", nodes.after_observe, ["retrieve", "finish"])
    builder.add_edge("retrieve", "choose")
    builder.add_edge("choose", "act")
    builder.add_conditional_edges("act", nodes.after_act, ["observe", "finish"])
    builder.add_edge("finish", END)
    return builder.compile(checkpointer=checkpointer, name="prag")


def recursion_limit(max_steps: int) -> int:
    """LangGraph supersteps for `max_steps` steps (observe, retrieve, choose, act each) and the end."""
    return 4 * max_steps + 10


graph = build_graph()
