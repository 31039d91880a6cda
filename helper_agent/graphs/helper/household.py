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


def _named_classes(objects: list[dict[str, Any]], mentioned: str) -> list[str]:
    """The household's classes `mentioned` names ("tomato slice", "CoffeeMachine"), in first-seen order;
    a sliced class counts as naming its whole ("the tomato slice": the tomato too)."""
    words = {w.lower() for w in re.findall(r"[A-Za-z]+", mentioned)}
    said = " ".join(re.findall(r"[a-z]+", mentioned.lower()))
    out: list[str] = []
    for obj in objects:
        kind = str(obj.get("objectType", ""))
        phrase = " ".join(re.findall(r"[A-Z][a-z]*", kind.removesuffix("Sliced"))).lower()
        if kind.lower() in words or kind.removesuffix("Sliced").lower() in words or (
                phrase and re.search(rf"\b{re.escape(phrase)}", said)):
            out.append(kind.removesuffix("Sliced"))
    return list(dict.fromkeys(out))


def object_states(objects: Iterable[dict[str, Any]], mentioned: str, per_class: int = 3) -> list[str]:
    """What the household shows about the objects `mentioned` names, one line per class:
    "Tomato: sliced (3 slices)", "Plate: clean, empty", "Mug: dirty, empty; clean, holds nothing"
    (at most `per_class` objects each). What a correction is checked against: "you didn't put a
    tomato slice on the plate" next to "Tomato: sliced (7 slices)" says the slicing is done."""
    objects = list(objects)
    by_id = {str(o.get("objectId")): o for o in objects}
    lines = []
    for cls in _named_classes(objects, mentioned):
        whole = [o for o in objects if o.get("objectType") == cls]
        slices = [o for o in objects if o.get("objectType") == f"{cls}Sliced"]
        parts = []
        if slices:
            cooked = sum(1 for o in slices if o.get("isCooked") or o.get("simbotIsCooked"))
            parts.append(f"sliced ({len(slices)} slice{'s' if len(slices) != 1 else ''}"
                         + (f", {cooked} cooked" if cooked else "") + ")")
            held = sorted({_type_of(p) for s in slices for p in (s.get("parentReceptacles") or [])[:1]})
            if held:
                parts.append(f"slices in {', '.join(held)}")
        for obj in whole[:per_class]:
            flags = [label for key, label in _STATES if obj.get(key) and key != "isSliced"]
            if obj.get("dirtyable") and not obj.get("isDirty"):
                flags.insert(0, "clean")
            if obj.get("isFilledWithLiquid") and not obj.get("simbotIsFilledWithCoffee"):
                flags.append(f"filled with {obj.get('fillLiquid') or 'liquid'}")
            if obj.get("receptacle"):
                inside = [str(by_id[i].get("objectType")) for i in obj.get("receptacleObjectIds") or [] if i in by_id]
                flags.append(f"holds {', '.join(inside)}" if inside else "empty")
            parents = obj.get("parentReceptacles") or []
            if parents:
                flags.append(f"in {_type_of(parents[0])}")
            if flags:
                parts.append(", ".join(flags))
        if parts:
            lines.append(f"{cls}: {'; '.join(parts)}")
    return lines
