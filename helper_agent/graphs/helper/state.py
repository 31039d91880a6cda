"""The HELPER graph's state: plain JSON-friendly values, so the SQLite checkpointer can keep it.

The household is not here: the environment is injected through the runtime context and nodes act
on it live. Only where a checkpoint must carry the household (a chat that stops at an `interrupt`
and resumes in a new process) do the acting nodes write the environment's snapshot into `world`.

The program is compiled once, in `validate`, and travels as `subgoals` (plain dicts, see
`subgoals_to_data`); `execute` runs them without parsing the program again.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any

from typing_extensions import TypedDict

from helper_agent.program.subgoals import ObjectRef, Subgoal, SubgoalKind


def add_usage(left: dict[str, float] | None, right: dict[str, float] | None) -> dict[str, float]:
    """Sum two usage dicts key by key (`retrieve` starts a request's with `Overwrite({})`)."""
    total = dict(left or {})
    for key, value in (right or {}).items():
        total[key] = round(total.get(key, 0) + value, 3)
    return total


class HelperInput(TypedDict, total=False):
    """What a caller gives the graph: the request (a dialogue or a chat message) and who asks."""

    request: str
    user: str | None


class ExecutionSummary(TypedDict, total=False):
    status: str  # done, failed, not_found, step_limit, failure_limit
    error: str
    failure: str  # the diagnosed failure description
    failed_subgoal: str
    missing: str | None
    missing_key: str | None
    missing_sliced: bool  # the step was a slice: its pieces would do (the locate node stops at them)
    completed: int
    trace: list[list[Any]]  # [subgoal, status, number of actions] per subgoal run, whole episode


class HelperState(TypedDict, total=False):
    request: str
    user: str | None
    examples: list[dict[str, Any]]
    routine: dict[str, Any] | None  # a recalled routine: name, program, request, score
    # A recalled routine's adaptation (graphs/helper/adapt.py): routine, base program, the changes read,
    # the edits (change, edit, applied, words, rejected), the adapted program and its summary.
    adaptation: dict[str, Any] | None
    teach_name: str | None  # the routine this request teaches, when it names one explicitly
    program: str  # the last program written (validated source once `plan_error` is empty)
    subgoals: list[dict[str, Any]]  # the validated program, compiled once
    plan_error: str
    plan_attempts: int
    bindings: dict[str, str]
    resume_index: int
    correction_subgoals: list[dict[str, Any]] | None  # a corrective program waiting to run
    execution: ExecutionSummary
    corrections: int
    locate_attempts: int
    feedback: str
    feedback_rounds: int
    world: dict[str, Any] | None  # the environment's snapshot, only when the context asks for it
    outcome: str
    # Facts of this request only (a chat thread carries many requests): `retrieve` starts them.
    # The budgets are per request, so the household's counts when it started are kept here.
    steps_at_start: int
    failures_at_start: int
    stored: dict[str, Any] | None  # the routine this request stored: name, version, user
    # The programs this request ran before the current one (each replan's), in order: a routine it
    # teaches is all of them joined (`teaching.whole_program`), not only the last replan.
    ran_programs: list[str]
    # The current round's subgoals that ran to their end, in the order they ran: the plan's and the
    # corrective programs' alike (`nodes.execute`). A round that stops early is kept as these
    # (`teaching.round_done`): a corrective program that re-did the plan's steps did them too.
    ran_subgoals: list[dict[str, Any]]
    repeated: bool  # the replan kept repeating the program that did not finish: it is not run again
    refusal: str  # why the request is not done at all ("I can't mow the lawn: there is no lawn ..."), or ""
    # Words of the request the vocabulary could only guess (`understanding.vocabulary.Guess` as
    # data: phrase, class, score): `clarify` asks the person "Do you mean the television?" first.
    unsure: list[dict[str, Any]]
    # the request in the person's own words, when `request` holds the household's names instead (an
    # everyday name read in `retrieve`, or a word the person confirmed in `clarify`), else ""
    said: str
    unmet: list[str]  # what the request asked that the household did not show after acting (`outcome.unmet`)
    # Classes a program of this request changed although the request does not ask for them: the
    # scope check could not trim them and the planner's attempts were used up (`scoping.Fitted.kept`);
    # the reply says so (`facts.RequestFacts.unasked`).
    unasked_kept: list[str]
    # Where each thing that can be picked up was when the request began (`missing.places_of`): a
    # correction "you shouldn't have moved the plate" puts it back there (`missing.put_back`). Kept
    # only with `keep_snapshots` (a chat); empty otherwise, and such a correction goes to the planner.
    places_at_start: dict[str, str]
    # What the locator opened while it searched, and what for: [opened class, class looked for] in
    # the order it happened (`nodes.locate`); the reply says it (`facts.RequestFacts.opened_looking`).
    opened_looking: list[list[str]]
    # What this request logged. Nodes append; `retrieve` starts a new list with `Overwrite`, so a
    # reply never reads an earlier request's line (a chat once said "stored" after "nothing to store").
    log: Annotated[list[str], operator.add]
    # This request's LLM use (calls, tokens, seconds), summed over its nodes, so it survives an
    # interrupt and a resume in another process (a served run once read 0 calls after a resume).
    usage: Annotated[dict[str, float], add_usage]


# ------------------------------------------------------------------------ subgoals as plain data
def _ref_to_data(ref: ObjectRef | None) -> dict[str, Any] | None:
    if ref is None:
        return None
    return {"instance_key": ref.instance_key, "object_class": ref.object_class, "landmark": ref.landmark,
            "attributes": list(ref.attributes), "requested_class": ref.requested_class}


def _ref_from_data(data: dict[str, Any] | None) -> ObjectRef | None:
    if data is None:
        return None
    return ObjectRef(data["instance_key"], data["object_class"], data.get("landmark"),
                     tuple(data.get("attributes") or ()), data.get("requested_class"))


def subgoals_to_data(subgoals: list[Subgoal]) -> list[dict[str, Any]]:
    """Compiled subgoals as JSON-friendly dicts (what the checkpointer stores)."""
    return [{"kind": s.kind.value, "target": _ref_to_data(s.target), "receptacle": _ref_to_data(s.receptacle),
             "line": s.line, "note": s.note, "extra": dict(s.extra)} for s in subgoals]


def subgoals_from_data(data: list[dict[str, Any]]) -> list[Subgoal]:
    """The inverse of `subgoals_to_data`."""
    return [Subgoal(SubgoalKind(d["kind"]), _ref_from_data(d.get("target")), _ref_from_data(d.get("receptacle")),
                    int(d.get("line", 0)), d.get("note", ""), dict(d.get("extra") or {})) for d in data]
