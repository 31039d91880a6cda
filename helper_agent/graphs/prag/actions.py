"""P-RAG's step action space: the environment's own object-level actions, their grammar and parser.

Each step the model answers one line, an action on an object id the scene graph shows:

    Action: pickup(Mug_2)

The actions are the environment's interaction actions (`Pickup`, `Place`, `Open`, `Close`,
`ToggleOn`, `ToggleOff`, `Slice`, `Pour`) on one object, plus `goto(ID)` (walk next to a seen object),
`search(ObjectClass)` (walk around until an object of a class not seen yet comes into view) and
`done()`. Navigation is the only thing not spelled as a raw TEACh step: a step-wise LLM that had to
emit `Forward`/`Turn Left` would spend its whole step budget walking.

`step_grammar(ids, classes)` is generated from `ACTIONS` and the ids shown, so a constrained model
can only name what it sees; `parse_step` accepts exactly the strings the grammar does and says why
anything else is rejected (for the bounded retry).
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
from helper_agent.program.cfg import Grammar, Ref, seq


@dataclass(frozen=True)
class ActionSpec:
    name: str
    arg: ArgKind
    env_action: str | None  # the TEACh interaction action it issues (None: navigation or the graph's)
    help: str
    needs: Affordance | None = None  # what the named object's type must afford (`unafforded_actions`)
    hands: HandNeed | None = None  # what the agent must hold (`hand_refusals`)
    state: StateNeed | None = None  # the state the named object must be in (`state_refusals`)


ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec("goto", "id", None, "walk next to the object (one in view, or one seen before)"),
    ActionSpec("pickup", "id", "Pickup", "pick the object up", "pickupable", "empty"),
    ActionSpec("put", "id", "Place", "put what you hold in or on the receptacle", "receptacle", "holding"),
    ActionSpec("open", "id", "Open", "open it", "openable", state=("open", False)),
    ActionSpec("close", "id", "Close", "close it", "openable", state=("open", True)),
    ActionSpec("toggle_on", "id", "ToggleOn", "switch it on", "toggleable", state=("on", False)),
    ActionSpec("toggle_off", "id", "ToggleOff", "switch it off", "toggleable", state=("on", True)),
    ActionSpec("slice", "id", "Slice", "cut it (hold a knife)", "sliceable", "knife"),
    ActionSpec("pour", "id", "Pour", "pour what you hold into it", "pour_target", "holding"),
    ActionSpec("search", "class", None, "walk around until an object of this class you have not seen yet is in view"),
    ActionSpec("done", "none", None, "the task is finished"),
)
BY_NAME = {a.name: a for a in ACTIONS}


StepAction = ChosenAction


class StepParseError(ValueError):
    """The answer is not `Action: name(arg)` with a known action and an allowed argument."""


def action_help() -> str:
    """The action space for the system prompt (fixed text: it belongs to the cached prefix)."""
    return shared_action_help(ACTIONS)


def step_cfg(ids: list[str], classes: list[str], exclude: Collection[str] = ()) -> Grammar:
    """The answer grammar as data: id actions only when some id is shown, search only with classes,
    never the actions in `exclude`."""
    return answer_cfg(ACTIONS, ids, classes, exclude, seq("Action: ", Ref("action")))


def step_grammar(ids: list[str], classes: list[str], exclude: Collection[str] = ()) -> str:
    """GBNF for one step's answer (`step_cfg` rendered for llama.cpp)."""
    return step_cfg(ids, classes, exclude).to_gbnf()


def out_of_view(remembered: Collection[str]) -> dict[str, str]:
    """Every action but `goto` on the ids seen before and out of view now, rendered, with the reason
    a model that writes one is refused: the environment interacts only with what is in view."""
    return {f"{a.name}({i})": f"{a.name}({i}): {i} is out of view; goto({i}) first"
            for a in ACTIONS if a.arg == "id" and a.name != "goto" for i in remembered}


_ANSWER = re.compile(rf"^\s*{ACTION_LINE}\s*$")


def parse_step(text: str, ids: list[str], classes: list[str]) -> StepAction:
    """The answer's action; `StepParseError` says what is wrong."""
    match = _ANSWER.match(text.strip())
    if match is None:
        raise StepParseError("answer with exactly one line: 'Action: name(argument)'")
    return parse_action(match, BY_NAME, ids, classes, StepParseError, "in the scene graph")
