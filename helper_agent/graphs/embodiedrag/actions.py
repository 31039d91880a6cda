"""The ReAct action vocabulary: object-level actions on entity ids, their grammar and parser.

The planner answers every step with two lines:

    Thought: <one line>
    Action: pickup(Mug_2)

Actions name an entity of the scene graph the prompt shows (`goto`, `pickup`, `place`, ...), an
object class not seen yet (`search(Knife)`), or nothing (`put_down()`, `done()`). Each runs as one
subgoal of the shared executor (`tools/executor.py`) with the object already bound to the named
entity, so walking there, the pre-condition checks and the macros (clean, cook, toast, fill) are
the same as for the other methods.

`react_grammar(ids, classes)` is generated from `ACTIONS` and the ids shown, so a constrained model
can only name what it sees; `parse_react` accepts exactly the strings the grammar does (and reports
why anything else is rejected, for the bounded retry).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

from helper_agent.graphs.object_actions import (
    ACTION_LINE,
    Affordance,
    ArgKind,
    ChosenAction,
    HandNeed,
    StateNeed,
    answer_cfg,
    parse_action,
)
from helper_agent.graphs.object_actions import action_help as shared_action_help
from helper_agent.program.cfg import Grammar, Ref, Repeat, alt, chars, opt, seq
from helper_agent.program.subgoals import SubgoalKind


@dataclass(frozen=True)
class ActionSpec:
    name: str
    arg: ArgKind
    kind: SubgoalKind | None  # the executor subgoal it runs (None: handled by the graph)
    help: str
    needs: Affordance | None = None  # what the named object's type must afford (`unafforded_actions`)
    hands: HandNeed | None = None  # what the agent must hold (`hand_refusals`); pickup puts down first
    state: StateNeed | None = None  # the state the named object must be in (`state_refusals`)


ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec("goto", "id", SubgoalKind.NAVIGATE, "walk to the object"),
    ActionSpec("pickup", "id", SubgoalKind.PICKUP, "pick the object up", "pickupable", "not_it"),
    ActionSpec("place", "id", SubgoalKind.PLACE, "put what you hold in or on the receptacle", "receptacle", "holding"),
    ActionSpec("open", "id", SubgoalKind.OPEN, "open it", "openable", state=("open", False)),
    ActionSpec("close", "id", SubgoalKind.CLOSE, "close it", "openable", state=("open", True)),
    ActionSpec("toggle_on", "id", SubgoalKind.TOGGLE_ON, "switch it on", "toggleable", state=("on", False)),
    ActionSpec("toggle_off", "id", SubgoalKind.TOGGLE_OFF, "switch it off", "toggleable", state=("on", True)),
    ActionSpec("slice", "id", SubgoalKind.SLICE, "cut it (a knife is fetched if needed)", "sliceable"),
    ActionSpec("pour", "id", SubgoalKind.POUR, "pour what you hold into it", "pour_target", "holding"),
    ActionSpec("clean", "id", SubgoalKind.CLEAN, "wash it in the sink", "pickupable"),
    ActionSpec("cook", "id", SubgoalKind.COOK, "cook it (microwave or pan on a stove)", "pickupable"),
    ActionSpec("toast", "id", SubgoalKind.TOAST, "toast a bread slice in the toaster", "pickupable"),
    ActionSpec("fill", "id", SubgoalKind.FILL_UP, "fill it with water at the sink", "pickupable"),
    ActionSpec("empty", "id", SubgoalKind.EMPTY, "pour its liquid out in the sink", "pickupable"),
    ActionSpec("put_down", "none", SubgoalKind.PUT_DOWN, "put what you hold on a free surface", hands="holding"),
    ActionSpec("search", "class", None, "look for an object class you have not seen yet"),
    ActionSpec("done", "none", None, "the task is finished"),
)
BY_NAME = {a.name: a for a in ACTIONS}

MAX_THOUGHT_CHARS = 120


@dataclass(frozen=True)
class ReactAnswer(ChosenAction):
    thought: str = ""


class ReactParseError(ValueError):
    """The answer is not `Thought: ...` then `Action: name(arg)` with a known action and argument."""


def action_help() -> str:
    """The action list for the system prompt."""
    return shared_action_help(ACTIONS)


def react_cfg(ids: list[str], classes: list[str], exclude: Collection[str] = ()) -> Grammar:
    """The ReAct answer grammar as data; id actions only when some id is shown; never the actions
    in `exclude`."""
    return answer_cfg(ACTIONS, ids, classes, exclude, seq("Thought: ", Ref("thought"), "\nAction: ", Ref("action")),
                      thought=seq(chars("\n \t", negated=True), Repeat(chars("\n", negated=True), 0, MAX_THOUGHT_CHARS - 1)))


def react_grammar(ids: list[str], classes: list[str], exclude: Collection[str] = ()) -> str:
    """GBNF for one ReAct answer (`react_cfg` rendered for llama.cpp)."""
    return react_cfg(ids, classes, exclude).to_gbnf()


_ANSWER = re.compile(rf"^\s*Thought:[ \t]*(?P<thought>[^\n]*)\n{ACTION_LINE}\s*$")


def parse_react(text: str, ids: list[str], classes: list[str]) -> ReactAnswer:
    """The answer's thought and action; `ReactParseError` says what is wrong."""
    match = _ANSWER.match(text.strip())
    if match is None:
        raise ReactParseError("answer with exactly two lines: 'Thought: ...' then 'Action: name(argument)'")
    raw = match.group("thought")
    thought = raw.strip() or raw
    if not raw or len(raw) > MAX_THOUGHT_CHARS:
        raise ReactParseError(f"the thought must be one line of 1 to {MAX_THOUGHT_CHARS} characters")
    chosen = parse_action(match, BY_NAME, ids, classes, ReactParseError, "listed in the scene graph")
    return ReactAnswer(chosen.action, chosen.arg, thought)


# ------------------------------------------------------------------------------------ self-query
def self_query_cfg(attributes: list[str], max_items: int) -> Grammar:
    """Up to `max_items` lines `- object name: attr, attr` (attributes optional), as data."""
    return Grammar({
        "root": seq(Ref("item"), Repeat(seq("\n", Ref("item")), 0, max(max_items - 1, 0))),
        "item": seq("- ", Ref("label"), opt(seq(": ", Ref("attr"), Repeat(seq(", ", Ref("attr")), 0, 3)))),
        "label": seq(chars("a-z"), Repeat(chars("a-z "), 0, 30)),
        "attr": alt(*attributes),
    })


def self_query_grammar(attributes: list[str], max_items: int) -> str:
    return self_query_cfg(attributes, max_items).to_gbnf()


_ITEM = re.compile(r"^\s*[-*]?\s*(?P<label>[A-Za-z][A-Za-z ]{0,40}?)\s*(?::\s*(?P<attrs>[A-Za-z, ]*))?\s*$")


def parse_self_query(text: str, attributes: list[str], max_items: int) -> list[tuple[str, list[str]]]:
    """(label, [attributes]) per line; unknown attributes are dropped; `ReactParseError` when none."""
    known = set(attributes)
    items: list[tuple[str, list[str]]] = []
    seen: set[str] = set()
    for line in text.splitlines():
        match = _ITEM.match(line)
        if match is None or not line.strip():
            continue
        label = " ".join(match.group("label").lower().split())
        if not label or label in seen:
            continue
        seen.add(label)
        attrs = [a.strip() for a in (match.group("attrs") or "").split(",") if a.strip() in known]
        items.append((label, attrs))
        if len(items) >= max_items:
            break
    if not items:
        raise ReactParseError("name the task's objects, one per line: '- object name: attribute, attribute'")
    return items
