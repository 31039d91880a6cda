"""LLM-Planner over named actions as a LangGraph `StateGraph`.

    retrieve -> plan --(open loop, or no plan)--> finish -> END
                  '--(closed loop)--> execute --(done)--> finish
                                         '--(a step failed, re-plans left)--> replan --> execute
                                         '--(goal_check)--> check --(stated goals unmet, rounds left)--> replan
                                                              '--(met, or no rounds left)--> finish
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from helper_agent.graphs.llm_planner.named import nodes
from helper_agent.graphs.llm_planner.named.context import NamedPlanContext
from helper_agent.graphs.llm_planner.named.state import NamedPlanInput, NamedPlanState


def build_graph(checkpointer: Any = None) -> Any:
    builder = StateGraph(NamedPlanState, context_schema=NamedPlanContext, input_schema=NamedPlanInput)
    builder.add_node("retrieve", nodes.retrieve)
    builder.add_node("plan", nodes.plan)
    builder.add_node("execute", nodes.execute)
    builder.add_node("replan", nodes.replan)
    builder.add_node("check", nodes.check)
    builder.add_node("finish", nodes.finish)
    builder.add_edge(START, "retrieve")
    builder.add_edge("retrieve", "plan")
    builder.add_conditional_edges("plan", nodes.after_plan, ["execute", "finish"])
    builder.add_conditional_edges("execute", nodes.after_execute, ["replan", "check", "finish"])
    builder.add_conditional_edges("check", nodes.after_check, ["replan", "finish"])
    builder.add_conditional_edges("replan", nodes.after_plan, ["execute", "finish"])
    builder.add_edge("finish", END)
    return builder.compile(checkpointer=checkpointer, name="llm-planner-named")
