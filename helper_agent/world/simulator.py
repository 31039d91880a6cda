"""The embedded household simulator: TEACh's actions over a `WorldState` with AI2-THOR semantics.

One call to `Simulator.step` is one TEACh step. Failed actions return an `ActionResult` with an
AI2-THOR-like error message and change nothing; what an interaction checks before acting is the table
of `world/rules.py` (`CHECKS`), which the environment also declares to agents, and the checks that
failed on the last step are kept (`last_failed`). Input that is not an action at all (unknown name or
object id) raises a `WorldError` and also changes nothing. Appliance effects (faucets, burners,
microwaves, toasters, coffee machines) are applied after every successful action by `effects`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from helper_agent.world import effects, rules
from helper_agent.world.actions import (
    ACTIONS,
    INTERACTION_ACTIONS,
    ActionResult,
    canonical_action,
)
from helper_agent.world.catalog import Catalog, load_catalog
from helper_agent.world.errors import InvalidActionError, UnknownObjectError
from helper_agent.world.geometry import (
    GRID_SIZE,
    HALF_FOV_DEG,
    HORIZONS,
    INTERACTION_DISTANCE,
    PERCEPTION_DISTANCE,
    Pose,
    angle_to,
    in_vertical_view,
    step_vector,
)
from helper_agent.world.rules import KNIFE_TYPES, SWING_DOOR_TYPES
from helper_agent.world.state import WorldObject, WorldState

HELD_HEIGHT = 1.0


@dataclass(frozen=True)
class VisibleObject:
    """An object in the agent's view: how far it is and whether it can be interacted with now."""

    object_id: str
    object_type: str
    distance: float
    interactable: bool


class Simulator:
    """Applies TEACh actions to a world state in place."""

    def __init__(self, state: WorldState, catalog: Catalog | None = None) -> None:
        self.state = state
        self.catalog = catalog or load_catalog()
        self._rects: dict[str, tuple[float, float, float, float]] = {}
        #: The checks of `rules.CHECKS` the last step failed, in order (empty after a success, a
        #: navigation step, or before any step).
        self.last_failed: tuple[rules.Check, ...] = ()

    # ------------------------------------------------------------------ geometry and perception
    def object(self, object_id: str) -> WorldObject:
        try:
            return self.state.objects[object_id]
        except KeyError:
            raise UnknownObjectError(
                f"object id {object_id!r} is not in scene {self.state.scene_name!r}"
            ) from None

    def is_hidden(self, object_id: str) -> bool:
        """Inside a closed openable receptacle (at any depth): nothing in there can be seen."""
        objects = self.state.objects
        for parent in self.state.ancestors(object_id):
            p = objects[parent]
            if self.catalog.get(p.object_type).openable and not p.is_open:
                return True
        return False

    def _rect(self, obj: WorldObject) -> tuple[float, float, float, float]:
        """Bounds (x0, x1, z0, z1) of a fixture's footprint cell centres; footprints never change."""
        rect = self._rects.get(obj.object_id)
        if rect is None:
            xs = [self.state.cell_center(c)[0] for c in obj.cells]
            zs = [self.state.cell_center(c)[1] for c in obj.cells]
            rect = (min(xs), max(xs), min(zs), max(zs))
            self._rects[obj.object_id] = rect
        return rect

    def _anchor(self, obj: WorldObject) -> tuple[float, float, float]:
        """The point used for distance: nearest footprint cell for fixtures, position otherwise.

        Small objects in or on a fixture are reached across it, so they are measured to the
        fixture's nearest footprint cell too.
        """
        root = obj
        depth = 0
        while not root.cells and root.parent_id is not None and depth < 16:
            root = self.state.objects[root.parent_id]
            depth += 1
        if not root.cells:
            return obj.position
        ax, az = self.state.agent_xz()
        x0, x1, z0, z1 = self._rect(root)
        return (min(max(ax, x0), x1), obj.position[1], min(max(az, z0), z1))

    def footprint_of(self, object_id: str) -> tuple[tuple[int, int], ...]:
        """Floor cells of the object or of the fixture it is in or on (empty when loose or held)."""
        obj = self.state.objects[object_id]
        depth = 0
        while not obj.cells and obj.parent_id is not None and depth < 16:
            obj = self.state.objects[obj.parent_id]
            depth += 1
        return obj.cells

    def view_of(self, object_id: str) -> tuple[float, bool]:
        """(horizontal distance, inside the field of view) for an object from the agent's pose."""
        obj = self.object(object_id)
        held = self.state.held_id
        if held is not None and (object_id == held or held in self.state.ancestors(object_id)):
            return 0.0, True
        x, y, z = self._anchor(obj)
        ax, az = self.state.agent_xz()
        dist = math.hypot(x - ax, z - az)
        pose = self.state.agent
        if dist < 1e-6:
            return dist, True
        in_fov = angle_to((ax, az), pose.rotation, (x, z)) <= HALF_FOV_DEG + 1e-6 and in_vertical_view(
            pose.horizon, dist, y
        )
        return dist, in_fov

    def is_visible(self, object_id: str, max_distance: float = INTERACTION_DISTANCE) -> bool:
        if self.is_hidden(object_id):
            return False
        dist, in_fov = self.view_of(object_id)
        return in_fov and dist <= max_distance + 1e-6

    def visible_objects(self, max_distance: float = PERCEPTION_DISTANCE) -> list[VisibleObject]:
        """Objects in the 90 degree view within `max_distance`, not hidden in closed receptacles."""
        out: list[VisibleObject] = []
        for oid, obj in self.state.objects.items():
            if self.is_hidden(oid):
                continue
            dist, in_fov = self.view_of(oid)
            if in_fov and dist <= max_distance + 1e-6:
                out.append(VisibleObject(oid, obj.object_type, round(dist, 3), dist <= INTERACTION_DISTANCE + 1e-6))
        out.sort(key=lambda v: (v.distance, v.object_id))
        return out

    # ------------------------------------------------------------------ stepping
    def step(self, action: str, object_id: str | None = None) -> ActionResult:
        """Apply one TEACh action. Raises `WorldError` for input that is not a valid action."""
        self.last_failed = ()
        name = canonical_action(action)
        if name is None:
            raise InvalidActionError(f"unknown action {action!r}; expected one of: {', '.join(ACTIONS)}")
        if name in INTERACTION_ACTIONS:
            if not object_id:
                raise InvalidActionError(f"action {name!r} needs an object id")
            self.object(object_id)  # raises UnknownObjectError before anything changes
        handler = _HANDLERS[name]
        result = handler(self, name, object_id)
        if result.success and name in INTERACTION_ACTIONS:
            result.changed.extend(effects.apply(self.state, self.catalog))
        return result

    # navigation ---------------------------------------------------------
    def _move(self, name: str, _oid: str | None) -> ActionResult:
        direction = {"Forward": "forward", "Backward": "backward", "Pan Left": "left", "Pan Right": "right"}[name]
        pose = self.state.agent
        di, dj = step_vector(pose.rotation, direction)
        target = (pose.i + di, pose.j + dj)
        if not self.state.in_bounds(target):
            return ActionResult(name, None, False, "Agent was blocked from moving: a wall is in the way")
        if not self.state.walkable(target):
            blocker = self._fixture_at(target)
            return ActionResult(
                name, None, False, f"Agent was blocked from moving: collided with {blocker or 'an obstacle'}"
            )
        self.state.agent = Pose(target[0], target[1], pose.rotation, pose.horizon)
        self._update_held_positions()
        return ActionResult(name, None, True)

    def _fixture_at(self, cell: tuple[int, int]) -> str | None:
        for oid, obj in self.state.objects.items():
            if cell in obj.cells and self.catalog.get(obj.object_type).blocks_floor:
                return oid
        return None

    def _turn(self, name: str, _oid: str | None) -> ActionResult:
        pose = self.state.agent
        delta = -90 if name == "Turn Left" else 90
        self.state.agent = Pose(pose.i, pose.j, (pose.rotation + delta) % 360, pose.horizon)
        return ActionResult(name, None, True)

    def _look(self, name: str, _oid: str | None) -> ActionResult:
        pose = self.state.agent
        horizon = pose.horizon + (30 if name == "Look Down" else -30)
        if horizon not in HORIZONS:
            which = "down" if name == "Look Down" else "up"
            return ActionResult(name, None, False, f"Camera cannot look {which} any further (horizon {pose.horizon})")
        self.state.agent = Pose(pose.i, pose.j, pose.rotation, horizon)
        return ActionResult(name, None, True)

    def _stop(self, name: str, _oid: str | None) -> ActionResult:
        return ActionResult(name, None, True)

    # interaction preconditions ----------------------------------------------
    def _refusal(self, name: str, oid: str) -> ActionResult | None:
        """The failed result when a check of `rules.CHECKS` fails (the first one's error), else None;
        every failed check is kept in `last_failed`."""
        failed = rules.failures(self, name, oid)
        self.last_failed = tuple(check for check, _ in failed)
        return self._fail(name, oid, failed[0][1]) if failed else None

    def in_door_swing(self, object_id: str) -> bool:
        """Whether the agent stands next to the object's footprint (where a swinging door hits it)."""
        ai, aj = self.state.agent.cell
        return any(abs(ci - ai) + abs(cj - aj) <= 1 for ci, cj in self.state.objects[object_id].cells)

    def _fail(self, name: str, oid: str | None, message: str) -> ActionResult:
        return ActionResult(name, oid, False, message)

    # interactions ----------------------------------------------------------
    def _pickup(self, name: str, oid: str | None) -> ActionResult:
        assert oid is not None
        if (refused := self._refusal(name, oid)) is not None:
            return refused
        obj = self.state.objects[oid]
        if obj.parent_id is not None:
            self.state.objects[obj.parent_id].contents.remove(oid)
        obj.parent_id = None
        obj.is_picked_up = True
        obj.simbot_picked_up = True
        self.state.held_id = oid
        self._update_held_positions()
        return ActionResult(name, oid, True, changed=[oid])

    def _place(self, name: str, oid: str | None) -> ActionResult:
        assert oid is not None
        if (refused := self._refusal(name, oid)) is not None:
            return refused
        held_id = self.state.held_id
        assert held_id is not None
        held = self.state.objects[held_id]
        attach(self.state, held_id, oid)
        held.is_picked_up = False
        held.simbot_last_parent_receptacle = oid
        self.state.held_id = None
        return ActionResult(name, oid, True, changed=[held_id, oid])

    def _open_close(self, name: str, oid: str | None) -> ActionResult:
        assert oid is not None
        if (refused := self._refusal(name, oid)) is not None:
            return refused
        self.state.objects[oid].is_open = name == "Open"
        return ActionResult(name, oid, True, changed=[oid])

    def _toggle(self, name: str, oid: str | None) -> ActionResult:
        assert oid is not None
        if (refused := self._refusal(name, oid)) is not None:
            return refused
        obj = self.state.objects[oid]
        on = name == "ToggleOn"
        obj.is_toggled = on
        changed = [oid]
        for controlled in obj.controlled_ids:
            target = self.state.objects.get(controlled)
            if target is not None and self.catalog.get(target.object_type).toggleable:
                target.is_toggled = on
                changed.append(controlled)
        return ActionResult(name, oid, True, changed=changed)

    def _slice(self, name: str, oid: str | None) -> ActionResult:
        assert oid is not None
        if (refused := self._refusal(name, oid)) is not None:
            return refused
        info = self.catalog.get(self.state.objects[oid].object_type)
        assert info.sliced_type is not None
        pieces = slice_object(self.state, oid, info.sliced_type, max(info.slice_count, 1))
        return ActionResult(name, oid, True, changed=[oid, *pieces])

    def _pour(self, name: str, oid: str | None) -> ActionResult:
        assert oid is not None
        if (refused := self._refusal(name, oid)) is not None:
            return refused
        target = self.state.objects[oid]
        tinfo = self.catalog.get(target.object_type)
        held_id = self.state.held_id
        assert held_id is not None
        held = self.state.objects[held_id]
        drains = target.object_type in effects.DRAIN_TYPES
        liquid = held.fill_liquid or "water"
        if tinfo.can_fill_with_liquid and not drains:
            effects.fill(target, liquid)
        effects.empty(held)
        return ActionResult(name, oid, True, changed=[held_id, oid])

    def _update_held_positions(self) -> None:
        held_id = self.state.held_id
        if held_id is None:
            return
        ax, az = self.state.agent_xz()
        for oid in [held_id, *self.state.descendants(held_id)]:
            self.state.objects[oid].position = (round(ax, 2), HELD_HEIGHT, round(az, 2))


def attach(state: WorldState, child_id: str, parent_id: str) -> None:
    """Put `child_id` (and what it carries) into `parent_id`, updating positions."""
    child = state.objects[child_id]
    parent = state.objects[parent_id]
    if child.parent_id is not None:
        state.objects[child.parent_id].contents.remove(child_id)
    child.parent_id = parent_id
    parent.contents.append(child_id)
    slot = len(parent.contents) - 1
    px, py, pz = parent.position
    dx = ((slot % 3) - 1) * 0.08
    dz = (((slot // 3) % 3) - 1) * 0.08
    child.position = (round(px + dx, 2), round(py, 2), round(pz + dz, 2))
    for oid in state.descendants(child_id):
        state.objects[oid].position = child.position


def slice_object(state: WorldState, object_id: str, sliced_type: str, count: int) -> list[str]:
    """Replace an object with `count` pieces of `sliced_type`, as AI2-THOR does on SliceObject.

    The pieces take ids `<original id>|<SlicedType>_<n>`, stay where the original was and inherit
    its cooked/dirty state.
    """
    original = state.objects[object_id]
    parent_id = original.parent_id
    pieces: list[str] = []
    for n in range(count):
        piece_id = f"{object_id}|{sliced_type}_{n}"
        piece = WorldObject(
            object_id=piece_id,
            object_type=sliced_type,
            position=original.position,
            is_cooked=original.is_cooked,
            simbot_is_cooked=original.simbot_is_cooked,
            simbot_is_boiled=original.simbot_is_boiled,
            is_dirty=False,
            simbot_last_parent_receptacle=parent_id,
        )
        state.objects[piece_id] = piece
        pieces.append(piece_id)
    if parent_id is not None:
        parent = state.objects[parent_id]
        index = parent.contents.index(object_id)
        parent.contents[index : index + 1] = pieces
        for piece_id in pieces:
            state.objects[piece_id].parent_id = parent_id
    for child in list(original.contents):
        state.objects[child].parent_id = parent_id
        if parent_id is not None:
            state.objects[parent_id].contents.append(child)
    del state.objects[object_id]
    return pieces


_HANDLERS = {
    "Forward": Simulator._move,
    "Backward": Simulator._move,
    "Pan Left": Simulator._move,
    "Pan Right": Simulator._move,
    "Turn Left": Simulator._turn,
    "Turn Right": Simulator._turn,
    "Look Up": Simulator._look,
    "Look Down": Simulator._look,
    "Stop": Simulator._stop,
    "Pickup": Simulator._pickup,
    "Place": Simulator._place,
    "Open": Simulator._open_close,
    "Close": Simulator._open_close,
    "ToggleOn": Simulator._toggle,
    "ToggleOff": Simulator._toggle,
    "Slice": Simulator._slice,
    "Pour": Simulator._pour,
}

__all__ = ["Simulator", "VisibleObject", "attach", "slice_object", "GRID_SIZE", "KNIFE_TYPES", "SWING_DOOR_TYPES"]
