"""What each of TEACh's interactions needs and what it makes true in the embedded world: one table
that the simulator checks and an environment declares (issue 62).

`CHECKS` lists, for each interaction, what the simulator checks before acting, in the order it checks
(the first that fails is the step's error, in AI2-THOR's words); `EFFECTS` lists what the action makes
true when it succeeds. The simulator reads `CHECKS` to refuse a step, and `SymbolicEnv` reads both to
tell an agent what its actions do, what a failed step lacked and which step can never succeed, as
VirtualHome's environment tells them from its simulator's executors. A check is one of four kinds,
by what could make it pass:

- `AFFORDANCE`: the catalog says the object's type never takes the action (slicing a Mug, picking up
  a DiningTable, putting a Pot in a Toaster: no `receptacle_accepts` has the pair); no step helps.
- `STATE`: a condition a step can make true (the fridge open, a knife in hand, the hand empty).
- `DONE`: the action's effect already holds (opening what is open); nothing is lacking.
- `REACH`: where the agent stands (in view and within reach, clear of a fridge door's swing): the
  navigator's business, which no single interaction changes.

A condition is a `Fact` in TEACh's own names (`isOpen`, `isPickedUp`, `isFilledWithLiquid`, and the
relation `parentReceptacles`), the names its task definitions' conditions and its checker's problem
keys use, so an unmet task condition and an action's effect meet without a translation table. A
fact is about a role, not an id: the action's object, what the agent holds, a knife, the closed
receptacles the object is in (`bind` names them in a world).

The effects are the simulator handlers' own: `tests/test_symbolic_declares.py` performs every
action on every object type the catalog lets take it, in a world where its checks pass, and reads
each declared effect back from the exported metadata. They are direct effects only: what a
switched-on appliance then does to what it holds (a faucet rinses, a toaster toasts) is
`world/effects.py`'s, conditional on what is where, and is not an action's effect here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Protocol

from helper_agent.world.catalog import Catalog, ObjectType
from helper_agent.world.effects import DRAIN_TYPES
from helper_agent.world.geometry import INTERACTION_DISTANCE
from helper_agent.world.state import WorldObject, WorldState, occupancy

KNIFE_TYPES = frozenset({"Knife", "ButterKnife"})
# Doors that swing towards the agent: opening them from the adjacent cell is blocked by the body.
SWING_DOOR_TYPES = frozenset({"Fridge"})

AFFORDANCE = "affordance"
STATE = "state"
DONE = "done"
REACH = "reach"

#: Roles a fact is about.
OBJECT = "object"  # the action's object
HELD = "held"  # what the agent holds
KNIFE = "knife"  # any knife (which one is for whoever names it: the environment, the ones in view)
CLOSED = "closed"  # each closed receptacle the action's object is inside, outermost first


@dataclass(frozen=True)
class Fact:
    """A condition on the object playing `subject`: TEACh's property `prop` has the flag `value`
    (True: "isOpen", False: not), or, for a relation, `value` is the role of the other object
    ("held is parentReceptacles to object"). `where`, for an effect: the catalog flag the object's
    type must have for it (Pour fills only a target that can be filled; into a sink it drains)."""

    subject: str
    prop: str
    value: bool | str = True
    where: str = ""


class World(Protocol):
    """What a check reads: the state, the catalog, and the simulator's geometry."""

    state: WorldState
    catalog: Catalog

    def is_hidden(self, object_id: str) -> bool: ...

    def view_of(self, object_id: str) -> tuple[float, bool]: ...

    def in_door_swing(self, object_id: str) -> bool: ...


#: A check: the action and its object in a world -> the error when it fails, None when it passes.
Test = Callable[[World, str, str], "str | None"]


@dataclass(frozen=True)
class Check:
    """One thing an action needs: its kind, its test, and the condition it wants when that names
    an object (None: what it lacks names none, as "No valid positions" or "not holding any object")."""

    kind: str
    test: Test
    wants: Fact | None = None


def _held(world: World) -> WorldObject | None:
    held = world.state.held_id
    return world.state.objects[held] if held is not None else None


def _info(world: World, object_id: str) -> ObjectType:
    return world.catalog.get(world.state.objects[object_id].object_type)


def _affords(flag: str, message: str) -> Test:
    """The object's catalog type has `flag` (the error names the object as `{object}`)."""
    return lambda world, _action, oid: None if getattr(_info(world, oid), flag) else message.format(object=oid)


def _hand_empty(world: World, _action: str, _oid: str) -> str | None:
    held = world.state.held_id
    return None if held is None else f"Agent's hand is already holding {held}"


def _holding(world: World, _action: str, _oid: str) -> str | None:
    return None if world.state.held_id is not None else "Agent is not holding any object"


def _not_into_held(world: World, _action: str, oid: str) -> str | None:
    held = world.state.held_id
    if held is not None and (oid == held or oid in world.state.descendants(held)):
        return f"cannot place {held} into itself"
    return None


def _accepts(world: World, _action: str, oid: str) -> str | None:
    held = _held(world)
    receptacle = world.state.objects[oid].object_type
    if held is None or world.catalog.accepts(receptacle, held.object_type):
        return None
    return f"{held.object_type} cannot be placed in {receptacle}"


def _open_to_place(world: World, _action: str, oid: str) -> str | None:
    if _info(world, oid).openable and not world.state.objects[oid].is_open:
        return f"{oid} must be open to place objects in it"
    return None


def _room(world: World, _action: str, oid: str) -> str | None:
    receptacle = world.state.objects[oid]
    if occupancy(receptacle.contents) >= max(_info(world, oid).capacity, 1):
        return f"No valid positions to place object found: {oid} is full"
    return None


def _not_yet(world: World, action: str, oid: str) -> str | None:
    """The effect does not hold already (Open, Close, ToggleOn, ToggleOff, Slice)."""
    obj = world.state.objects[oid]
    if action in ("Open", "Close"):
        opening = action == "Open"
        return f"{oid} is already {'open' if opening else 'closed'}" if obj.is_open == opening else None
    if action in ("ToggleOn", "ToggleOff"):
        on = action == "ToggleOn"
        return f"{oid} is already {'on' if on else 'off'}" if obj.is_toggled == on else None
    return f"{oid} is already sliced" if obj.is_sliced else None


def _knife_in_hand(world: World, _action: str, _oid: str) -> str | None:
    held = _held(world)
    return None if held is not None and held.object_type in KNIFE_TYPES else "Agent must be holding a knife to slice"


def _sliceable(world: World, _action: str, oid: str) -> str | None:
    info = _info(world, oid)
    return None if info.sliceable and info.sliced_type else f"{oid} is not sliceable"


def _not_pouring_into_held(world: World, _action: str, oid: str) -> str | None:
    return "cannot pour an object into itself" if oid == world.state.held_id else None


def _held_filled(world: World, _action: str, _oid: str) -> str | None:
    held = _held(world)
    if held is None or held.is_filled_with_liquid:
        return None
    return f"{held.object_id} is not filled with liquid"


def _pourable(world: World, _action: str, oid: str) -> str | None:
    target = world.state.objects[oid].object_type
    if _info(world, oid).can_fill_with_liquid or target in DRAIN_TYPES:
        return None
    return f"cannot pour into {target}"


def _not_hidden(world: World, _action: str, oid: str) -> str | None:
    return f"{oid} is not visible: it is inside a closed receptacle" if world.is_hidden(oid) else None


def _in_reach(world: World, _action: str, oid: str) -> str | None:
    dist, in_fov = world.view_of(oid)
    if not in_fov:
        return f"{oid} is not visible from the current viewpoint"
    if dist > INTERACTION_DISTANCE + 1e-6:
        return f"{oid} is too far away to interact with ({dist:.2f} m > {INTERACTION_DISTANCE} m)"
    return None


def _door_clear(world: World, action: str, oid: str) -> str | None:
    if world.state.objects[oid].object_type in SWING_DOOR_TYPES and world.in_door_swing(oid):
        verb = "opening" if action == "Open" else "closing"
        return f"{oid} is blocked from {verb}: the agent is in the way of the door"
    return None


#: Reaching the object: not shut inside a closed receptacle (open it), then in view and in reach.
_REACH = (Check(STATE, _not_hidden, Fact(CLOSED, "isOpen")), Check(REACH, _in_reach, Fact(OBJECT, "visible")))
_OPENING = (Check(AFFORDANCE, _affords("openable", "{object} is not openable")), Check(DONE, _not_yet),
            *_REACH, Check(REACH, _door_clear))
_TOGGLING = (Check(AFFORDANCE, _affords("toggleable", "{object} is not toggleable")), Check(DONE, _not_yet), *_REACH)

#: What each interaction checks, in the simulator's order.
CHECKS: Mapping[str, tuple[Check, ...]] = MappingProxyType({
    "Pickup": (Check(STATE, _hand_empty, Fact(HELD, "isPickedUp", False)),
               Check(AFFORDANCE, _affords("pickupable", "{object} is not pickupable")), *_REACH),
    "Place": (Check(STATE, _holding), Check(STATE, _not_into_held),
              Check(AFFORDANCE, _affords("receptacle", "{object} is not a receptacle")), Check(AFFORDANCE, _accepts),
              Check(STATE, _open_to_place, Fact(OBJECT, "isOpen")), *_REACH, Check(STATE, _room)),
    "Open": _OPENING,
    "Close": _OPENING,
    "ToggleOn": _TOGGLING,
    "ToggleOff": _TOGGLING,
    "Slice": (Check(STATE, _knife_in_hand, Fact(KNIFE, "isPickedUp")), Check(AFFORDANCE, _sliceable),
              Check(DONE, _not_yet), *_REACH),
    "Pour": (Check(STATE, _holding), Check(STATE, _not_pouring_into_held),
             Check(STATE, _held_filled, Fact(HELD, "isFilledWithLiquid")), Check(AFFORDANCE, _pourable), *_REACH),
})

#: What each interaction makes true when it succeeds (the simulator's handlers do it).
EFFECTS: Mapping[str, tuple[Fact, ...]] = MappingProxyType({
    "Pickup": (Fact(OBJECT, "isPickedUp"),),
    "Place": (Fact(HELD, "parentReceptacles", OBJECT), Fact(HELD, "isPickedUp", False)),
    "Open": (Fact(OBJECT, "isOpen"),),
    "Close": (Fact(OBJECT, "isOpen", False),),
    "ToggleOn": (Fact(OBJECT, "isToggled"),),
    "ToggleOff": (Fact(OBJECT, "isToggled", False),),
    "Slice": (Fact(OBJECT, "isSliced"),),
    "Pour": (Fact(OBJECT, "isFilledWithLiquid", where="can_fill_with_liquid"), Fact(HELD, "isFilledWithLiquid", False)),
})


def failures(world: World, action: str, object_id: str) -> tuple[tuple[Check, str], ...]:
    """Every check of `action` on `object_id` that fails now, with its error, in the simulator's
    order: the first is the step's error. Each is tested whatever failed before it (a check on what
    is held passes when nothing is held: the check that something is held has failed already), so
    a step refused for want of a knife is still known to be one no knife helps (slicing a Mug)."""
    found = []
    for check in CHECKS.get(action, ()):
        if (error := check.test(world, action, object_id)) is not None:
            found.append((check, error))
    return tuple(found)


def bind(world: World, role: str, object_id: str) -> tuple[str, ...]:
    """The ids playing `role` for an action on `object_id` now (empty when none does): the object,
    what is held, every knife in the world, the closed receptacles around the object, outermost
    first (the order they are opened in)."""
    state = world.state
    if role == OBJECT:
        return (object_id,)
    if role == HELD:
        return (state.held_id,) if state.held_id is not None else ()
    if role == KNIFE:
        return tuple(oid for oid, obj in state.objects.items() if obj.object_type in KNIFE_TYPES)
    if role == CLOSED:
        closed = [p for p in state.ancestors(object_id)
                  if world.catalog.get(state.objects[p].object_type).openable and not state.objects[p].is_open]
        return tuple(reversed(closed))
    raise ValueError(f"unknown role {role!r}")
