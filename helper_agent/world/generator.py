"""Seeded procedural generation of plausible rooms of the four TEACh types.

`generate_scene(seed, room_type)` is deterministic: the same seed and room type always give the same
scene, object ids included. Fixtures come from `rooms.TEMPLATES`; small objects start in receptacles
the catalog says they plausibly start in (`spawn_in`), some of them hidden in closed cabinets,
drawers and fridges; dishes start dirty with the template's probability.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass

import numpy as np

from helper_agent.world.catalog import Catalog, load_catalog
from helper_agent.world.geometry import ROTATIONS, Cell, Pose
from helper_agent.world.metadata import object_id_for
from helper_agent.world.rooms import ROOM_TYPES, TEMPLATES, RoomTemplate, Unit
from helper_agent.world.simulator import attach
from helper_agent.world.state import WorldObject, WorldState, descendants, occupancy

MAX_ATTEMPTS = 60
# Objects that are not pickupable but sit on furniture rather than on the floor.
SURFACE_ORNAMENTS = ("HousePlant",)
SURFACE_TYPES = ("CounterTop", "DiningTable", "SideTable", "CoffeeTable", "Desk", "Shelf", "Dresser")


@dataclass
class _PlacedUnit:
    unit: Unit
    cells: tuple[Cell, ...]


class SceneGenerationError(RuntimeError):
    """The generator could not lay out a room (should not happen with the shipped templates)."""


def generate_scene(seed: int, room_type: str | None = None, catalog: Catalog | None = None) -> WorldState:
    """A new room. `room_type` is one of Kitchen, LivingRoom, Bedroom, Bathroom (seeded choice if None)."""
    catalog = catalog or load_catalog()
    rng = random.Random(seed)
    if room_type is None:
        room_type = rng.choice(ROOM_TYPES)
    if room_type not in TEMPLATES:
        raise ValueError(f"unknown room type {room_type!r}; expected one of {', '.join(ROOM_TYPES)}")
    template = TEMPLATES[room_type]
    for _ in range(MAX_ATTEMPTS):
        state = _attempt(rng, template, catalog, seed)
        if state is not None:
            return state
    raise SceneGenerationError(f"could not lay out a {room_type} for seed {seed}")


def _attempt(rng: random.Random, template: RoomTemplate, catalog: Catalog, seed: int) -> WorldState | None:
    width = rng.randint(*template.width)
    depth = rng.randint(*template.depth)
    occupied = np.zeros((width, depth), dtype=bool)
    wall_units: list[Unit] = []
    centre_units: list[Unit] = []
    for unit in template.units:
        if rng.random() >= unit.probability:
            continue
        for _ in range(rng.randint(*unit.count)):
            (centre_units if unit.placement == "centre" else wall_units).append(unit)
    rng.shuffle(wall_units)
    placed: list[_PlacedUnit] = []
    for unit in wall_units:
        cells = _place_on_wall(rng, unit, width, depth, occupied)
        if cells is None:
            return None
        placed.append(_PlacedUnit(unit, cells))
    for unit in centre_units:
        cells = _place_in_centre(rng, unit, width, depth, occupied)
        if cells is None:
            return None
        placed.append(_PlacedUnit(unit, cells))
    free = _main_component(~occupied)
    if free is None or any(not _touches(p.cells, free) for p in placed):
        return None

    objects: dict[str, WorldObject] = {}
    origin = (0.0, 0.0)

    def centre_of(cells: tuple[Cell, ...]) -> tuple[float, float]:
        xs = [c[0] * 0.25 + origin[0] for c in cells]
        zs = [c[1] * 0.25 + origin[1] for c in cells]
        return ((min(xs) + max(xs)) / 2, (min(zs) + max(zs)) / 2)

    def add(otype: str, position: tuple[float, float, float], cells: tuple[Cell, ...] = ()) -> WorldObject:
        return add_object(objects, otype, position, cells)

    hosts: list[list[WorldObject]] = []
    for placed_unit in placed:
        cx, cz = centre_of(placed_unit.cells)
        members: list[WorldObject] = []
        surfaces = [catalog.get(t).surface_height or 0.0 for t in placed_unit.unit.members]
        top = max(surfaces, default=0.0)
        for index, otype in enumerate(placed_unit.unit.members):
            info = catalog.get(otype)
            # Things without a surface of their own (faucets, knobs) sit on the unit's top.
            height = info.surface_height if info.surface_height is not None else top + info.height / 2
            # Members of one unit get distinct spots (burner 0..3 on a 2x2 layout, ...).
            dx = ((index % 2) - 0.5) * 0.2 if placed_unit.unit.members.count(otype) > 1 else 0.0
            dz = ((index // 2 % 2) - 0.5) * 0.2 if placed_unit.unit.members.count(otype) > 1 else 0.0
            members.append(add(otype, (cx + dx, height, cz + dz), placed_unit.cells))
        for controller, controlled in placed_unit.unit.controls:
            members[controller].controlled_ids = (members[controlled].object_id,)
        if placed_unit.unit.host:
            hosts.append(members)
    fixtures = list(objects.values())

    small_types: list[str] = []
    for otype, probability in template.appliances:
        if rng.random() >= probability or not hosts:
            continue
        if catalog.get(otype).pickupable:
            small_types.append(otype)
            continue
        host = rng.choice(hosts)
        info = catalog.get(otype)
        hx, _, hz = host[0].position
        surface = catalog.get(host[0].object_type).surface_height or 0.9
        appliance = add(otype, (hx, surface + (info.height / 2 if info.height else 0.1), hz), host[0].cells)
        fixtures.append(appliance)
        host.append(appliance)

    small_types.extend(template.essentials)
    extras = [
        name
        for name in catalog.names()
        if catalog.get(name).pickupable
        and template.room_type in catalog.get(name).rooms
        and catalog.base_type(name) == name
        and catalog.get(name).spawn_in
    ]
    extras.sort()
    if extras:
        small_types.extend(rng.choice(extras) for _ in range(rng.randint(*template.extra_objects)))

    populate(rng, objects, fixtures, small_types, catalog, template.hidden_bias, template.dirty_probability)

    free_cells = sorted(free)
    start = rng.choice(free_cells)
    state = WorldState(
        scene_name=f"{template.room_type}-{seed}",
        room_type=template.room_type,
        width=width,
        depth=depth,
        origin=origin,
        blocked=occupied,
        objects=objects,
        agent=Pose(start[0], start[1], rng.choice(ROTATIONS), 0),
        seed=seed,
    )
    return state


def add_object(
    objects: dict[str, WorldObject], otype: str, position: tuple[float, float, float], cells: tuple[Cell, ...] = ()
) -> WorldObject:
    """Create an object with an AI2-THOR id from its position, nudging y until the id is unique."""
    x, y, z = position
    oid = object_id_for(otype, (x, y, z))
    while oid in objects:
        y = round(y + 0.01, 2)
        oid = object_id_for(otype, (x, y, z))
    obj = WorldObject(object_id=oid, object_type=otype, position=(round(x, 2), round(y, 2), round(z, 2)), cells=cells)
    objects[oid] = obj
    return obj


def populate(
    rng: random.Random,
    objects: dict[str, WorldObject],
    fixtures: list[WorldObject],
    small_types: list[str],
    catalog: Catalog,
    hidden_bias: float,
    dirty_probability: float,
) -> None:
    """Put small objects into plausible receptacles among `fixtures`; some start dirty."""
    for otype in small_types:
        if otype not in catalog:
            continue
        parent = _choose_receptacle(rng, otype, fixtures, catalog, hidden_bias)
        if parent is None:
            continue
        info = catalog.get(otype)
        obj = add_object(objects, otype, parent.position)
        attach(_StateView(objects), obj.object_id, parent.object_id)  # type: ignore[arg-type]
        obj.simbot_last_parent_receptacle = parent.object_id
        if info.dirtyable and rng.random() < dirty_probability:
            obj.is_dirty = True


class _StateView:
    """The part of WorldState that `attach` uses, for building objects before the state exists."""

    def __init__(self, objects: dict[str, WorldObject]) -> None:
        self.objects = objects

    def descendants(self, object_id: str) -> list[str]:
        return descendants(self.objects, object_id)


def _choose_receptacle(
    rng: random.Random,
    otype: str,
    fixtures: list[WorldObject],
    catalog: Catalog,
    hidden_bias: float,
) -> WorldObject | None:
    info = catalog.get(otype)

    def has_room(r: WorldObject) -> bool:
        # Leave two free spots in sinks and on large surfaces so that tasks can still put things there.
        capacity = catalog.get(r.object_type).capacity
        return occupancy(r.contents) < (capacity - 2 if capacity >= 4 else max(capacity, 1))

    if not info.pickupable:
        candidates = [f for f in fixtures if f.object_type in SURFACE_TYPES and has_room(f)]
    else:
        preferred = set(info.spawn_in)
        candidates = [
            f
            for f in fixtures
            if f.object_type in preferred and catalog.accepts(f.object_type, otype) and has_room(f)
        ]
        if not candidates:
            candidates = [f for f in fixtures if catalog.accepts(f.object_type, otype) and has_room(f)]
    if not candidates:
        return None
    weights = []
    for f in candidates:
        finfo = catalog.get(f.object_type)
        if finfo.openable:
            weights.append(hidden_bias)
        elif finfo.toggleable:
            weights.append(0.15)  # rarely start inside appliances
        else:
            weights.append(1.0)
    return rng.choices(candidates, weights=weights, k=1)[0]


def _rect(unit: Unit, side: int, offset: int, width: int, depth: int) -> tuple[Cell, ...] | None:
    length, out = unit.length, unit.depth
    if side in (0, 2):  # walls along x at z = 0 (south) or z = depth-1 (north)
        if offset + length > width:
            return None
        j0 = 0 if side == 0 else depth - out
        return tuple((i, j) for i in range(offset, offset + length) for j in range(j0, j0 + out))
    if offset + length > depth:
        return None
    i0 = 0 if side == 3 else width - out
    return tuple((i, j) for i in range(i0, i0 + out) for j in range(offset, offset + length))


def _place_on_wall(
    rng: random.Random, unit: Unit, width: int, depth: int, occupied: np.ndarray
) -> tuple[Cell, ...] | None:
    for _ in range(40):
        side = rng.randrange(4)
        span = width if side in (0, 2) else depth
        if span - unit.length < 0:
            continue
        cells = _rect(unit, side, rng.randint(0, span - unit.length), width, depth)
        if cells and not any(occupied[c] for c in cells):
            for c in cells:
                occupied[c] = True
            return cells
    return None


def _place_in_centre(
    rng: random.Random, unit: Unit, width: int, depth: int, occupied: np.ndarray
) -> tuple[Cell, ...] | None:
    margin = 2
    for _ in range(40):
        along_x = rng.random() < 0.5
        w, d = (unit.length, unit.depth) if along_x else (unit.depth, unit.length)
        if width - w - 2 * margin < 0 or depth - d - 2 * margin < 0:
            return None
        i0 = rng.randint(margin, width - w - margin)
        j0 = rng.randint(margin, depth - d - margin)
        lo_i, hi_i = max(i0 - margin, 0), min(i0 + w + margin, width)
        lo_j, hi_j = max(j0 - margin, 0), min(j0 + d + margin, depth)
        if occupied[lo_i:hi_i, lo_j:hi_j].any():
            continue
        cells = tuple((i, j) for i in range(i0, i0 + w) for j in range(j0, j0 + d))
        for c in cells:
            occupied[c] = True
        return cells
    return None


def _main_component(free: np.ndarray) -> set[Cell] | None:
    """The free cells when they form one connected region (4-neighbour), else None."""
    cells = {(int(i), int(j)) for i, j in np.argwhere(free)}
    if not cells:
        return None
    start = min(cells)
    seen = {start}
    queue = deque([start])
    while queue:
        i, j = queue.popleft()
        for n in ((i + 1, j), (i - 1, j), (i, j + 1), (i, j - 1)):
            if n in cells and n not in seen:
                seen.add(n)
                queue.append(n)
    return seen if len(seen) == len(cells) else None


def _touches(cells: tuple[Cell, ...], free: set[Cell]) -> bool:
    return any((i + di, j + dj) in free for i, j in cells for di, dj in ((1, 0), (-1, 0), (0, 1), (0, -1)))
