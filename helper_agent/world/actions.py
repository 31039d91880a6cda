"""TEACh's driver actions and the result of one step.

Navigation actions move the agent on the grid; interaction actions name one object id (TEACh gives
screen coordinates that resolve to an object; we take the id directly). Every action, successful or
not, is one step.
"""

from __future__ import annotations

from dataclasses import dataclass, field

NAVIGATION_ACTIONS = (
    "Forward",
    "Backward",
    "Turn Left",
    "Turn Right",
    "Look Up",
    "Look Down",
    "Pan Left",
    "Pan Right",
)
INTERACTION_ACTIONS = (
    "Pickup",
    "Place",
    "Open",
    "Close",
    "ToggleOn",
    "ToggleOff",
    "Slice",
    "Pour",
)
ACTIONS = NAVIGATION_ACTIONS + INTERACTION_ACTIONS + ("Stop",)

# Spellings used elsewhere (AI2-THOR action names, CamelCase) mapped to TEACh's names.
ACTION_ALIASES = {
    "MoveAhead": "Forward",
    "MoveBack": "Backward",
    "RotateLeft": "Turn Left",
    "RotateRight": "Turn Right",
    "LookUp": "Look Up",
    "LookDown": "Look Down",
    "MoveLeft": "Pan Left",
    "MoveRight": "Pan Right",
    "PickupObject": "Pickup",
    "PutObject": "Place",
    "OpenObject": "Open",
    "CloseObject": "Close",
    "ToggleObjectOn": "ToggleOn",
    "ToggleObjectOff": "ToggleOff",
    "SliceObject": "Slice",
    "TurnLeft": "Turn Left",
    "TurnRight": "Turn Right",
    "PanLeft": "Pan Left",
    "PanRight": "Pan Right",
}


def canonical_action(name: str) -> str | None:
    """TEACh's name for an action, or None when it is not an action."""
    if name in ACTIONS:
        return name
    return ACTION_ALIASES.get(name)


@dataclass
class ActionResult:
    """What one step did: success, AI2-THOR-style error message, and the objects whose state changed."""

    action: str
    object_id: str | None
    success: bool
    error: str = ""
    changed: list[str] = field(default_factory=list)
