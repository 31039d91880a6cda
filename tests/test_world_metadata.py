"""Metadata export/load round trips, and bad input gets a clear error without breaking the env."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helper_agent.envs.symbolic import SymbolicEnv
from helper_agent.tools.scripted import ScriptedDriver, make_coffee
from helper_agent.world.errors import InvalidActionError, StateFormatError, UnknownObjectError
from helper_agent.world.generator import generate_scene
from helper_agent.world.geometry import FORWARD_STEP, Pose
from helper_agent.world.metadata import export_state, load_state, load_state_file, object_id_for

ROOMS = ("Kitchen", "LivingRoom", "Bedroom", "Bathroom")


@pytest.mark.parametrize("room", ROOMS)
@pytest.mark.parametrize("seed", [0, 7, 42])
def test_round_trip_is_identical(room: str, seed: int) -> None:
    first = export_state(generate_scene(seed, room))
    second = export_state(load_state(json.loads(json.dumps(first))))
    assert second == first


def test_round_trip_after_actions_with_held_object() -> None:
    env = SymbolicEnv()
    env.reset(3, room_type="Kitchen")
    driver = ScriptedDriver(env)
    make_coffee(driver)
    mug = next(o for o in env.state.objects.values() if o.object_type == "CoffeeMachine")
    assert mug.is_toggled
    exported = env.metadata()
    exported.pop("lastAction")
    exported.pop("lastActionSuccess")
    assert export_state(load_state(exported)) == exported


def test_metadata_shape_matches_ai2thor() -> None:
    env = SymbolicEnv()
    env.reset(1, room_type="Kitchen")
    objects = env.metadata()["objects"]
    required = {
        "objectId", "objectType", "position", "parentReceptacles", "receptacleObjectIds", "isOpen",
        "isToggled", "isSliced", "isCooked", "isDirty", "isFilledWithLiquid", "fillLiquid", "isPickedUp",
        "simbotIsCooked", "simbotIsBoiled", "simbotIsFilledWithCoffee", "simbotPickedUp",
        "simbotLastParentReceptacle", "simbotObjectClass",
    }
    for obj in objects:
        assert required <= set(obj)
        kind, x, y, z = obj["objectId"].split("|")[:4]
        assert kind == obj["objectType"] or "Sliced" in obj["objectId"]
        for part in (x, y, z):
            assert part[0] in "+-" and len(part.split(".")[1]) == 2
    mugs = [o for o in objects if o["objectType"] == "Mug"]
    assert mugs and all(o["parentReceptacles"] for o in mugs)
    assert object_id_for("Mug", (1.0, 0.9, -0.25)) == "Mug|+1.00|+0.90|-0.25"


def test_loads_a_bare_ai2thor_object_list() -> None:
    objects = [
        {"objectId": "CounterTop|+0.50|+0.90|+0.50", "objectType": "CounterTop", "position": {"x": 0.5, "y": 0.9, "z": 0.5},
         "parentReceptacles": None, "receptacleObjectIds": ["Mug|+0.50|+0.95|+0.50"]},
        {"objectId": "Mug|+0.50|+0.95|+0.50", "objectType": "Mug", "position": {"x": 0.5, "y": 0.95, "z": 0.5},
         "parentReceptacles": ["CounterTop|+0.50|+0.90|+0.50"], "isDirty": True},
    ]
    state = load_state(objects)
    mug = state.objects["Mug|+0.50|+0.95|+0.50"]
    assert mug.parent_id == "CounterTop|+0.50|+0.90|+0.50" and mug.is_dirty
    assert state.objects["CounterTop|+0.50|+0.90|+0.50"].contents == [mug.object_id]
    assert state.check_invariants() == []


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("{not json", "invalid JSON at line 1"),
        ('{"objects": 3}', "field 'objects' has type int"),
        ('{"objects": [{"objectType": "Mug", "position": {"x": 0, "y": 0, "z": 0}}]}', "objects[0]: missing field 'objectId'"),
        ('{"objects": [{"objectId": "a", "objectType": "Mugg", "position": {"x": 0, "y": 0, "z": 0}}]}', "objects[0]: field 'objectType'"),
        ('{"objects": [{"objectId": "a", "objectType": "Mug", "position": {"x": "left", "y": 0, "z": 0}}]}', "objects[0]: field 'position'"),
    ],
)
def test_malformed_state_files_name_the_file_and_field(tmp_path: Path, content: str, fragment: str) -> None:
    path = tmp_path / "state.json"
    path.write_text(content)
    with pytest.raises(StateFormatError) as err:
        load_state_file(path)
    assert str(path) in str(err.value)
    assert fragment in str(err.value)


def test_non_utf8_state_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(StateFormatError, match="not UTF-8"):
        load_state_file(path)


def test_bad_actions_raise_and_leave_env_usable() -> None:
    env = SymbolicEnv()
    env.reset(5, room_type="Kitchen")
    before = export_state(env.state)
    with pytest.raises(InvalidActionError, match="unknown action 'Fly'"):
        env.step("Fly")
    with pytest.raises(UnknownObjectError, match="Ghost"):
        env.step("Pickup", "Ghost|+0.00|+0.00|+0.00")
    with pytest.raises(InvalidActionError, match="needs an object id"):
        env.step("Open")
    assert export_state(env.state) == before
    assert env.steps == 0 and env.failures == 0
    outcome = env.step("Turn Left")
    assert outcome.result.success and env.steps == 1


def test_failed_actions_have_ai2thor_like_messages() -> None:
    env = SymbolicEnv()
    env.reset(5, room_type="Kitchen")
    state = env.state
    fridge = next(o for o in state.objects.values() if o.object_type == "Fridge")
    far = env.step("Open", fridge.object_id)
    assert not far.result.success
    assert "not visible" in far.result.error or "too far" in far.result.error
    # Stand right in front of the fridge door, facing it.
    ci, cj = next(
        (i + di, j + dj)
        for i, j in fridge.cells
        for di, dj in ((1, 0), (-1, 0), (0, 1), (0, -1))
        if state.walkable((i + di, j + dj))
    )
    facing = next(r for r, (di, dj) in FORWARD_STEP.items() if (ci + di, cj + dj) in fridge.cells)
    state.agent = Pose(ci, cj, facing, 30)
    blocked = env.step("Open", fridge.object_id)
    assert not blocked.result.success and "blocked from opening" in blocked.result.error
    counter = next(o for o in state.objects.values() if o.object_type == "CounterTop")
    nothing = env.step("Place", counter.object_id)
    assert nothing.result.error == "Agent is not holding any object"
