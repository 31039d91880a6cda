"""Chat messages for the HELPER graph's LLM calls, built from the template files in `prompts/`.

Retrieved examples go in as few-shot user/assistant turns, which small local models follow far
better than examples pasted into one long instruction.

A recalled routine gets its own prompt: the routine (its name, how it was taught, its program) and
the request go together in the last user turn, right where the model writes, after a few fixed
adaptation examples (`prompts/examples/adaptations.jsonl`: invented routines recalled unchanged or
with one to three changes, none from the personalization suite). The fixed turns come before the
retrieved ones so that the llama.cpp KV cache of that prefix is reused across calls.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, ConfigDict, Field

from helper_agent.memory.base import iter_jsonl_objects
from helper_agent.memory.errors import InvalidRecordError
from helper_agent.program import api_documentation
from helper_agent.prompts import load_template


def _fence(program: str) -> str:
    return f"```python\n{program.strip()}\n```"


def _system() -> SystemMessage:
    return SystemMessage(content=load_template("planner_system.txt").format(api=api_documentation()))


def _example_turns(examples: Sequence[dict[str, Any]]) -> list[BaseMessage]:
    """Retrieved (dialogue, program) examples as user/assistant turns."""
    turns: list[BaseMessage] = []
    for example in examples:
        turns.append(HumanMessage(content=load_template("planner_user.txt").format(dialogue=example["dialogue"])))
        turns.append(AIMessage(content=_fence(example["program"])))
    return turns


def _retry_turns(error: str, previous: str) -> list[BaseMessage]:
    """The rejected attempt and its reason, so the next attempt can act on it (none if no error)."""
    if not error:
        return []
    return [AIMessage(content=_fence(previous) if previous else "(no program)"),
            HumanMessage(content=f"That program was rejected: {error}\nWrite a corrected program.")]


def planner_messages(dialogue: str, examples: Sequence[dict[str, Any]], error: str = "", previous: str = "",
                     note: str = "") -> list[BaseMessage]:
    """The planner's turns: the examples, then the request; `note` (`scoping.example_note`: the
    examples' objects this request does not ask for) goes right after the request, in its turn."""
    request = load_template("planner_user.txt").format(dialogue=dialogue)
    if note:
        request = f"{request.rstrip()}\n{note}"
    return [_system(), *_example_turns(examples), HumanMessage(content=request), *_retry_turns(error, previous)]


class AdaptationExample(BaseModel):
    """A taught routine, a later request for it, and the program that request needs."""

    model_config = ConfigDict(extra="forbid")

    id: str
    routine_name: str
    routine_request: str = Field(description="How the user taught the routine.")
    routine_program: str
    request: str
    changes: list[str] = Field(default_factory=list, description="The request's changes, in words (empty: unchanged).")
    program: str = Field(description="The routine's program with exactly those changes.")


ADAPTATIONS_FILE = "adaptations.jsonl"


@cache
def load_adaptation_examples() -> tuple[AdaptationExample, ...]:
    """The packaged routine-adaptation examples (errors name the file and line)."""
    path = resources.files("helper_agent.prompts").joinpath("examples", ADAPTATIONS_FILE)
    examples = []
    for lineno, obj in iter_jsonl_objects(str(path)):
        try:
            examples.append(AdaptationExample.model_validate(obj))
        except ValueError as exc:
            raise InvalidRecordError(f"{path}:{lineno}: {exc}") from None
    return tuple(examples)


def _routine_turn(name: str, taught: str, program: str, request: str) -> HumanMessage:
    return HumanMessage(content=load_template("routine_user.txt").format(
        name=name, taught=taught or name, program=program.strip(), request=request))


def routine_messages(
    request: str, routine: dict[str, Any], examples: Sequence[dict[str, Any]], error: str = "", previous: str = "",
    adaptations: Sequence[AdaptationExample] | None = None,
) -> list[BaseMessage]:
    """Adapt a recalled routine (`{"name", "request", "program"}`) to the request.

    Order: system and API, the fixed adaptation examples, the retrieved examples, then the routine
    with the request; a rejected attempt and its reason follow, as in `planner_messages`.
    """
    messages: list[BaseMessage] = [_system()]
    for shot in load_adaptation_examples() if adaptations is None else adaptations:
        messages.append(_routine_turn(shot.routine_name, shot.routine_request, shot.routine_program, shot.request))
        messages.append(AIMessage(content=_fence(shot.program)))
    messages += _example_turns(examples)
    messages.append(_routine_turn(routine["name"], routine.get("request") or "", routine["program"], request))
    return messages + _retry_turns(error, previous)


def corrector_messages(
    dialogue: str, program: str, failed_subgoal: str, failure: str, examples: Sequence[dict[str, Any]]
) -> list[BaseMessage]:
    messages: list[BaseMessage] = [_system()]
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


def _bullets(lines: Sequence[str], empty: str) -> str:
    return "\n".join(f"- {line}" for line in lines) or f"- ({empty})"


def replanner_messages(dialogue: str, program: str, feedback: str, examples: Sequence[dict[str, Any]],
                       error: str = "", previous: str = "", household: Sequence[str] = (),
                       states: Sequence[str] = (), achieved: Sequence[str] = ()) -> list[BaseMessage]:
    """The replan turn: the program that ran and what it already did (`achieved`: its finished
    steps, to keep), what the household shows about the objects named (`states`, from
    `household.object_states`) and the other objects (`household.household_lines`), and what the
    person says is missing, in their own words."""
    messages = planner_messages(dialogue, examples)[:-1]
    messages.append(HumanMessage(content=load_template("replanner_user.txt").format(
        dialogue=dialogue, program=program, feedback=feedback, household=_bullets(household, "nothing to show"),
        states=_bullets(states, "none of them is in the household"), achieved=_bullets(achieved, "nothing finished"))))
    messages.extend(_retry_turns(error, previous))
    return messages


_EXPLANATION = re.compile(r"^\s*#\s*(.+)$", re.MULTILINE)


def explanation_of(program: str) -> str:
    """The first comment line of a corrective program (HELPER asks for an explanation first)."""
    match = _EXPLANATION.search(program)
    return match.group(1).strip() if match else ""
