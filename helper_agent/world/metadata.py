"""AI2-THOR-shaped metadata: export a world state, and load one back.

`export_objects` produces the list AI2-THOR returns as `event.metadata["objects"]`, with TEACh's
`simbot*` custom properties. `export_state` wraps it with the agent, the grid and the scene name, so
that `load_state(export_state(s))` rebuilds the same world (the round trip is exact). `load_state`
also accepts real AI2-THOR/TEACh object lists without our grid: fixtures then get a footprint from
their bounding box and the room's extent is taken from the objects.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from helper_agent.world.catalog import Catalog, UnknownObjectType, load_catalog
from helper_agent.world.errors import StateFormatError
from helper_agent.world.geometry import GRID_SIZE, HORIZONS, ROTATIONS, Pose
from helper_agent.world.state import WorldObject, WorldState

FORMAT_VERSION = 1


def object_id_for(object_type: str, position: tuple[float, float, float]) -> str:
    """AI2-THOR's object id form: `Type|+x.xx|+y.yy|+z.zz`."""
    x, y, z = position
    return f"{object_type}|{x:+.2f}|{y:+.2f}|{z:+.2f}"


def _vec(p: tuple[float, float, float]) -> dict[str, float]:
    return {"x": round(p[0], 4), "y": round(p[1], 4), "z": round(p[2], 4)}


def _bounding_box(state: WorldState, obj: WorldObject, height: float) -> dict[str, Any] | None:
    if not obj.cells:
        return None
    xs = [state.cell_center(c)[0] for c in obj.cells]
    zs = [state.cell_center(c)[1] for c in obj.cells]
    size_x = max(xs) - min(xs) + GRID_SIZE
    size_z = max(zs) - min(zs) + GRID_SIZE
    return {
        "center": _vec(((max(xs) + min(xs)) / 2, height / 2, (max(zs) + min(zs)) / 2)),
        "size": _vec((size_x, height, size_z)),
    }


def export_objects(state: WorldState, catalog: Catalog | None = None) -> list[dict[str, Any]]:
    """The objects as AI2-THOR metadata dicts, in a stable order (insertion order of the scene)."""
    catalog = catalog or load_catalog()
    out: list[dict[str, Any]] = []
    for oid, obj in state.objects.items():
        info = catalog.get(obj.object_type)
        parents = state.ancestors(oid)
        out.append(
            {
                "objectId": oid,
                "objectType": obj.object_type,
                "name": f"{obj.object_type}_{oid.split('|', 1)[-1]}" if "|" in oid else oid,
                "position": _vec(obj.position),
                "rotation": {"x": 0.0, "y": obj.rotation, "z": 0.0},
                "parentReceptacles": parents or None,
                "receptacleObjectIds": list(obj.contents) if info.receptacle else None,
                "receptacle": info.receptacle,
                "pickupable": info.pickupable,
                "isPickedUp": obj.is_picked_up,
                "moveable": info.moveable,
                "openable": info.openable,
                "isOpen": obj.is_open,
                "openness": 1.0 if obj.is_open else 0.0,
                "toggleable": info.toggleable,
                "isToggled": obj.is_toggled,
                "sliceable": info.sliceable,
                "isSliced": obj.is_sliced,
                "cookable": info.cookable,
                "isCooked": obj.is_cooked,
                "dirtyable": info.dirtyable,
                "isDirty": obj.is_dirty,
                "canFillWithLiquid": info.can_fill_with_liquid,
                "isFilledWithLiquid": obj.is_filled_with_liquid,
                "fillLiquid": obj.fill_liquid,
                "breakable": info.breakable,
                "isBroken": obj.is_broken,
                "canBeUsedUp": info.can_be_used_up,
                "isUsedUp": obj.is_used_up,
                "isHeatSource": info.is_heat_source,
                "isColdSource": info.is_cold_source,
                "controlledObjects": list(obj.controlled_ids) or None,
                "axisAlignedBoundingBox": _bounding_box(state, obj, info.height),
                "simbotIsCooked": obj.simbot_is_cooked,
                "simbotIsBoiled": obj.simbot_is_boiled,
                "simbotIsFilledWithCoffee": obj.simbot_is_filled_with_coffee,
                "simbotPickedUp": obj.simbot_picked_up,
                "simbotLastParentReceptacle": obj.simbot_last_parent_receptacle,
                "simbotObjectClass": list(info.simbot_classes),
                "simbotDirectParent": obj.parent_id,
            }
        )
    return out


def export_state(state: WorldState, catalog: Catalog | None = None) -> dict[str, Any]:
    """A whole scene: AI2-THOR-like agent and objects, plus the grid our simulator needs."""
    x, z = state.agent_xz()
    blocked = [[int(i), int(j)] for i, j in zip(*np.nonzero(state.blocked), strict=True)]
    return {
        "format": "helper-agent-state",
        "version": FORMAT_VERSION,
        "sceneName": state.scene_name,
        "roomType": state.room_type,
        "seed": state.seed,
        "grid": {
            "gridSize": GRID_SIZE,
            "origin": {"x": state.origin[0], "z": state.origin[1]},
            "width": state.width,
            "depth": state.depth,
            "blocked": blocked,
        },
        "agent": {
            "position": {"x": round(x, 4), "y": 0.9, "z": round(z, 4)},
            "rotation": {"x": 0.0, "y": float(state.agent.rotation), "z": 0.0},
            "cameraHorizon": float(state.agent.horizon),
        },
        "inventoryObjects": [{"objectId": state.held_id}] if state.held_id else [],
        "objects": export_objects(state, catalog),
    }


# ---------------------------------------------------------------------------- loading
def _field(entry: dict[str, Any], key: str, where: str, kinds: type | tuple[type, ...]) -> Any:
    if key not in entry:
        raise StateFormatError(f"{where}: missing field {key!r}")
    value = entry[key]
    if not isinstance(value, kinds):
        raise StateFormatError(f"{where}: field {key!r} has type {type(value).__name__}")
    return value


def _position(entry: dict[str, Any], key: str, where: str) -> tuple[float, float, float]:
    raw = _field(entry, key, where, dict)
    try:
        return (float(raw["x"]), float(raw["y"]), float(raw["z"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise StateFormatError(f"{where}: field {key!r} must have numeric x, y, z ({exc})") from None


def load_state(
    data: dict[str, Any] | list[dict[str, Any]],
    *,
    source: str = "<state>",
    catalog: Catalog | None = None,
    scene_name: str | None = None,
) -> WorldState:
    """Rebuild a world from `export_state` output, or from a bare AI2-THOR object list.

    Raises `StateFormatError` naming `source` and the offending field on malformed input.
    """
    catalog = catalog or load_catalog()
    if isinstance(data, list):
        data = {"objects": data}
    if not isinstance(data, dict):
        raise StateFormatError(f"{source}: expected a JSON object or a list of objects")
    raw_objects = _field(data, "objects", source, list)
    objects: dict[str, WorldObject] = {}
    boxes: dict[str, dict[str, Any]] = {}
    parents: dict[str, str | None] = {}
    for index, entry in enumerate(raw_objects):
        where = f"{source}: objects[{index}]"
        if not isinstance(entry, dict):
            raise StateFormatError(f"{where}: expected an object")
        oid = _field(entry, "objectId", where, str)
        otype = _field(entry, "objectType", where, str)
        try:
            catalog.get(otype)
        except UnknownObjectType as exc:
            raise StateFormatError(f"{where}: field 'objectType': {exc.args[0]}") from None
        if oid in objects:
            raise StateFormatError(f"{where}: duplicate objectId {oid!r}")
        position = _position(entry, "position", where)
        rotation = entry.get("rotation") or {}
        objects[oid] = WorldObject(
            object_id=oid,
            object_type=otype,
            position=position,
            rotation=float(rotation.get("y", 0.0)) if isinstance(rotation, dict) else 0.0,
            is_open=bool(entry.get("isOpen", False)),
            is_toggled=bool(entry.get("isToggled", False)),
            is_sliced=bool(entry.get("isSliced", False)),
            is_cooked=bool(entry.get("isCooked", False)),
            is_dirty=bool(entry.get("isDirty", False)),
            is_filled_with_liquid=bool(entry.get("isFilledWithLiquid", False)),
            fill_liquid=entry.get("fillLiquid"),
            is_broken=bool(entry.get("isBroken", False)),
            is_used_up=bool(entry.get("isUsedUp", False)),
            is_picked_up=bool(entry.get("isPickedUp", False)),
            simbot_is_cooked=bool(entry.get("simbotIsCooked", False)),
            simbot_is_boiled=bool(entry.get("simbotIsBoiled", False)),
            simbot_is_filled_with_coffee=bool(entry.get("simbotIsFilledWithCoffee", False)),
            simbot_picked_up=bool(entry.get("simbotPickedUp", False)),
            simbot_last_parent_receptacle=entry.get("simbotLastParentReceptacle"),
            controlled_ids=tuple(entry.get("controlledObjects") or ()),
        )
        if isinstance(entry.get("axisAlignedBoundingBox"), dict):
            boxes[oid] = entry["axisAlignedBoundingBox"]
        parents[oid] = _direct_parent(entry, where)
    # Containment: our own exports name the direct parent; AI2-THOR's lists name all parents,
    # innermost first is not guaranteed, so pick the one that is not itself a parent of another.
    for oid, parent in parents.items():
        if parent is not None and parent not in objects:
            raise StateFormatError(f"{source}: object {oid!r} names unknown parent {parent!r}")
    for oid, obj in objects.items():
        parent = parents[oid]
        obj.parent_id = parent
    for entry in raw_objects:
        oid = entry["objectId"]
        ordered = entry.get("receptacleObjectIds")
        if ordered:
            for child in ordered:
                if child in objects and objects[child].parent_id == oid:
                    objects[oid].contents.append(child)
    for oid, obj in objects.items():
        if obj.parent_id is not None and oid not in objects[obj.parent_id].contents:
            objects[obj.parent_id].contents.append(oid)

    grid = data.get("grid")
    if isinstance(grid, dict):
        width = int(_field(grid, "width", f"{source}: grid", int))
        depth = int(_field(grid, "depth", f"{source}: grid", int))
        origin_raw = _field(grid, "origin", f"{source}: grid", dict)
        origin = (float(origin_raw["x"]), float(origin_raw["z"]))
        blocked = np.zeros((width, depth), dtype=bool)
        for cell in _field(grid, "blocked", f"{source}: grid", list):
            if not (isinstance(cell, list) and len(cell) == 2):
                raise StateFormatError(f"{source}: grid.blocked entries must be [i, j] pairs")
            blocked[int(cell[0]), int(cell[1])] = True
    else:
        width, depth, origin, blocked = _grid_from_objects(objects, boxes, catalog)

    def to_cell(x: float, z: float) -> tuple[int, int]:
        return (round((x - origin[0]) / GRID_SIZE), round((z - origin[1]) / GRID_SIZE))

    for oid, obj in objects.items():
        info = catalog.get(obj.object_type)
        box = boxes.get(oid)
        if box is not None and isinstance(box.get("center"), dict) and isinstance(box.get("size"), dict):
            cx, cz = float(box["center"]["x"]), float(box["center"]["z"])
            sx, sz = float(box["size"]["x"]), float(box["size"]["z"])
            nx = max(1, round(sx / GRID_SIZE))
            nz = max(1, round(sz / GRID_SIZE))
            i0 = to_cell(cx - (nx - 1) * GRID_SIZE / 2, cz)[0]
            j0 = to_cell(cx, cz - (nz - 1) * GRID_SIZE / 2)[1]
            obj.cells = tuple((i0 + a, j0 + b) for a in range(nx) for b in range(nz))
        elif obj.parent_id is None and not info.pickupable:
            obj.cells = (to_cell(obj.position[0], obj.position[2]),)
        obj.cells = tuple(c for c in obj.cells if 0 <= c[0] < width and 0 <= c[1] < depth)

    agent_raw = data.get("agent")
    pose = Pose(0, 0, 0, 0)
    if isinstance(agent_raw, dict):
        ax, _, az = _position(agent_raw, "position", f"{source}: agent")
        rot_raw = agent_raw.get("rotation", 0)
        rot = float(rot_raw.get("y", 0.0)) if isinstance(rot_raw, dict) else float(rot_raw)
        rotation = min(ROTATIONS, key=lambda r: min(abs(r - rot % 360), 360 - abs(r - rot % 360)))
        horizon_raw = float(agent_raw.get("cameraHorizon", agent_raw.get("horizon", 0.0)))
        horizon = min(HORIZONS, key=lambda h: abs(h - horizon_raw))
        ci, cj = to_cell(ax, az)
        pose = Pose(min(max(ci, 0), width - 1), min(max(cj, 0), depth - 1), rotation, horizon)
    held_id: str | None = None
    inventory = data.get("inventoryObjects") or []
    if inventory:
        first = inventory[0]
        held_id = first.get("objectId") if isinstance(first, dict) else None
        if held_id not in objects:
            raise StateFormatError(f"{source}: inventoryObjects names unknown object {held_id!r}")
    else:
        picked = [oid for oid, o in objects.items() if o.is_picked_up]
        held_id = picked[0] if picked else None
    state = WorldState(
        scene_name=scene_name or str(data.get("sceneName") or "loaded"),
        room_type=str(data.get("roomType") or _guess_room(objects)),
        width=width,
        depth=depth,
        origin=origin,
        blocked=blocked,
        objects=objects,
        agent=pose,
        held_id=held_id,
        seed=data.get("seed"),
    )
    if not state.walkable(state.agent.cell):
        state.agent = _nearest_walkable(state, pose)
    return state


def _direct_parent(entry: dict[str, Any], where: str) -> str | None:
    if "simbotDirectParent" in entry:
        parent = entry["simbotDirectParent"]
        if parent is not None and not isinstance(parent, str):
            raise StateFormatError(f"{where}: field 'simbotDirectParent' must be a string or null")
        return parent
    parents = entry.get("parentReceptacles")
    if parents is None:
        return None
    if not isinstance(parents, list) or not all(isinstance(p, str) for p in parents):
        raise StateFormatError(f"{where}: field 'parentReceptacles' must be a list of object ids")
    return parents[0] if parents else None


def _grid_from_objects(
    objects: dict[str, WorldObject], boxes: dict[str, dict[str, Any]], catalog: Catalog
) -> tuple[int, int, tuple[float, float], np.ndarray]:
    xs = [o.position[0] for o in objects.values()] or [0.0]
    zs = [o.position[2] for o in objects.values()] or [0.0]
    origin = (math.floor(min(xs) / GRID_SIZE) * GRID_SIZE - GRID_SIZE, math.floor(min(zs) / GRID_SIZE) * GRID_SIZE - GRID_SIZE)
    width = int(round((max(xs) - origin[0]) / GRID_SIZE)) + 2
    depth = int(round((max(zs) - origin[1]) / GRID_SIZE)) + 2
    blocked = np.zeros((width, depth), dtype=bool)
    for obj in objects.values():
        info = catalog.get(obj.object_type)
        if not info.blocks_floor:
            continue
        i = round((obj.position[0] - origin[0]) / GRID_SIZE)
        j = round((obj.position[2] - origin[1]) / GRID_SIZE)
        if 0 <= i < width and 0 <= j < depth:
            blocked[i, j] = True
    return width, depth, origin, blocked


def _guess_room(objects: dict[str, WorldObject]) -> str:
    types = {o.object_type for o in objects.values()}
    for marker, room in (("Fridge", "Kitchen"), ("Toilet", "Bathroom"), ("Bed", "Bedroom"), ("Sofa", "LivingRoom")):
        if marker in types:
            return room
    return "Unknown"


def _nearest_walkable(state: WorldState, pose: Pose) -> Pose:
    free = np.argwhere(~state.blocked)
    if len(free) == 0:
        raise StateFormatError(f"{state.scene_name}: the grid has no free cell for the agent")
    d = np.abs(free[:, 0] - pose.i) + np.abs(free[:, 1] - pose.j)
    i, j = free[int(np.argmin(d))]
    return Pose(int(i), int(j), pose.rotation, pose.horizon)


def save_state_file(state: WorldState, path: str | Path, catalog: Catalog | None = None) -> None:
    Path(path).write_text(json.dumps(export_state(state, catalog), indent=1))


def load_state_file(path: str | Path, catalog: Catalog | None = None) -> WorldState:
    """Load a state JSON file; malformed JSON or fields raise `StateFormatError` naming the file."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise StateFormatError(f"{path}: no such file") from None
    except UnicodeDecodeError as exc:
        raise StateFormatError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise StateFormatError(f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    return load_state(data, source=str(path), catalog=catalog)
