"""The LLM-Planner graph's state: JSON-friendly values (plans are [action, object] lists)."""

from __future__ import annotations

import operator
from typing import Annotated, Any

from typing_extensions import TypedDict


class LLMPlannerInput(TypedDict, total=False):
    request: str  # the goal instruction or the dialogue
    step_instructions: list[str]


class LLMPlannerState(TypedDict, total=False):
    request: str
    step_instructions: list[str]
    examples: list[dict[str, Any]]  # instruction, plan, steps, visible, id
    plan: list[list[str]]  # the current (continuation) plan
    plan_error: str
    completed: list[list[str]]  # subgoals finished, whole episode
    status: str  # after execute: done, failed, not_found, timeout, step_limit, failure_limit
    error: str
    replans: int
    trace: list[list[Any]]  # [subgoal, status, number of actions] per subgoal run
    outcome: str
    log: Annotated[list[str], operator.add]
