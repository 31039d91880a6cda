"""TEACh's action vocabulary as data: ids, names, types and the compact 0-35 index.

TEACh game files identify an action by ``action_id`` (Forward = 2, Pickup = 200, Text = 100, ...);
EDH/TfD driver actions carry both the id and ``action_idx``, a dense renumbering used by learned
models. Only the ``AGENT_ACTIONS`` subset is available to an agent at inference time, and of those
``OBJECT_INTERACTION_ACTIONS`` take an (x, y) point on the egocentric image.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from helper_agent.world.actions import INTERACTION_ACTIONS, NAVIGATION_ACTIONS


@dataclass(frozen=True)
class TeachAction:
    """One entry of TEACh's action table."""

    action_id: int
    action_name: str
    action_type: str
    action_idx: int
    pose_delta: tuple[float, ...] | None = None

    @property
    def is_object_interaction(self) -> bool:
        return self.action_type == "ObjectInteraction"


# (action_id, action_name, action_type, action_idx, pose_delta)
_TABLE: tuple[tuple[int, str, str, int, tuple[float, ...] | None], ...] = (
    (0, "Stop", "Motion", 0, (0, 0, 0, 0, 0, 0)),
    (1, "Move to", "Motion", 1, ()),
    (2, "Forward", "Motion", 2, (0.25, 0, 0, 0, 0, 0)),
    (3, "Backward", "Motion", 3, (-0.25, 0, 0, 0, 0, 0)),
    (4, "Turn Left", "Motion", 4, (0, 0, 0, 0, 0, 90)),
    (5, "Turn Right", "Motion", 5, (0, 0, 0, 0, 0, -90)),
    (6, "Look Up", "Motion", 6, (0, 0, 0, 0, -30, 0)),
    (7, "Look Down", "Motion", 7, (0, 0, 0, 0, 30, 0)),
    (8, "Pan Left", "Motion", 8, (0, 0.25, 0, 0, 0, 0)),
    (9, "Pan Right", "Motion", 9, (0, -0.25, 0, 0, 0, 0)),
    (10, "Move Up", "Motion", 10, (0, 0, 0.25, 0, 0, 0)),
    (11, "Move Down", "Motion", 11, (0, 0, -0.25, 0, 0, 0)),
    (12, "Double Forward", "Motion", 12, (0.5, 0, 0, 0, 0, 0)),
    (13, "Double Backward", "Motion", 13, (-0.5, 0, 0, 0, 0, 0)),
    (300, "Navigation", "MapGoal", 14, None),
    (200, "Pickup", "ObjectInteraction", 15, None),
    (201, "Place", "ObjectInteraction", 16, None),
    (202, "Open", "ObjectInteraction", 17, None),
    (203, "Close", "ObjectInteraction", 18, None),
    (204, "ToggleOn", "ObjectInteraction", 19, None),
    (205, "ToggleOff", "ObjectInteraction", 20, None),
    (206, "Slice", "ObjectInteraction", 21, None),
    (207, "Dirty", "ObjectInteraction", 22, None),
    (208, "Clean", "ObjectInteraction", 23, None),
    (209, "Fill", "ObjectInteraction", 24, None),
    (210, "Empty", "ObjectInteraction", 25, None),
    (211, "Pour", "ObjectInteraction", 26, None),
    (212, "Break", "ObjectInteraction", 27, None),
    (400, "BehindAboveOn", "ChangeCamera", 28, None),
    (401, "BehindAboveOff", "ChangeCamera", 29, None),
    (500, "OpenProgressCheck", "ProgressCheck", 30, None),
    (501, "SelectOid", "ProgressCheck", 31, None),
    (502, "SearchObject", "ProgressCheck", 32, None),
    (100, "Text", "Keyboard", 33, None),
    (101, "Speech", "Audio", 34, None),
    (102, "Beep", "Audio", 35, None),
)

ACTIONS: tuple[TeachAction, ...] = tuple(TeachAction(*row) for row in _TABLE)
ACTIONS_BY_ID: dict[int, TeachAction] = {a.action_id: a for a in ACTIONS}
ACTIONS_BY_NAME: dict[str, TeachAction] = {a.action_name: a for a in ACTIONS}
ACTIONS_BY_IDX: dict[int, TeachAction] = {a.action_idx: a for a in ACTIONS}

#: Actions a TEACh agent may predict during EDH/TfD inference.
AGENT_ACTIONS: tuple[str, ...] = ("Stop", *NAVIGATION_ACTIONS, *INTERACTION_ACTIONS)
#: Agent actions that need an object (a point on the egocentric frame).
OBJECT_INTERACTION_ACTIONS: frozenset[str] = frozenset(INTERACTION_ACTIONS)
#: Agent actions that move or turn the body or camera.
MOTION_ACTIONS: frozenset[str] = frozenset(AGENT_ACTIONS) - OBJECT_INTERACTION_ACTIONS - {"Stop"}

#: TEACh agent ids.
COMMANDER_ID = 0
DRIVER_ID = 1
AGENTS: dict[int, str] = {COMMANDER_ID: "Commander", DRIVER_ID: "Driver"}
STATUS: dict[int, str] = {0: "Success", 1: "Failure"}


def action_by_name(name: str) -> TeachAction:
    """The action called ``name`` (TEACh spelling, e.g. ``"Turn Left"``); KeyError if unknown."""
    try:
        return ACTIONS_BY_NAME[name]
    except KeyError:
        raise KeyError(f"unknown TEACh action name {name!r}") from None


def action_by_id(action_id: int) -> TeachAction:
    """The action with TEACh ``action_id``; KeyError if unknown."""
    try:
        return ACTIONS_BY_ID[action_id]
    except KeyError:
        raise KeyError(f"unknown TEACh action id {action_id!r}") from None


def action_id(name: str) -> int:
    return action_by_name(name).action_id


def action_name(action_id_: int) -> str:
    return action_by_id(action_id_).action_name


def action_idx(action_id_: int) -> int:
    """The dense 0-35 index TEACh stores as ``action_idx`` for ``action_id``."""
    return action_by_id(action_id_).action_idx


def default_definitions() -> dict[str, Any]:
    """The ``definitions`` block of a TEACh game file (agents, actions, status), as TEACh writes it."""
    actions: list[dict[str, Any]] = []
    for a in ACTIONS:
        entry: dict[str, Any] = {
            "action_id": a.action_id,
            "action_name": a.action_name,
            "action_type": a.action_type,
        }
        if a.action_type == "Motion":
            entry["pose_delta"] = list(a.pose_delta or ())
        elif a.action_type == "MapGoal":
            entry.update(start_x=-1, start_y=-1, end_x=-1, end_y=-1)
        elif a.action_type == "ObjectInteraction":
            entry.update(x=-1, y=-1)
        elif a.action_type == "ProgressCheck":
            entry["query"] = ""
        elif a.action_type == "Keyboard":
            entry["utterance"] = ""
        elif a.action_name == "Speech":
            entry.update(utterance="", file_name="")
        elif a.action_name == "Beep":
            entry["repeat"] = 3
        actions.append(entry)
    return {
        "agents": [
            {"agent_id": COMMANDER_ID, "agent_name": "Commander", "agent_type": 0},
            {"agent_id": DRIVER_ID, "agent_name": "Driver", "agent_type": 1},
        ],
        "actions": actions,
        "status": [{"status_id": k, "status_name": v} for k, v in STATUS.items()],
    }
