"""A GBNF grammar for EAI's response format, built from EAI's own vocabulary and the task's objects.

EAI asks for a JSON object whose keys are action names and whose values are argument lists, in
execution order. The actions are the ones EAI's evaluator knows (`eval_utils.valid_actions`, with
its arities: the prompt's list plus e.g. SLEEP, which action goals ask for; an action the prompt
lists but the evaluator does not know, e.g. PLUGIN, would be scored as a hallucination); the
arguments are the object names the task's prompt lists, without `character`. Under this grammar an answer cannot have a parsing, hallucination or
argument-number error; it can still be wrong, out of order or incomplete.
"""

from __future__ import annotations

import json
import re

from helper_agent.envs.virtualhome import action_arities  # the environment's vocabulary (re-exported)
from helper_agent.evals.studies.eai.tasks import EaiTask
from helper_agent.program.cfg import Grammar, Ref, Repeat, alt, seq

Step = tuple[str, tuple[str, ...]]
DEFAULT_MAX_STEPS = 40




def response_rules(task: EaiTask, max_steps: int = DEFAULT_MAX_STEPS, *, min_steps: int = 1) -> Grammar:
    """The answer grammar as a `cfg.Grammar`: `{"ACTION": ["obj", ...], ...}`, one step per line,
    `min_steps..max_steps` steps (bounded, so a small model cannot run on)."""
    arities = action_arities()
    objects = list(task.arguments)
    if not objects:
        raise ValueError(f"task {task.identifier} lists no objects")
    quoted = lambda names: alt(*(json.dumps(n) for n in names))  # noqa: E731 - the JSON string of each name
    by_arity = {n: [a for a, k in arities.items() if k == n] for n in (0, 1, 2)}
    rules = {"obj": quoted(objects)}
    forms = []
    for n, tail in ((0, ": []"), (1, None), (2, None)):
        if not by_arity[n]:
            continue
        rules[f"act{n}"] = quoted(by_arity[n])
        if n == 0:
            forms.append(seq(Ref("act0"), tail))
        elif n == 1:
            forms.append(seq(Ref("act1"), ": [", Ref("obj"), "]"))
        else:
            forms.append(seq(Ref("act2"), ": [", Ref("obj"), ", ", Ref("obj"), "]"))
    rules["step"] = seq("  ", alt(*forms))
    rules["root"] = seq("{\n", Ref("step"), Repeat(seq(",\n", Ref("step")), max(min_steps - 1, 0), max_steps - 1), "\n}")
    return Grammar(rules)


def response_grammar(task: EaiTask, max_steps: int = DEFAULT_MAX_STEPS, *, min_steps: int = 1) -> str:
    """GBNF for one answer (see `response_rules`), for llama.cpp's constrained decoding."""
    return response_rules(task, max_steps, min_steps=min_steps).to_gbnf()


_STEP = re.compile(r'"([A-Za-z_]+)"\s*:\s*\[([^\[\]]*)\]')
_ARG = re.compile(r'"((?:[^"\\]|\\.)*)"')


def parse_steps(text: str) -> list[Step]:
    """Every `"ACTION": [args]` pair of an answer, in order, duplicates kept (a JSON parser keeps one)."""
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`").removeprefix("json")
    return [(m.group(1).upper(), tuple(json.loads(f'"{a}"') for a in _ARG.findall(m.group(2)))) for m in _STEP.finditer(body)]


def problems(steps: list[Step], task: EaiTask) -> list[str]:
    """Why an answer would not pass EAI's grammar checks (empty when it would): for a bounded retry."""
    if not steps:
        return ["the answer has no actions"]
    arities, known = action_arities(), set(task.arguments)
    found = []
    for action, args in steps:
        if action not in arities:
            found.append(f"{action} is not a supported action")
        elif len(args) != arities[action]:
            found.append(f"{action} takes {arities[action]} object(s), not {len(args)}")
        found += [f"{a!r} is not one of the relevant objects" for a in args if a not in known]
    return found


def render(steps: list[Step]) -> str:
    """Steps in EAI's response format (one key per step, in order, as the grammar writes them)."""
    body = ",\n".join(f"  {json.dumps(a)}: [{', '.join(json.dumps(x) for x in args)}]" for a, args in steps)
    return "{\n" + body + "\n}"


def script_line(step: Step, name_to_id: dict[str, int]) -> str:
    """A step as the simulator's script line, `[ACTION] <name> (id) ...` (what EAI's evaluator executes)."""
    action, args = step
    return " ".join([f"[{action}]", *(f"<{a}> ({name_to_id[a]})" for a in args)])
