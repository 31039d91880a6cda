"""Build a room from a real AI2-THOR floor plan in ALFRED's layout format.

ALFRED ships, per floor plan: `FloorPlanN-layout.npy` (the reachable (x, z) positions on the 0.25 m
grid), `FloorPlanN-objects.json` (the object types present) and `FloorPlanN-openable.json` (each
openable receptacle's object id, which encodes its position, with a pose to reach it). From these
we rebuild the walkable grid exactly, put each openable receptacle at the blocked cell nearest its
real position (keeping its real object id), give the other fixtures footprints along the walls, and
place the small object types in plausible receptacles (seeded). Only the directory the user gives
is read; nothing is bundled.

The files come from the user, so they are checked before anything is built: the layout must be a
finite numeric (N, 2) array within `MAX_COORDINATE` metres of the origin and span at most
`max_grid_cells` cells (one stray point 100 km away would otherwise allocate a grid of billions
of cells); every failure is a `StateFormatError` naming the file and the row or key at fault.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import numpy as np

from helper_agent.world.catalog import Catalog, load_catalog
from helper_agent.world.errors import StateFormatError
from helper_agent.world.generator import add_object, populate
from helper_agent.world.geometry import GRID_SIZE, ROTATIONS, Pose
from helper_agent.world.metadata import (
    DEFAULT_MAX_GRID_CELLS,
    DEFAULT_MAX_INPUT_BYTES,
    MAX_COORDINATE,
    read_json_file,
)
from helper_agent.world.rooms import TEMPLATES
from helper_agent.world.state import WorldObject, WorldState

# Fixture types that come in several instances per room in AI2-THOR kitchens.
MULTIPLES = {"StoveBurner": 4, "StoveKnob": 4, "CounterTop": 2}
# Fixtures that stand together on one footprint.
GROUPS = (("Sink", "SinkBasin", "Faucet"), ("Bathtub", "BathtubBasin", "ShowerHead"), ("StoveBurner", "StoveKnob"))
_ID = re.compile(r"^(?P<type>[A-Za-z]+)\|(?P<x>[+-]?[\d.]+)\|(?P<y>[+-]?[\d.]+)\|(?P<z>[+-]?[\d.]+)")


def room_type_of(floorplan: int) -> str:
    """AI2-THOR's numbering: 1-30 kitchens, 201-230 living rooms, 301-330 bedrooms, 401-430 bathrooms."""
    if floorplan < 100:
        return "Kitchen"
    return {2: "LivingRoom", 3: "Bedroom", 4: "Bathroom"}.get(floorplan // 100, "Kitchen")


def read_layout(path: Path, *, max_bytes: int = DEFAULT_MAX_INPUT_BYTES) -> np.ndarray:
    """The reachable (x, z) positions of an ALFRED `-layout.npy`, checked: numeric, finite, in range."""
    if path.is_dir():
        raise StateFormatError(f"{path}: is a directory, not a .npy file")
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise StateFormatError(f"{path}: no such file") from None
    if size > max_bytes:
        raise StateFormatError(
            f"{path}: {size} bytes; the limit is {max_bytes} bytes for one input file (HELPER_MAX_INPUT_BYTES)"
        )
    try:
        reachable = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise StateFormatError(f"{path}: no such file") from None
    except (ValueError, EOFError, OSError) as exc:
        raise StateFormatError(f"{path}: not a numeric .npy array ({exc})") from None
    if not isinstance(reachable, np.ndarray):
        raise StateFormatError(f"{path}: expected one array, found an archive of several")
    if reachable.ndim != 2 or reachable.shape[1] != 2 or len(reachable) == 0:
        raise StateFormatError(
            f"{path}: expected an (N, 2) array of reachable x, z positions, got shape {reachable.shape}"
        )
    if not (np.issubdtype(reachable.dtype, np.integer) or np.issubdtype(reachable.dtype, np.floating)):
        raise StateFormatError(f"{path}: expected numbers (x, z in metres), got dtype {reachable.dtype}")
    reachable = reachable.astype(np.float64)
    bad = ~np.isfinite(reachable) | (np.abs(reachable) > MAX_COORDINATE)
    if bad.any():
        row, col = (int(v) for v in np.argwhere(bad)[0])
        value = float(reachable[row, col])
        problem = "is not a finite number" if not np.isfinite(value) else f"is farther than {MAX_COORDINATE:g} m from the origin"
        raise StateFormatError(f"{path}: row {row}: {'xz'[col]} = {value:g} {problem}")
    return reachable


def load_alfred_floorplan(
    directory: str | Path,
    floorplan: int,
    seed: int = 0,
    catalog: Catalog | None = None,
    *,
    max_grid_cells: int = DEFAULT_MAX_GRID_CELLS,
    max_bytes: int = DEFAULT_MAX_INPUT_BYTES,
) -> WorldState:
    """A `WorldState` for `FloorPlan<floorplan>` from ALFRED layout files in `directory`.

    Raises `StateFormatError` naming the file (and row or key) for unreadable or malformed files,
    and for a layout spanning more than `max_grid_cells` cells.
    """
    catalog = catalog or load_catalog()
    directory = Path(directory)
    if not directory.is_dir():
        raise StateFormatError(f"{directory}: no such directory of ALFRED layout files")
    stem = directory / f"FloorPlan{floorplan}"
    layout_path = Path(f"{stem}-layout.npy")
    reachable = read_layout(layout_path, max_bytes=max_bytes)
    types = read_json_file(Path(f"{stem}-objects.json"), max_bytes=max_bytes)
    openable = read_json_file(Path(f"{stem}-openable.json"), max_bytes=max_bytes)
    if not isinstance(types, list) or not all(isinstance(t, str) for t in types):
        raise StateFormatError(f"{stem}-objects.json: expected a list of object type names")
    if not isinstance(openable, dict):
        raise StateFormatError(f"{stem}-openable.json: expected an object mapping ids to poses")

    rng = random.Random(seed * 1000 + floorplan)
    origin = (float(reachable[:, 0].min()) - GRID_SIZE, float(reachable[:, 1].min()) - GRID_SIZE)
    width = int(round((reachable[:, 0].max() - origin[0]) / GRID_SIZE)) + 2
    depth = int(round((reachable[:, 1].max() - origin[1]) / GRID_SIZE)) + 2
    if width * depth > max_grid_cells:
        raise StateFormatError(
            f"{layout_path}: the reachable positions span {width} x {depth} cells of {GRID_SIZE} m; "
            f"the limit is {max_grid_cells} cells (HELPER_MAX_GRID_CELLS)"
        )
    free = np.zeros((width, depth), dtype=bool)
    for x, z in reachable:
        free[int(round((x - origin[0]) / GRID_SIZE)), int(round((z - origin[1]) / GRID_SIZE))] = True
    blocked = ~free

    def cell_of(x: float, z: float) -> tuple[int, int]:
        return (int(round((x - origin[0]) / GRID_SIZE)), int(round((z - origin[1]) / GRID_SIZE)))

    boundary = sorted(
        (i, j)
        for i in range(width)
        for j in range(depth)
        if blocked[i, j]
        and any(0 <= i + di < width and 0 <= j + dj < depth and free[i + di, j + dj] for di, dj in ((1, 0), (-1, 0), (0, 1), (0, -1)))
    )
    if not boundary:
        raise StateFormatError(f"{layout_path}: the reachable area touches no obstacle")

    objects: dict[str, WorldObject] = {}
    used: set[tuple[int, int]] = set()

    def nearest_boundary(x: float, z: float) -> tuple[int, int]:
        ci, cj = cell_of(x, z)
        return min(boundary, key=lambda c: ((c[0] - ci) ** 2 + (c[1] - cj) ** 2, c))

    for oid in openable:
        match = _ID.match(oid)
        if match is None or match["type"] not in catalog:
            continue
        try:
            x, y, z = float(match["x"]), float(match["y"]), float(match["z"])
        except ValueError:
            raise StateFormatError(f"{stem}-openable.json: key {oid!r}: the position in the id is not x|y|z numbers") from None
        cell = nearest_boundary(x, z)
        used.add(cell)
        obj = WorldObject(object_id=oid, object_type=match["type"], position=(x, y, z), cells=(cell,))
        objects[oid] = obj

    present = {t for t in types if t in catalog}
    fixtures_to_place: list[list[str]] = []
    grouped: set[str] = set()
    for group in GROUPS:
        members = [t for t in group if t in present]
        if members:
            count = max(MULTIPLES.get(t, 1) for t in members)
            if "StoveBurner" in members:
                fixtures_to_place.append([t for t in members for _ in range(count)])
            else:
                fixtures_to_place.append(members)
            grouped.update(members)
    openable_types = {o.object_type for o in objects.values()}
    for t in sorted(present - grouped):
        info = catalog.get(t)
        if info.pickupable or t in openable_types or t in ("Floor", "Window", "LightSwitch", "Painting", "Mirror", "Blinds", "Curtains", "ShelvingUnit"):
            continue
        if not (info.receptacle or info.toggleable or info.can_fill_with_liquid or info.blocks_floor):
            continue
        for _ in range(MULTIPLES.get(t, 1)):
            fixtures_to_place.append([t])
    spare = [c for c in boundary if c not in used]
    rng.shuffle(spare)
    for members in fixtures_to_place:
        cell = spare.pop() if spare else rng.choice(boundary)
        cx = origin[0] + cell[0] * GRID_SIZE
        cz = origin[1] + cell[1] * GRID_SIZE
        created: list[WorldObject] = []
        for index, t in enumerate(members):
            info = catalog.get(t)
            height = info.surface_height if info.surface_height is not None else info.height
            created.append(add_object(objects, t, (cx + 0.01 * index, height, cz), (cell,)))
        by_type: dict[str, list[WorldObject]] = {}
        for obj in created:
            by_type.setdefault(obj.object_type, []).append(obj)
        for controller, controlled in catalog_controls(catalog, by_type):
            controller.controlled_ids = (controlled.object_id,)

    fixtures = [o for o in objects.values() if o.cells]
    small = sorted(t for t in present if catalog.get(t).pickupable)
    ornaments = sorted(t for t in present if t == "HousePlant")
    room_type = room_type_of(floorplan)
    template = TEMPLATES[room_type]
    populate(rng, objects, fixtures, small + ornaments, catalog, template.hidden_bias, template.dirty_probability)

    start = tuple(int(v) for v in rng.choice(sorted(zip(*np.nonzero(free), strict=True))))
    return WorldState(
        scene_name=f"FloorPlan{floorplan}",
        room_type=room_type,
        width=width,
        depth=depth,
        origin=origin,
        blocked=blocked,
        objects=objects,
        agent=Pose(start[0], start[1], rng.choice(ROTATIONS), 0),
        seed=seed,
    )


def catalog_controls(catalog: Catalog, by_type: dict[str, list[WorldObject]]) -> list[tuple[WorldObject, WorldObject]]:
    """Pair controllers with what they control within one fixture group (knob n -> burner n)."""
    pairs: list[tuple[WorldObject, WorldObject]] = []
    for controller_type, controllers in by_type.items():
        controlled_type = catalog.controlled_type(controller_type)
        if controlled_type is None or controlled_type not in by_type:
            continue
        for controller, controlled in zip(controllers, by_type[controlled_type], strict=False):
            pairs.append((controller, controlled))
    return pairs


def available_floorplans(directory: str | Path) -> list[int]:
    """Floor plan numbers that have all three ALFRED layout files in `directory`."""
    directory = Path(directory)
    numbers = []
    for path in directory.glob("FloorPlan*-layout.npy"):
        number = int(path.name[len("FloorPlan") : -len("-layout.npy")])
        if (directory / f"FloorPlan{number}-objects.json").exists() and (directory / f"FloorPlan{number}-openable.json").exists():
            numbers.append(number)
    return sorted(numbers)
