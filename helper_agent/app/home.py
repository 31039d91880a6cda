"""The home as a picture, with what a step changed highlighted.

A change is read from the environment's AI2-THOR-style object metadata before and after a step, so
it says what the household now shows, not what the program meant to do.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from helper_agent.world.render import render_top_down

# (metadata flag, what turning it on means, what turning it off means); None: not worth saying.
_NUMBERS = itertools.count(1)

_FLAGS = (
    ("isPickedUp", "held", None),
    ("isOpen", "opened", "closed"),
    ("isToggled", "switched on", "switched off"),
    ("isDirty", None, "cleaned"),
    ("isSliced", "sliced", None),
    ("simbotIsCooked", "cooked", None),
    ("isFilledWithLiquid", "filled", "emptied"),
    ("simbotIsFilledWithCoffee", "filled with coffee", None),
)


def _place(obj: dict[str, Any]) -> tuple[Any, ...]:
    position = obj.get("position") or {}
    return (tuple(obj.get("parentReceptacles") or ()), round(float(position.get("x", 0)), 2),
            round(float(position.get("z", 0)), 2))


def changes(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> dict[str, str]:
    """Object id -> what happened to it between two metadata lists ("moved", "opened, switched on")."""
    old = {obj["objectId"]: obj for obj in before}
    found: dict[str, str] = {}
    for obj in after:
        prev = old.get(obj["objectId"])
        if prev is None:
            continue
        what = [on if obj.get(flag) else off for flag, on, off in _FLAGS
                if bool(obj.get(flag)) != bool(prev.get(flag)) and (on if obj.get(flag) else off)]
        if obj.get("pickupable") and not obj.get("isPickedUp") and _place(obj) != _place(prev):
            what.insert(0, "moved")
        if what:
            found[obj["objectId"]] = ", ".join(what)
    return found


def picture(env: Any, folder: Path, highlight: dict[str, str] | None = None) -> Path:
    """A PNG of the household from above (a new file each time, so a browser never shows a cached one)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"home-{next(_NUMBERS):06d}.png"
    for old in sorted(folder.glob("home-*.png"))[:-40]:  # keep the folder small (Gradio serves copies)
        old.unlink(missing_ok=True)
    return render_top_down(env.state, path, env.catalog, highlight=highlight)
