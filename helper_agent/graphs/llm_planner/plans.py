"""LLM-Planner's high-level plans: (action, object) subgoals, their parser, grammar and metrics.

A high-level plan is what LLM-Planner's LLM writes: "Navigation fridge, OpenObject fridge,
PickupObject apple, ...". The vocabulary is ALFRED's (PutObject names the receptacle, as in
LLM-Planner's prompts), widened by whatever actions the few-shot pool's plans use (TEACh's Pour).
The grammar and the parser are generated from one `PlanVocabulary` (the allowed actions and the
object names) so that every string the grammar accepts parses, and the parser never evaluates text.

`plan_from_actions` turns an executed action sequence (a train episode's gold program run through
the executor) into an ALFRED-style plan, the way ALFRED's gold high-level plans come from its
expert trajectories: one subgoal per interaction, a Navigation to the object before it whenever
the agent moved.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from helper_agent.program.cfg import Grammar, Ref, Repeat, alt, seq

Step = tuple[str, str]
"""One subgoal: (action, object), e.g. ("PickupObject", "Apple")."""

#: ALFRED's high-level actions as LLM-Planner's prompt lists them.
ALFRED_ACTIONS: tuple[str, ...] = (
    "Navigation", "PickupObject", "PutObject", "OpenObject", "CloseObject",
    "ToggleObjectOn", "ToggleObjectOff", "SliceObject",
)

#: TEACh interaction -> high-level action (what the converter and the controller agree on).
INTERACTION_ACTIONS: dict[str, str] = {
    "Pickup": "PickupObject", "Place": "PutObject", "Open": "OpenObject", "Close": "CloseObject",
    "ToggleOn": "ToggleObjectOn", "ToggleOff": "ToggleObjectOff", "Slice": "SliceObject", "Pour": "PourObject",
}

MAX_PLAN_STEPS = 40


class PlanParseError(ValueError):
    """The answer is not a plan in the vocabulary; the message says why (it goes back to the LLM)."""


@dataclass
class PlanVocabulary:
    """Allowed actions and objects. Object names are matched case-insensitively and written lower-case
    in prompts (as LLM-Planner does); `objects` maps the lower-case name to the canonical one."""

    actions: tuple[str, ...]
    objects: dict[str, str] = field(default_factory=dict)

    @classmethod
    def build(cls, actions: Iterable[str], objects: Iterable[str]) -> PlanVocabulary:
        acts = tuple(dict.fromkeys(a for a in actions if a))
        objs = {o.lower(): o for o in sorted(set(objects)) if o and re.fullmatch(r"[A-Za-z0-9]+", o)}
        if not acts or not objs:
            raise ValueError("a plan vocabulary needs at least one action and one object")
        return cls(acts, objs)

    def restricted(self, objects: Iterable[str]) -> PlanVocabulary:
        """The same actions over other objects (re-planning: the objects seen so far)."""
        objs = {o.lower(): o for o in objects if o and re.fullmatch(r"[A-Za-z0-9]+", o)}
        return PlanVocabulary(self.actions, objs or dict(self.objects))


def actions_in(plans: Iterable[Sequence[Step]]) -> list[str]:
    """ALFRED's actions first, then any other action the plans use (in first-seen order)."""
    seen = list(ALFRED_ACTIONS)
    for plan in plans:
        for action, _ in plan:
            if action not in seen:
                seen.append(action)
    return seen


def format_plan(plan: Sequence[Step]) -> str:
    """ "Navigation fridge, OpenObject fridge" (objects lower-case, as in LLM-Planner's prompts)."""
    return ", ".join(f"{a} {o.lower()}" for a, o in plan)


def normalize(plan: Sequence[Step]) -> list[Step]:
    """Case-insensitive form of a plan, for comparing plans."""
    return [(a.lower(), o.lower()) for a, o in plan]


_STEP = re.compile(r"^([A-Za-z]+)\s+([A-Za-z0-9]+)$")


def parse_plan(text: str, vocabulary: PlanVocabulary) -> list[Step]:
    """Parse "Action object, Action object, ..." (a leading "Next plans:" is allowed) into steps with
    canonical names; anything outside the vocabulary raises `PlanParseError` naming it."""
    body = text.strip()
    body = re.sub(r"^(next\s+plans?\s*:)", "", body, flags=re.IGNORECASE).strip()
    body = body.splitlines()[0].strip() if body else ""
    body = body.rstrip(".").strip()
    if not body:
        raise PlanParseError("the answer is empty; write steps such as 'Navigation fridge, OpenObject fridge'")
    actions = {a.lower(): a for a in vocabulary.actions}
    steps: list[Step] = []
    for part in body.split(","):
        part = part.strip()
        if not part:
            continue
        match = _STEP.match(part)
        if not match:
            raise PlanParseError(f"{part!r} is not 'Action object'")
        action = actions.get(match.group(1).lower())
        if action is None:
            raise PlanParseError(f"{match.group(1)!r} is not an allowed action ({', '.join(vocabulary.actions)})")
        obj = vocabulary.objects.get(match.group(2).lower())
        if obj is None:
            raise PlanParseError(f"{match.group(2)!r} is not an object here")
        steps.append((action, obj))
    if not steps:
        raise PlanParseError("no steps in the answer")
    if len(steps) > MAX_PLAN_STEPS:
        raise PlanParseError(f"{len(steps)} steps; at most {MAX_PLAN_STEPS}")
    return steps


def plan_cfg(vocabulary: PlanVocabulary, max_steps: int = MAX_PLAN_STEPS) -> Grammar:
    """The plans `parse_plan` accepts, as data: allowed actions, allowed objects (lower-case),
    ", " between steps, at most `max_steps` steps.

    The plan ends where a step ends, exactly as the examples' answers do, so a constrained model
    stops by ending its turn. (A grammar that demanded a newline after the last step asked for a
    character no example shows: a small model kept choosing ", " and ran on to the step cap.)"""
    return Grammar({
        "root": seq(Ref("step"), Repeat(seq(", ", Ref("step")), 0, max_steps - 1)),
        "step": seq(Ref("action"), " ", Ref("object")),
        "action": alt(*vocabulary.actions),
        "object": alt(*sorted(vocabulary.objects)),
    })


def plan_grammar(vocabulary: PlanVocabulary, max_steps: int = MAX_PLAN_STEPS) -> str:
    """GBNF for one plan (`plan_cfg` rendered for llama.cpp)."""
    return plan_cfg(vocabulary, max_steps).to_gbnf()


# --------------------------------------------------------------------------- plan similarity
def lcs_length(a: Sequence[Step], b: Sequence[Step]) -> int:
    """Length of the longest common subsequence of two plans (case-insensitive)."""
    x, y = normalize(a), normalize(b)
    row = [0] * (len(y) + 1)
    for item in x:
        previous = 0
        for j, other in enumerate(y, start=1):
            current = row[j]
            row[j] = previous + 1 if item == other else max(row[j], row[j - 1])
            previous = current
    return row[-1]


def in_order_recall(predicted: Sequence[Step], gold: Sequence[Step]) -> float:
    """The fraction of gold subgoals predicted in order (LCS / len(gold)): visible progress where
    exact match is still zero."""
    return lcs_length(predicted, gold) / len(gold) if gold else float(not predicted)


def in_order_precision(predicted: Sequence[Step], gold: Sequence[Step]) -> float:
    """The fraction of predicted subgoals that belong to the gold plan in order (LCS / len(predicted)):
    recall alone rewards a plan that runs on, repeating steps, until it covers the gold one."""
    return lcs_length(predicted, gold) / len(predicted) if predicted else float(not gold)


def exact_match(predicted: Sequence[Step], gold: Sequence[Step]) -> bool:
    """HLP accuracy's criterion (LLM-Planner): every subgoal right, none missing or extra."""
    return normalize(predicted) == normalize(gold)


# --------------------------------------------------------------------------- gold plans from actions
MOVES = frozenset({"Forward", "Backward", "Turn Left", "Turn Right", "Pan Left", "Pan Right", "Look Up", "Look Down"})


def plan_from_actions(actions: Iterable[tuple[str, str | None, bool]], type_of: dict[str, str]) -> list[Step]:
    """An ALFRED-style plan from executed (action, object id, success) triples: each successful
    interaction becomes its subgoal (Place names its receptacle), preceded by a Navigation to that
    object whenever the agent moved since the last interaction. Opening (and closing again) a
    container that nothing later uses is the search looking inside, which LLM-Planner's controller
    does by itself, so it is not a subgoal."""
    done = [(a, o) for a, o, ok in actions if ok]
    skip = _exploratory_opens(done)
    plan: list[Step] = []
    moved = True
    for index, (action, oid) in enumerate(done):
        if index in skip:
            continue
        if action in MOVES or oid is None:
            moved = moved or action in MOVES
            continue
        high = INTERACTION_ACTIONS.get(action)
        if high is None:
            continue
        obj = type_of.get(oid) or type_from_id(oid)
        if moved:
            plan.append(("Navigation", obj))
            moved = False
        plan.append((high, obj))
    return plan


def _exploratory_opens(actions: Sequence[tuple[str, str | None]]) -> set[int]:
    """Indices of the Opens and Closes of objects that nothing else in the sequence acts on (the
    search looking inside)."""
    used = {oid for a, oid in actions if a not in ("Open", "Close")}
    return {i for i, (a, oid) in enumerate(actions) if a in ("Open", "Close") and oid is not None and oid not in used}


def type_from_id(oid: str) -> str:
    """An object's type read from its id: "Apple|..." -> Apple, "Bread|...|BreadSliced_0" -> BreadSliced."""
    parts = oid.split("|")
    if len(parts) > 4 and "_" in parts[-1]:
        return parts[-1].rsplit("_", 1)[0]
    return parts[0]
