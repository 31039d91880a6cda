"""The environment protocol the executor and the evaluators talk to.

An environment is reset to a scene or a saved state, stepped with TEACh actions, and observed. It
counts steps and failed actions (TEACh's episode limits are enforced by whoever drives it). Two
implementations: `SymbolicEnv` over the embedded world, and `ThorEnv` over a real AI2-THOR controller.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from helper_agent.world.actions import ActionResult


@dataclass(frozen=True)
class ObjectView:
    """One detected object: id, type, horizontal distance (m), whether it is in reach now, and its position."""

    object_id: str
    object_type: str
    distance: float
    interactable: bool
    position: tuple[float, float, float]
    parent_id: str | None = None
    # Floor cells of the object's footprint, or of the fixture it stands in/on (its 3D box seen
    # from above); empty for loose objects, whose position is enough.
    footprint: tuple[tuple[int, int], ...] = ()
    state: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True)
class Observation:
    """What the agent perceives after a step."""

    pose: tuple[int, int, int, int]  # grid i, grid j, rotation, horizon
    position: tuple[float, float]  # metres (x, z)
    held_id: str | None
    visible: tuple[ObjectView, ...]
    last_action: str | None = None
    last_success: bool = True
    last_error: str = ""


@dataclass(frozen=True)
class NavigationGrid:
    """Occupancy the navigator plans on (HELPER builds this from depth; we take the simulator's)."""

    width: int
    depth: int
    origin: tuple[float, float]
    grid_size: float
    blocked: frozenset[tuple[int, int]]

    def walkable(self, cell: tuple[int, int]) -> bool:
        return 0 <= cell[0] < self.width and 0 <= cell[1] < self.depth and cell not in self.blocked

    def cell_center(self, cell: tuple[int, int]) -> tuple[float, float]:
        return (self.origin[0] + cell[0] * self.grid_size, self.origin[1] + cell[1] * self.grid_size)


class StepOutcome:
    """An action's result and, computed on first use, the observation after it.

    Perception is most of the cost of a step, and callers that only act (replaying a
    trajectory, benchmarks) never look, so the observation is computed lazily.
    """

    def __init__(self, result: ActionResult, observe: Callable[[], Observation]) -> None:
        self.result = result
        self._observe = observe
        self._observation: Observation | None = None

    @property
    def observation(self) -> Observation:
        if self._observation is None:
            self._observation = self._observe()
        return self._observation


@runtime_checkable
class Environment(Protocol):
    """What every environment offers."""

    steps: int
    failures: int

    def reset(self, scene: Any = None, *, room_type: str | None = None) -> Observation: ...

    def step(self, action: str, object_id: str | None = None) -> StepOutcome: ...

    def observe(self) -> Observation: ...

    def metadata(self) -> dict[str, Any]: ...

    def objects_metadata(self) -> list[dict[str, Any]]: ...

    def navigation_grid(self) -> NavigationGrid: ...

    def render(self, path: str | Path) -> Path: ...


class SnapshotUnsupported(RuntimeError):
    """This environment cannot save and restore its whole state."""


@runtime_checkable
class Snapshotting(Protocol):
    """An environment that can save its whole state as JSON-friendly data and go back to it.

    A chat that stops at an `interrupt` and resumes in a new process needs this: the household goes
    into the checkpoint as a snapshot and the next process restores it. `restore(snapshot())`
    leaves the environment as it was, counters included.
    """

    def snapshot(self) -> dict[str, Any]: ...

    def restore(self, snapshot: dict[str, Any]) -> None: ...


def can_snapshot(env: Any) -> bool:
    """Whether `env` saves and restores its state exactly (`supports_snapshot` may say no)."""
    return isinstance(env, Snapshotting) and bool(getattr(env, "supports_snapshot", True))
