"""The HELPER graph's state: plain JSON-friendly values, so the SQLite checkpointer can keep it.

The household itself (`world`) is kept as an exported state, so a chat resumed after a restart
finds the same rooms; the environment and executor are rebuilt from it in each node.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict


class ExecutionSummary(TypedDict, total=False):
    status: str  # done, failed, not_found, step_limit, failure_limit
    error: str
    failure: str  # the diagnosed failure description
    failed_subgoal: str
    missing: str | None
    missing_key: str | None
    completed: int
    trace: list[list[Any]]  # [subgoal, status, number of actions] per subgoal run


class HelperState(TypedDict, total=False):
    request: str  # the dialogue or chat message
    user: str | None
    world: dict[str, Any] | None  # the household, as exported metadata with the grid
    examples: list[dict[str, Any]]
    routine: dict[str, Any] | None  # a recalled routine: name, program, score
    teach_name: str | None  # the routine this request teaches, when it names one
    program: str
    plan_error: str
    plan_attempts: int
    bindings: dict[str, str]
    resume_index: int
    correction_program: str | None
    execution: ExecutionSummary
    corrections: int
    locate_attempts: int
    feedback: str
    feedback_rounds: int
    steps: int
    failures: int
    outcome: str
    log: Annotated[list[str], operator.add]
