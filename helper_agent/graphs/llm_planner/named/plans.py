"""LLM-Planner's plans over an environment's named actions: their grammar, parser and text.

    WALK sink, GRAB cup, PUTBACK cup sink

A step is an action and its objects (none, one or two, as the vocabulary says), steps are joined by
", ". The grammar and the parser are built from one `ActionVocabulary` and a list of object names
(every object for a first plan, the objects seen so far for a re-plan), and the parser accepts
exactly what the grammar derives.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from helper_agent.envs.base import ActionVocabulary
from helper_agent.graphs.action_sequences import Step
from helper_agent.graphs.named_actions import by_arity, check_names
from helper_agent.program.cfg import Expr, Grammar, Ref, Repeat, alt, seq

MAX_PLAN_STEPS = 40


def plan_rules(vocabulary: ActionVocabulary, objects: Sequence[str], max_steps: int = MAX_PLAN_STEPS,
               only: Sequence[Step] | None = None) -> Grammar:
    """`ACTION obj[ obj], ACTION ...` over the vocabulary's actions and `objects`; with `only`
    (`subgoals=on`), over those steps alone."""
    if only is not None:
        if not only:
            raise ValueError("no step to plan")
        return Grammar({"step": alt(*(plan_text([s]) for s in dict.fromkeys(only))),
                        "root": seq(Ref("step"), Repeat(seq(", ", Ref("step")), 0, max_steps - 1))})
    objects = check_names(objects)
    groups = by_arity(vocabulary)
    forms: list[Expr] = []
    rules: dict[str, Expr] = {"obj": alt(*objects)}
    if groups[0]:
        rules["act0"] = alt(*groups[0])
        forms.append(Ref("act0"))
    if groups[1]:
        rules["act1"] = alt(*groups[1])
        forms.append(seq(Ref("act1"), " ", Ref("obj")))
    if groups[2]:
        rules["act2"] = alt(*groups[2])
        forms.append(seq(Ref("act2"), " ", Ref("obj"), " ", Ref("obj")))
    rules["step"] = alt(*forms)
    rules["root"] = seq(Ref("step"), Repeat(seq(", ", Ref("step")), 0, max_steps - 1))
    return Grammar(rules)


def plan_text(steps: Sequence[Step]) -> str:
    return ", ".join(" ".join([a, *args]) for a, args in steps)


def parse_plan(text: str, vocabulary: ActionVocabulary, objects: Collection[str],
               only: Collection[Step] | None = None) -> list[Step]:
    """A plan's steps; `ValueError` names what is outside the vocabulary, or with `only` outside those
    steps (for the bounded retry)."""
    arities, known = vocabulary.actions, set(objects)
    body = re.sub(r"^\s*next\s+plans?\s*:", "", text.strip(), flags=re.I).strip()
    body = body.splitlines()[0].strip().rstrip(".") if body else ""
    steps: list[Step] = []
    for part in (p.strip() for p in body.split(",")):
        if not part:
            continue
        action, *args = part.split()
        action = action.upper()
        if action not in arities:
            raise ValueError(f"{action} is not an allowed action")
        if len(args) != arities[action]:
            raise ValueError(f"{action} takes {arities[action]} object(s), not {len(args)}")
        unknown = [a for a in args if a not in known]
        if unknown:
            raise ValueError(f"{', '.join(unknown)} is not an object here")
        if only is not None and (action, tuple(args)) not in only:
            raise ValueError(f"{part} is not one of the subgoals open now")
        steps.append((action, tuple(args)))
    if not steps:
        raise ValueError("the plan has no steps")
    return steps
