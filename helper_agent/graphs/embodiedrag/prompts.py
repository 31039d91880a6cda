"""EmbodiedRAG's prompts: the self-query and the ReAct step (system text first, so llama.cpp reuses it)."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from helper_agent.graphs.embodiedrag.actions import action_help
from helper_agent.graphs.steps import Step

SELF_QUERY_SYSTEM = (
    "You help a household robot. Read the instruction and name the objects the robot will need to "
    "find or use, and which of their states matter. Answer one object per line as\n"
    "- object name: attribute, attribute\n"
    "Attributes: {attributes}. Name at most {max_items} objects, nothing else."
)

REACT_SYSTEM = (
    "You are a household robot acting step by step. Each step, think in one line, then choose one "
    "action. Answer exactly:\nThought: <what you do next and why>\nAction: <action>\n\n"
    "Actions (ID is an object id from the scene graph, ObjectClass a type such as Mug):\n{actions}\n\n"
    "The scene graph lists the objects you know that matter now: 'id: state; relation other_id'. "
    "If something you need is not listed, search for its class. Say done() when the task is finished.\n\n"
    "Example (instruction: put a washed apple in the fridge):\n"
    "Thought: I need the apple; Apple_1 is on CounterTop_1\nAction: clean(Apple_1)\n"
    "Observation: done; holding Apple_1\n"
    "Thought: now the fridge\nAction: place(Fridge_1)\n"
    "Observation: done; hands empty\n"
    "Thought: the apple is washed and in the fridge\nAction: done()"
)


def self_query_messages(request: str, attributes: list[str], max_items: int) -> list[BaseMessage]:
    system = SELF_QUERY_SYSTEM.format(attributes=", ".join(attributes), max_items=max_items)
    return [SystemMessage(content=system), HumanMessage(content=f"Instruction:\n{request}\n\nObjects:")]


def react_messages(request: str, graph_text: str, held: str | None, history: list[Step], keep: int,
                   retry_reason: str | None = None, futile: Sequence[str] = (),
                   subgoals: Sequence[str] = ()) -> list[BaseMessage]:
    """The ReAct step's messages; `subgoals`: the open parts' lines (`declarations.part_lines`)."""
    lines = [f"Instruction:\n{request}", "", "Scene graph:", graph_text, "",
             f"Holding: {held or 'nothing'}"]
    recent = history[-keep:] if keep > 0 else []
    if recent:
        lines += ["", "Previous steps:"]
        for step in recent:
            lines += [f"Thought: {step.get('thought', '')}", f"Action: {step.get('action', '')}",
                      f"Observation: {step.get('observation', '')}"]
    if futile:
        lines += ["", "Done from here already, changing nothing (not allowed now): " + ", ".join(futile)]
    if subgoals:
        lines += ["", *subgoals]
    lines += ["", "Next step:"]
    messages: list[BaseMessage] = [SystemMessage(content=REACT_SYSTEM.format(actions=action_help())),
                                   HumanMessage(content="\n".join(lines))]
    if retry_reason:
        messages.append(HumanMessage(content=f"Your last answer was rejected: {retry_reason}. Answer again."))
    return messages
