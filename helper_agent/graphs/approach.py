"""A precondition check for agents that act by name: get close to an object, then act on it.

HELPER's executor walks to an object before it interacts with it (its pre-condition checks); a
method that writes named actions leaves that to the model, and a 0.5B model often writes
`TOUCH cat` with no `WALK cat` before it. Tried on EAI's dev tasks (101-160, issue 53), the re-plan
after such a failure mostly wrote the same step again.

`act_approaching` takes one step; when it fails (and was not a step whose effect already held), and
the environment names an approach action (`ActionVocabulary.approach`: VirtualHome's WALK), the
robot approaches the object acted on last (a one-object action's object, a two-object action's
destination: the first is usually in hand) and the step is tried once more. The approach is an
ordinary step of the environment: it is executed, recorded and scored like any other. Nothing here
reads the error's words, so it is the same check on any environment that names such an action.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from helper_agent.envs.base import (
    ActionVocabulary,
    ReportsMissing,
    StepOutcome,
    impossible_step,
    redundant_step,
    step_by_name,
)
from helper_agent.graphs.goal_conditions import achieving_steps, settling


@dataclass
class Approached:
    """One step taken with the precondition check: its outcome and the approach steps that succeeded."""

    outcome: StepOutcome
    approached: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)


def act_approaching(env: Any, vocabulary: ActionVocabulary, action: str, objects: tuple[str, ...],
                    reported: bool = False) -> Approached:
    """`action` on `objects`; after a failure, approach the last object and try once more. With
    `reported`, first take the steps that make true what the environment says the step lacked
    (`with_reported`)."""
    if reported:
        return with_reported(env, vocabulary, action, objects)
    return _approaching(env, vocabulary, action, objects)


def with_reported(env: Any, vocabulary: ActionVocabulary, action: str, objects: tuple[str, ...],
                  rounds: int = 2) -> Approached:
    """HELPER's pre-condition check on what the environment reports: after a failed step, the
    conditions it lacked (`envs/base.ReportsMissing`: "character is FACING to tv") are made true by
    their achieving steps (`goal_conditions.achieving_steps`, from the environment's own effects;
    each taken with the approach check), in the order moving about allows, and the step is tried
    again, at most `rounds` times. When nothing is reported, or nothing reported has a step, this
    is the approach check; a step the environment says is impossible is not tried again."""
    taken: list[tuple[str, tuple[str, ...]]] = []
    outcome = step_by_name(env, action, objects)
    for _ in range(rounds):
        if outcome.result.success or redundant_step(env) or impossible_step(env) or not isinstance(env, ReportsMissing):
            break
        lacked = env.missing_conditions()
        steps = achieving_steps(lacked, vocabulary.effects, vocabulary.actions, vocabulary.objects)
        fixes = sorted({steps[c] for c in lacked if c in steps} - {(action, objects)},
                       key=lambda step: settling(step[0], vocabulary.effects, vocabulary.settled_last))
        if not fixes:
            break
        for fix_action, fix_objects in fixes:
            fixed = _approaching(env, vocabulary, fix_action, fix_objects)
            taken += fixed.approached
            if fixed.outcome.result.success:
                taken.append((fix_action, fix_objects))
        outcome = step_by_name(env, action, objects)
    if outcome.result.success or redundant_step(env) or impossible_step(env):
        return Approached(outcome, taken)
    last = _approaching(env, vocabulary, action, objects, tried=outcome)
    return Approached(last.outcome, taken + last.approached)


def _approaching(env: Any, vocabulary: ActionVocabulary, action: str, objects: tuple[str, ...],
                 tried: StepOutcome | None = None) -> Approached:
    outcome = tried or step_by_name(env, action, objects)
    approach = vocabulary.approach
    if (outcome.result.success or redundant_step(env) or not approach or not objects or action == approach
            or vocabulary.actions.get(approach) != 1):
        return Approached(outcome)
    target = (objects[-1],)
    walked = step_by_name(env, approach, target)
    if not walked.result.success:
        return Approached(outcome)
    return Approached(step_by_name(env, action, objects), [(approach, target)])
