"""EAI's action vocabulary as the step-wise methods see it: its description, their answer grammars, parsers.

HELPER answers EAI's own JSON (`graphs/action_sequences`) and LLM-Planner its plans
(`graphs/llm_planner/named/plans.py`), both built from the environment's vocabulary; P-RAG and
EmbodiedRAG answer here in their own forms over the same vocabulary (EAI's evaluator's actions and
arities, the task's object names):

    a P-RAG step            Action: PUTBACK(cup, sink)
    an EmbodiedRAG step     Thought: the cup goes in the sink
                            Action: PUTBACK(cup, sink)

and `done()` ends a step-wise episode. Every grammar is generated from `action_arities()` and the
object names an answer may use, and each parser accepts exactly what its grammar derives.

How the vocabulary is shown, and why so: `graphs/named_actions.py` (`vocabulary_text`).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from helper_agent.envs.base import ActionVocabulary
from helper_agent.envs.virtualhome import action_meanings
from helper_agent.evals.studies.eai.grammar import Step, action_arities
from helper_agent.graphs.named_actions import check_names
from helper_agent.graphs.named_actions import vocabulary_text as shown_vocabulary
from helper_agent.program.cfg import Expr, Grammar, Ref, Repeat, alt, chars, seq

DONE = "done()"
MAX_THOUGHT_CHARS = 120


def meanings() -> dict[str, str]:
    """ACTION -> EAI's one-line meaning (the environment's: `VirtualHomeEnv.action_vocabulary`)."""
    return action_meanings()


def vocabulary_text() -> str:
    """The actions, grouped by the number of objects they take, as every method shows them
    (`graphs/named_actions.vocabulary_text` on VirtualHome's vocabulary)."""
    return shown_vocabulary(ActionVocabulary(actions=action_arities(), objects=(), meanings=meanings()))


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


# ------------------------------------------------------------------------------ step-wise answers
def step_text(step: Step | None) -> str:
    """`PUTBACK(cup, sink)`; `done()` for None."""
    if step is None:
        return DONE
    return f"{step[0]}({', '.join(step[1])})"


def _action_rule(objects: Sequence[str], exclude: Collection[str],
                 refuse: Collection[Step] = ()) -> tuple[Expr, dict[str, Expr]]:
    """`done()` or an action: the names in `exclude` not at all, the steps in `refuse` not with those
    objects (the grammar spells out the allowed objects of a refused action's name)."""
    by_arity = _by_arity()
    refused: dict[str, set[tuple[str, ...]]] = {}
    for name, args in refuse:
        refused.setdefault(name, set()).add(tuple(args))
    rules: dict[str, Expr] = {}
    forms: list[Expr] = [alt(DONE)]
    objects = check_names(objects) if objects else []
    if objects:
        rules["obj"] = alt(*objects)
    for n in (0, 1, 2):
        names = [a for a in by_arity[n] if a not in exclude]
        if not names or (n and not objects):
            continue
        plain = [a for a in names if a not in refused]
        if plain:
            rules[f"act{n}"] = alt(*plain)
            args = {0: [], 1: [Ref("obj")], 2: [Ref("obj"), ", ", Ref("obj")]}[n]
            forms.append(seq(Ref(f"act{n}"), "(", *args, ")"))
        for name in (a for a in names if a in refused and n):
            forms += _allowed_forms(name, n, objects, refused[name])
    return alt(*forms), rules


def _allowed_forms(name: str, arity: int, objects: list[str], refused: set[tuple[str, ...]]) -> list[Expr]:
    """`name` on every object tuple but the refused ones (arity 1 or 2)."""
    if arity == 1:
        allowed = [o for o in objects if (o,) not in refused]
        return [seq(f"{name}(", alt(*allowed), ")")] if allowed else []
    firsts = sorted({first for first, _ in refused})
    forms: list[Expr] = []
    for first in firsts:
        seconds = [o for o in objects if (first, o) not in refused]
        if seconds:
            forms.append(seq(f"{name}({first}, ", alt(*seconds), ")"))
    others = [o for o in objects if o not in firsts]
    if others:
        forms.append(seq(f"{name}(", alt(*others), ", ", Ref("obj"), ")"))
    return forms


def step_rules(objects: Sequence[str], exclude: Collection[str] = (), refuse: Collection[Step] = ()) -> Grammar:
    """`Action: ACTION(obj, ...)` or `Action: done()` (P-RAG's step); `refuse`: steps not allowed now."""
    action, rules = _action_rule(objects, exclude, refuse)
    return Grammar({"root": seq("Action: ", Ref("action")), "action": action, **rules})


def react_rules(objects: Sequence[str], exclude: Collection[str] = (), refuse: Collection[Step] = ()) -> Grammar:
    """`Thought: <one line>` then `Action: ...` (EmbodiedRAG's ReAct step; P-RAG's with `answer=thought`)."""
    action, rules = _action_rule(objects, exclude, refuse)
    return Grammar({
        "root": seq("Thought: ", Ref("thought"), "\nAction: ", Ref("action")),
        "thought": seq(chars("\n \t", negated=True), Repeat(chars("\n", negated=True), 0, MAX_THOUGHT_CHARS - 1)),
        "action": action, **rules,
    })


_ACTION = re.compile(r"^([A-Za-z_]+)\(([^()\n]*)\)$")


@dataclass(frozen=True)
class StepAnswer:
    step: Step | None  # None: done()
    thought: str = ""


def parse_action(text: str, objects: Collection[str]) -> Step | None:
    """`ACTION(a, b)` -> (ACTION, (a, b)); `done()` -> None; `ValueError` says what is wrong."""
    match = _ACTION.match(text.strip())
    if match is None:
        raise ValueError("write one action as ACTION(object) or done()")
    name, inner = match.group(1), match.group(2)
    if name == "done" and not inner.strip():
        return None
    arities, known = action_arities(), set(objects)
    if name not in arities:
        raise ValueError(f"{name} is not an allowed action")
    args = tuple(a.strip() for a in inner.split(",")) if inner.strip() else ()
    if len(args) != arities[name]:
        raise ValueError(f"{name} takes {arities[name]} object(s), not {len(args)}")
    unknown = [a for a in args if a not in known]
    if unknown:
        raise ValueError(f"{', '.join(unknown)} is not an object you can name now")
    return (name, args)


def parse_step_answer(text: str, objects: Collection[str]) -> StepAnswer:
    match = re.match(r"^\s*Action:[ \t]*(.+?)\s*$", text.strip())
    if match is None:
        raise ValueError("answer with one line: 'Action: ACTION(object)'")
    return StepAnswer(parse_action(match.group(1), objects))


def parse_react_answer(text: str, objects: Collection[str]) -> StepAnswer:
    match = re.match(r"^\s*Thought:[ \t]*([^\n]*)\nAction:[ \t]*(.+?)\s*$", text.strip())
    if match is None:
        raise ValueError("answer with two lines: 'Thought: ...' then 'Action: ACTION(object)'")
    thought = match.group(1).strip(" \t")  # as the grammar: any character but a newline after the first
    if not thought or len(thought) > MAX_THOUGHT_CHARS:
        raise ValueError(f"the thought must be one line of 1 to {MAX_THOUGHT_CHARS} characters")
    return StepAnswer(parse_action(match.group(2), objects), thought)
