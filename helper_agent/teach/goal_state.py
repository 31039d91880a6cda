"""A minimal object-metadata state that satisfies a task (for tests, fixtures and sanity checks).

`build_goal_state(task)` creates just the objects a task's components ask for, with the required
properties, and puts relation heads into their tails (``parentReceptacles`` lists every enclosing
receptacle, innermost first, as AI2-THOR does). Sub-tasks needed N times are realised N times.
Every object gets the full set of AI2-THOR/TEACh properties the checker may read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from helper_agent.teach.tasks import AtomicComponent, SubtaskComponent, Task

_BOOL_PROPS = (
    "receptacle",
    "pickupable",
    "openable",
    "isOpen",
    "toggleable",
    "isToggled",
    "sliceable",
    "isSliced",
    "cookable",
    "isCooked",
    "dirtyable",
    "isDirty",
    "canFillWithLiquid",
    "isFilledWithLiquid",
    "breakable",
    "isBroken",
    "isPickedUp",
    "isUsedUp",
    "simbotIsCooked",
    "simbotIsBoiled",
    "simbotIsFilledWithCoffee",
    "simbotIsFilledWithWater",
    "simbotPickedUp",
)
_ALIASES = {"Sink": "SinkBasin", "SinkBasin": "Sink", "Bathtub": "BathtubBasin", "BathtubBasin": "Bathtub"}


class _Builder:
    def __init__(self, classes: Mapping[str, list[str]]) -> None:
        self.classes = classes
        self.objects: list[dict[str, Any]] = []
        self.parent: dict[str, str] = {}

    def type_for_class(self, cls: str) -> str:
        for obj_type, obj_classes in self.classes.items():
            if cls in obj_classes:
                return obj_type
        return cls

    def new_object(self, obj_type: str) -> dict[str, Any]:
        n = len(self.objects)
        obj: dict[str, Any] = {
            "objectId": f"{obj_type}|+{n:.2f}|+0.90|-{n % 7:.2f}",
            "objectType": obj_type,
            "position": {"x": float(n), "y": 0.9, "z": -float(n % 7)},
            "parentReceptacles": None,
            "receptacleObjectIds": None,
            "fillLiquid": None,
            "simbotLastParentReceptacle": None,
        }
        for prop in _BOOL_PROPS:
            obj[prop] = False
        classes = [obj_type]
        if obj_type in _ALIASES:
            classes.append(_ALIASES[obj_type])
        classes += [c for c in self.classes.get(obj_type, []) if c not in classes]
        obj["simbotObjectClass"] = classes
        self.objects.append(obj)
        return obj

    def satisfy(self, comp: AtomicComponent) -> dict[str, Any]:
        conds = comp.conditions
        if "objectType" in conds:
            obj_type = str(conds["objectType"])
        elif "simbotObjectClass" in conds:
            obj_type = self.type_for_class(str(conds["simbotObjectClass"]))
        else:
            obj_type = "Object"
        obj = self.new_object(obj_type)
        cls = conds.get("simbotObjectClass")
        if cls is not None and cls not in obj["simbotObjectClass"]:
            obj["simbotObjectClass"].append(cls)
        for prop, want in conds.items():
            if prop in ("objectType", "simbotObjectClass"):
                continue
            if prop in ("parentReceptacles", "simbotLastParentReceptacle"):
                if want is not None:
                    holder = self.new_object(self.type_for_class(str(want)))
                    holder["receptacle"] = True
                    self.parent[obj["objectId"]] = holder["objectId"]
                continue
            obj[prop] = bool(want) if type(want) is int and want in (0, 1) else want
        return obj

    def realize(self, task: Task, n: int) -> dict[str, list[dict[str, Any]]]:
        per: dict[str, list[dict[str, Any]]] = {}
        for key, comp in task.components.items():
            det = comp.determiner
            if det == "0":
                per[key] = []
                continue
            count = n if det in ("a", "all") else n * int(det)
            if det == "all":
                count = 1
            if isinstance(comp, SubtaskComponent):
                anchors: list[dict[str, Any]] = []
                for _ in range(count):
                    child = self.realize(comp.task, 1)
                    anchor = comp.task.task_anchor_object
                    if anchor is not None:
                        anchors += child.get(anchor, [])
                per[key] = anchors
            else:
                per[key] = [self.satisfy(comp) for _ in range(count)]
        for rel in task.relations:
            tails = per.get(rel.tail_entity_list[0], [])
            if not tails:
                continue
            one_tail = rel.tail_determiner_list[0] == "a"
            for entity, det in zip(rel.head_entity_list, rel.head_determiner_list, strict=True):
                heads = per.get(entity, [])
                size = len(heads) if det == "all" else (1 if det == "a" else int(det))
                for idx, head in enumerate(heads):
                    tail = tails[0] if one_tail or size == 0 else tails[min(idx // size, len(tails) - 1)]
                    tail["receptacle"] = True
                    self.parent[head["objectId"]] = tail["objectId"]
        return per

    def finish(self) -> list[dict[str, Any]]:
        by_id = {o["objectId"]: o for o in self.objects}
        for obj in self.objects:
            chain: list[str] = []
            cur = obj["objectId"]
            while cur in self.parent and self.parent[cur] not in chain:
                cur = self.parent[cur]
                chain.append(cur)
            if chain:
                obj["parentReceptacles"] = chain
                obj["simbotLastParentReceptacle"] = chain[0]
                holder = by_id[chain[0]]
                holder["receptacleObjectIds"] = [*(holder["receptacleObjectIds"] or []), obj["objectId"]]
        return self.objects


def make_object(
    obj_type: str,
    object_id: str | None = None,
    *,
    classes: list[str] | None = None,
    **props: Any,
) -> dict[str, Any]:
    """One object's metadata with every property the checker reads set to a neutral default
    (False / None), ``simbotObjectClass`` = [type, Sink/Bathtub alias, *classes], then ``props``."""
    builder = _Builder({obj_type: list(classes or [])})
    obj = builder.new_object(obj_type)
    if object_id is not None:
        obj["objectId"] = object_id
    obj.update(props)
    return obj


def build_goal_state(
    task: Task, *, classes: Mapping[str, list[str]] | None = None, num_instances: int = 1
) -> list[dict[str, Any]]:
    """Object metadata in which ``task`` is satisfied. ``classes`` maps object types to their
    TEACh custom classes (used to pick a type for a ``simbotObjectClass`` condition; without it
    the class name itself is used as the object type)."""
    builder = _Builder(classes or {})
    builder.realize(task, num_instances)
    return builder.finish()
