"""A whole sequence of named actions as one JSON object, over the vocabulary of the environment an
agent is handed (`envs/base.ActionVocabulary`): its grammar, its parser, its checks, its rendering.

    {
      "WALK": ["bedroom"],
      "SWITCHON": ["floor_lamp"]
    }

Keys are action names and values their object lists, one step per line, in execution order. It is
the answer form of EAI's action-sequencing task (the JSON its prompt asks for and its evaluator
reads), written here from the vocabulary alone: the actions and their number of objects, and the
object names an action may take. HELPER writes it on such an environment (`graphs/helper/sequence`);
a benchmark that scores such answers renders executed steps with `render`. Under `sequence_rules`
an answer cannot name an unknown action or object or give an action the wrong number of objects; it
can still be wrong, out of order or incomplete.

A JSON parser keeps only the last of repeated keys, so `parse_steps` reads every `"ACTION": [...]`
pair in order instead, repeats kept (WALK, WALK, ... is a sequence, not one step).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from helper_agent.envs.base import ActionVocabulary
from helper_agent.program.cfg import Grammar, Ref, Repeat, alt, seq

Step = tuple[str, tuple[str, ...]]
"""One step: (ACTION, (object, ...))."""

DEFAULT_MAX_STEPS = 40


def sequence_rules(vocabulary: ActionVocabulary, max_steps: int = DEFAULT_MAX_STEPS, *,
                   min_steps: int = 1, only: Sequence[Step] | None = None) -> Grammar:
    """The answer grammar: `{"ACTION": ["obj", ...], ...}`, one step per line, `min_steps..max_steps`
    steps (bounded, so a small model cannot run on), over `vocabulary`'s actions (by their number of
    objects: none, one or two) and objects; with `only`, over those steps alone (a writer choosing
    among subgoals, `graphs/declarations.py`)."""
    if only is not None:
        if not only:
            raise ValueError("no step to write")
        step = alt(*(render(list([s]))[2:-2] for s in dict.fromkeys(only)))
        return Grammar({"step": step, "root": seq("{\n", Ref("step"), Repeat(seq(",\n", Ref("step")),
                                                                             max(min_steps - 1, 0), max_steps - 1), "\n}")})
    objects = list(vocabulary.objects)
    if not objects:
        raise ValueError("the environment offers no object an action may name")
    quoted = lambda names: alt(*(json.dumps(n) for n in names))  # noqa: E731 - the JSON string of each name
    by_arity = {n: [a for a, k in vocabulary.actions.items() if k == n] for n in (0, 1, 2)}
    rules = {"obj": quoted(objects)}
    forms = []
    for n in (0, 1, 2):
        if not by_arity[n]:
            continue
        rules[f"act{n}"] = quoted(by_arity[n])
        if n == 0:
            forms.append(seq(Ref("act0"), ": []"))
        elif n == 1:
            forms.append(seq(Ref("act1"), ": [", Ref("obj"), "]"))
        else:
            forms.append(seq(Ref("act2"), ": [", Ref("obj"), ", ", Ref("obj"), "]"))
    rules["step"] = seq("  ", alt(*forms))
    rules["root"] = seq("{\n", Ref("step"), Repeat(seq(",\n", Ref("step")), max(min_steps - 1, 0), max_steps - 1), "\n}")
    return Grammar(rules)


def sequence_grammar(vocabulary: ActionVocabulary, max_steps: int = DEFAULT_MAX_STEPS, *, min_steps: int = 1,
                     only: Sequence[Step] | None = None) -> str:
    """GBNF for one answer (`sequence_rules`), for grammar-constrained decoding."""
    return sequence_rules(vocabulary, max_steps, min_steps=min_steps, only=only).to_gbnf()


_STEP = re.compile(r'"([A-Za-z_]+)"\s*:\s*\[([^\[\]]*)\]')
_ARG = re.compile(r'"((?:[^"\\]|\\.)*)"')


def parse_steps(text: str) -> list[Step]:
    """Every `"ACTION": [args]` pair of an answer, in order, duplicates kept (a JSON parser keeps one)."""
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`").removeprefix("json")
    return [(m.group(1).upper(), tuple(json.loads(f'"{a}"') for a in _ARG.findall(m.group(2)))) for m in _STEP.finditer(body)]


def problems(steps: Sequence[Step], vocabulary: ActionVocabulary, only: Sequence[Step] | None = None) -> list[str]:
    """Why an answer could not be executed as written (empty when it could): for a bounded retry.
    With `only`, a step that is not one of those is refused too."""
    if not steps:
        return ["the answer has no actions"]
    if only is not None:
        allowed = set(only)
        return [f"{a} {list(o)} is not one of the subgoals open now" for a, o in steps if (a, tuple(o)) not in allowed]
    arities, known = vocabulary.actions, set(vocabulary.objects)
    found = []
    for action, args in steps:
        if action not in arities:
            found.append(f"{action} is not a supported action")
        elif len(args) != arities[action]:
            found.append(f"{action} takes {arities[action]} object(s), not {len(args)}")
        found += [f"{a!r} is not one of the relevant objects" for a in args if a not in known]
    return found


def render(steps: Sequence[Step]) -> str:
    """Steps in the answer form (one key per step, in order, as the grammar writes them)."""
    body = ",\n".join(f"  {json.dumps(a)}: [{', '.join(json.dumps(x) for x in args)}]" for a, args in steps)
    return "{\n" + body + "\n}"
