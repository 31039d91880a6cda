"""Grid navigation: shortest paths to a pose from which a target is visible and within reach.

Pure functions over a `NavigationGrid`; the executor turns the returned TEACh actions into steps.
Targets are given by a point (x, y, z) and, for fixtures or objects inside them, the footprint
cells, because reach is measured to the nearest footprint cell.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

from helper_agent.envs.base import NavigationGrid
from helper_agent.world.geometry import FORWARD_STEP, HORIZONS, INTERACTION_DISTANCE, best_horizon

Cell = tuple[int, int]
REACH_SLACK = 0.25  # plan to stand a little closer than the limit, so rounding never fails a step


@dataclass(frozen=True)
class Target:
    """Where an object is: a point in metres and, when it has one, the footprint it is anchored to."""

    x: float
    y: float
    z: float
    footprint: tuple[Cell, ...] = ()
    min_gap_cells: int = 1  # stand at least this many cells (Manhattan) from the footprint

    def anchor_from(self, grid: NavigationGrid, cell: Cell) -> tuple[float, float]:
        """The point of the target nearest to a cell: the closest footprint cell centre, or the position."""
        if not self.footprint:
            return (self.x, self.z)
        i0, i1, j0, j1 = self.bounds()
        ci = min(max(cell[0], i0), i1)
        cj = min(max(cell[1], j0), j1)
        if (ci, cj) not in self._cells():
            # Footprints are rectangles in practice; for any other shape fall back to the full search.
            cx, cz = grid.cell_center(cell)
            return min(
                (grid.cell_center(c) for c in self.footprint),
                key=lambda p: (p[0] - cx) ** 2 + (p[1] - cz) ** 2,
            )
        return grid.cell_center((ci, cj))

    def bounds(self) -> tuple[int, int, int, int]:
        xs = [c[0] for c in self.footprint]
        zs = [c[1] for c in self.footprint]
        return (min(xs), max(xs), min(zs), max(zs))

    def _cells(self) -> frozenset[Cell]:
        return frozenset(self.footprint)


def _bearing(from_xz: tuple[float, float], to_xz: tuple[float, float]) -> float:
    return math.degrees(math.atan2(to_xz[0] - from_xz[0], to_xz[1] - from_xz[1])) % 360.0


def facing_rotation(from_xz: tuple[float, float], to_xz: tuple[float, float]) -> int:
    """The multiple of 90 degrees closest to the bearing of a point."""
    bearing = _bearing(from_xz, to_xz)
    return min((0, 90, 180, 270), key=lambda r: min(abs(r - bearing), 360 - abs(r - bearing)))


def goal_cells(grid: NavigationGrid, target: Target, max_distance: float = INTERACTION_DISTANCE - REACH_SLACK) -> set[Cell]:
    """Walkable cells within reach of the target that keep the requested gap from its footprint.

    Facing a point never needs more than 45 degrees of yaw error with 90 degree turns, so every
    cell within reach can see the target once it turns towards it.
    """
    goals: set[Cell] = set()
    size = grid.grid_size
    reach_cells = max_distance / size + 1e-6
    radius = int(reach_cells) + 1
    if target.footprint:
        i0, i1, j0, j1 = target.bounds()
        rectangular = len(set(target.footprint)) == (i1 - i0 + 1) * (j1 - j0 + 1)
    else:
        # Work in cell units relative to the target's (possibly off-grid) position.
        fx = (target.x - grid.origin[0]) / size
        fz = (target.z - grid.origin[1]) / size
        i0 = i1 = round(fx)
        j0 = j1 = round(fz)
        rectangular = True
    for i in range(i0 - radius, i1 + radius + 1):
        for j in range(j0 - radius, j1 + radius + 1):
            if not grid.walkable((i, j)):
                continue
            if target.footprint:
                gi = max(i0 - i, 0, i - i1)
                gj = max(j0 - j, 0, j - j1)
                if gi + gj < target.min_gap_cells:
                    continue
                if rectangular:
                    distance = math.hypot(gi, gj)
                else:
                    ax, az = target.anchor_from(grid, (i, j))
                    px, pz = grid.cell_center((i, j))
                    distance = math.hypot(ax - px, az - pz) / size
            else:
                distance = math.hypot(fx - i, fz - j)
            if distance <= reach_cells:
                goals.add((i, j))
    return goals


def shortest_path(grid: NavigationGrid, start: Cell, goals: set[Cell], avoid: frozenset[Cell] = frozenset()) -> list[Cell] | None:
    """Breadth-first shortest 4-connected path from start to the nearest goal (inclusive), or None."""
    if start in goals:
        return [start]
    previous: dict[Cell, Cell | None] = {start: None}
    queue = deque([start])
    while queue:
        cell = queue.popleft()
        i, j = cell
        for nxt in ((i, j + 1), (i + 1, j), (i, j - 1), (i - 1, j)):
            if nxt in previous or not grid.walkable(nxt) or nxt in avoid:
                continue
            previous[nxt] = cell
            if nxt in goals:
                path = [nxt]
                back: Cell | None = cell
                while back is not None:
                    path.append(back)
                    back = previous[back]
                return path[::-1]
            queue.append(nxt)
    return None


def turn_actions(current: int, wanted: int) -> list[str]:
    diff = (wanted - current) % 360
    return {0: [], 90: ["Turn Right"], 180: ["Turn Right", "Turn Right"], 270: ["Turn Left"]}[diff]


def path_actions(path: list[Cell], rotation: int) -> tuple[list[str], int]:
    """TEACh actions that walk a cell path from a starting rotation; returns (actions, final rotation)."""
    actions: list[str] = []
    for a, b in zip(path, path[1:], strict=False):
        step = (b[0] - a[0], b[1] - a[1])
        wanted = next(r for r, v in FORWARD_STEP.items() if v == step)
        actions.extend(turn_actions(rotation, wanted))
        rotation = wanted
        actions.append("Forward")
    return actions, rotation


def look_actions(current: int, wanted: int) -> list[str]:
    if wanted not in HORIZONS:
        raise ValueError(f"horizon {wanted} is not one of {HORIZONS}")
    steps = (wanted - current) // 30
    return ["Look Down"] * steps if steps > 0 else ["Look Up"] * (-steps)


def plan_to_target(
    grid: NavigationGrid,
    start: Cell,
    rotation: int,
    horizon: int,
    target: Target,
    avoid: frozenset[Cell] = frozenset(),
) -> list[str] | None:
    """Actions that bring the agent to a pose seeing the target within reach, or None if unreachable."""
    goals = goal_cells(grid, target)
    path = shortest_path(grid, start, goals, avoid)
    if path is None:
        return None
    actions, rotation = path_actions(path, rotation)
    end = path[-1]
    px, pz = grid.cell_center(end)
    ax, az = target.anchor_from(grid, end)
    actions.extend(turn_actions(rotation, facing_rotation((px, pz), (ax, az))))
    distance = math.hypot(ax - px, az - pz)
    actions.extend(look_actions(horizon, best_horizon(distance, target.y)))
    return actions
