"""The world's state: the floor grid, the objects and the agent.

Kept as plain dataclasses so the simulator's rules, the metadata exporter and the renderer all read
one source of truth. Containment is stored twice on purpose (each object's `parent_id` and each
receptacle's ordered `contents`) because the rules need both directions at every step; the
simulator is the only writer and `WorldState.check_invariants` verifies that the two agree.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from helper_agent.world.geometry import GRID_SIZE, Cell, Pose


@dataclass
class WorldObject:
    """One object with AI2-THOR's state flags and TEACh's `simbot*` custom properties."""

    object_id: str
    object_type: str
    position: tuple[float, float, float]
    parent_id: str | None = None
    contents: list[str] = field(default_factory=list)
    cells: tuple[Cell, ...] = ()
    rotation: float = 0.0
    is_open: bool = False
    is_toggled: bool = False
    is_sliced: bool = False
    is_cooked: bool = False
    is_dirty: bool = False
    is_filled_with_liquid: bool = False
    fill_liquid: str | None = None
    is_broken: bool = False
    is_used_up: bool = False
    is_picked_up: bool = False
    simbot_is_cooked: bool = False
    simbot_is_boiled: bool = False
    simbot_is_filled_with_coffee: bool = False
    simbot_picked_up: bool = False
    simbot_last_parent_receptacle: str | None = None
    controlled_ids: tuple[str, ...] = ()
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def is_fixture(self) -> bool:
        """Fixtures have a floor footprint and never move (counters, fridges, appliances)."""
        return bool(self.cells)


def occupancy(contents: Iterable[str]) -> int:
    """Places taken in a receptacle: the pieces of one sliced object share the place it had.

    AI2-THOR's slices lie where the whole object was; counting each of a loaf's ten slices
    against a table's capacity would make the table "full" after one slicing.
    """
    return len({oid.rsplit("|", 1)[0] if _is_piece(oid) else oid for oid in contents})


def _is_piece(object_id: str) -> bool:
    last = object_id.rsplit("|", 1)[-1]
    return object_id.count("|") >= 4 and ("Sliced_" in last or "Cracked_" in last)


def descendants(objects: dict[str, WorldObject], object_id: str) -> list[str]:
    """Everything inside or on an object, recursively (depth first)."""
    out: list[str] = []
    stack = list(objects[object_id].contents)
    while stack:
        oid = stack.pop()
        out.append(oid)
        stack.extend(objects[oid].contents)
    return out


@dataclass
class WorldState:
    """A whole scene: grid size and obstacles, objects by id, and the agent."""

    scene_name: str
    room_type: str
    width: int
    depth: int
    origin: tuple[float, float]
    blocked: np.ndarray  # bool [width, depth]; True where the agent cannot stand
    objects: dict[str, WorldObject]
    agent: Pose
    held_id: str | None = None
    seed: int | None = None

    def cell_center(self, cell: Cell) -> tuple[float, float]:
        return (self.origin[0] + cell[0] * GRID_SIZE, self.origin[1] + cell[1] * GRID_SIZE)

    def cell_of(self, x: float, z: float) -> Cell:
        return (round((x - self.origin[0]) / GRID_SIZE), round((z - self.origin[1]) / GRID_SIZE))

    def in_bounds(self, cell: Cell) -> bool:
        return 0 <= cell[0] < self.width and 0 <= cell[1] < self.depth

    def walkable(self, cell: Cell) -> bool:
        return self.in_bounds(cell) and not bool(self.blocked[cell[0], cell[1]])

    def agent_xz(self) -> tuple[float, float]:
        return self.cell_center(self.agent.cell)

    def ancestors(self, object_id: str) -> list[str]:
        """Parent receptacles from the innermost outwards."""
        chain: list[str] = []
        parent = self.objects[object_id].parent_id
        while parent is not None and parent not in chain:
            chain.append(parent)
            parent = self.objects[parent].parent_id
        return chain

    def descendants(self, object_id: str) -> list[str]:
        """Everything inside or on an object, recursively."""
        return descendants(self.objects, object_id)

    def check_invariants(self) -> list[str]:
        """Every violated structural invariant, as readable strings (empty when consistent)."""
        problems: list[str] = []
        places: dict[str, int] = {oid: 0 for oid in self.objects}
        for oid, obj in self.objects.items():
            for child in obj.contents:
                if child not in self.objects:
                    problems.append(f"{oid} contains missing object {child}")
                    continue
                places[child] += 1
                if self.objects[child].parent_id != oid:
                    problems.append(f"{child} is in {oid} but its parent is {self.objects[child].parent_id}")
            if obj.parent_id is not None:
                if obj.parent_id not in self.objects:
                    problems.append(f"{oid} has missing parent {obj.parent_id}")
                elif oid not in self.objects[obj.parent_id].contents:
                    problems.append(f"{oid} names parent {obj.parent_id} which does not contain it")
        if self.held_id is not None:
            if self.held_id not in self.objects:
                problems.append(f"held object {self.held_id} is missing")
            else:
                places[self.held_id] += 1
                held = self.objects[self.held_id]
                if held.parent_id is not None:
                    problems.append(f"held object {self.held_id} is also in {held.parent_id}")
                if not held.is_picked_up:
                    problems.append(f"held object {self.held_id} is not flagged isPickedUp")
        for oid, obj in self.objects.items():
            if obj.is_picked_up and oid != self.held_id:
                problems.append(f"{oid} is flagged isPickedUp but not held")
            if obj.is_fixture:
                continue
            # A loose object is either held, inside exactly one receptacle, or (when loaded from
            # real data) standing on the floor with no parent.
            if places[oid] > 1:
                problems.append(f"{oid} is in {places[oid]} places")
        if not self.walkable(self.agent.cell):
            problems.append(f"agent stands on a blocked cell {self.agent.cell}")
        return problems
