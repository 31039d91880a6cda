"""EAI's action vocabulary as LLM-Planner's EAI adapter sees it: its description, its plan grammar and
parser, and the check of an answer that copied a listed order (`copies_a_list`, for the report).

HELPER answers EAI's own JSON (`grammar.py`); LLM-Planner answers its plans over the same vocabulary
(EAI's evaluator's actions and arities, the task's object names):

    LLM-Planner's plan      WALK sink, GRAB cup, PUTBACK cup sink

The step-wise methods (P-RAG, EmbodiedRAG) take their grammars from the environment's vocabulary
in their own graphs (`graphs/named_actions.py`), which also says how the vocabulary is shown
(`vocabulary_text`, used here too).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from helper_agent.envs.base import ActionVocabulary
from helper_agent.envs.virtualhome import action_meanings
from helper_agent.evals.studies.eai.grammar import Step, action_arities
from helper_agent.graphs import named_actions
from helper_agent.graphs.named_actions import check_names
from helper_agent.program.cfg import Expr, Grammar, Ref, Repeat, alt, seq


def meanings() -> dict[str, str]:
    """ACTION -> EAI's one-line meaning (the environment's: `VirtualHomeEnv.action_vocabulary`)."""
    return action_meanings()


def vocabulary_text() -> str:
    """EAI's actions, grouped by the number of objects they take (`named_actions.vocabulary_text`)."""
    return named_actions.vocabulary_text(ActionVocabulary(actions=action_arities(), objects=(), meanings=meanings()))


def listed_orders() -> dict[str, list[str]]:
    """The two orders an answer could copy: EAI's prompt list, and `vocabulary_text`'s."""
    by_arity = _by_arity()
    return {"eai": list(meanings()), "vocabulary": [a for n in (0, 1, 2) for a in by_arity[n]]}


def copies_a_list(actions: Sequence[str], at_least: int = 4) -> bool:
    """Whether the answer's actions begin with `at_least` actions of a listed order, in that order
    (CLOSE, DRINK, FIND, WALK, ... is EAI's list, not a plan): the failure the 0.5B showed."""
    return any(len(actions) >= at_least and list(actions[:at_least]) == order[:at_least]
               for order in listed_orders().values())


def _by_arity(actions: Collection[str] | None = None) -> dict[int, list[str]]:
    arities = action_arities()
    chosen = sorted(actions if actions is not None else arities)
    return {n: [a for a in chosen if arities[a] == n] for n in (0, 1, 2)}


# ------------------------------------------------------------------------------ LLM-Planner's plans
def plan_rules(objects: Sequence[str], max_steps: int = 40) -> Grammar:
    """`ACTION obj[ obj], ACTION ...`: LLM-Planner's plan over EAI's actions and `objects`."""
    objects = check_names(objects)
    by_arity = _by_arity()
    forms: list[Expr] = []
    rules: dict[str, Expr] = {"obj": alt(*objects)}
    if by_arity[0]:
        rules["act0"] = alt(*by_arity[0])
        forms.append(Ref("act0"))
    if by_arity[1]:
        rules["act1"] = alt(*by_arity[1])
        forms.append(seq(Ref("act1"), " ", Ref("obj")))
    if by_arity[2]:
        rules["act2"] = alt(*by_arity[2])
        forms.append(seq(Ref("act2"), " ", Ref("obj"), " ", Ref("obj")))
    rules["step"] = alt(*forms)
    rules["root"] = seq(Ref("step"), Repeat(seq(", ", Ref("step")), 0, max_steps - 1))
    return Grammar(rules)


def plan_text(steps: Sequence[Step]) -> str:
    return ", ".join(" ".join([a, *args]) for a, args in steps)


def parse_plan(text: str, objects: Collection[str]) -> list[Step]:
    """A plan's steps; `ValueError` names what is outside the vocabulary (for the bounded retry)."""
    arities, known = action_arities(), set(objects)
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
        steps.append((action, tuple(args)))
    if not steps:
        raise ValueError("the plan has no steps")
    return steps
