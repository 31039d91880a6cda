"""The sequence graph's state: JSON-friendly values (a step is [ACTION, [objects]])."""

from __future__ import annotations

import operator
from typing import Annotated, Any

from typing_extensions import TypedDict


class SequenceInput(TypedDict, total=False):
    request: str  # the task as the agent is told it
    prompt: str  # the benchmark's own wording of the task ("": none)
    instance_id: str


class SequenceState(SequenceInput, total=False):
    examples: list[dict[str, Any]]  # id, request, steps ([ACTION, [objects]] each)
    prompt_text: str  # the user turn: the prompt with the examples
    answer: str  # the first sequence as written (the open loop's response)
    queue: list[list[Any]]  # steps still to execute (closed loop)
    executed: list[list[Any]]
    failed: list[Any]  # the step that failed last, [ACTION, [objects]]
    error: str  # its error message
    failures: list[str]
    problems: list[str]  # why the last answer could not be executed as written
    attempts: int
    replans: int
    unmet: list[str]  # the stated goal conditions not met at the last check (goal_check)
    goal_rounds: int  # corrections for unmet goal conditions
    impossible: list[list[Any]]  # steps the environment said can never succeed (subgoals=on leaves them out)
    status: str  # after act: done, failed, max_actions; after check: met or unmet
    outcome: str
    log: Annotated[list[str], operator.add]
