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

from helper_agent.envs.base import ActionVocabulary, StepOutcome, redundant_step, step_by_name


@dataclass
class Approached:
    """One step taken with the precondition check: its outcome and the approach steps that succeeded."""

    outcome: StepOutcome
    approached: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)


def act_approaching(env: Any, vocabulary: ActionVocabulary, action: str, objects: tuple[str, ...]) -> Approached:
    """`action` on `objects`; after a failure, approach the last object and try once more."""
    outcome = step_by_name(env, action, objects)
    approach = vocabulary.approach
    if (outcome.result.success or redundant_step(env) or not approach or not objects or action == approach
            or vocabulary.actions.get(approach) != 1):
        return Approached(outcome)
    target = (objects[-1],)
    walked = step_by_name(env, approach, target)
    if not walked.result.success:
        return Approached(outcome)
    return Approached(step_by_name(env, action, objects), [(approach, target)])
