"""The named-action planner's state: JSON-friendly values (a step is [ACTION, [objects]])."""

from __future__ import annotations

import operator
from typing import Annotated, Any

from typing_extensions import TypedDict


class NamedPlanInput(TypedDict, total=False):
    request: str
    instance_id: str


class NamedPlanState(NamedPlanInput, total=False):
    examples: list[dict[str, Any]]  # id, task, visible, plan (its text)
    plan: list[list[Any]]  # the current plan
    written: list[list[Any]]  # the first plan (the open loop's answer)
    completed: list[list[Any]]  # steps executed, whole episode
    status: str  # after execute: done or failed; after check: met or unmet
    last_tried: list[Any]  # the step that failed last
    failures: list[str]
    attempts: int
    decisions: int  # plans asked of the LLM
    rejected: int  # plans the parser refused after the retry
    replans: int  # re-plans after a failed step
    unmet: list[str]  # the stated goal conditions not met at the last check (goal_check)
    goal_rounds: int  # re-plans for unmet goal conditions
    impossible: list[list[Any]]  # steps the environment said can never succeed (subgoals=on leaves them out)
    outcome: str
    log: Annotated[list[str], operator.add]
