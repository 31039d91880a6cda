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
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import numpy as np
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    StrictStr,
    TypeAdapter,
    ValidationError,
)
from pydantic_core import PydanticCustomError

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
#
# Input is validated at the edge with pydantic models of the fields we read (every other key is
# ignored, so real AI2-THOR/TEACh metadata loads), and the first bad field is reported by its JSON
# path: `state.json: field 'objects[3].position.x': expected a number, got str 'left'`. Limits
# bound the work one input can cause: the object count is checked before any object is read, and
# the grid a scene spans before it is allocated.

MAX_COORDINATE = 1000.0
"""Metres from the origin; AI2-THOR's houses span tens of metres, so a farther position is an error."""

DEFAULT_MAX_OBJECTS = 2000
"""Objects per scene unless the caller passes `max_objects` (the CLI passes HELPER_MAX_SCENE_OBJECTS)."""

DEFAULT_MAX_GRID_CELLS = 250_000
"""Grid cells per scene unless the caller passes `max_grid_cells` (HELPER_MAX_GRID_CELLS)."""

DEFAULT_MAX_INPUT_BYTES = 64 * 1024 * 1024
"""Bytes of one input file unless the caller passes `max_bytes` (HELPER_MAX_INPUT_BYTES)."""


Number = Annotated[float, Field(strict=True, allow_inf_nan=False)]
"""A JSON number (not a string, not a boolean), finite."""
Coordinate = Annotated[float, Field(strict=True, allow_inf_nan=False, ge=-MAX_COORDINATE, le=MAX_COORDINATE)]
"""A finite number of metres within `MAX_COORDINATE` of the origin."""
Count = Annotated[int, Field(strict=True)]
PositiveCount = Annotated[int, Field(strict=True, ge=1)]


def _flag(value: Any) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):  # TEACh's custom metadata writes 0/1
        return bool(value)
    raise PydanticCustomError("bool_type", "expected true or false (or 0/1)")


Flag = Annotated[bool | None, PlainValidator(_flag)]
"""A boolean property; TEACh's 0/1 are read as booleans, strings such as "no" are errors."""
Ids = list[StrictStr] | None


class _Input(BaseModel):
    """Fields we read; keys we do not know are ignored (AI2-THOR's metadata has dozens)."""

    model_config = ConfigDict(extra="ignore", frozen=True)


class Vec3(_Input):
    x: Coordinate
    y: Coordinate
    z: Coordinate

    def as_tuple(self) -> tuple[float, float, float]:
        return (self.x, self.y, self.z)


class Rotation(_Input):
    x: Number = 0.0
    y: Number = 0.0
    z: Number = 0.0


class BoundingBox(_Input):
    center: Vec3
    size: Vec3


class ObjectEntry(_Input):
    """One object of AI2-THOR's `metadata["objects"]` (with TEACh's `simbot*` properties)."""

    objectId: StrictStr = Field(min_length=1, max_length=512)
    objectType: StrictStr
    position: Vec3
    rotation: Rotation | None = None
    isOpen: Flag = None
    isToggled: Flag = None
    isSliced: Flag = None
    isCooked: Flag = None
    isDirty: Flag = None
    isFilledWithLiquid: Flag = None
    fillLiquid: StrictStr | None = None
    isBroken: Flag = None
    isUsedUp: Flag = None
    isPickedUp: Flag = None
    simbotIsCooked: Flag = None
    simbotIsBoiled: Flag = None
    simbotIsFilledWithCoffee: Flag = None
    simbotPickedUp: Flag = None
    simbotLastParentReceptacle: StrictStr | None = None
    controlledObjects: Ids = None
    receptacleObjectIds: Ids = None
    parentReceptacles: Ids = None
    simbotDirectParent: StrictStr | None = None
    axisAlignedBoundingBox: BoundingBox | None = None

    def direct_parent(self) -> str | None:
        """Our exports name the direct parent; AI2-THOR's lists name the parents, innermost first."""
        if "simbotDirectParent" in self.model_fields_set:
            return self.simbotDirectParent
        return self.parentReceptacles[0] if self.parentReceptacles else None


class Origin(_Input):
    x: Coordinate
    z: Coordinate


class GridEntry(_Input):
    width: PositiveCount
    depth: PositiveCount
    origin: Origin
    blocked: list[tuple[Count, Count]]


class AgentEntry(_Input):
    position: Vec3
    rotation: Rotation | Number = 0.0
    cameraHorizon: Number | None = None
    horizon: Number | None = None


class InventoryEntry(_Input):
    objectId: StrictStr


class SceneEntry(_Input):
    """A scene as `export_state` writes it (only `objects` is required)."""

    objects: list[Any]
    grid: Any = None  # validated by `validate_grid`, which also bounds its size
    agent: AgentEntry | None = None
    inventoryObjects: list[InventoryEntry] | None = None
    sceneName: StrictStr | None = None
    roomType: StrictStr | None = None
    seed: Count | None = None


_OBJECT = TypeAdapter(ObjectEntry)


def json_path(loc: Sequence[Any], prefix: str = "") -> str:
    """`("objects", 3, "position", "x")` -> `objects[3].position.x`."""
    out = prefix
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def describe_error(exc: ValidationError, prefix: str = "") -> tuple[str, str]:
    """(JSON path, problem) of the first error of a validation, e.g. ("objects[3].isOpen", "...")."""
    first = exc.errors()[0]
    msg = str(first.get("msg", "invalid value")).removeprefix("Value error, ")
    msg = re.sub(r" or instance of \w+", "", msg)  # pydantic's class names mean nothing in a JSON file
    problem = msg[:1].lower() + msg[1:]
    if first.get("type") != "missing" and "input" in first:
        value = first["input"]
        problem += f", got {type(value).__name__} {_short(value)}"
    return json_path(tuple(first.get("loc", ())), prefix), problem


class FieldError(StateFormatError):
    """A `StateFormatError` about one field, with its JSON path and the problem kept apart, so that a
    reader embedding a scene (a TEACh game) can report the path within its own file."""

    def __init__(self, source: str, path: str, problem: str) -> None:
        self.source = source
        self.path = path
        self.problem = problem
        super().__init__(f"{source}: field '{path}': {problem}" if path else f"{source}: {problem}")


def field_error(source: str, path: str, problem: str) -> FieldError:
    """`StateFormatError` for one field: `<source>: field '<path>': <problem>`."""
    return FieldError(source, path, problem)


def validate_objects(
    raw: Any,
    *,
    source: str = "<state>",
    path: str = "objects",
    catalog: Catalog | None = None,
    max_objects: int = DEFAULT_MAX_OBJECTS,
) -> list[ObjectEntry]:
    """Validate an object list: types, finite positions in range, known object types, unique ids,
    parents that exist and contain no cycle, at most `max_objects` objects (checked first).

    Raises `StateFormatError` naming `source` and the JSON path of the first bad field.
    """
    catalog = catalog or load_catalog()
    if not isinstance(raw, list):
        raise field_error(source, path, f"expected a list of objects, got {type(raw).__name__}")
    if len(raw) > max_objects:
        raise field_error(
            source, path, f"{len(raw)} objects; the limit is {max_objects} per scene (HELPER_MAX_SCENE_OBJECTS)"
        )
    entries: list[ObjectEntry] = []
    first_index: dict[str, int] = {}
    for index, item in enumerate(raw):
        where = f"{path}[{index}]"
        if not isinstance(item, dict):
            raise field_error(source, where, f"expected an object, got {type(item).__name__}")
        try:
            entry = _OBJECT.validate_python(item)
        except ValidationError as exc:
            raise field_error(source, *describe_error(exc, where)) from None
        if entry.objectType not in catalog:
            try:
                catalog.get(entry.objectType)
            except UnknownObjectType as exc:
                raise field_error(source, f"{where}.objectType", str(exc)) from None
        if entry.objectId in first_index:
            raise field_error(
                source,
                f"{where}.objectId",
                f"duplicate objectId {entry.objectId!r} (first at {path}[{first_index[entry.objectId]}])",
            )
        first_index[entry.objectId] = index
        entries.append(entry)
    parents = {e.objectId: e.direct_parent() for e in entries}
    for index, entry in enumerate(entries):
        parent = parents[entry.objectId]
        key = "simbotDirectParent" if "simbotDirectParent" in entry.model_fields_set else "parentReceptacles"
        if parent is not None and parent not in parents:
            raise field_error(source, f"{path}[{index}].{key}", f"names unknown object {parent!r}")
        seen = {entry.objectId}
        while parent is not None:
            if parent in seen:
                raise field_error(
                    source, f"{path}[{index}].{key}", f"containment cycle through {parent!r}"
                )
            seen.add(parent)
            parent = parents.get(parent)
    return entries


def validate_grid(
    raw: Any, *, source: str = "<state>", path: str = "grid", max_grid_cells: int = DEFAULT_MAX_GRID_CELLS
) -> GridEntry:
    """Validate a grid (`export_state`'s `grid`): types, at most `max_grid_cells` cells, blocked
    cells inside it. Raises `FieldError` with the JSON path of the first bad field."""
    try:
        grid = GridEntry.model_validate(raw)
    except ValidationError as exc:
        raise field_error(source, *describe_error(exc, path)) from None
    if grid.width * grid.depth > max_grid_cells:
        raise _grid_cells_error(source, path, grid.width, grid.depth, max_grid_cells)
    for index, (i, j) in enumerate(grid.blocked):
        if not (0 <= i < grid.width and 0 <= j < grid.depth):
            raise field_error(
                source, f"{path}.blocked[{index}]", f"cell [{i}, {j}] is outside the {grid.width} x {grid.depth} grid"
            )
    return grid


def _grid_cells_error(source: str, path: str, width: int, depth: int, limit: int) -> FieldError:
    return field_error(
        source,
        path,
        f"the scene spans {width} x {depth} cells of {GRID_SIZE} m; the limit is {limit} cells "
        "(HELPER_MAX_GRID_CELLS)",
    )


def load_state(
    data: dict[str, Any] | list[dict[str, Any]],
    *,
    source: str = "<state>",
    catalog: Catalog | None = None,
    scene_name: str | None = None,
    max_objects: int = DEFAULT_MAX_OBJECTS,
    max_grid_cells: int = DEFAULT_MAX_GRID_CELLS,
) -> WorldState:
    """Rebuild a world from `export_state` output, or from a bare AI2-THOR object list.

    Raises `StateFormatError` naming `source` and the JSON path of the first bad field, and refuses
    scenes over `max_objects` objects or `max_grid_cells` grid cells before building them.
    """
    catalog = catalog or load_catalog()
    if isinstance(data, list):
        data = {"objects": data}
    if not isinstance(data, dict):
        raise StateFormatError(f"{source}: expected a JSON object or a list of objects, got {type(data).__name__}")
    if "objects" not in data:
        raise field_error(source, "objects", "field required")
    entries = validate_objects(data["objects"], source=source, catalog=catalog, max_objects=max_objects)
    try:
        scene = SceneEntry.model_validate({**data, "objects": []})
    except ValidationError as exc:
        raise field_error(source, *describe_error(exc)) from None

    objects: dict[str, WorldObject] = {}
    for entry in entries:
        rotation = entry.rotation.y if entry.rotation is not None else 0.0
        objects[entry.objectId] = WorldObject(
            object_id=entry.objectId,
            object_type=entry.objectType,
            position=entry.position.as_tuple(),
            rotation=rotation,
            is_open=bool(entry.isOpen),
            is_toggled=bool(entry.isToggled),
            is_sliced=bool(entry.isSliced),
            is_cooked=bool(entry.isCooked),
            is_dirty=bool(entry.isDirty),
            is_filled_with_liquid=bool(entry.isFilledWithLiquid),
            fill_liquid=entry.fillLiquid,
            is_broken=bool(entry.isBroken),
            is_used_up=bool(entry.isUsedUp),
            is_picked_up=bool(entry.isPickedUp),
            simbot_is_cooked=bool(entry.simbotIsCooked),
            simbot_is_boiled=bool(entry.simbotIsBoiled),
            simbot_is_filled_with_coffee=bool(entry.simbotIsFilledWithCoffee),
            simbot_picked_up=bool(entry.simbotPickedUp),
            simbot_last_parent_receptacle=entry.simbotLastParentReceptacle,
            controlled_ids=tuple(entry.controlledObjects or ()),
        )
    # Containment: each object's direct parent (validated above: it exists, no cycles); contents
    # keep the order of the parent's receptacleObjectIds when it gives one.
    for entry in entries:
        objects[entry.objectId].parent_id = entry.direct_parent()
    for entry in entries:
        for child in entry.receptacleObjectIds or ():
            if child in objects and objects[child].parent_id == entry.objectId:
                contents = objects[entry.objectId].contents
                if child not in contents:
                    contents.append(child)
    for oid, obj in objects.items():
        if obj.parent_id is not None and oid not in objects[obj.parent_id].contents:
            objects[obj.parent_id].contents.append(oid)

    boxes = {e.objectId: e.axisAlignedBoundingBox for e in entries if e.axisAlignedBoundingBox is not None}
    if scene.grid is not None:
        grid = validate_grid(scene.grid, source=source, max_grid_cells=max_grid_cells)
        width, depth = grid.width, grid.depth
        origin = (grid.origin.x, grid.origin.z)
        blocked = np.zeros((width, depth), dtype=bool)
        for i, j in grid.blocked:
            blocked[i, j] = True
    else:
        width, depth, origin, blocked = _grid_from_objects(objects, catalog, source, max_grid_cells)

    def to_cell(x: float, z: float) -> tuple[int, int]:
        return (round((x - origin[0]) / GRID_SIZE), round((z - origin[1]) / GRID_SIZE))

    for oid, obj in objects.items():
        info = catalog.get(obj.object_type)
        box = boxes.get(oid)
        if box is not None:
            cx, cz = box.center.x, box.center.z
            sx, sz = abs(box.size.x), abs(box.size.z)
            nx = min(max(1, round(sx / GRID_SIZE)), width)
            nz = min(max(1, round(sz / GRID_SIZE)), depth)
            i0 = to_cell(cx - (nx - 1) * GRID_SIZE / 2, cz)[0]
            j0 = to_cell(cx, cz - (nz - 1) * GRID_SIZE / 2)[1]
            obj.cells = tuple((i0 + a, j0 + b) for a in range(nx) for b in range(nz))
        elif obj.parent_id is None and not info.pickupable:
            obj.cells = (to_cell(obj.position[0], obj.position[2]),)
        obj.cells = tuple(c for c in obj.cells if 0 <= c[0] < width and 0 <= c[1] < depth)

    pose = Pose(0, 0, 0, 0)
    if scene.agent is not None:
        agent = scene.agent
        rot = agent.rotation.y if isinstance(agent.rotation, Rotation) else float(agent.rotation)
        rotation = min(ROTATIONS, key=lambda r: min(abs(r - rot % 360), 360 - abs(r - rot % 360)))
        horizon_raw = agent.cameraHorizon if agent.cameraHorizon is not None else (agent.horizon or 0.0)
        horizon = min(HORIZONS, key=lambda h: abs(h - horizon_raw))
        ci, cj = to_cell(agent.position.x, agent.position.z)
        pose = Pose(min(max(ci, 0), width - 1), min(max(cj, 0), depth - 1), rotation, horizon)
    held_id: str | None = None
    if scene.inventoryObjects:
        held_id = scene.inventoryObjects[0].objectId
        if held_id not in objects:
            raise field_error(source, "inventoryObjects[0].objectId", f"names unknown object {held_id!r}")
    else:
        picked = [oid for oid, o in objects.items() if o.is_picked_up]
        held_id = picked[0] if picked else None
    state = WorldState(
        scene_name=scene_name or scene.sceneName or "loaded",
        room_type=scene.roomType or _guess_room(objects),
        width=width,
        depth=depth,
        origin=origin,
        blocked=blocked,
        objects=objects,
        agent=pose,
        held_id=held_id,
        seed=scene.seed,
    )
    if not state.walkable(state.agent.cell):
        state.agent = _nearest_walkable(state, pose)
    return state


def _grid_from_objects(
    objects: dict[str, WorldObject], catalog: Catalog, source: str, max_grid_cells: int
) -> tuple[int, int, tuple[float, float], np.ndarray]:
    xs = [o.position[0] for o in objects.values()] or [0.0]
    zs = [o.position[2] for o in objects.values()] or [0.0]
    origin = (math.floor(min(xs) / GRID_SIZE) * GRID_SIZE - GRID_SIZE, math.floor(min(zs) / GRID_SIZE) * GRID_SIZE - GRID_SIZE)
    width = int(round((max(xs) - origin[0]) / GRID_SIZE)) + 2
    depth = int(round((max(zs) - origin[1]) / GRID_SIZE)) + 2
    if width * depth > max_grid_cells:
        raise _grid_cells_error(source, "objects", width, depth, max_grid_cells)
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


def read_json_file(path: str | Path, *, max_bytes: int = DEFAULT_MAX_INPUT_BYTES) -> Any:
    """Parse a JSON file; every way it can be unreadable raises `StateFormatError` naming the file."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if path.is_dir():
            raise StateFormatError(f"{path}: is a directory, not a JSON file")
        if size > max_bytes:
            raise StateFormatError(
                f"{path}: {size} bytes; the limit is {max_bytes} bytes for one input file (HELPER_MAX_INPUT_BYTES)"
            )
        text = path.read_bytes().decode("utf-8")
        return json.loads(text)
    except FileNotFoundError:
        raise StateFormatError(f"{path}: no such file") from None
    except OSError as exc:
        raise StateFormatError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise StateFormatError(
            f"{path}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}); is it a binary file?"
        ) from None
    except json.JSONDecodeError as exc:
        raise StateFormatError(f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise StateFormatError(f"{path}: JSON nested too deeply") from None


def load_state_file(
    path: str | Path,
    catalog: Catalog | None = None,
    *,
    max_objects: int = DEFAULT_MAX_OBJECTS,
    max_grid_cells: int = DEFAULT_MAX_GRID_CELLS,
    max_bytes: int = DEFAULT_MAX_INPUT_BYTES,
) -> WorldState:
    """Load a state JSON file; malformed JSON or fields raise `StateFormatError` naming the file."""
    data = read_json_file(path, max_bytes=max_bytes)
    return load_state(
        data, source=str(path), catalog=catalog, max_objects=max_objects, max_grid_cells=max_grid_cells
    )
