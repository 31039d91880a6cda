"""Step-wise answers over an environment's action vocabulary (`envs/base.ActionVocabulary`): how the
vocabulary is shown, the answer grammars, and their parsers.

An environment that names its actions (VirtualHome: EAI's actions and arities, the task's object
names) hands the step-wise methods its vocabulary; P-RAG and EmbodiedRAG answer in their own forms
over it:

    a P-RAG step            Action: PUTBACK(cup, sink)
    an EmbodiedRAG step     Thought: the cup goes in the sink
                            Action: PUTBACK(cup, sink)

and `done()` ends the episode. Every grammar is generated from the vocabulary's arities and the
object names an answer may use, and each parser accepts exactly what its grammar derives.

LLM-Planner's plans over named actions (`graphs/llm_planner/named/`) have a grammar of their own,
and show the vocabulary and check the object names with this module's `vocabulary_text`, `by_arity`
and `check_names`.

How the vocabulary is shown (`vocabulary_text`). EAI's prompt lists its supported actions one per
line in a fixed order, and with the 0.5B 68 of 100 open-loop answers copied that list in that order.
The grammar already guarantees that only these actions are written, so the prompts show them as a
reference, not as something shaped like an answer: grouped by how many objects they take,
alphabetically within a group, each with the environment's one-line meaning, on one line per group,
under a heading that says to use only what the goals need. This was chosen from that failure's form
alone, before any run of these methods on EAI's tasks.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from helper_agent.envs.base import ActionVocabulary
from helper_agent.program.cfg import Expr, Grammar, Ref, Repeat, alt, chars, seq

Step = tuple[str, tuple[str, ...]]  # (ACTION, object names)
DONE = "done()"
MAX_THOUGHT_CHARS = 120
_NAME = re.compile(r"^[a-z0-9_-]+$")
_ACTION = re.compile(r"^([A-Za-z_]+)\(([^()\n]*)\)$")
#: a one-line thought: a first character that is no space, then up to MAX_THOUGHT_CHARS in all
THOUGHT: Expr = seq(chars("\n \t", negated=True), Repeat(chars("\n", negated=True), 0, MAX_THOUGHT_CHARS - 1))


def vocabulary_text(vocabulary: ActionVocabulary) -> str:
    """The actions, grouped by the number of objects they take (see the module docstring)."""
    lines = ["Vocabulary (use only the actions the goals need, in the order the task needs them):"]
    meaning = vocabulary.meanings
    for n, what in ((0, "no object"), (1, "one object"), (2, "two objects")):
        names = sorted(a for a, k in vocabulary.actions.items() if k == n)
        if names:
            shown = [f"{a} ({meaning[a].lower()})" if a in meaning else a for a in names]
            lines.append(f"- with {what}: " + "; ".join(shown))
    return "\n".join(lines)


def by_arity(vocabulary: ActionVocabulary) -> dict[int, list[str]]:
    """The action names taking 0, 1 and 2 objects, each list sorted."""
    chosen = sorted(vocabulary.actions)
    return {n: [a for a in chosen if vocabulary.actions[a] == n] for n in (0, 1, 2)}


def check_names(names: Sequence[str]) -> list[str]:
    """The object names, checked: each must be one token an answer can spell (`[a-z0-9_-]+`)."""
    bad = [n for n in names if not _NAME.match(n)]
    if bad:
        raise ValueError(f"object names an answer cannot spell: {', '.join(bad)}")
    return list(dict.fromkeys(names))


def step_text(step: Step | None) -> str:
    """`PUTBACK(cup, sink)`; `done()` for None."""
    if step is None:
        return DONE
    return f"{step[0]}({', '.join(step[1])})"


# ------------------------------------------------------------------------------ grammars
def _action_rule(vocabulary: ActionVocabulary, objects: Sequence[str], exclude: Collection[str],
                 refuse: Collection[Step] = ()) -> tuple[Expr, dict[str, Expr]]:
    """`done()` or an action: the names in `exclude` not at all, the steps in `refuse` not with those
    objects (the grammar spells out the allowed objects of a refused action's name)."""
    arity = by_arity(vocabulary)
    refused: dict[str, set[tuple[str, ...]]] = {}
    for name, args in refuse:
        refused.setdefault(name, set()).add(tuple(args))
    rules: dict[str, Expr] = {}
    forms: list[Expr] = [alt(DONE)]
    objects = check_names(objects) if objects else []
    if objects:
        rules["obj"] = alt(*objects)
    for n in (0, 1, 2):
        names = [a for a in arity[n] if a not in exclude]
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


def step_rules(vocabulary: ActionVocabulary, objects: Sequence[str], exclude: Collection[str] = (),
               refuse: Collection[Step] = ()) -> Grammar:
    """`Action: ACTION(obj, ...)` or `Action: done()` (P-RAG's step); `refuse`: steps not allowed now."""
    action, rules = _action_rule(vocabulary, objects, exclude, refuse)
    return Grammar({"root": seq("Action: ", Ref("action")), "action": action, **rules})


def react_rules(vocabulary: ActionVocabulary, objects: Sequence[str], exclude: Collection[str] = (),
                refuse: Collection[Step] = ()) -> Grammar:
    """`Thought: <one line>` then `Action: ...` (EmbodiedRAG's ReAct step; P-RAG's with `answer=thought`)."""
    action, rules = _action_rule(vocabulary, objects, exclude, refuse)
    return Grammar({
        "root": seq("Thought: ", Ref("thought"), "\nAction: ", Ref("action")),
        "thought": THOUGHT, "action": action, **rules,
    })


# ------------------------------------------------------------------------------ parsers
@dataclass(frozen=True)
class StepAnswer:
    step: Step | None  # None: done()
    thought: str = ""


def parse_action(text: str, vocabulary: ActionVocabulary, objects: Collection[str]) -> Step | None:
    """`ACTION(a, b)` -> (ACTION, (a, b)); `done()` -> None; `ValueError` says what is wrong."""
    match = _ACTION.match(text.strip())
    if match is None:
        raise ValueError("write one action as ACTION(object) or done()")
    name, inner = match.group(1), match.group(2)
    if name == "done" and not inner.strip():
        return None
    arities, known = vocabulary.actions, set(objects)
    if name not in arities:
        raise ValueError(f"{name} is not an allowed action")
    args = tuple(a.strip() for a in inner.split(",")) if inner.strip() else ()
    if len(args) != arities[name]:
        raise ValueError(f"{name} takes {arities[name]} object(s), not {len(args)}")
    unknown = [a for a in args if a not in known]
    if unknown:
        raise ValueError(f"{', '.join(unknown)} is not an object you can name now")
    return (name, args)


def parse_step_answer(text: str, vocabulary: ActionVocabulary, objects: Collection[str]) -> StepAnswer:
    match = re.match(r"^\s*Action:[ \t]*(.+?)\s*$", text.strip())
    if match is None:
        raise ValueError("answer with one line: 'Action: ACTION(object)'")
    return StepAnswer(parse_action(match.group(1), vocabulary, objects))


def parse_react_answer(text: str, vocabulary: ActionVocabulary, objects: Collection[str]) -> StepAnswer:
    match = re.match(r"^\s*Thought:[ \t]*([^\n]*)\nAction:[ \t]*(.+?)\s*$", text.strip())
    if match is None:
        raise ValueError("answer with two lines: 'Thought: ...' then 'Action: ACTION(object)'")
    thought = match.group(1).strip(" \t")  # as the grammar: any character but a newline after the first
    if not thought or len(thought) > MAX_THOUGHT_CHARS:
        raise ValueError(f"the thought must be one line of 1 to {MAX_THOUGHT_CHARS} characters")
    return StepAnswer(parse_action(match.group(2), vocabulary, objects), thought)
