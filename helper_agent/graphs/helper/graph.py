"""HELPER's flow as a LangGraph `StateGraph`.

    retrieve -> plan -> validate --(invalid, retries left)--> plan
       |--(routine recalled)--> understand -> adapt -> validate     (adapt.py)
       |--(a word it can only guess)--> clarify ("Do you mean the television?") -> plan | understand | finish
       '--(nothing named is in the household, or a thing asked what it cannot take)--> finish -> END
                                                  (reading.py over understanding/absent.py and feasibility.py)
                           |--(valid)--> execute --(done)--> ask_feedback --(satisfied)--> memorize -> END
                                                     (memorize asks the person to confirm a routine before storing it)
                                            |--(unseen object)--> locate -> execute
                                            |--(failure)--> correct -> execute
                                            '--(limits)--> finish -> END
                 ask_feedback --(more to do)--> replan --(the missing part)--> validate   (replanning.py)
                              |                       '--(it repeats the failed one)--> finish -> END
                              '--(more to do, routine adapted)--> understand -> adapt --(no edit)--> replan

The caller gives a `HelperInput` (request, user) and a `HelperContext` with the environment to act
on. `build_graph(checkpointer)` is used by the CLI with a SQLite checkpointer so chats survive
restarts.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from helper_agent.graphs.helper import adapt, nodes, reading, replanning
from helper_agent.graphs.helper.context import HelperContext
from helper_agent.graphs.helper.nodes import FEEDBACK_QUESTION
from helper_agent.graphs.helper.state import HelperInput, HelperState

__all__ = ["FEEDBACK_QUESTION", "build_graph", "graph"]


def build_graph(checkpointer: Any = None) -> Any:
    builder = StateGraph(HelperState, context_schema=HelperContext, input_schema=HelperInput)
    builder.add_node("retrieve", nodes.retrieve)
    builder.add_node("clarify", reading.clarify)
    builder.add_node("plan", nodes.counting_usage(nodes.plan))
    builder.add_node("understand", nodes.counting_usage(adapt.understand))
    builder.add_node("adapt", nodes.counting_usage(adapt.adapt))
    builder.add_node("validate", nodes.validate)
    builder.add_node("execute", nodes.execute)
    builder.add_node("locate", nodes.counting_usage(nodes.locate))
    builder.add_node("correct", nodes.counting_usage(nodes.correct))
    builder.add_node("ask_feedback", nodes.counting_usage(nodes.ask_feedback))
    builder.add_node("replan", nodes.counting_usage(replanning.replan))
    builder.add_node("memorize", nodes.memorize)
    builder.add_node("finish", nodes.finish)
    builder.add_edge(START, "retrieve")
    builder.add_conditional_edges("retrieve", nodes.after_retrieve, ["clarify", "understand", "plan", "finish"])
    # after the person said what a word means: refused (a no, or a request read again that the
    # household cannot take), else on as after `retrieve` (`clarify` leaves nothing unsure)
    builder.add_conditional_edges("clarify", nodes.after_retrieve, ["understand", "plan", "finish"])
    builder.add_edge("understand", "adapt")
    builder.add_conditional_edges("adapt", adapt.after_adapt, ["validate", "replan"])
    builder.add_edge("plan", "validate")
    builder.add_conditional_edges("validate", nodes.after_validate, ["plan", "execute", "finish"])
    builder.add_conditional_edges("execute", nodes.after_execute, ["ask_feedback", "locate", "correct", "finish"])
    builder.add_conditional_edges("locate", nodes.after_locate, ["execute", "finish"])
    builder.add_edge("correct", "execute")
    builder.add_conditional_edges("ask_feedback", nodes.after_feedback, ["memorize", "understand", "replan", "finish"])
    builder.add_conditional_edges("replan", nodes.after_replan, ["validate", "ask_feedback", "finish"])
    builder.add_edge("memorize", END)
    builder.add_edge("finish", END)
    return builder.compile(checkpointer=checkpointer, name="helper")


graph = build_graph()
