"""HELPER's sequence writer as a LangGraph `StateGraph`.

    retrieve -> write --(open loop)--> finish -> END
                  '--(closed loop)--> act --(done, no corrections left)--> finish
                                       '--(a step failed, corrections left)--> correct --> act
                                       '--(goal_check)--> check --(stated goals unmet, rounds left)--> correct
                                                            '--(met, or no rounds left)--> finish
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from helper_agent.graphs.helper.sequence import nodes
from helper_agent.graphs.helper.sequence.context import SequenceContext
from helper_agent.graphs.helper.sequence.state import SequenceInput, SequenceState


def build_graph(checkpointer: Any = None) -> Any:
    builder = StateGraph(SequenceState, context_schema=SequenceContext, input_schema=SequenceInput)
    builder.add_node("retrieve", nodes.retrieve)
    builder.add_node("write", nodes.write)
    builder.add_node("act", nodes.act)
    builder.add_node("correct", nodes.correct)
    builder.add_node("check", nodes.check)
    builder.add_node("finish", nodes.finish)
    builder.add_edge(START, "retrieve")
    builder.add_edge("retrieve", "write")
    builder.add_conditional_edges("write", nodes.after_write, ["act", "finish"])
    builder.add_conditional_edges("act", nodes.after_act, ["correct", "check", "finish"])
    builder.add_conditional_edges("check", nodes.after_check, ["correct", "finish"])
    builder.add_edge("correct", "act")
    builder.add_edge("finish", END)
    return builder.compile(checkpointer=checkpointer, name="helper-sequence")
