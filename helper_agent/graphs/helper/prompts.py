"""Chat messages for the HELPER graph's LLM calls, built from the template files in `prompts/`.

Retrieved examples go in as few-shot user/assistant turns, which small local models follow far
better than examples pasted into one long instruction.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from helper_agent.program import api_documentation
from helper_agent.prompts import load_template


def _fence(program: str) -> str:
    return f"```python\n{program.strip()}\n```"


def planner_messages(dialogue: str, examples: Sequence[dict[str, Any]], error: str = "", previous: str = "") -> list[BaseMessage]:
    messages: list[BaseMessage] = [SystemMessage(content=load_template("planner_system.txt").format(api=api_documentation()))]
    for example in examples:
        messages.append(HumanMessage(content=load_template("planner_user.txt").format(dialogue=example["dialogue"])))
        messages.append(AIMessage(content=_fence(example["program"])))
    messages.append(HumanMessage(content=load_template("planner_user.txt").format(dialogue=dialogue)))
    if error:
        messages.append(AIMessage(content=_fence(previous) if previous else "(no program)"))
        messages.append(HumanMessage(content=f"That program was rejected: {error}\nWrite a corrected program."))
    return messages


def corrector_messages(
    dialogue: str, program: str, failed_subgoal: str, failure: str, examples: Sequence[dict[str, Any]]
) -> list[BaseMessage]:
    messages: list[BaseMessage] = [SystemMessage(content=load_template("planner_system.txt").format(api=api_documentation()))]
    template = load_template("corrector_user.txt")
    for example in examples:
        messages.append(
            HumanMessage(
                content=template.format(
                    dialogue=example.get("dialogue") or "(same as before)",
                    program=example.get("failed_subgoal", ""),
                    failed_subgoal=example.get("failed_subgoal", ""),
                    failure=example.get("failure", ""),
                )
            )
        )
        explanation = example.get("explanation", "")
        body = example["program"].strip()
        if explanation and not body.startswith("#"):
            body = f"# {explanation}\n{body}"
        messages.append(AIMessage(content=_fence(body)))
    messages.append(
        HumanMessage(content=template.format(dialogue=dialogue, program=program, failed_subgoal=failed_subgoal, failure=failure))
    )
    return messages


def replanner_messages(dialogue: str, program: str, feedback: str, examples: Sequence[dict[str, Any]]) -> list[BaseMessage]:
    messages = planner_messages(dialogue, examples)[:-1]
    messages.append(HumanMessage(content=load_template("replanner_user.txt").format(dialogue=dialogue, program=program, feedback=feedback)))
    return messages


_EXPLANATION = re.compile(r"^\s*#\s*(.+)$", re.MULTILINE)


def explanation_of(program: str) -> str:
    """The first comment line of a corrective program (HELPER asks for an explanation first)."""
    match = _EXPLANATION.search(program)
    return match.group(1).strip() if match else ""
