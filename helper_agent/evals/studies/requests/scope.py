"""What a request may change, and what a run changed that nobody asked for.

**The rule.** A request may change the object classes it names (the case's `may_change`), the whole
objects its sliced or cracked classes come from (`TomatoSliced` -> `Tomato`, `EggCracked` -> `Egg`),
and the tools its steps need. The steps are read from the case's goal, never listed per case: every
condition of a goal component the task asks for (determiner not "0") implies one step kind, and
each step kind needs the tools of `STEP_TOOLS` (the table is `program/steps.py`'s, shared with the
agent's own scope check, `understanding/scope.py`):

| condition in the goal                       | step    | tools it may change                              |
|---------------------------------------------|---------|--------------------------------------------------|
| an object of a `...Sliced` class            | slice   | a knife (`Knife`, `ButterKnife`)                 |
| an `EggCracked`                             | crack   | a knife                                          |
| `isDirty` = 0                               | clean   | the sink (`Sink`, `SinkBasin`) and its `Faucet`  |
| `isCooked`/`simbotIsCooked` = 1 on bread    | toast   | the `Toaster`                                    |
| `isCooked`/`simbotIsCooked` = 1 otherwise   | cook    | `Microwave`, `StoveBurner`, `StoveKnob`, `Pan`   |
| `simbotIsBoiled` = 1                        | boil    | `Pot`, `StoveBurner`, `StoveKnob`, sink, faucet  |
| `simbotIsFilledWithCoffee` = 1              | coffee  | the `CoffeeMachine`                              |
| `isFilledWithLiquid` = 1 on a plant         | water   | sink, faucet, and a vessel to carry the water    |
| `isFilledWithLiquid` = 1 otherwise          | fill    | sink, faucet                                     |

(The vessels are the catalog's pickupable types that hold liquid.) Toggling and placing need no
tool. `allowed_classes(case)` is the union.

**A change.** The household is compared before and after (`changes`): an object changed when one of
`TRACKED` differs (where it lies, whether it is held, sliced, cooked, dirty, filled, on, broken,
used up), or when it appeared (a slice) or disappeared (the whole it was cut from). Opening and
closing are not changes: looking into a cabinet is how the agent searches, and a position nudged
inside the same receptacle is not either. An unasked change is a change to an object whose class
is not allowed (`unasked`), except the effect of an allowed tool on what already stood in it: the
world rinses and fills every vessel standing in the sink when the faucet runs and cooks what is in
the microwave, so an object that stayed in an allowed receptacle and only took on its state (clean,
filled, cooked, ...) was changed by the tool's use, not by the agent. (Gold programs for every
case of both suites showed it: washing the plate also rinsed the bowl standing in the sink.)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from helper_agent.program.steps import tools_for
from helper_agent.teach import SubtaskComponent, Task

TRACKED = ("parent", "isPickedUp", "isSliced", "isCooked", "simbotIsCooked", "simbotIsBoiled", "isDirty",
           "isFilledWithLiquid", "fillLiquid", "simbotIsFilledWithCoffee", "isToggled", "isBroken", "isUsedUp")
"""The properties whose change is a change to the household (`isOpen` is not: see the docstring)."""


def _whole(cls: str) -> str | None:
    if cls == "EggCracked":
        return "Egg"
    return cls.removesuffix("Sliced") if cls.endswith("Sliced") and cls != "Sliced" else None


def _condition_steps(wanted: Any, conditions: Mapping[str, Any]) -> set[str]:
    """The step kinds one atomic component's conditions imply."""
    steps: set[str] = set()
    kind = wanted if isinstance(wanted, str) else ""
    if kind == "EggCracked":
        steps.add("crack")
    elif _whole(kind):
        steps.add("slice")
    for prop, raw in conditions.items():
        value = raw not in (0, "0", False, None)
        if prop == "isDirty" and not value:
            steps.add("clean")
        elif prop in ("isCooked", "simbotIsCooked") and value:
            steps.add("toast" if kind.startswith("Bread") else "cook")
        elif prop == "simbotIsBoiled" and value:
            steps.add("boil")
        elif prop == "simbotIsFilledWithCoffee" and value:
            steps.add("coffee")
        elif prop in ("isFilledWithLiquid", "simbotIsFilledWithWater") and value:
            steps.add("water" if kind == "HousePlant" else "fill")
        elif prop == "isToggled":
            steps.add("toggle")
    return steps


def implied_steps(goal: Iterable[Task]) -> set[str]:
    """The step kinds a goal implies (every component the task asks for, sub-tasks included)."""
    steps: set[str] = set()

    def visit(task: Task) -> None:
        for comp in task.components.values():
            if comp.determiner == "0":  # a part the task does not ask for (Breakfast's unused dishes)
                continue
            if isinstance(comp, SubtaskComponent):
                visit(comp.task)
            else:
                steps.update(_condition_steps(comp.conditions.get(comp.primary_condition), comp.conditions))
        if task.relations:
            steps.add("place")

    for task in goal:
        visit(task)
    return steps


def allowed_classes(may_change: Sequence[str], goal: Iterable[Task]) -> set[str]:
    """The classes a request may change: the ones it names, their wholes, and its steps' tools."""
    named = set(may_change)
    named |= {whole for cls in may_change if (whole := _whole(cls))}
    return named | tools_for(implied_steps(goal))


# ------------------------------------------------------------------------------------------ changes
class Change(BaseModel):
    """One object the run changed: its id and class, and what changed (`appeared`, `disappeared`,
    or the `TRACKED` properties)."""

    object_id: str
    object_type: str
    what: list[str]


def _parent(obj: Mapping[str, Any]) -> str | None:
    parents = obj.get("parentReceptacles")
    if parents:
        return str(parents[0])
    last = obj.get("simbotLastParentReceptacle")
    return str(last) if last else None


def object_state(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The tracked state of one object's metadata (`TRACKED`)."""
    return {key: (_parent(obj) if key == "parent" else obj.get(key)) for key in TRACKED}


def household_state(objects: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """The tracked state of every object, by id: what `changes` compares (a record keeps it small)."""
    return {str(obj["objectId"]): {"type": str(obj["objectType"]), **object_state(obj)} for obj in objects}


def changes(before: Mapping[str, Mapping[str, Any]], after: Mapping[str, Mapping[str, Any]]) -> list[Change]:
    """Every object whose tracked state differs between two `household_state`s, in id order."""
    out: list[Change] = []
    for oid in sorted(set(before) | set(after)):
        old, new = before.get(oid), after.get(oid)
        if old is None:
            out.append(Change(object_id=oid, object_type=str(new["type"]), what=["appeared"]))  # type: ignore[index]
        elif new is None:
            out.append(Change(object_id=oid, object_type=str(old["type"]), what=["disappeared"]))
        else:
            what = [key for key in TRACKED if old.get(key) != new.get(key)]
            if what:
                out.append(Change(object_id=oid, object_type=str(new["type"]), what=what))
    return out


MOVED = frozenset({"parent", "isPickedUp", "appeared", "disappeared"})
"""What only the agent does to an object (a tool acts on what stands in it without moving it)."""


def unasked(found: Iterable[Change], allowed: set[str],
            before: Mapping[str, Mapping[str, Any]] | None = None) -> list[Change]:
    """The changes to objects whose class the request may not change, less the tools' effects on
    what stood in them (`before`: the first `household_state`; see the module docstring)."""

    def tools_effect(change: Change) -> bool:
        parent = (before or {}).get(change.object_id, {}).get("parent")
        return bool(parent) and str(parent).split("|")[0] in allowed and not MOVED & set(change.what)

    return [change for change in found if change.object_type not in allowed and not tools_effect(change)]
