"""`ThorEnv`: the environment protocol over a real AI2-THOR controller (`ai2thor` 5.x).

The controller is created lazily on first use, from `controller_kwargs` over TEACh-like defaults
(0.25 m grid, 90 degree turns, 1.5 m visibility distance, no depth or segmentation images), unless
one is injected. `ai2thor` is an optional dependency (`pip install 'helper-agent[thor]'`), and a
`Controller` downloads its Unity build on first start, so creating one needs network access once
and a display (an X server) or ``platform=CloudRendering`` (headless Vulkan). When it cannot start,
`EnvironmentUnavailable` says why.

TEACh actions map to AI2-THOR actions one to one (Forward -> MoveAhead 0.25 m, Turn Left ->
RotateLeft 90 degrees, Look Down -> LookDown 30 degrees, Pan Left -> MoveLeft, Pickup ->
PickupObject, Place -> PutObject on the receptacle, Open -> OpenObject, ToggleOn ->
ToggleObjectOn, Slice -> SliceObject ...), always with ``forceAction=False`` so AI2-THOR checks
visibility and reach. AI2-THOR has no Pour: it is emulated (see `ThorEnv.step`). Every call to
`step` is one TEACh step, whatever the number of controller actions behind it.

`reset` takes a floor plan (``"FloorPlan12"`` or ``12``), or a TEACh-style state: a dict with the
scene name and ``objects`` (poses and states) and the agent pose, a TEACh episode or game dict,
or a path to a JSON file holding one. What a state restores is described in `ThorEnv.reset`.

Observations are built from ``event.metadata``: the agent's grid cell (origin at the smallest
reachable x and z), its yaw rounded to 90 degrees and horizon to 30; the held object from
``inventoryObjects``; the objects AI2-THOR marks ``visible`` plus those within
`perception_distance` inside the 90 degree view and not shut in a closed receptacle (walls do not
occlude: AI2-THOR's metadata has no far-range visibility). Objects of types the catalog does not
know (AI2-THOR's structural ``Floor``, say) stay in `metadata()` but are left out of observations,
since the planner and executor cannot act on them; `unknown_types` lists them.
"""

from __future__ import annotations

import copy
import importlib
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from helper_agent.envs.base import NavigationGrid, ObjectView, Observation, StepOutcome
from helper_agent.world.actions import ACTIONS, INTERACTION_ACTIONS, ActionResult, canonical_action
from helper_agent.world.catalog import Catalog, load_catalog
from helper_agent.world.effects import DRAIN_TYPES
from helper_agent.world.errors import InvalidActionError, StateFormatError, UnknownObjectError
from helper_agent.world.geometry import (
    GRID_SIZE,
    HALF_FOV_DEG,
    INTERACTION_DISTANCE,
    PERCEPTION_DISTANCE,
    angle_to,
    in_vertical_view,
)

ROTATE_DEGREES = 90
LOOK_DEGREES = 30

#: Controller arguments used unless `controller_kwargs` overrides them (AI2-THOR's documented
#: initialization parameters, set as TEACh plays: 0.25 m steps, 90 degree turns, 1.5 m reach).
DEFAULT_CONTROLLER_KWARGS: dict[str, Any] = {
    "agentMode": "default",
    "gridSize": GRID_SIZE,
    "snapToGrid": True,
    "rotateStepDegrees": ROTATE_DEGREES,
    "visibilityDistance": INTERACTION_DISTANCE,
    "renderDepthImage": False,
    "renderInstanceSegmentation": False,
    "width": 300,
    "height": 300,
    "fieldOfView": 90,
}

#: TEACh action -> (AI2-THOR action, fixed arguments). Interactions also get ``objectId``.
THOR_ACTIONS: dict[str, tuple[str, dict[str, Any]]] = {
    "Forward": ("MoveAhead", {"moveMagnitude": GRID_SIZE}),
    "Backward": ("MoveBack", {"moveMagnitude": GRID_SIZE}),
    "Pan Left": ("MoveLeft", {"moveMagnitude": GRID_SIZE}),
    "Pan Right": ("MoveRight", {"moveMagnitude": GRID_SIZE}),
    "Turn Left": ("RotateLeft", {"degrees": ROTATE_DEGREES}),
    "Turn Right": ("RotateRight", {"degrees": ROTATE_DEGREES}),
    "Look Up": ("LookUp", {"degrees": LOOK_DEGREES}),
    "Look Down": ("LookDown", {"degrees": LOOK_DEGREES}),
    "Pickup": ("PickupObject", {}),
    "Place": ("PutObject", {"placeStationary": True}),
    "Open": ("OpenObject", {}),
    "Close": ("CloseObject", {}),
    "ToggleOn": ("ToggleObjectOn", {}),
    "ToggleOff": ("ToggleObjectOff", {}),
    "Slice": ("SliceObject", {}),
}

#: First floor plan of each TEACh room type (AI2-THOR numbers kitchens 1-30, living rooms 201-230,
#: bedrooms 301-330, bathrooms 401-430).
ROOM_FLOOR_PLANS = {"Kitchen": 1, "LivingRoom": 201, "Bedroom": 301, "Bathroom": 401}

#: State restoration, in this order: (capability flag, state key, action when True, when False).
#: Cooking comes before slicing (slicing replaces the object), breaking last.
RESTORED_STATES: tuple[tuple[str, str, str, str | None], ...] = (
    ("openable", "isOpen", "OpenObject", "CloseObject"),
    ("toggleable", "isToggled", "ToggleObjectOn", "ToggleObjectOff"),
    ("dirtyable", "isDirty", "DirtyObject", "CleanObject"),
    ("canFillWithLiquid", "isFilledWithLiquid", "FillObjectWithLiquid", "EmptyLiquidFromObject"),
    ("canBeUsedUp", "isUsedUp", "UseUpObject", None),
    ("cookable", "isCooked", "CookObject", None),
    ("sliceable", "isSliced", "SliceObject", None),
    ("breakable", "isBroken", "BreakObject", None),
)

# Object fields whose change marks an object as changed by an action.
_TRACKED_FIELDS = (
    "isOpen",
    "isToggled",
    "isPickedUp",
    "isSliced",
    "isDirty",
    "isCooked",
    "isBroken",
    "isFilledWithLiquid",
    "fillLiquid",
    "isUsedUp",
    "parentReceptacles",
    "receptacleObjectIds",
)

_EPS = 1e-6


class EnvironmentUnavailable(RuntimeError):
    """The AI2-THOR controller cannot be created here (package missing, or Unity cannot start)."""


@dataclass
class RestoreReport:
    """What `reset` did to bring a scene to a saved state, and what it could not do."""

    actions: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)  # state objects with no scene counterpart
    removed: list[str] = field(default_factory=list)  # scene objects SetObjectPoses left out

    @property
    def complete(self) -> bool:
        return not self.problems and not self.unmatched


class ThorEnv:
    """Runs TEACh actions in AI2-THOR through a `Controller` (injected, or created on first use).

    Steps and failures are counted from the last reset. `restore_report` describes the last
    state restoration. `close()` stops a controller this environment created.
    """

    def __init__(
        self,
        controller: Any = None,
        controller_kwargs: Mapping[str, Any] | None = None,
        perception_distance: float = PERCEPTION_DISTANCE,
        *,
        catalog: Catalog | None = None,
    ) -> None:
        self._controller = controller
        self.catalog = catalog or load_catalog()
        self.unknown_types: set[str] = set()
        self._owns_controller = False
        self.controller_kwargs: dict[str, Any] = {
            **DEFAULT_CONTROLLER_KWARGS,
            **dict(controller_kwargs or {}),
        }
        self.perception_distance = perception_distance
        self.steps = 0
        self.failures = 0
        self.history: list[tuple[str, str | None, bool]] = []
        self.scene_name: str | None = None
        self.restore_report = RestoreReport()
        self.custom_object_metadata: dict[str, dict[str, Any]] = {}
        self._event: Any = None
        self._grids: dict[str, NavigationGrid] = {}
        self._footprints: dict[tuple[Any, ...], tuple[tuple[int, int], ...]] = {}

    # ------------------------------------------------------------------ the controller
    @property
    def controller(self) -> Any:
        if self._controller is None:
            self._controller = self._create_controller()
        return self._controller

    def _create_controller(self, scene: str | None = None) -> Any:
        try:
            module = importlib.import_module("ai2thor.controller")
        except ImportError as exc:
            raise EnvironmentUnavailable(
                "ThorEnv needs the ai2thor package, which is not installed: "
                "pip install 'helper-agent[thor]' (ai2thor==5.0.0), or use SymbolicEnv, the embedded simulator"
            ) from exc
        kwargs = dict(self.controller_kwargs)
        if scene is not None:
            kwargs["scene"] = scene
        try:
            controller = module.Controller(**kwargs)
        except Exception as exc:  # ai2thor raises many kinds: download, X display, Unity start, timeouts
            raise EnvironmentUnavailable(
                f"could not start the AI2-THOR controller ({type(exc).__name__}: {exc}). "
                "ai2thor downloads its Unity build (hundreds of MB) the first time, which needs network "
                "access, and Unity renders either on a display (an X server; set DISPLAY or x_display) or "
                "headless with controller_kwargs={'platform': ai2thor.platform.CloudRendering} (needs "
                "Vulkan). Without them, use SymbolicEnv, the embedded simulator."
            ) from exc
        self._owns_controller = True
        return controller

    def close(self) -> None:
        """Stop the controller if this environment created it."""
        if self._controller is not None and self._owns_controller:
            self._controller.stop()
            self._controller = None
            self._owns_controller = False

    def __enter__(self) -> ThorEnv:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _thor(self, action: str, **kwargs: Any) -> Any:
        return self.controller.step(action=action, **kwargs)

    # ------------------------------------------------------------------ lifecycle
    def reset(self, scene: Any = None, *, room_type: str | None = None) -> Observation:
        """Load a floor plan, optionally restoring a saved state; counters start from zero.

        `scene`: None (the first floor plan of `room_type`, a kitchen by default), a floor plan
        number or name, a state dict (``sceneName``/``world``/``scene``, ``objects``, and ``agent``
        or TEACh's ``agents``), a TEACh episode or game dict (its ``initial_state`` in its
        ``world``), or a path to a JSON file holding any of these.

        A state is restored as TEACh's simulator does, best effort, without counting steps:
        1. ``SetObjectPoses`` (``placeStationary``) puts every pickupable or moveable scene object
           that matches a state object (by id, else by name, else the nearest of the same type) at
           the state's position and rotation. AI2-THOR removes the pickupable and moveable objects
           left out: scene objects the state does not mention disappear, as in TEACh. Skipped when
           no pickupable or moveable object of the state has a position.
        2. Per-object actions (``forceAction=True``) set isOpen, isToggled, isDirty,
           isFilledWithLiquid (with its ``fillLiquid``), isUsedUp, isCooked, isSliced and isBroken
           where the scene differs; the last four can only be turned on.
        3. ``TeleportFull`` puts the agent (TEACh's driver) at its position, yaw and horizon.
        Not restored: containment beyond what physics makes of the poses, held objects, and
        TEACh's custom properties (``custom_object_metadata`` is kept in
        `self.custom_object_metadata`, not applied). `restore_report` lists what failed.
        """
        name, state = self._parse_scene(scene, room_type)
        if self._controller is None:
            # Created with the scene, so the scene loads once. (An ai2thor Event is falsy when
            # its action failed: compare with None.)
            self._controller = self._create_controller(name)
            event = getattr(self._controller, "last_event", None)
            if event is None:
                event = self._controller.reset(scene=name)
        else:
            event = self._controller.reset(scene=name)
        self._event = event if event is not None else self.controller.last_event
        self.scene_name = _base_scene_name(self._event.metadata.get("sceneName") or name)
        self.restore_report = RestoreReport()
        self.custom_object_metadata = {}
        self._footprints.clear()
        if state is not None:
            # Objects move: the reachable area may change, so the grid is recomputed.
            self._grids.pop(self.scene_name, None)
            self._restore(state)
        self.steps = 0
        self.failures = 0
        self.history = []
        return self.observe()

    def _parse_scene(self, scene: Any, room_type: str | None) -> tuple[str, dict[str, Any] | None]:
        if scene is None:
            room = room_type or "Kitchen"
            if room not in ROOM_FLOOR_PLANS:
                raise ValueError(f"unknown room type {room!r}; expected one of {', '.join(ROOM_FLOOR_PLANS)}")
            return f"FloorPlan{ROOM_FLOOR_PLANS[room]}", None
        if isinstance(scene, bool):
            raise TypeError("scene must be a floor plan, a state, or a path")
        if isinstance(scene, int):
            return f"FloorPlan{scene}", None
        if isinstance(scene, Path) or (isinstance(scene, str) and scene.endswith(".json")):
            path = Path(scene)
            try:
                data = json.loads(path.read_text())
            except (OSError, ValueError) as exc:
                raise StateFormatError(f"cannot read a state from {path}: {exc}") from exc
            return self._parse_scene(data, room_type)
        if isinstance(scene, str):
            if not scene:
                raise ValueError("empty scene name")
            return _base_scene_name(scene), None
        if hasattr(scene, "model_dump"):  # a TEACh Game / Episode / EpisodeState record
            return self._parse_scene(scene.model_dump(), room_type)
        if isinstance(scene, Mapping):
            return _state_from_mapping(scene)
        raise TypeError(f"cannot reset to a {type(scene).__name__}")

    # ------------------------------------------------------------------ restoring a state
    def _restore_step(self, action: str, **kwargs: Any) -> bool:
        record = {"action": action, **kwargs}
        self.restore_report.actions.append(record)
        event = self._thor(action, **kwargs)
        self._event = event
        if not event.metadata.get("lastActionSuccess", False):
            target = f" {kwargs['objectId']}" if "objectId" in kwargs else ""
            self.restore_report.problems.append(
                f"{action}{target}: {event.metadata.get('errorMessage') or 'failed'}"
            )
            return False
        return True

    def _restore(self, state: dict[str, Any]) -> None:
        report = self.restore_report
        custom = state.get("custom_object_metadata")
        if isinstance(custom, Mapping):
            self.custom_object_metadata = {
                str(k): dict(v) for k, v in custom.items() if isinstance(v, Mapping)
            }
        wanted = [o for o in state.get("objects") or [] if isinstance(o, Mapping)]
        if wanted:
            matches = self._match_objects(wanted)
            poses = []
            for want in wanted:
                scene_obj = matches.get(id(want))
                if scene_obj is None:
                    report.unmatched.append(str(want.get("objectId") or want.get("name")))
                    continue
                if not (scene_obj.get("pickupable") or scene_obj.get("moveable")) or not _is_xyz(
                    want.get("position")
                ):
                    continue
                rotation = (
                    want.get("rotation") if _is_xyz(want.get("rotation")) else scene_obj.get("rotation")
                )
                poses.append(
                    {
                        "objectName": _base_name(scene_obj.get("name") or scene_obj["objectId"]),
                        "position": _xyz(want["position"]),
                        "rotation": _xyz(rotation or {"x": 0.0, "y": 0.0, "z": 0.0}),
                    }
                )
            if poses:
                posed = {p["objectName"] for p in poses}
                report.removed = [
                    o["objectId"]
                    for o in self._objects()
                    if (o.get("pickupable") or o.get("moveable"))
                    and _base_name(o.get("name") or o["objectId"]) not in posed
                ]
                self._restore_step("SetObjectPoses", objectPoses=poses, placeStationary=True)
            self._restore_states(wanted, matches)
        agent = _driver_pose(state)
        if agent is not None:
            self._teleport(agent)

    def _match_objects(self, wanted: list[Mapping[str, Any]]) -> dict[int, dict[str, Any]]:
        """State object (by `id()`) -> scene object: same id, else same name, else nearest same type."""
        scene = self._objects()
        by_id = {o["objectId"]: o for o in scene}
        by_name = {_base_name(o.get("name") or ""): o for o in scene if o.get("name")}
        used: set[str] = set()
        matches: dict[int, dict[str, Any]] = {}
        pending = []
        for want in wanted:
            found = by_id.get(str(want.get("objectId")))
            if found is None and want.get("name"):
                found = by_name.get(_base_name(str(want["name"])))
            if found is not None and found["objectId"] not in used:
                matches[id(want)] = found
                used.add(found["objectId"])
            else:
                pending.append(want)
        for want in pending:
            wtype = want.get("objectType") or _type_from_id(str(want.get("objectId", "")))
            candidates = [o for o in scene if o.get("objectType") == wtype and o["objectId"] not in used]
            if not candidates:
                continue
            if _is_xyz(want.get("position")):
                wx, wy, wz = _point(want["position"])
                best = min(candidates, key=lambda o: math.dist(_point(o["position"]), (wx, wy, wz)))
            else:
                best = candidates[0]
            matches[id(want)] = best
            used.add(best["objectId"])
        return matches

    def _restore_states(self, wanted: list[Mapping[str, Any]], matches: dict[int, dict[str, Any]]) -> None:
        for flag, key, on_action, off_action in RESTORED_STATES:
            current = {o["objectId"]: o for o in self._objects()}
            for want in wanted:
                if key not in want or id(want) not in matches:
                    continue
                oid = matches[id(want)]["objectId"]
                obj = current.get(oid)
                if obj is None or not obj.get(flag):
                    continue
                desired = bool(want[key])
                liquid_differs = (
                    key == "isFilledWithLiquid"
                    and desired
                    and want.get("fillLiquid")
                    and want.get("fillLiquid") != obj.get("fillLiquid")
                )
                if bool(obj.get(key)) == desired and not liquid_differs:
                    continue
                action = on_action if desired else off_action
                if action is None:
                    self.restore_report.problems.append(
                        f"{oid}: cannot set {key}={desired} (AI2-THOR cannot undo it)"
                    )
                    continue
                kwargs: dict[str, Any] = {"objectId": oid, "forceAction": True}
                if action == "FillObjectWithLiquid":
                    kwargs["fillLiquid"] = want.get("fillLiquid") or "water"
                self._restore_step(action, **kwargs)

    def _teleport(self, agent: Mapping[str, Any]) -> None:
        current = self._event.metadata.get("agent") or {}
        here = current.get("position") or {}
        position = agent.get("position") if isinstance(agent.get("position"), Mapping) else {}
        x = float(position.get("x", here.get("x", 0.0)))
        z = float(position.get("z", here.get("z", 0.0)))
        # The floor fixes the height: keep the scene's own when it has one.
        y = float(here.get("y", position.get("y", 0.9)))
        rotation = agent.get("rotation", 0.0)
        yaw = float(rotation.get("y", 0.0)) if isinstance(rotation, Mapping) else float(rotation or 0.0)
        horizon = float(agent.get("cameraHorizon", agent.get("horizon", 0.0)) or 0.0)
        self._restore_step(
            "TeleportFull",
            position={"x": x, "y": y, "z": z},
            rotation={"x": 0.0, "y": yaw, "z": 0.0},
            horizon=horizon,
            standing=True,
        )

    # ------------------------------------------------------------------ acting
    def step(self, action: str, object_id: str | None = None) -> StepOutcome:
        """One TEACh step. Invalid input raises `WorldError` and is neither sent nor counted.

        Pour is emulated, since AI2-THOR has no such action: the held object must be filled; a
        target that can hold liquid gets ``FillObjectWithLiquid`` (the held object's liquid), a sink
        or bathtub just drains, then the held object gets ``EmptyLiquidFromObject``. Anything else
        fails. If the target fills but the emptying fails, the target stays filled.
        """
        name = canonical_action(action) if isinstance(action, str) else None
        if name is None:
            raise InvalidActionError(f"unknown action {action!r}; expected one of: {', '.join(ACTIONS)}")
        objects = self._objects()
        if name in INTERACTION_ACTIONS:
            if not object_id:
                raise InvalidActionError(f"action {name!r} needs an object id")
            if not any(o.get("objectId") == object_id for o in objects):
                raise UnknownObjectError(f"object id {object_id!r} is not in scene {self.scene_name!r}")
        before = _snapshot(objects) if name in INTERACTION_ACTIONS else None
        if name == "Stop":
            result = ActionResult(name, object_id, True)
        elif name == "Pour":
            assert object_id is not None
            result = self._pour(object_id)
        else:
            thor_action, fixed = THOR_ACTIONS[name]
            kwargs = dict(fixed)
            if name in INTERACTION_ACTIONS:
                kwargs["objectId"] = object_id
            kwargs["forceAction"] = False
            result = self._result(name, object_id, self._thor(thor_action, **kwargs))
        if before is not None:
            after = _snapshot(self._objects())
            result.changed.extend(oid for oid, fields in after.items() if before.get(oid) != fields)
            result.changed.extend(oid for oid in before if oid not in after)
        self.steps += 1
        if not result.success:
            self.failures += 1
        self.history.append((name, object_id, result.success))
        return StepOutcome(result, lambda: self.observe(result))

    def _result(self, name: str, object_id: str | None, event: Any) -> ActionResult:
        self._event = event
        md = event.metadata
        return ActionResult(
            name, object_id, bool(md.get("lastActionSuccess", False)), str(md.get("errorMessage") or "")
        )

    def _pour(self, target_id: str) -> ActionResult:
        objects = {o["objectId"]: o for o in self._objects()}
        held_id = self._held_ids()[0] if self._held_ids() else None
        if held_id is None:
            return ActionResult("Pour", target_id, False, "Agent is not holding any object")
        if held_id == target_id:
            return ActionResult("Pour", target_id, False, "cannot pour an object into itself")
        held = objects.get(held_id, {})
        if not held.get("isFilledWithLiquid"):
            return ActionResult("Pour", target_id, False, f"{held_id} is not filled with liquid")
        target = objects[target_id]
        drains = target.get("objectType") in DRAIN_TYPES
        if not (drains or target.get("canFillWithLiquid")):
            return ActionResult("Pour", target_id, False, f"cannot pour into {target.get('objectType')}")
        if drains:
            if not (target.get("visible") or target.get("isInteractable")):
                return ActionResult(
                    "Pour",
                    target_id,
                    False,
                    f"{target_id} is not interactable and (perhaps it is occluded by something).",
                )
        else:
            liquid = held.get("fillLiquid") or "water"
            event = self._thor(
                "FillObjectWithLiquid", objectId=target_id, fillLiquid=liquid, forceAction=False
            )
            result = self._result("Pour", target_id, event)
            if not result.success:
                return result
        return self._result(
            "Pour", target_id, self._thor("EmptyLiquidFromObject", objectId=held_id, forceAction=False)
        )

    # ------------------------------------------------------------------ observing
    def _require_event(self) -> Any:
        if self._event is None:
            raise RuntimeError("call reset() before using the environment")
        return self._event

    def _objects(self) -> list[dict[str, Any]]:
        return list(self._require_event().metadata.get("objects") or [])

    def _held_ids(self) -> list[str]:
        inventory = self._require_event().metadata.get("inventoryObjects") or []
        return [
            str(item["objectId"]) for item in inventory if isinstance(item, Mapping) and item.get("objectId")
        ]

    def observe(self, result: Any = None) -> Observation:
        md = self._require_event().metadata
        grid = self.navigation_grid()
        agent = md.get("agent") or {}
        ax, _, az = _point(agent.get("position") or {})
        yaw = float((agent.get("rotation") or {}).get("y", 0.0))
        rotation = int(round(yaw / 90.0)) * 90 % 360
        horizon = _normalize_horizon(float(agent.get("cameraHorizon", 0.0)))
        cell = (round((ax - grid.origin[0]) / grid.grid_size), round((az - grid.origin[1]) / grid.grid_size))
        half_fov = float(md.get("fov") or 2 * HALF_FOV_DEG) / 2.0
        objects = {o["objectId"]: o for o in md.get("objects") or [] if o.get("objectId")}
        held = self._held_ids()
        carried = set(held)
        for hid in held:
            carried |= _descendants(hid, objects)
        known = {oid for oid, obj in objects.items() if self._known_type(obj)}
        views = []
        for oid, obj in objects.items():
            if oid not in known:
                continue
            if oid in carried:
                views.append(self._view(obj, objects, known, grid, 0.0, True, carried=True))
                continue
            x0, x1, y0, y1, z0, z1 = _box(obj)
            nx, nz = min(max(ax, x0), x1), min(max(az, z0), z1)
            distance = math.hypot(nx - ax, nz - az)
            if not obj.get("visible"):
                if distance > self.perception_distance + _EPS or _hidden(obj, objects):
                    continue
                if not _in_view((ax, az), yaw, horizon, half_fov, obj, (nx, nz), distance):
                    continue
            interactable = bool(obj.get("visible")) and distance <= INTERACTION_DISTANCE + _EPS
            views.append(self._view(obj, objects, known, grid, distance, interactable))
        views.sort(key=lambda v: (v.distance, v.object_id))
        return Observation(
            pose=(cell[0], cell[1], rotation, horizon),
            position=(ax, az),
            held_id=held[0] if held else None,
            visible=tuple(views),
            last_action=getattr(result, "action", None),
            last_success=getattr(result, "success", True),
            last_error=getattr(result, "error", ""),
        )

    def _known_type(self, obj: Mapping[str, Any]) -> bool:
        otype = str(obj.get("objectType") or _type_from_id(str(obj.get("objectId", ""))))
        if otype in self.catalog.types:
            return True
        self.unknown_types.add(otype)
        return False

    def _view(
        self,
        obj: Mapping[str, Any],
        objects: Mapping[str, Mapping[str, Any]],
        known: set[str],
        grid: NavigationGrid,
        distance: float,
        interactable: bool,
        carried: bool = False,
    ) -> ObjectView:
        return ObjectView(
            object_id=obj["objectId"],
            object_type=str(obj.get("objectType") or _type_from_id(obj["objectId"])),
            distance=round(distance, 3),
            interactable=interactable,
            position=_point(obj.get("position") or {}),
            parent_id=_parent(obj, objects, known),
            footprint=() if carried else self._footprint(obj, objects, grid),
            state={
                "isOpen": bool(obj.get("isOpen")),
                "isToggled": bool(obj.get("isToggled")),
                "isDirty": bool(obj.get("isDirty")),
                "isCooked": bool(obj.get("isCooked")),
                "isSliced": bool(obj.get("isSliced")),
                "isBroken": bool(obj.get("isBroken")),
                "isPickedUp": bool(obj.get("isPickedUp")),
                "isFilledWithLiquid": bool(obj.get("isFilledWithLiquid")),
                "fillLiquid": obj.get("fillLiquid"),
                "receptacleObjectIds": tuple(obj.get("receptacleObjectIds") or ()),
                "controlledObjects": tuple(obj.get("controlledObjects") or ()),
            },
        )

    def _footprint(
        self, obj: Mapping[str, Any], objects: Mapping[str, Mapping[str, Any]], grid: NavigationGrid
    ) -> tuple[tuple[int, int], ...]:
        """Floor cells of a fixture's bounding box, or of the fixture an object stands in or on.

        For an object in or on a fixture, only the fixture cells under the object count (the
        fixture cell nearest to it when none is): AI2-THOR measures reach to the object itself,
        so walking to the near end of a long counter would leave a mug at its far end out of reach.
        Loose objects (on no fixture) have no footprint.
        """
        root = _root_fixture(obj, objects)
        if root is None:
            return ()
        key = (root["objectId"], _box(root), grid.origin)
        cells = self._footprints.get(key)
        if cells is None:
            cells = _box_cells(_box(root), grid)
            self._footprints[key] = cells
        if root is obj:
            return cells
        x0, x1, _, _, z0, z1 = _box(obj)
        under = tuple(c for c in cells if _cell_in(c, grid, x0, x1, z0, z1))
        if under:
            return under
        px, _, pz = _point(obj.get("position") or {})
        nearest = min(cells, key=lambda c: math.dist(grid.cell_center(c), (px, pz)))
        return (nearest,)

    def metadata(self) -> dict[str, Any]:
        """A copy of the last event's ``event.metadata`` (always with an ``objects`` list)."""
        md = copy.deepcopy(dict(self._require_event().metadata))
        md.setdefault("objects", [])
        if md["objects"] is None:
            md["objects"] = []
        return md

    def objects_metadata(self) -> list[dict[str, Any]]:
        """A copy of the objects' metadata: AI2-THOR's own fields, plus `simbotObjectClass` from the
        catalog (what TEACh's checker matches object classes by) and the custom properties of a
        restored TEACh state. Other `simbot*` properties are not tracked on THOR."""
        objects = copy.deepcopy(self._objects())
        for obj in objects:
            obj.update(self.custom_object_metadata.get(obj.get("objectId", ""), {}))
            info = self.catalog.types.get(str(obj.get("objectType")))
            if info is not None and "simbotObjectClass" not in obj:
                obj["simbotObjectClass"] = list(info.simbot_classes)
        return objects

    # ------------------------------------------------------------------ snapshots
    # AI2-THOR has no exact save/restore: a snapshot is the metadata, and restoring it reloads the
    # floor plan and re-applies poses and states best effort (`reset`'s docstring says what is not
    # restored; `restore_report` says what failed). So a chat on THOR that is killed resumes in a
    # household that may differ from the one it left; `can_snapshot` reports this as unsupported.
    supports_snapshot = False

    def snapshot(self) -> dict[str, Any]:
        """The last event's metadata (objects and agent) and the episode counters."""
        return {"world": self.metadata(), "steps": self.steps, "failures": self.failures}

    def restore(self, snapshot: dict[str, Any]) -> None:
        """Best-effort restore (see `reset`); `restore_report` lists what could not be restored."""
        self.reset(snapshot["world"])
        self.steps = int(snapshot.get("steps", 0))
        self.failures = int(snapshot.get("failures", 0))

    def navigation_grid(self) -> NavigationGrid:
        """The grid of ``GetReachablePositions`` (cached per scene): reachable cells are free.

        The origin is the smallest reachable x and z; cells of the bounding rectangle that are not
        reachable are blocked.
        """
        self._require_event()
        key = self.scene_name or ""
        grid = self._grids.get(key)
        if grid is not None:
            return grid
        event = self._thor("GetReachablePositions")
        md = event.metadata
        positions = md.get("actionReturn") or md.get("reachablePositions") or []
        if not md.get("lastActionSuccess", True) or not positions:
            raise RuntimeError(
                f"GetReachablePositions returned no positions in {self.scene_name!r}: {md.get('errorMessage') or 'empty'}"
            )
        grid = grid_from_positions(positions, GRID_SIZE)
        self._grids[key] = grid
        return grid

    def render(self, path: str | Path) -> Path:
        """Save the last egocentric RGB frame (``event.frame``) as a PNG."""
        frame = getattr(self._require_event(), "frame", None)
        if frame is None:
            raise RuntimeError(
                "the last AI2-THOR event has no RGB frame to render: create the controller with "
                "renderImage=True (the default) and not headless=True"
            )
        import numpy as np
        from PIL import Image

        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(np.asarray(frame, dtype=np.uint8)).save(out, format="PNG")
        return out


# ---------------------------------------------------------------------------------------------
# helpers over AI2-THOR metadata


def grid_from_positions(
    positions: Iterable[Mapping[str, Any]], grid_size: float = GRID_SIZE
) -> NavigationGrid:
    """A `NavigationGrid` from AI2-THOR reachable positions (dicts with x and z)."""
    points = [(float(p["x"]), float(p["z"])) for p in positions]
    if not points:
        raise ValueError("no reachable positions")
    ox = min(x for x, _ in points)
    oz = min(z for _, z in points)
    cells = {(round((x - ox) / grid_size), round((z - oz) / grid_size)) for x, z in points}
    width = max(i for i, _ in cells) + 1
    depth = max(j for _, j in cells) + 1
    blocked = frozenset((i, j) for i in range(width) for j in range(depth) if (i, j) not in cells)
    return NavigationGrid(width, depth, (ox, oz), grid_size, blocked)


def _base_scene_name(name: str) -> str:
    return name[: -len("_physics")] if name.endswith("_physics") else name


def _base_name(name: str) -> str:
    """An object's name without the ``(Copy)...`` Unity appends to instantiated copies."""
    return name.split("(", 1)[0]


def _type_from_id(object_id: str) -> str:
    parts = object_id.split("|")
    return parts[-1].split("_", 1)[0] if len(parts) > 4 else parts[0]


def _is_xyz(value: Any) -> bool:
    return isinstance(value, Mapping) and all(k in value for k in ("x", "y", "z"))


def _xyz(value: Mapping[str, Any]) -> dict[str, float]:
    return {"x": float(value.get("x", 0.0)), "y": float(value.get("y", 0.0)), "z": float(value.get("z", 0.0))}


def _point(value: Mapping[str, Any]) -> tuple[float, float, float]:
    return (float(value.get("x", 0.0)), float(value.get("y", 0.0)), float(value.get("z", 0.0)))


def _normalize_horizon(horizon: float) -> int:
    """AI2-THOR reports looking up as negative degrees (older builds as 330): to -180..180, step 30."""
    h = ((horizon + 180.0) % 360.0) - 180.0
    return int(round(h / 30.0)) * 30


def _box(obj: Mapping[str, Any]) -> tuple[float, float, float, float, float, float]:
    """(x0, x1, y0, y1, z0, z1) of the axis-aligned bounding box, or the position as a point."""
    aabb = obj.get("axisAlignedBoundingBox")
    if isinstance(aabb, Mapping) and _is_xyz(aabb.get("center")) and _is_xyz(aabb.get("size")):
        cx, cy, cz = _point(aabb["center"])
        sx, sy, sz = _point(aabb["size"])
        if sx > 0 or sz > 0:
            return (cx - sx / 2, cx + sx / 2, cy - sy / 2, cy + sy / 2, cz - sz / 2, cz + sz / 2)
    x, y, z = _point(obj.get("position") or {})
    return (x, x, y, y, z, z)


def _box_cells(box: tuple[float, ...], grid: NavigationGrid) -> tuple[tuple[int, int], ...]:
    """Grid cells whose centres lie in a box seen from above (the nearest cell when none does)."""
    x0, x1, _, _, z0, z1 = box
    g, (ox, oz) = grid.grid_size, grid.origin
    i0, i1 = math.ceil((x0 - ox) / g - _EPS), math.floor((x1 - ox) / g + _EPS)
    j0, j1 = math.ceil((z0 - oz) / g - _EPS), math.floor((z1 - oz) / g + _EPS)
    if i0 > i1:
        i0 = i1 = round(((x0 + x1) / 2 - ox) / g)
    if j0 > j1:
        j0 = j1 = round(((z0 + z1) / 2 - oz) / g)
    return tuple((i, j) for i in range(i0, i1 + 1) for j in range(j0, j1 + 1))


def _cell_in(cell: tuple[int, int], grid: NavigationGrid, x0: float, x1: float, z0: float, z1: float) -> bool:
    cx, cz = grid.cell_center(cell)
    half = grid.grid_size / 2
    return x0 - half < cx + _EPS and cx - _EPS < x1 + half and z0 - half < cz + _EPS and cz - _EPS < z1 + half


def _parents(obj: Mapping[str, Any], objects: Mapping[str, Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [objects[p] for p in obj.get("parentReceptacles") or () if p in objects]


def _volume(obj: Mapping[str, Any]) -> float:
    x0, x1, y0, y1, z0, z1 = _box(obj)
    return (x1 - x0) * (y1 - y0) * (z1 - z0)


def _parent(obj: Mapping[str, Any], objects: Mapping[str, Mapping[str, Any]], known: set[str]) -> str | None:
    """The immediate container: AI2-THOR lists every receptacle an object rests in; the smallest is nearest.

    Only containers of types the agent knows count (a mug on the floor has no parent)."""
    parents = [p for p in _parents(obj, objects) if p["objectId"] in known]
    return min(parents, key=lambda p: (_volume(p), p["objectId"]))["objectId"] if parents else None


def _ancestors(obj: Mapping[str, Any], objects: Mapping[str, Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    seen: dict[str, Mapping[str, Any]] = {}
    stack = _parents(obj, objects)
    while stack:
        parent = stack.pop()
        if parent["objectId"] in seen or parent["objectId"] == obj.get("objectId"):
            continue
        seen[parent["objectId"]] = parent
        stack.extend(_parents(parent, objects))
    return list(seen.values())


def _descendants(object_id: str, objects: Mapping[str, Mapping[str, Any]]) -> set[str]:
    out: set[str] = set()
    stack = [object_id]
    while stack:
        current = objects.get(stack.pop())
        for child in (current or {}).get("receptacleObjectIds") or ():
            if child not in out and child != object_id:
                out.add(child)
                stack.append(child)
    return out


def _hidden(obj: Mapping[str, Any], objects: Mapping[str, Mapping[str, Any]]) -> bool:
    """Inside a closed openable receptacle, at any depth."""
    return any(p.get("openable") and not p.get("isOpen") for p in _ancestors(obj, objects))


def _root_fixture(
    obj: Mapping[str, Any], objects: Mapping[str, Mapping[str, Any]]
) -> Mapping[str, Any] | None:
    """The object itself when it is not pickupable; else the non-pickupable receptacle holding it."""
    if not obj.get("pickupable"):
        return obj
    fixtures = [p for p in _ancestors(obj, objects) if not p.get("pickupable")]
    if not fixtures:
        return None
    # The nearest fixture (a burner rather than the counter under it): the smallest.
    return min(fixtures, key=lambda p: (_volume(p), p["objectId"]))


def _in_view(
    agent_xz: tuple[float, float],
    yaw: float,
    horizon: int,
    half_fov: float,
    obj: Mapping[str, Any],
    nearest: tuple[float, float],
    distance: float,
) -> bool:
    """Whether some part of the object's box lies in the agent's field of view."""
    x0, x1, y0, y1, z0, z1 = _box(obj)
    points = [nearest, ((x0 + x1) / 2, (z0 + z1) / 2), (x0, z0), (x0, z1), (x1, z0), (x1, z1)]
    if distance > _EPS and not any(angle_to(agent_xz, yaw, p) <= half_fov + _EPS for p in points):  # type: ignore[arg-type]
        return False
    return any(in_vertical_view(horizon, distance, y) for y in (y0, (y0 + y1) / 2, y1))


def _snapshot(objects: Iterable[Mapping[str, Any]]) -> dict[str, tuple[Any, ...]]:
    def freeze(value: Any) -> Any:
        return tuple(value) if isinstance(value, list) else value

    return {
        o["objectId"]: tuple(freeze(o.get(k)) for k in _TRACKED_FIELDS) for o in objects if o.get("objectId")
    }


def _driver_pose(state: Mapping[str, Any]) -> Mapping[str, Any] | None:
    agent = state.get("agent")
    if isinstance(agent, Mapping) and agent:
        return agent
    agents = [a for a in state.get("agents") or [] if isinstance(a, Mapping)]
    if not agents:
        return None
    for a in agents:
        if a.get("name") == "Driver" or a.get("agent_id") == 1 or a.get("agent_name") == "Driver":
            return a
    # TEACh stores the commander's (third-party) camera first and the driver second.
    return agents[-1]


def _state_from_mapping(data: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """(floor plan, state) from a state dict, a TEACh episode or a TEACh game."""
    if isinstance(data.get("tasks"), list) and data["tasks"]:
        try:
            episode = data["tasks"][0]["episodes"][0]
        except (KeyError, IndexError, TypeError) as exc:
            raise StateFormatError("a TEACh game needs tasks[0].episodes[0]") from exc
        return _state_from_mapping(episode)
    if isinstance(data.get("initial_state"), Mapping):
        state = dict(data["initial_state"])
        for key in ("sceneName", "world", "scene"):
            if data.get(key) and not state.get("sceneName"):
                state["sceneName"] = data[key]
        return _state_from_mapping(state)
    for key in ("sceneName", "world", "scene", "floorPlan", "floor_plan"):
        value = data.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return f"FloorPlan{value}", dict(data)
        if isinstance(value, str) and value:
            return _base_scene_name(value), dict(data)
    raise StateFormatError(
        "a state for ThorEnv needs the floor plan it belongs to ('sceneName' or 'world', e.g. 'FloorPlan12')"
    )
