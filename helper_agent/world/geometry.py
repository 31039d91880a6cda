"""Grid geometry shared by the simulator, the generator and the navigator.

The floor is a grid of 0.25 m cells, as AI2-THOR's default `gridSize`. Cell (i, j) has its centre at
x = origin_x + i * 0.25, z = origin_z + j * 0.25. Rotations follow AI2-THOR: 0 faces +z, 90 faces +x.
Horizons follow AI2-THOR too: positive looks down, in 30 degree steps from -30 to 60.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

GRID_SIZE = 0.25
CAMERA_HEIGHT = 1.5
INTERACTION_DISTANCE = 1.5
PERCEPTION_DISTANCE = 5.0
HALF_FOV_DEG = 45.0
HORIZONS = (-30, 0, 30, 60)
ROTATIONS = (0, 90, 180, 270)

Cell = tuple[int, int]

# Unit steps on the grid for each rotation: (di, dj).
FORWARD_STEP: dict[int, Cell] = {0: (0, 1), 90: (1, 0), 180: (0, -1), 270: (-1, 0)}


@dataclass(frozen=True)
class Pose:
    """The agent's pose on the grid: cell, yaw (multiple of 90) and camera horizon (multiple of 30)."""

    i: int
    j: int
    rotation: int = 0
    horizon: int = 0

    @property
    def cell(self) -> Cell:
        return (self.i, self.j)


def step_vector(rotation: int, direction: str) -> Cell:
    """Grid step for moving `direction` (forward/backward/left/right) while facing `rotation`."""
    offsets = {"forward": 0, "right": 90, "backward": 180, "left": 270}
    di, dj = FORWARD_STEP[(rotation + offsets[direction]) % 360]
    return di, dj


def angle_to(from_xz: tuple[float, float], rotation: int, to_xz: tuple[float, float]) -> float:
    """Absolute horizontal angle in degrees between the facing direction and the direction to a point."""
    dx = to_xz[0] - from_xz[0]
    dz = to_xz[1] - from_xz[1]
    if abs(dx) < 1e-9 and abs(dz) < 1e-9:
        return 0.0
    target = math.degrees(math.atan2(dx, dz)) % 360.0
    diff = abs(target - rotation) % 360.0
    return min(diff, 360.0 - diff)


def pitch_down_to(distance: float, target_y: float) -> float:
    """Angle in degrees below the horizontal from the camera to a point `distance` metres away."""
    return math.degrees(math.atan2(CAMERA_HEIGHT - target_y, max(distance, GRID_SIZE)))


def in_vertical_view(horizon: int, distance: float, target_y: float) -> bool:
    """Whether a point is inside the vertical field of view (90 degrees, centred on the horizon)."""
    return abs(pitch_down_to(distance, target_y) - horizon) <= HALF_FOV_DEG + 1e-6


def best_horizon(distance: float, target_y: float) -> int:
    """The allowed horizon that centres a point best in view."""
    pitch = pitch_down_to(distance, target_y)
    return min(HORIZONS, key=lambda h: abs(pitch - h))
