"""LLM-Planner's flow as a LangGraph `StateGraph`.

    retrieve -> plan --(a plan)--> execute --(done, limits)--> finish -> END
                  '--(none)--> finish      |--(failed / stuck, re-planning on, re-plans left)--> replan
                                           '--(otherwise)--> finish
                                replan --(a plan)--> execute;  --(none)--> finish
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from helper_agent.graphs.llm_planner import nodes
from helper_agent.graphs.llm_planner.context import LLMPlannerContext
from helper_agent.graphs.llm_planner.state import LLMPlannerInput, LLMPlannerState


def build_graph(checkpointer: Any = None) -> Any:
    builder = StateGraph(LLMPlannerState, context_schema=LLMPlannerContext, input_schema=LLMPlannerInput)
    builder.add_node("retrieve", nodes.retrieve)
    builder.add_node("plan", nodes.plan)
    builder.add_node("execute", nodes.execute)
    builder.add_node("replan", nodes.replan)
    builder.add_node("finish", nodes.finish)
    builder.add_edge(START, "retrieve")
    builder.add_edge("retrieve", "plan")
    builder.add_conditional_edges("plan", nodes.after_plan, ["execute", "finish"])
    builder.add_conditional_edges("execute", nodes.after_execute, ["replan", "finish"])
    builder.add_conditional_edges("replan", nodes.after_plan, ["execute", "finish"])
    builder.add_edge("finish", END)
    return builder.compile(checkpointer=checkpointer, name="llm-planner")


graph = build_graph()
