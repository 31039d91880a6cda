"""The action API that LLM programs are written against, as data.

The parser checks every call against these tables and the compiler maps each method to subgoals.
Nothing here is ever called by a program: LLM output is parsed and interpreted, never executed.
"""

from __future__ import annotations

from dataclasses import dataclass

from helper_agent.program.subgoals import SubgoalKind

OBJECT_CONSTRUCTOR = "InteractionObject"
AGENT_CONSTRUCTOR = "AgentCorrective"

# InteractionObject(object_class, landmark=None, attributes=[])
CONSTRUCTOR_PARAMS = ("object_class", "landmark", "attributes")


@dataclass(frozen=True)
class MethodSpec:
    """One method of InteractionObject: its subgoal kind and its optional object parameter."""

    name: str
    kind: SubgoalKind | None  # None: expands to several subgoals (pickup_and_place)
    param: str | None = None  # name of the one object argument, if it takes one
    macro: bool = False  # expands inside the executor (moves the agent by itself)


OBJECT_METHODS: dict[str, MethodSpec] = {
    m.name: m
    for m in (
        MethodSpec("go_to", SubgoalKind.NAVIGATE),
        MethodSpec("pickup", SubgoalKind.PICKUP),
        MethodSpec("place", SubgoalKind.PLACE, "receptacle"),
        MethodSpec("put_down", SubgoalKind.PUT_DOWN),
        MethodSpec("pickup_and_place", None, "receptacle"),
        MethodSpec("open", SubgoalKind.OPEN),
        MethodSpec("close", SubgoalKind.CLOSE),
        MethodSpec("toggle_on", SubgoalKind.TOGGLE_ON),
        MethodSpec("toggle_off", SubgoalKind.TOGGLE_OFF),
        MethodSpec("slice", SubgoalKind.SLICE),
        MethodSpec("pour", SubgoalKind.POUR, "target"),
        MethodSpec("fill_up", SubgoalKind.FILL_UP, macro=True),
        MethodSpec("empty", SubgoalKind.EMPTY, macro=True),
        MethodSpec("clean", SubgoalKind.CLEAN, macro=True),
        MethodSpec("cook", SubgoalKind.COOK, macro=True),
        MethodSpec("toast", SubgoalKind.TOAST, macro=True),
    )
}

# Corrective agent moves: bare calls `move_back()` or methods of `AgentCorrective()`.
AGENT_METHODS: dict[str, SubgoalKind] = {
    "move_back": SubgoalKind.MOVE_BACK,
    "move_closer": SubgoalKind.MOVE_CLOSER,
    "move_alternate_viewpoint": SubgoalKind.MOVE_ALTERNATE_VIEWPOINT,
    "do_nothing": SubgoalKind.DO_NOTHING,
}

# attribute (desired end state) -> the object method that achieves it, in the order they are applied
ATTRIBUTE_METHODS: dict[str, str] = {
    "sliced": "slice",
    "clean": "clean",
    "cooked": "cook",
    "toasted": "toast",
    "filled": "fill_up",
}

# spellings small models use for the same end states
ATTRIBUTE_SYNONYMS: dict[str, str] = {
    "slice": "sliced",
    "slices": "sliced",
    "cut": "sliced",
    "chopped": "sliced",
    "cleaned": "clean",
    "washed": "clean",
    "rinsed": "clean",
    "cook": "cooked",
    "boiled": "cooked",
    "fried": "cooked",
    "toast": "toasted",
    "fill": "filled",
    "full": "filled",
    "filled_with_water": "filled",
    "filledwithwater": "filled",
    "filled_with_liquid": "filled",
    "water": "filled",
}

API_NAMES = frozenset({OBJECT_CONSTRUCTOR, AGENT_CONSTRUCTOR, *AGENT_METHODS})

# Used only when the catalog gives no `openable` flag (AI2-THOR's openable object types).
OPENABLE_FALLBACK = frozenset(
    {
        "Blinds",
        "Book",
        "Box",
        "Cabinet",
        "Drawer",
        "Fridge",
        "Kettle",
        "Laptop",
        "LaundryHamper",
        "Microwave",
        "Safe",
        "ShowerCurtain",
        "ShowerDoor",
        "Toilet",
    }
)

# Limits on what one program may do.
MAX_PROGRAM_CHARS = 8000
MAX_LOOP_LENGTH = 20
MAX_LOOP_ITERATIONS = 400  # loop bodies run, summed over the whole program
MAX_ACTIONS = 300  # API calls interpreted
MAX_SUBGOALS = 300  # compiled subgoals
MAX_OBJECTS = 200  # InteractionObject constructions


def method_list() -> str:
    return ", ".join(OBJECT_METHODS)


def agent_method_list() -> str:
    return ", ".join(AGENT_METHODS)


def normalise_attribute(name: str) -> str | None:
    """The canonical attribute for a spelling, or None if it names no supported end state."""
    key = name.strip().lower().replace("-", "_").replace(" ", "_")
    if key in ATTRIBUTE_METHODS:
        return key
    return ATTRIBUTE_SYNONYMS.get(key) or ATTRIBUTE_SYNONYMS.get(key.replace("_", ""))
