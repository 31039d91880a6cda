"""`ThorEnv` over a fake AI2-THOR controller (ai2thor's Unity build cannot run here).

`FakeController` speaks the part of ai2thor's `Controller` API that `ThorEnv` uses (`reset`,
`step(action=..., **kwargs)`, `last_event`, `stop`), records every action it receives, and answers
with `Event`-like objects whose metadata starts from `tests/data/thor/floorplan_sample.json`:
event metadata in AI2-THOR's format (agent, 16 objects, inventory, ...) and the scene's reachable
positions, hand-written for this test. It applies simple effects: moves of 0.25 m onto reachable
positions, turns, looks, pickup/put, open/close and other state changes, teleports and
SetObjectPoses; it marks objects `visible` within 1.5 m in the 90 degree view, as AI2-THOR does.
"""

from __future__ import annotations

import copy
import json
import math
import re
import sys
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from helper_agent.envs.base import Environment
from helper_agent.envs.thor import EnvironmentUnavailable, ThorEnv, grid_from_positions
from helper_agent.program.compiler import compile_program
from helper_agent.tools.executor import Executor
from helper_agent.world.errors import InvalidActionError, StateFormatError, UnknownObjectError

SAMPLE = Path(__file__).parent / "data" / "thor" / "floorplan_sample.json"

MUG = "Mug|+00.30|+00.95|-01.45"
BOWL = "Bowl|-00.30|+00.95|-01.40"
FRIDGE = "Fridge|+01.50|+00.00|+00.25"
APPLE = "Apple|+01.45|+00.85|+00.20"
COUNTER = "CounterTop|+00.00|+00.90|-01.50"
TABLE = "DiningTable|+00.00|+00.00|+00.25"
FAUCET = "Faucet|-00.90|+01.00|-01.75"
BREAD = "Bread|+00.05|+00.98|-01.60"
BASIN = "Sink|-00.90|+00.92|-01.50|SinkBasin"
KNIFE = "Knife|-00.05|+00.93|-01.35"
PAN = "Pan|+00.75|+00.95|-01.55"

# The 3 x 3 cells of the dining table (x -0.25..0.25, z 0..0.5) on the grid with origin (-1, -1).
TABLE_CELLS = {(i, j) for i in (3, 4, 5) for j in (4, 5, 6)}


# --------------------------------------------------------------------------------------------------
# the fake controller


class FakeEvent:
    def __init__(self, metadata: dict[str, Any], frame: Any) -> None:
        self.metadata = metadata
        self.frame = frame

    def __bool__(self) -> bool:  # as ai2thor's Event
        return bool(self.metadata["lastActionSuccess"])


def _box(obj: dict[str, Any]) -> tuple[float, float, float, float]:
    c, s = obj["axisAlignedBoundingBox"]["center"], obj["axisAlignedBoundingBox"]["size"]
    return c["x"] - s["x"] / 2, c["x"] + s["x"] / 2, c["z"] - s["z"] / 2, c["z"] + s["z"] / 2


class FakeController:
    """Records actions; applies a few effects to recorded AI2-THOR metadata."""

    VISIBILITY = 1.5

    def __init__(
        self, sample: Path = SAMPLE, *, frames: bool = True, scene: str | None = None, **init: Any
    ) -> None:
        self.sample = json.loads(Path(sample).read_text())
        self.frames = frames
        self.init_kwargs = init
        self.actions: list[dict[str, Any]] = []
        self.resets: list[str] = []
        self.stopped = False
        self.last_event: FakeEvent | None = None
        if scene is not None:
            self.reset(scene)

    # ai2thor API -----------------------------------------------------------------------------
    def reset(self, scene: str | None = None, **_: Any) -> FakeEvent:
        scene = scene or "FloorPlan1"
        self.resets.append(scene)
        self.md = copy.deepcopy(self.sample["metadata"])
        self.md["sceneName"] = scene + "_physics" if re.match(r"^FloorPlan\d+$", scene) else scene
        self.reachable = {(round(p["x"], 2), round(p["z"], 2)) for p in self.sample["reachablePositions"]}
        return self._event("Reset", "")

    def step(self, action: Any = None, **kwargs: Any) -> FakeEvent:
        if isinstance(action, dict):
            kwargs = {**action, **kwargs}
            action = kwargs.pop("action")
        self.actions.append({"action": action, **copy.deepcopy(kwargs)})
        handler = getattr(self, "_do_" + str(action), None)
        if handler is None:
            return self._event(action, f"Invalid action: {action}")
        outcome = handler(**kwargs)
        error, ret = outcome if isinstance(outcome, tuple) else (outcome, None)
        return self._event(action, error, ret)

    def stop(self) -> None:
        self.stopped = True

    # helpers ----------------------------------------------------------------------------------
    def sent(self, start: int = 0) -> list[dict[str, Any]]:
        """Actions received since `start`, without the environment's GetReachablePositions."""
        return [a for a in self.actions[start:] if a["action"] != "GetReachablePositions"]

    def obj(self, oid: str) -> dict[str, Any]:
        return next(o for o in self.md["objects"] if o["objectId"] == oid)

    @property
    def agent_xz(self) -> tuple[float, float]:
        p = self.md["agent"]["position"]
        return p["x"], p["z"]

    @property
    def yaw(self) -> float:
        return self.md["agent"]["rotation"]["y"]

    def _hidden(self, obj: dict[str, Any]) -> bool:
        for pid in obj.get("parentReceptacles") or ():
            parent = self.obj(pid)
            if (parent["openable"] and not parent["isOpen"]) or self._hidden(parent):
                return True
        return False

    def _geometry(self, obj: dict[str, Any]) -> tuple[float, bool]:
        ax, az = self.agent_xz
        x0, x1, z0, z1 = _box(obj)
        nearest = (min(max(ax, x0), x1), min(max(az, z0), z1))
        dist = math.hypot(nearest[0] - ax, nearest[1] - az)
        points = [nearest, ((x0 + x1) / 2, (z0 + z1) / 2), (x0, z0), (x0, z1), (x1, z0), (x1, z1)]

        def angle(p: tuple[float, float]) -> float:
            bearing = math.degrees(math.atan2(p[0] - ax, p[1] - az)) % 360
            diff = abs(bearing - self.yaw) % 360
            return min(diff, 360 - diff)

        return dist, dist < 1e-6 or any(angle(p) <= 45 + 1e-6 for p in points)

    def _visible(self, obj: dict[str, Any]) -> bool:
        if obj["isPickedUp"]:
            return True
        if self._hidden(obj):
            return False
        dist, in_view = self._geometry(obj)
        return in_view and dist <= self.VISIBILITY + 1e-6

    def _event(self, action: str, error: str, ret: Any = None) -> FakeEvent:
        ax, az = self.agent_xz
        for o in self.md["objects"]:
            o["visible"] = o["isInteractable"] = self._visible(o)
            p = o["position"]
            o["distance"] = round(math.dist((ax, 1.576, az), (p["x"], p["y"], p["z"])), 4)
        self.md.update(lastAction=action, lastActionSuccess=not error, errorMessage=error, actionReturn=ret)
        frame = (
            np.full((self.md["screenHeight"], self.md["screenWidth"], 3), 90, dtype=np.uint8)
            if self.frames
            else None
        )
        self.last_event = FakeEvent(copy.deepcopy(self.md), frame)
        return self.last_event

    def _interactable(self, oid: str, force: bool) -> str:
        if not any(o["objectId"] == oid for o in self.md["objects"]):
            return f"Object ID appears to be invalid: {oid}"
        if not force and not self._visible(self.obj(oid)):
            return f"{oid} is not interactable and (perhaps it is occluded by something)."
        return ""

    def _held(self) -> dict[str, Any] | None:
        inv = self.md["inventoryObjects"]
        return self.obj(inv[0]["objectId"]) if inv else None

    def _place_at(self, obj: dict[str, Any], x: float, y: float, z: float) -> None:
        obj["position"] = {"x": x, "y": y, "z": z}
        obj["axisAlignedBoundingBox"]["center"] = {"x": x, "y": y, "z": z}

    # actions ----------------------------------------------------------------------------------
    def _move(self, offset: float, magnitude: float) -> str:
        rad = math.radians(self.yaw + offset)
        ax, az = self.agent_xz
        tx, tz = round(ax + math.sin(rad) * magnitude, 2), round(az + math.cos(rad) * magnitude, 2)
        if (tx, tz) not in self.reachable:
            return f"Agent was blocked from moving: ({tx:.2f}, {tz:.2f}) is not reachable"
        self.md["agent"]["position"].update(x=tx, z=tz)
        if (held := self._held()) is not None:
            self._place_at(held, tx, 1.0, tz)
        return ""

    def _do_MoveAhead(self, moveMagnitude: float = 0.25, forceAction: bool = False) -> str:
        return self._move(0, moveMagnitude)

    def _do_MoveBack(self, moveMagnitude: float = 0.25, forceAction: bool = False) -> str:
        return self._move(180, moveMagnitude)

    def _do_MoveRight(self, moveMagnitude: float = 0.25, forceAction: bool = False) -> str:
        return self._move(90, moveMagnitude)

    def _do_MoveLeft(self, moveMagnitude: float = 0.25, forceAction: bool = False) -> str:
        return self._move(270, moveMagnitude)

    def _do_RotateLeft(self, degrees: float = 90, forceAction: bool = False) -> str:
        self.md["agent"]["rotation"]["y"] = (self.yaw - degrees) % 360
        return ""

    def _do_RotateRight(self, degrees: float = 90, forceAction: bool = False) -> str:
        self.md["agent"]["rotation"]["y"] = (self.yaw + degrees) % 360
        return ""

    def _look(self, delta: float) -> str:
        horizon = self.md["agent"]["cameraHorizon"] + delta
        if not -30 <= horizon <= 60:
            return f"can't look {'up' if delta < 0 else 'down'} beyond the camera's limits"
        self.md["agent"]["cameraHorizon"] = horizon
        return ""

    def _do_LookUp(self, degrees: float = 30, forceAction: bool = False) -> str:
        return self._look(-degrees)

    def _do_LookDown(self, degrees: float = 30, forceAction: bool = False) -> str:
        return self._look(degrees)

    def _do_GetReachablePositions(self) -> tuple[str, list[dict[str, float]]]:
        return "", copy.deepcopy(self.sample["reachablePositions"])

    def _do_TeleportFull(
        self,
        position: dict[str, float],
        rotation: dict[str, float],
        horizon: float,
        standing: bool = True,
        forceAction: bool = False,
    ) -> str:
        if (round(position["x"], 2), round(position["z"], 2)) not in self.reachable:
            return f"Teleport failed: ({position['x']}, {position['z']}) is not a valid agent position"
        self.md["agent"].update(
            position=dict(position), rotation={"x": 0.0, "y": rotation["y"], "z": 0.0}, cameraHorizon=horizon
        )
        return ""

    def _do_SetObjectPoses(self, objectPoses: list[dict[str, Any]], placeStationary: bool = True) -> str:
        by_name = {o["name"]: o for o in self.md["objects"]}
        kept = set()
        for pose in objectPoses:
            obj = by_name[pose["objectName"]]
            self._place_at(obj, *(pose["position"][k] for k in "xyz"))
            obj["rotation"] = dict(pose["rotation"])
            kept.add(obj["objectId"])
        gone = {
            o["objectId"]
            for o in self.md["objects"]
            if (o["pickupable"] or o["moveable"]) and o["objectId"] not in kept
        }
        self.md["objects"] = [o for o in self.md["objects"] if o["objectId"] not in gone]
        for o in self.md["objects"]:
            if o["receptacleObjectIds"]:
                o["receptacleObjectIds"] = [c for c in o["receptacleObjectIds"] if c not in gone]
        return ""

    def _do_PickupObject(self, objectId: str, forceAction: bool = False) -> str:
        if error := self._interactable(objectId, forceAction):
            return error
        obj = self.obj(objectId)
        if self._held() is not None:
            return "Agent's hand is already holding an object"
        if not obj["pickupable"]:
            return f"{objectId} must have the property CanPickup to be picked up."
        for pid in obj["parentReceptacles"] or ():
            self.obj(pid)["receptacleObjectIds"].remove(objectId)
        obj.update(isPickedUp=True, parentReceptacles=None)
        self.md["inventoryObjects"] = [{"objectId": objectId, "objectType": obj["objectType"]}]
        self._place_at(obj, *self.agent_xz[:1], 1.0, self.agent_xz[1])
        return ""

    def _do_PutObject(self, objectId: str, forceAction: bool = False, placeStationary: bool = True) -> str:
        held = self._held()
        if held is None:
            return "Nothing is in the agent's hand to place"
        if error := self._interactable(objectId, forceAction):
            return error
        target = self.obj(objectId)
        if not target["receptacle"]:
            return f"{objectId} is not a Receptacle"
        if target["openable"] and not target["isOpen"]:
            return "Target openable Receptacle is CLOSED, can't place if target is closed!"
        c = target["axisAlignedBoundingBox"]["center"]
        self._place_at(held, c["x"], c["y"] + 0.05, c["z"])
        held.update(isPickedUp=False, parentReceptacles=[objectId])
        target["receptacleObjectIds"] = (target["receptacleObjectIds"] or []) + [held["objectId"]]
        self.md["inventoryObjects"] = []
        return ""

    def _set(self, objectId: str, force: bool, flag: str, key: str, value: Any, **extra: Any) -> str:
        if error := self._interactable(objectId, force):
            return error
        obj = self.obj(objectId)
        if not obj[flag]:
            return f"{objectId} is not {flag}"
        if obj[key] == value and not extra:
            return f"{objectId} is already {key}={value}"
        obj[key] = value
        obj.update(extra)
        return ""

    def _do_OpenObject(self, objectId: str, forceAction: bool = False) -> str:
        return self._set(objectId, forceAction, "openable", "isOpen", True, openness=1.0)

    def _do_CloseObject(self, objectId: str, forceAction: bool = False) -> str:
        return self._set(objectId, forceAction, "openable", "isOpen", False, openness=0.0)

    def _do_ToggleObjectOn(self, objectId: str, forceAction: bool = False) -> str:
        return self._set(objectId, forceAction, "toggleable", "isToggled", True)

    def _do_ToggleObjectOff(self, objectId: str, forceAction: bool = False) -> str:
        return self._set(objectId, forceAction, "toggleable", "isToggled", False)

    def _do_CleanObject(self, objectId: str, forceAction: bool = False) -> str:
        return self._set(objectId, forceAction, "dirtyable", "isDirty", False)

    def _do_DirtyObject(self, objectId: str, forceAction: bool = False) -> str:
        return self._set(objectId, forceAction, "dirtyable", "isDirty", True)

    def _do_FillObjectWithLiquid(
        self, objectId: str, fillLiquid: str = "water", forceAction: bool = False
    ) -> str:
        return self._set(
            objectId, forceAction, "canFillWithLiquid", "isFilledWithLiquid", True, fillLiquid=fillLiquid
        )

    def _do_EmptyLiquidFromObject(self, objectId: str, forceAction: bool = False) -> str:
        return self._set(
            objectId, forceAction, "canFillWithLiquid", "isFilledWithLiquid", False, fillLiquid=None
        )

    def _do_SliceObject(self, objectId: str, forceAction: bool = False) -> str:
        held = self._held()
        if not forceAction and (held is None or held["objectType"] not in ("Knife", "ButterKnife")):
            return "Agent must be holding a Knife to slice"
        return self._set(objectId, forceAction, "sliceable", "isSliced", True)


# --------------------------------------------------------------------------------------------------
# fixtures


@pytest.fixture
def fake() -> FakeController:
    return FakeController()


@pytest.fixture
def env(fake: FakeController) -> ThorEnv:
    env = ThorEnv(controller=fake)
    env.reset("FloorPlan12")
    return env


def _view(obs: Any, oid: str) -> Any:
    return next((v for v in obs.visible if v.object_id == oid), None)


def _near_counter_state(**extra: Any) -> dict[str, Any]:
    """A state with no object poses: the agent stands in front of the mug, facing the counter."""
    state = {
        "sceneName": "FloorPlan12",
        "objects": [{"objectId": MUG, "isFilledWithLiquid": True, "fillLiquid": "water"}],
        "agent": {
            "position": {"x": 0.25, "y": 0.9009992, "z": -1.0},
            "rotation": {"x": 0, "y": 180, "z": 0},
            "cameraHorizon": 30,
        },
    }
    state.update(extra)
    return state


# --------------------------------------------------------------------------------------------------
# reset and observation


def test_reset_to_floor_plan_and_first_observation(fake: FakeController) -> None:
    env = ThorEnv(controller=fake)
    assert isinstance(env, Environment)
    obs = env.reset("FloorPlan12")
    assert fake.resets == ["FloorPlan12"]
    assert env.scene_name == "FloorPlan12"
    assert (env.steps, env.failures) == (0, 0)
    # (-0.75, 0.5) on the grid with origin (-1, -1), facing +x, level.
    assert obs.pose == (1, 6, 90, 0)
    assert obs.position == pytest.approx((-0.75, 0.5))
    assert obs.held_id is None
    table = _view(obs, TABLE)
    assert table is not None and table.interactable and table.distance == pytest.approx(0.4)
    assert set(table.footprint) == TABLE_CELLS
    # The fridge is ahead but 1.9 m away: seen, not in reach.
    fridge = _view(obs, FRIDGE)
    assert fridge is not None and not fridge.interactable and fridge.distance == pytest.approx(1.9)
    assert fridge.state["isOpen"] is False
    assert _view(obs, APPLE) is None  # inside the closed fridge
    assert _view(obs, MUG) is None  # behind the agent's right shoulder
    assert [v.distance for v in obs.visible] == sorted(v.distance for v in obs.visible)
    # AI2-THOR's structural Floor is not a type the agent knows: kept in metadata, not observed.
    assert not any(v.object_type == "Floor" for v in obs.visible) and env.unknown_types == {"Floor"}
    assert any(o["objectType"] == "Floor" for o in env.metadata()["objects"])

    env.reset(12)
    env.reset(room_type="Bedroom")
    assert fake.resets[1:] == ["FloorPlan12", "FloorPlan301"]


def test_navigation_grid_from_reachable_positions(env: ThorEnv, fake: FakeController) -> None:
    grid = env.navigation_grid()
    assert (grid.width, grid.depth, grid.grid_size) == (9, 8, 0.25)
    assert grid.origin == pytest.approx((-1.0, -1.0))
    assert set(grid.blocked) == TABLE_CELLS
    assert grid.walkable((1, 6)) and not grid.walkable((4, 5)) and not grid.walkable((9, 0))
    env.observe()
    env.step("Turn Left")
    assert env.navigation_grid() is grid
    assert sum(a["action"] == "GetReachablePositions" for a in fake.actions) == 1  # cached per scene

    assert grid_from_positions([{"x": 1.0, "z": 2.0}, {"x": 1.5, "z": 2.0}]).blocked == frozenset({(1, 0)})


def test_metadata_is_the_event_metadata(env: ThorEnv, fake: FakeController) -> None:
    md = env.metadata()
    assert md["sceneName"] == "FloorPlan12_physics"
    assert len(md["objects"]) == 16
    assert md["agent"]["position"]["x"] == pytest.approx(-0.75)
    assert md["inventoryObjects"] == []
    md["objects"].clear()
    assert len(env.metadata()["objects"]) == 16  # a copy
    assert {o["objectId"] for o in env.objects_metadata()} == {o["objectId"] for o in fake.md["objects"]}
    env.step("Pickup", FRIDGE)
    md = env.metadata()
    assert md["lastAction"] == "PickupObject" and md["lastActionSuccess"] is False
    assert "not interactable" in md["errorMessage"]


# --------------------------------------------------------------------------------------------------
# actions


def test_teach_actions_map_to_ai2thor_actions(fake: FakeController) -> None:
    env = ThorEnv(controller=fake)
    env.reset(_near_counter_state())
    cases = [
        ("Forward", None, {"action": "MoveAhead", "moveMagnitude": 0.25, "forceAction": False}),
        ("Backward", None, {"action": "MoveBack", "moveMagnitude": 0.25, "forceAction": False}),
        ("Pan Left", None, {"action": "MoveLeft", "moveMagnitude": 0.25, "forceAction": False}),
        ("Pan Right", None, {"action": "MoveRight", "moveMagnitude": 0.25, "forceAction": False}),
        ("Turn Left", None, {"action": "RotateLeft", "degrees": 90, "forceAction": False}),
        ("Turn Right", None, {"action": "RotateRight", "degrees": 90, "forceAction": False}),
        ("Look Up", None, {"action": "LookUp", "degrees": 30, "forceAction": False}),
        ("Look Down", None, {"action": "LookDown", "degrees": 30, "forceAction": False}),
        ("Pickup", MUG, {"action": "PickupObject", "objectId": MUG, "forceAction": False}),
        (
            "Place",
            COUNTER,
            {"action": "PutObject", "objectId": COUNTER, "placeStationary": True, "forceAction": False},
        ),
        ("Open", FRIDGE, {"action": "OpenObject", "objectId": FRIDGE, "forceAction": False}),
        ("Close", FRIDGE, {"action": "CloseObject", "objectId": FRIDGE, "forceAction": False}),
        ("ToggleOn", FAUCET, {"action": "ToggleObjectOn", "objectId": FAUCET, "forceAction": False}),
        ("ToggleOff", FAUCET, {"action": "ToggleObjectOff", "objectId": FAUCET, "forceAction": False}),
        ("Slice", BREAD, {"action": "SliceObject", "objectId": BREAD, "forceAction": False}),
    ]
    results = []
    for teach, oid, expected in cases:
        start = len(fake.actions)
        outcome = env.step(teach, oid)
        assert fake.sent(start) == [expected], teach
        assert outcome.result.action == teach and outcome.result.object_id == oid
        results.append(outcome.result)
    start = len(fake.actions)
    stop = env.step("Stop")
    assert stop.result.success and fake.sent(start) == []
    assert env.steps == len(cases) + 1
    assert env.failures == sum(not r.success for r in results)
    # Pickup and Place of the mug succeeded from there; slicing without a knife did not.
    by_action = {r.action: r for r in results}
    assert by_action["Pickup"].success and by_action["Place"].success
    assert MUG in by_action["Pickup"].changed
    assert not by_action["Slice"].success and "Knife" in by_action["Slice"].error


def test_failures_are_counted_and_invalid_input_is_not(env: ThorEnv, fake: FakeController) -> None:
    first = env.step("Forward")
    assert first.result.success and first.observation.pose == (2, 6, 90, 0)
    blocked = env.step("Forward")  # the dining table
    assert not blocked.result.success and "blocked" in blocked.result.error
    assert blocked.observation.pose == (2, 6, 90, 0)
    assert blocked.observation.last_action == "Forward" and not blocked.observation.last_success
    assert (env.steps, env.failures) == (2, 1)

    sent = len(fake.actions)
    with pytest.raises(InvalidActionError):
        env.step("Fly")
    with pytest.raises(InvalidActionError):
        env.step("Pickup")
    with pytest.raises(UnknownObjectError):
        env.step("Pickup", "Unicorn|+01.00|+00.90|+00.00")
    assert (env.steps, env.failures) == (2, 1)
    assert len(fake.actions) == sent

    # AI2-THOR spellings are accepted for TEACh's actions.
    assert env.step("RotateLeft").observation.pose == (2, 6, 0, 0)
    assert env.step("LookDown").observation.pose == (2, 6, 0, 30)
    assert env.history[-1] == ("Look Down", None, True)


def test_open_fridge_shows_its_contents(fake: FakeController) -> None:
    env = ThorEnv(controller=fake)
    obs = env.reset(
        {
            "sceneName": "FloorPlan12",
            "agent": {"position": {"x": 0.5, "y": 0.9, "z": 0.25}, "rotation": {"y": 90}, "cameraHorizon": 0},
        }
    )
    assert obs.pose == (6, 5, 90, 0)
    assert _view(obs, FRIDGE).interactable and _view(obs, APPLE) is None
    opened = env.step("Open", FRIDGE)
    assert opened.result.success and FRIDGE in opened.result.changed
    apple = _view(opened.observation, APPLE)
    assert apple is not None and apple.interactable
    assert apple.parent_id == FRIDGE
    assert apple.footprint == ((10, 5),)  # the fridge cell under the apple
    assert _view(opened.observation, FRIDGE).state["isOpen"] is True
    picked = env.step("Pickup", APPLE)
    assert picked.result.success
    assert picked.observation.held_id == APPLE
    held = _view(picked.observation, APPLE)
    assert held.distance == 0 and held.interactable and held.footprint == ()


def test_pour_is_emulated_with_fill_and_empty(fake: FakeController) -> None:
    env = ThorEnv(controller=fake)
    env.reset(_near_counter_state())
    assert env.restore_report.actions == [
        {"action": "FillObjectWithLiquid", "objectId": MUG, "forceAction": True, "fillLiquid": "water"},
        {
            "action": "TeleportFull",
            "position": {"x": 0.25, "y": 0.9009992, "z": -1.0},
            "rotation": {"x": 0.0, "y": 180.0, "z": 0.0},
            "horizon": 30.0,
            "standing": True,
        },
    ]
    assert env.steps == 0

    nothing = env.step("Pour", BOWL)
    assert not nothing.result.success and "not holding" in nothing.result.error
    assert env.step("Pickup", MUG).result.success

    start = len(fake.actions)
    assert "cannot pour" in env.step("Pour", FRIDGE).result.error
    assert fake.sent(start) == []
    poured = env.step("Pour", BOWL)
    assert poured.result.success, poured.result.error
    assert fake.sent(start) == [
        {"action": "FillObjectWithLiquid", "objectId": BOWL, "fillLiquid": "water", "forceAction": False},
        {"action": "EmptyLiquidFromObject", "objectId": MUG, "forceAction": False},
    ]
    assert set(poured.result.changed) == {BOWL, MUG}
    assert _view(poured.observation, BOWL).state["isFilledWithLiquid"] is True
    assert _view(poured.observation, MUG).state["isFilledWithLiquid"] is False
    again = env.step("Pour", BOWL)
    assert not again.result.success and "not filled" in again.result.error
    assert (env.steps, env.failures) == (5, 3)


def test_pour_into_a_sink_only_empties(fake: FakeController) -> None:
    env = ThorEnv(controller=fake)
    env.reset(_near_counter_state())
    env.step("Pickup", MUG)
    far = env.step("Pour", BASIN)
    assert not far.result.success and "not interactable" in far.result.error
    for _ in range(3):
        assert env.step("Pan Right").result.success
    start = len(fake.actions)
    drained = env.step("Pour", BASIN)
    assert drained.result.success, drained.result.error
    assert fake.sent(start) == [{"action": "EmptyLiquidFromObject", "objectId": MUG, "forceAction": False}]
    assert fake.obj(MUG)["isFilledWithLiquid"] is False


# --------------------------------------------------------------------------------------------------
# restoring a TEACh initial state


def _teach_episode() -> dict[str, Any]:
    table_top = {"x": 0.1, "y": 0.76, "z": 0.3}
    return {
        "episode_id": "e1",
        "world": "FloorPlan12",
        "world_type": "Kitchen",
        "initial_state": {
            "agents": [
                {
                    "position": {"x": 0.0, "y": 2.5, "z": 0.0},
                    "rotation": {"x": 90.0, "y": 0.0, "z": 0.0},
                    "cameraHorizon": 0.0,
                },
                {
                    "position": {"x": 0.5, "y": 0.9009992, "z": 0.75},
                    "rotation": {"x": 0.0, "y": 180.0, "z": 0.0},
                    "cameraHorizon": 30.0,
                },
            ],
            "objects": [
                {
                    "objectId": MUG,
                    "objectType": "Mug",
                    "name": "Mug_0d3e5f9a",
                    "position": table_top,
                    "rotation": {"x": 0.0, "y": 45.0, "z": 0.0},
                    "isDirty": False,
                    "isFilledWithLiquid": False,
                },
                {
                    "objectId": TABLE,
                    "objectType": "DiningTable",
                    "position": {"x": 0.0, "y": 0.0, "z": 0.25},
                    "rotation": {"x": 0.0, "y": 0.0, "z": 0.0},
                },
                # Another recording's id for the bowl: matched by type and position.
                {
                    "objectId": "Bowl|-00.31|+00.95|-01.38",
                    "objectType": "Bowl",
                    "position": {"x": -0.31, "y": 0.95, "z": -1.38},
                    "rotation": {"x": 0.0, "y": 0.0, "z": 0.0},
                },
                {
                    "objectId": FRIDGE,
                    "objectType": "Fridge",
                    "position": {"x": 1.5, "y": 0.0, "z": 0.25},
                    "isOpen": True,
                },
                {
                    "objectId": FAUCET,
                    "objectType": "Faucet",
                    "position": {"x": -0.9, "y": 1.0, "z": -1.75},
                    "isToggled": True,
                },
                {
                    "objectId": "Tomato|+00.20|+00.95|-01.20",
                    "objectType": "Tomato",
                    "position": {"x": 0.2, "y": 0.95, "z": -1.2},
                },
            ],
            "custom_object_metadata": {MUG: {"simbotIsFilledWithWater": 0}},
        },
    }


def test_reset_restores_a_teach_initial_state(fake: FakeController, tmp_path: Path) -> None:
    env = ThorEnv(controller=fake)
    obs = env.reset(_teach_episode())
    assert fake.resets == ["FloorPlan12"]
    restore = env.restore_report.actions
    assert restore[0]["action"] == "SetObjectPoses" and restore[0]["placeStationary"] is True
    poses = {p["objectName"]: p for p in restore[0]["objectPoses"]}
    assert set(poses) == {"Mug_0d3e5f9a", "DiningTable_a04e71bc", "Bowl_7a21c6e3"}
    assert poses["Mug_0d3e5f9a"]["position"] == {"x": 0.1, "y": 0.76, "z": 0.3}
    assert poses["Mug_0d3e5f9a"]["rotation"] == {"x": 0.0, "y": 45.0, "z": 0.0}
    assert [(a["action"], a.get("objectId"), a.get("forceAction")) for a in restore[1:]] == [
        ("OpenObject", FRIDGE, True),
        ("ToggleObjectOn", FAUCET, True),
        ("CleanObject", MUG, True),
        ("TeleportFull", None, None),
    ]
    # The driver (TEACh's second agent) is placed, not the commander's camera.
    assert (
        restore[-1]["position"]["x"] == 0.5
        and restore[-1]["rotation"]["y"] == 180.0
        and restore[-1]["horizon"] == 30.0
    )
    report = env.restore_report
    assert report.unmatched == ["Tomato|+00.20|+00.95|-01.20"]
    assert set(report.removed) == {APPLE, KNIFE, BREAD, PAN}  # SetObjectPoses drops unlisted pickupables
    assert report.problems == [] and not report.complete
    assert env.custom_object_metadata == {MUG: {"simbotIsFilledWithWater": 0}}

    assert obs.pose == (6, 7, 180, 30)
    assert (env.steps, env.failures) == (0, 0)
    objects = {o["objectId"]: o for o in env.objects_metadata()}
    assert objects[FRIDGE]["isOpen"] and objects[FAUCET]["isToggled"] and not objects[MUG]["isDirty"]
    assert objects[MUG]["position"] == {"x": 0.1, "y": 0.76, "z": 0.3}
    assert APPLE not in objects

    # The same state from a game file on disk.
    game = {"tasks": [{"task_id": 1, "episodes": [_teach_episode()]}]}
    path = tmp_path / "g.game.json"
    path.write_text(json.dumps(game))
    assert env.reset(path).pose == (6, 7, 180, 30)
    assert env.reset(str(path)).pose == (6, 7, 180, 30)

    with pytest.raises(StateFormatError):
        env.reset({"objects": []})


# --------------------------------------------------------------------------------------------------
# the executor over ThorEnv


def test_executor_walks_to_and_picks_up_the_mug(env: ThorEnv, fake: FakeController) -> None:
    program = compile_program('mug = InteractionObject("Mug")\nmug.pickup()')
    result = Executor(env).run(program.subgoals)
    assert result.status == "done", (result.error, [t.actions for t in result.trace])
    assert env.observe().held_id == MUG
    assert env.metadata()["inventoryObjects"] == [{"objectId": MUG, "objectType": "Mug"}]
    sent = fake.sent()
    assert sent[-1] == {"action": "PickupObject", "objectId": MUG, "forceAction": False}
    assert any(a["action"] == "MoveAhead" for a in sent)
    assert env.steps == len(sent) == result.steps


# --------------------------------------------------------------------------------------------------
# rendering and unavailability


def test_render_saves_the_frame(env: ThorEnv, tmp_path: Path) -> None:
    from PIL import Image

    out = env.render(tmp_path / "frames" / "view.png")
    assert out.exists()
    with Image.open(out) as image:
        assert image.size == (300, 300)

    blind = ThorEnv(controller=FakeController(frames=False))
    blind.reset("FloorPlan12")
    with pytest.raises(RuntimeError, match="no RGB frame"):
        blind.render(tmp_path / "none.png")


def test_environment_unavailable_without_ai2thor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ai2thor", None)
    monkeypatch.setitem(sys.modules, "ai2thor.controller", None)
    env = ThorEnv()
    with pytest.raises(EnvironmentUnavailable, match="ai2thor") as info:
        env.reset("FloorPlan12")
    assert "pip install" in str(info.value) and "SymbolicEnv" in str(info.value)
    with pytest.raises(EnvironmentUnavailable):
        _ = env.controller


def test_environment_unavailable_when_unity_cannot_start(monkeypatch: pytest.MonkeyPatch) -> None:
    received: dict[str, Any] = {}

    def failing_controller(**kwargs: Any) -> Any:
        received.update(kwargs)
        raise ConnectionError("could not download the Unity build")

    module = types.ModuleType("ai2thor.controller")
    module.Controller = failing_controller  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ai2thor.controller", module)
    env = ThorEnv(controller_kwargs={"width": 600})
    with pytest.raises(EnvironmentUnavailable) as info:
        env.reset("FloorPlan12")
    message = str(info.value)
    assert "network" in message and "CloudRendering" in message and "Unity build" in message
    assert isinstance(info.value.__cause__, ConnectionError)
    assert received["scene"] == "FloorPlan12"
    assert received["gridSize"] == 0.25 and received["visibilityDistance"] == 1.5
    assert received["renderDepthImage"] is False and received["width"] == 600


def test_controller_created_lazily_and_stopped_on_close(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[FakeController] = []

    def controller(**kwargs: Any) -> FakeController:
        made.append(FakeController(**kwargs))
        return made[-1]

    module = types.ModuleType("ai2thor.controller")
    module.Controller = controller  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ai2thor.controller", module)
    with ThorEnv() as env:
        assert not made
        obs = env.reset("FloorPlan12")
        assert len(made) == 1 and made[0].resets == ["FloorPlan12"]  # loaded once, at creation
        assert made[0].init_kwargs["rotateStepDegrees"] == 90
        assert obs.pose == (1, 6, 90, 0)
        env.reset("FloorPlan12")
        assert len(made) == 1
    assert made[0].stopped
