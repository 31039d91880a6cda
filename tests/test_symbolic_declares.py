"""The embedded world states what its simulator does (issue 62), as VirtualHome's environment does:
what each action makes true (`ActionVocabulary.effects`), what a failed step lacked
(`missing_conditions`), which step its object can never take (`last_step_impossible`), all read from
the simulator's own table (`world/rules.py`), so `graphs/goal_conditions.achieving_steps` turns a
lack into its step in TEACh's world as it does in VirtualHome's.

Every effect is checked against the simulator for every object type the catalog lets take the
action, read back from the exported metadata (AI2-THOR's view, not the table's)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helper_agent.envs.base import ReportsImpossibleSteps, ReportsMissing, ReportsRedundantSteps
from helper_agent.envs.symbolic import EFFECT_LINES, SymbolicEnv
from helper_agent.graphs.goal_conditions import achieving_steps
from helper_agent.world.actions import ACTIONS, INTERACTION_ACTIONS
from helper_agent.world.catalog import load_catalog
from helper_agent.world.effects import DRAIN_TYPES
from helper_agent.world.geometry import Pose
from helper_agent.world.rules import EFFECTS
from helper_agent.world.state import WorldObject, WorldState

CATALOG = load_catalog()
AHEAD = (1.0, 0.9, 1.5)  # half a metre in front of the robot, at table height: in view and in reach


def world(*objects: tuple[str, dict], held: tuple[str, dict] | None = None, inside: dict[str, str] | None = None,
          far: tuple[str, ...] = ()) -> SymbolicEnv:
    """An empty 10 x 10 floor, the robot at cell (4, 4) facing +z and looking 30 degrees down, each
    object `Type_1` in front of it (those in `far` 3 m away) with the given flags, `inside` its
    parent, and `held` in hand."""
    made: dict[str, WorldObject] = {}
    for kind, flags in objects:
        oid = f"{kind}_1"
        made[oid] = WorldObject(oid, kind, (1.0, 0.9, 4.0) if oid in far else AHEAD, **flags)
    for child, parent in (inside or {}).items():
        made[child].parent_id = parent
        made[parent].contents.append(child)
    held_id = None
    if held is not None:
        kind, flags = held
        held_id = f"{kind}_held"
        made[held_id] = WorldObject(held_id, kind, (1.0, 1.0, 1.0), is_picked_up=True, **flags)
    state = WorldState("test", "Kitchen", 10, 10, (0.0, 0.0), np.zeros((10, 10), dtype=bool), made,
                       Pose(4, 4, 0, 30), held_id=held_id)
    env = SymbolicEnv(CATALOG)
    env.reset(state)
    return env


def shows(env: SymbolicEnv, line: str) -> bool:
    """Whether the exported metadata shows a goal line ("Fridge_1 is isOpen", "Mug_1 is not
    isPickedUp", "Mug_1 is parentReceptacles to Sink_1"). A sliced object is gone and its pieces,
    `<id>|<Type>Sliced_<n>`, are there, as in AI2-THOR."""
    objects = {o["objectId"]: o for o in env.objects_metadata()}
    subject, rest = line.split(" is ", 1)
    if " to " in rest:
        prop, other = rest.split(" to ")
        return other in (objects[subject][prop] or [])
    wanted = not rest.startswith("not ")
    prop = rest.removeprefix("not ")
    if prop == "isSliced" and subject not in objects:
        return wanted == any(oid.startswith(subject + "|") for oid in objects)
    return bool(objects[subject][prop]) == wanted


def declared(action: str, object_id: str, held: str | None, kind: str) -> list[str]:
    """The action's declared effects written out for its object and what was held; an effect the
    table gives only where the catalog has a flag (Pour fills what can be filled) only there."""
    lines = []
    for line, fact in zip(EFFECT_LINES[action], EFFECTS[action], strict=True):
        if fact.where and not getattr(CATALOG.get(kind), fact.where):
            continue
        lines.append(line.replace("{0}", object_id).replace("{held}", held or "?"))
    return lines


# ---------------------------------------------------------------------------------- what it declares

def test_the_vocabulary_declares_the_simulators_effects_in_the_goal_lines_form() -> None:
    env = world(("Fridge", {}))
    vocabulary = env.action_vocabulary()
    assert dict(vocabulary.effects) == {
        "Pickup": ("{0} is isPickedUp",),
        "Place": ("{held} is parentReceptacles to {0}", "{held} is not isPickedUp"),
        "Open": ("{0} is isOpen",), "Close": ("{0} is not isOpen",),
        "ToggleOn": ("{0} is isToggled",), "ToggleOff": ("{0} is not isToggled",),
        "Slice": ("{0} is isSliced",),
        "Pour": ("{0} is isFilledWithLiquid", "{held} is not isFilledWithLiquid"),
    }
    assert vocabulary.settled_last == ()  # nothing an action makes true is undone by moving
    assert set(vocabulary.effects) == set(INTERACTION_ACTIONS)
    assert isinstance(env, ReportsMissing) and isinstance(env, ReportsImpossibleSteps)
    assert isinstance(env, ReportsRedundantSteps)


def _allowed() -> list[tuple[str, str, str | None]]:
    """Every (action, object type, held type) the catalog allows, read from its flags (not from
    the rules table): what a step of that action can ever succeed on."""
    types = [name for name in CATALOG.names() if not CATALOG.get(name).legacy]
    pairs: list[tuple[str, str, str | None]] = []
    for kind in types:
        info = CATALOG.get(kind)
        if info.pickupable:
            pairs.append(("Pickup", kind, None))
        if info.openable:
            pairs += [("Open", kind, None), ("Close", kind, None)]
        if info.toggleable:
            pairs += [("ToggleOn", kind, None), ("ToggleOff", kind, None)]
        if info.sliceable:
            pairs.append(("Slice", kind, "Knife"))
        if info.can_fill_with_liquid or kind in DRAIN_TYPES:
            pairs.append(("Pour", kind, "Mug"))
        pairs += [("Place", kind, held) for held in CATALOG.accepted_by(kind) if not CATALOG.get(held).legacy]
    return pairs


def test_every_allowed_step_makes_its_declared_effects_true_in_the_simulator() -> None:
    """For each action on each object type the catalog lets take it, in a world where its
    preconditions hold (the object in reach, closed to be opened, on to be switched off, the
    receptacle open, a knife or a full mug in hand), the step succeeds and the metadata shows each
    effect the vocabulary declares for it."""
    pairs = _allowed()
    assert len(pairs) > 900 and {a for a, _, _ in pairs} == set(INTERACTION_ACTIONS)
    for action, kind, held_kind in pairs:
        flags = {"is_open": action == "Close" or (action == "Place" and CATALOG.get(kind).openable),
                 "is_toggled": action == "ToggleOff"}
        held = None
        if held_kind is not None:
            held = (held_kind, {"is_filled_with_liquid": True, "fill_liquid": "water"} if action == "Pour" else {})
        env = world((kind, flags), held=held)
        held_id = env.state.held_id
        outcome = env.step(action, f"{kind}_1")
        assert outcome.result.success, (action, kind, held_kind, outcome.result.error)
        for line in declared(action, f"{kind}_1", held_id, kind):
            assert shows(env, line), (action, kind, held_kind, line)


def _catalog_forbids(env: SymbolicEnv, action: str, object_id: str) -> bool:
    """Whether the catalog says the step can never succeed, from its flags alone."""
    obj = env.state.objects[object_id]
    info = CATALOG.get(obj.object_type)
    held = env.state.objects[env.state.held_id] if env.state.held_id else None
    if action == "Pickup":
        return not info.pickupable
    if action in ("Open", "Close"):
        return not info.openable
    if action in ("ToggleOn", "ToggleOff"):
        return not info.toggleable
    if action == "Slice":
        return not info.sliceable
    if action == "Pour":
        return not (info.can_fill_with_liquid or obj.object_type in DRAIN_TYPES)
    return not info.receptacle or (held is not None and not CATALOG.accepts(obj.object_type, held.object_type))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), room=st.sampled_from(("Kitchen", "LivingRoom", "Bedroom", "Bathroom")),
       data=st.data())
def test_in_generated_households_effects_hold_and_impossible_is_what_the_catalog_forbids(
        seed: int, room: str, data: st.DataObject) -> None:
    """Random steps in generated households: a step that succeeds makes its declared effects true;
    one that fails is impossible exactly when the catalog forbids it, and names as lacking only
    objects of the household (and nothing when impossible or already done)."""
    env = SymbolicEnv(CATALOG)
    env.reset(seed, room_type=room)
    for _ in range(data.draw(st.integers(10, 60), label="length")):
        action = data.draw(st.sampled_from(ACTIONS + INTERACTION_ACTIONS * 2), label="action")
        object_id = None
        if action in INTERACTION_ACTIONS:
            near = [v.object_id for v in env.sim.visible_objects(1.5)]
            pool = near if near and data.draw(st.booleans(), label="near") else sorted(env.state.objects)
            object_id = data.draw(st.sampled_from(pool), label="object")
        held_id = env.state.held_id
        forbidden = object_id is not None and _catalog_forbids(env, action, object_id)
        kind = env.state.objects[object_id].object_type if object_id else ""
        outcome = env.step(action, object_id)
        if action not in INTERACTION_ACTIONS:
            assert not env.last_step_impossible() and env.missing_conditions() == []
            continue
        assert object_id is not None
        if outcome.result.success:
            assert not forbidden
            for line in declared(action, object_id, held_id, kind):
                assert shows(env, line), (action, object_id, line)
            assert env.missing_conditions() == [] and not env.last_step_impossible()
            continue
        assert env.last_step_impossible() == forbidden, (action, object_id, outcome.result.error)
        lacked = env.missing_conditions()
        if forbidden or env.last_step_redundant():
            assert lacked == []
        assert all(line.split(" is ", 1)[0] in env.state.objects for line in lacked)


# ---------------------------------------------------------------------------------- what a step lacked

def _achieve(env: SymbolicEnv, lacked: list[str]) -> dict[str, tuple[str, tuple[str, ...]]]:
    vocabulary = env.action_vocabulary()
    return achieving_steps(lacked, vocabulary.effects, vocabulary.actions, vocabulary.objects)


def test_placing_in_a_closed_fridge_lacks_it_open_and_opening_it_lets_the_step_succeed() -> None:
    env = world(("Fridge", {}), held=("Mug", {}))
    failed = env.step("Place", "Fridge_1")
    assert failed.result.error == "Fridge_1 must be open to place objects in it"  # the simulator's words, as before
    assert env.missing_conditions() == ["Fridge_1 is isOpen"]
    assert not env.last_step_impossible() and not env.last_step_redundant()
    steps = _achieve(env, env.missing_conditions())
    assert steps == {"Fridge_1 is isOpen": ("Open", ("Fridge_1",))}
    for action, (target,) in steps.values():
        assert env.step(action, target).result.success
    assert env.step("Place", "Fridge_1").result.success
    assert shows(env, "Mug_held is parentReceptacles to Fridge_1")


def test_slicing_without_a_knife_lacks_the_knife_in_view_and_picking_it_up_lets_the_step_succeed() -> None:
    env = world(("CounterTop", {}), ("Bread", {}), ("Knife", {}), inside={"Bread_1": "CounterTop_1", "Knife_1": "CounterTop_1"})
    assert env.step("Slice", "Bread_1").result.error == "Agent must be holding a knife to slice"
    assert env.missing_conditions() == ["Knife_1 is isPickedUp"] and not env.last_step_impossible()
    steps = _achieve(env, env.missing_conditions())
    assert steps == {"Knife_1 is isPickedUp": ("Pickup", ("Knife_1",))}
    assert env.step("Pickup", "Knife_1").result.success
    assert env.step("Slice", "Bread_1").result.success and shows(env, "Bread_1 is isSliced")


def test_a_knife_out_of_view_is_not_named() -> None:
    env = world(("Bread", {}), ("Knife", {}))
    env.state.objects["Knife_1"].position = (1.0, 0.9, -3.0)  # behind the robot
    assert not env.step("Slice", "Bread_1").result.success
    assert env.missing_conditions() == [] and not env.last_step_impossible()


def test_what_is_shut_in_a_closed_receptacle_lacks_it_open() -> None:
    env = world(("Fridge", {}), ("Apple", {}), inside={"Apple_1": "Fridge_1"})
    assert "inside a closed receptacle" in env.step("Pickup", "Apple_1").result.error
    assert env.missing_conditions() == ["Fridge_1 is isOpen"]
    for action, (target,) in _achieve(env, env.missing_conditions()).values():
        assert env.step(action, target).result.success
    assert env.step("Pickup", "Apple_1").result.success and shows(env, "Apple_1 is isPickedUp")


def test_a_full_hand_lacks_putting_down_and_a_placement_names_where() -> None:
    env = world(("CounterTop", {}), ("Apple", {}), inside={"Apple_1": "CounterTop_1"}, held=("Mug", {}))
    assert env.step("Pickup", "Apple_1").result.error == "Agent's hand is already holding Mug_held"
    lacked = env.missing_conditions()
    assert lacked == ["Mug_held is not isPickedUp"]
    assert _achieve(env, lacked) == {}  # Place names where, which "not held" does not say
    wanted = [*lacked, "Mug_held is parentReceptacles to CounterTop_1"]
    steps = _achieve(env, wanted)
    assert steps == {line: ("Place", ("CounterTop_1",)) for line in wanted}
    assert env.step("Place", "CounterTop_1").result.success
    assert env.step("Pickup", "Apple_1").result.success


def test_out_of_reach_lacks_being_in_view_which_no_interaction_achieves() -> None:
    env = world(("Apple", {}), far=("Apple_1",))
    assert "too far away" in env.step("Pickup", "Apple_1").result.error
    assert env.missing_conditions() == ["Apple_1 is visible"]
    assert _achieve(env, env.missing_conditions()) == {}


# ---------------------------------------------------------------------------------- impossible steps

def test_a_step_the_catalog_forbids_is_impossible_and_lacks_nothing() -> None:
    env = world(("Mug", {}), held=("Knife", {}))
    assert env.step("Slice", "Mug_1").result.error == "Mug_1 is not sliceable"
    assert env.last_step_impossible() and env.missing_conditions() == []
    bare = world(("Mug", {}))
    # The simulator's first check is still the knife, and its words are unchanged; no knife would help.
    assert bare.step("Slice", "Mug_1").result.error == "Agent must be holding a knife to slice"
    assert bare.last_step_impossible() and bare.missing_conditions() == []
    table = world(("DiningTable", {}))
    assert table.step("Pickup", "DiningTable_1").result.error == "DiningTable_1 is not pickupable"
    assert table.last_step_impossible()
    toaster = world(("Toaster", {}), held=("Pot", {}))
    assert toaster.step("Place", "Toaster_1").result.error == "Pot cannot be placed in Toaster"
    assert toaster.last_step_impossible()


def test_a_step_a_step_can_fix_is_not_impossible_and_one_already_done_is_redundant() -> None:
    fridge = world(("Fridge", {}), held=("Mug", {}))
    fridge.step("Place", "Fridge_1")
    assert not fridge.last_step_impossible()
    bread = world(("Bread", {}))
    bread.step("Slice", "Bread_1")
    assert not bread.last_step_impossible()
    opened = world(("Fridge", {"is_open": True}))
    assert opened.step("Open", "Fridge_1").result.error == "Fridge_1 is already open"
    assert opened.last_step_redundant() and not opened.last_step_impossible() and opened.missing_conditions() == []
    assert opened.step("Close", "Fridge_1").result.success
    assert not opened.last_step_redundant() and opened.missing_conditions() == []
