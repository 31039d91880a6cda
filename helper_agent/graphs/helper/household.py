"""What the household shows, as short lines of text: where things are and what state they are in.

Read from any environment's AI2-THOR-style object metadata (`Environment.objects_metadata()`), so
the replanner's prompt ("what the household now shows") and the chat's `/state` use one
description. A person's correction ("you didn't put a tomato slice on the plate") is checked by the
planner against these lines, not against what the program meant to do.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

_STATES = (
    ("isPickedUp", "held"),
    ("isToggled", "on"),
    ("isOpen", "open"),
    ("isDirty", "dirty"),
    ("isSliced", "sliced"),
    ("simbotIsCooked", "cooked"),
    ("simbotIsBoiled", "boiled"),
    ("simbotIsFilledWithCoffee", "filled with coffee"),
    ("isBroken", "broken"),
)


def _type_of(object_id: str) -> str:
    return object_id.split("|", 1)[0]


def describe_object(obj: dict[str, Any]) -> str:
    """`Mug (dirty, filled with water) in Cabinet`."""
    flags = [label for key, label in _STATES if obj.get(key)]
    if obj.get("isFilledWithLiquid") and not obj.get("simbotIsFilledWithCoffee"):
        flags.append(f"filled with {obj.get('fillLiquid') or 'liquid'}")
    parents = obj.get("parentReceptacles") or []
    where = f" in {_type_of(parents[0])}" if parents else ""
    return f"{obj.get('objectType', '?')}" + (f" ({', '.join(flags)})" if flags else "") + where


def household_lines(objects: Iterable[dict[str, Any]], mentioned: str = "", limit: int = 25) -> list[str]:
    """Lines for the movable objects, any object whose state changed and any object whose class is
    named in `mentioned` (a program, a person's words); the named ones first; at most `limit` lines."""
    words = {w.lower() for w in re.findall(r"[A-Za-z]+", mentioned)}
    said = " ".join(re.findall(r"[a-z]+", mentioned.lower()))
    chosen = []
    for obj in objects:
        kind = str(obj.get("objectType", ""))
        # "CoffeeMachine" is named by "coffee machine" and by "CoffeeMachine"
        phrase = " ".join(re.findall(r"[A-Z][a-z]*", kind)).lower()
        named = kind.lower() in words or bool(phrase and re.search(rf"\b{re.escape(phrase)}\b", said))
        changed = any(obj.get(key) for key, _ in _STATES) or obj.get("isFilledWithLiquid")
        if obj.get("pickupable") or changed or named:
            chosen.append((0 if named else 1, kind, describe_object(obj)))
    chosen.sort()
    return [line for _, _, line in chosen[:limit]]
