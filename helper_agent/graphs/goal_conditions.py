"""The goal conditions a task states, checked by the agent against what the environment shows.

A task may state its goal as conditions on the end state rather than as a wish (EAI's VirtualHome
tasks do, in the prompt every model is given):

    Node goals are:
    dishwasher is ON
    Edge goals are:
    plate is INSIDE to dishwasher
    character is HOLDS_RH to cellphone
    Action goals are:
    The following action(s) should be included:
    LOOKAT or WATCH

`stated_goals` reads those lines from the request text (`<object> is <STATE>`,
`<object> is <RELATION> to <other>`, and under an action heading one line per action to include, its
alternatives joined by "or" or "|", in the order they must appear); any other line is ignored. `unmet`
compares them with what the environment shows now (`envs/base.ShowsFacts`: `(object, STATE)` and
`(object, RELATION, other)` facts) and with the actions the agent itself has executed, and returns
each condition that does not hold yet, worded as the request worded it. That is the closed loop's
own check (idea (a) of issue 53): a planner told which stated conditions are still unmet can write
the rest. It is the agent's reading of its task and its observation; the benchmark's evaluator is
never called and its verdict never seen (a state condition the evaluator would read otherwise, such as
one it maps to another object id, is simply reported as unmet or met by this reading).

Why a line form and not EAI's goal table: an agent gets the task as text; the goal table is the
evaluator's.

`achieving_steps` turns unmet conditions into the steps that make them true, from what the
environment says its actions do (`envs/base.ActionVocabulary.effects`, VirtualHome's simulator's
effects): "computer is ON" into `SWITCHON computer`. A small model told only "Goals not met yet:
computer is ON" re-plans walks (issue 53's dev slices), and still does when the step is named beside
the condition; given the steps as its prompt's step-by-step instructions, for the task and for its
examples alike (`goal_instructions`), it writes them into its plans. The mapping is the
environment's semantics, the same for every task; no task's data chose it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from helper_agent.envs.base import ShowsFacts

#: One step: an action and its objects.
Step = tuple[str, tuple[str, ...]]

_EDGE = re.compile(r"^(\S+) is ([A-Z_]+) to (\S+)$")
_NODE = re.compile(r"^(\S+) is ([A-Z_]+)$")
_ACTION_LINE = re.compile(r"^[A-Z_]+(?:\s*(?:\bor\b|\|)\s*[A-Z_]+)*$")
_ACTION_HEADING = re.compile(r"^action goals", re.I)
_HEADING = re.compile(r"^\w[\w ]* goals are:?$", re.I)


@dataclass(frozen=True)
class StatedGoals:
    """What a request states the end must satisfy."""

    states: tuple[tuple[str, str], ...] = ()  # (object, STATE)
    relations: tuple[tuple[str, str, str], ...] = ()  # (object, RELATION, other)
    actions: tuple[tuple[str, ...], ...] = ()  # in order; each: alternatives, one of which must be done
    objects: tuple[str, ...] = field(default=())  # every object the conditions name, in order

    def __bool__(self) -> bool:
        return bool(self.states or self.relations or self.actions)


def stated_goals(request: str) -> StatedGoals:
    """The goal conditions `request` states (see the module docstring); empty when it states none."""
    states: list[tuple[str, str]] = []
    relations: list[tuple[str, str, str]] = []
    actions: list[tuple[str, ...]] = []
    in_actions = False
    for raw in request.splitlines():
        line = raw.strip()
        if not line or set(line) == {"-"}:
            continue
        if _HEADING.match(line):
            in_actions = bool(_ACTION_HEADING.match(line))
            continue
        if edge := _EDGE.match(line):
            relations.append((edge.group(1), edge.group(2), edge.group(3)))
        elif node := _NODE.match(line):
            states.append((node.group(1), node.group(2)))
        elif in_actions and _ACTION_LINE.match(line):
            alternatives = tuple(dict.fromkeys(a for a in re.split(r"\s*(?:\bor\b|\|)\s*", line) if a))
            # EAI's prompt states each action goal twice ("LOOKAT or WATCH", then "LOOKAT|WATCH")
            if not actions or set(actions[-1]) != set(alternatives):
                actions.append(alternatives)
    named = [o for o, _ in states] + [x for a, _, b in relations for x in (a, b)]
    return StatedGoals(tuple(dict.fromkeys(states)), tuple(dict.fromkeys(relations)), tuple(actions),
                       tuple(dict.fromkeys(named)))


def unmet(goals: StatedGoals, facts: Collection[tuple[str, ...]], executed: Sequence[str]) -> list[str]:
    """The stated conditions that do not hold: states and relations against `facts`, action goals
    against the executed actions' names (each after the one before it, as the request orders them)."""
    missing = [line for line, fact in _worded(goals) if fact not in facts]
    done = [a.upper() for a in executed]
    position = 0
    for alternatives in goals.actions:
        found = next((i for i in range(position, len(done)) if done[i] in alternatives), None)
        if found is None:
            missing.append("do " + " or ".join(alternatives))
        else:
            position = found + 1
    return missing


def unmet_now(env: Any, goals: StatedGoals, executed: Sequence[str]) -> list[str] | None:
    """`unmet` on what `env` shows now; None for an environment that shows no facts (no check)."""
    if not goals or not isinstance(env, ShowsFacts):
        return None
    return unmet(goals, env.scene_facts(), executed)


@lru_cache(maxsize=256)
def _pattern(effect: str) -> re.Pattern[str]:
    """`{0} is ON to {1}` as a pattern whose groups are the action's objects, in order. A named
    placeholder (`{held}`: the embedded world's Place puts what the robot holds, an object the
    action does not take) matches any object and names none of the step's."""
    parts = re.split(r"\{(\w+)\}", effect)
    regex = "".join(re.escape(p) if i % 2 == 0 else f"(?P<o{p}>\\S+)" if p.isdigit() else r"\S+"
                    for i, p in enumerate(parts))
    return re.compile(f"^{regex}$")


def _matches(condition: str, effects: Mapping[str, Sequence[str]], arities: Mapping[str, int],
             objects: Collection[str]) -> list[tuple[str, tuple[str, ...] | None]]:
    """The actions whose effect is `condition`, each with its objects (None: the effect leaves
    them unnamed, as "character is SITTING" leaves what to sit on), in the environment's order."""
    found: list[tuple[str, tuple[str, ...] | None]] = []
    for action, lines in effects.items():
        for line in lines:
            match = _pattern(line).match(condition)
            if match is None:
                continue
            named = match.groupdict()
            arity = arities.get(action, len(named))
            if len(named) < arity:
                found.append((action, None))
            elif all(f"o{i}" in named and named[f"o{i}"] in objects for i in range(arity)):
                found.append((action, tuple(named[f"o{i}"] for i in range(arity))))
            break
    return found


def achieving_steps(conditions: Sequence[str], effects: Mapping[str, Sequence[str]], arities: Mapping[str, int],
                    objects: Collection[str]) -> dict[str, Step]:
    """Each condition's step that makes it true, by the environment's `effects` (ACTION -> the
    condition lines it brings about): a condition no action brings about, or none on objects the
    agent may name, has none. Where two actions would do (SIT or LIE for "character is ON to sofa"),
    the one that also brings about another of `conditions` is taken, else the first the environment
    lists; a condition whose action leaves its object unnamed ("character is SITTING") takes the
    step that action has for another condition ("SIT sofa")."""
    options = {c: _matches(c, effects, arities, objects) for c in conditions}
    bound = [(c, a, o) for c, found in options.items() for a, o in found if o is not None]
    chosen: dict[str, Step] = {}
    for condition, found in options.items():
        steps = [(a, o) for a, o in found if o is not None]
        if steps:
            also = [(a, o) for a, o in steps
                    if any(a in {x for x, _ in options[other]} for other in conditions if other != condition)]
            chosen[condition] = (also or steps)[0]
        else:
            unnamed = {a for a, o in found if o is None}
            other = next(((a, o) for c, a, o in bound if a in unnamed and c != condition), None)
            if other is not None:
                chosen[condition] = other
    return chosen


def _worded(goals: StatedGoals) -> list[tuple[str, tuple[str, ...]]]:
    """Each stated state and relation as the request words it, with the fact it stands for."""
    return ([(f"{o} is {s}", (o, s)) for o, s in goals.states]
            + [(f"{a} is {r} to {b}", (a, r, b)) for a, r, b in goals.relations])


def conditions(goals: StatedGoals) -> list[str]:
    """Every stated state and relation, worded as `unmet` words them."""
    return [line for line, _ in _worded(goals)]


def goal_instructions(request: str, effects: Mapping[str, Sequence[str]], arities: Mapping[str, int],
                      objects: Collection[str], keep: Callable[[str, Step], bool] | None = None,
                      settled_last: Sequence[str] = ()) -> list[str]:
    """Step-by-step instructions for a task that states its goal (LLM-Planner's "Step-by-step
    instructions", which ALFRED's annotators wrote and EAI's tasks lack): the step that makes each
    stated condition true, once each, in the order the conditions are stated, then each action goal
    ("Do LOOKAT or WATCH."). A step whose effect is one of `settled_last` (what moving about
    undoes, `ActionVocabulary.settled_last`) comes after the others, in that order.
    `keep(condition, step)` leaves out the rest: for the task at hand the conditions that already
    hold, for a solved example the steps its plan did not take. Empty for a request that states no
    goal."""
    goals = stated_goals(request)
    steps = achieving_steps(conditions(goals), effects, arities, objects)
    chosen = [step for condition, step in steps.items() if keep is None or keep(condition, step)]
    chosen.sort(key=lambda step: settling(step[0], effects, settled_last))
    lines = [f"{a} {' '.join(o)}." for a, o in dict.fromkeys(chosen)]
    return lines + [f"Do {' or '.join(alternatives)}." for alternatives in goals.actions]


def settling(action: str, effects: Mapping[str, Sequence[str]], settled_last: Sequence[str]) -> int:
    """-1 for an action none of whose effects moving undoes, else the first such effect's place."""
    places = [settled_last.index(e) for e in effects.get(action, ()) if e in settled_last]
    return min(places, default=-1)
