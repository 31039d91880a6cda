"""Searching for unseen objects, and the interface searchers use to act.

`SearchHost` is all a searcher may use of the agent it searches with: what has been seen, where
the agent stands, whether a program object can be bound now, walking to an object, single actions,
walking to a grid cell, and the trace. The executor implements it; the locators
(`tools/locator.py`) and the systematic search here are written against it, so they never reach into
the executor's internals and the executor never imports a locator.

`explore` is the systematic search (no LLM): every closed receptacle seen, then walking the room and
looking around. The executor uses it when no locator is configured; the locators fall back to it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Protocol

from helper_agent.envs.base import NavigationGrid
from helper_agent.perception.tracker import ObjectTracker
from helper_agent.program.subgoals import ObjectRef
from helper_agent.tools.errors import StepFailed
from helper_agent.world.catalog import Catalog


class SearchHost(Protocol):
    """What a searcher uses of the agent (the `Executor` implements it).

    Actions raise `StepFailed` when they fail and `EpisodeLimit` at TEACh's limits; a searcher
    handles the first and lets the second through.
    """

    tracker: ObjectTracker
    catalog: Catalog

    @property
    def position(self) -> tuple[float, float]:
        """Where the agent stands, in metres (x, z)."""
        ...

    @property
    def room_type(self) -> str:
        """The kind of room (Kitchen, ...), or "house" when the environment does not say."""
        ...

    def can_bind(self, ref: ObjectRef) -> bool:
        """Whether a seen object can stand for `ref` now (one bound to another program object cannot)."""
        ...

    def env_type(self, oid: str) -> str:
        """The type of an object id."""
        ...

    def walk_to(self, oid: str, *, swing: bool = False) -> None:
        """Walk to where the object is in reach (`swing`: far enough for a door to open)."""
        ...

    def act(self, action: str, object_id: str | None = None) -> None:
        """One TEACh action, counted as a step."""
        ...

    def explore_to(self, cell: tuple[int, int]) -> bool:
        """Walk to a grid cell; False when it cannot be reached."""
        ...

    def navigation_grid(self) -> NavigationGrid:
        """The grid the agent walks on."""
        ...

    def note(self, text: str) -> None:
        """Add a line to the trace of the current subgoal."""
        ...


#: A searcher: given the agent and a program object not seen yet, search; True when found.
Locator = Callable[[SearchHost, ObjectRef], bool]


def look_into(host: SearchHost, oid: str) -> bool:
    """Walk to a receptacle and open it when it is closed; False when that fails."""
    try:
        host.walk_to(oid, swing=host.catalog.get(host.env_type(oid)).openable)
        tracked = host.tracker.objects[oid]
        if host.catalog.get(tracked.object_type).openable and not tracked.has("open"):
            host.act("Open", oid)
        return True
    except StepFailed as failed:
        host.note(f"locator: could not look into {oid}: {failed.error}")
        return False


def search_places(host: SearchHost, ref: ObjectRef, classes: list[str]) -> bool:
    """Visit instances of each receptacle class in order (nearest first), opening closed ones."""
    for cls in classes:
        ax, az = host.position
        instances = sorted(
            host.tracker.of_type(cls),
            key=lambda t: (math.hypot(t.position[0] - ax, t.position[2] - az), t.object_id),
        )
        for tracked in instances:
            if look_into(host, tracked.object_id) and host.can_bind(ref):
                host.note(f"locator: found {ref.object_class} at {tracked.object_id}")
                return True
    return host.can_bind(ref)


def explore(host: SearchHost, ref: ObjectRef) -> bool:
    """Systematic search: open every closed receptacle seen, then walk the room looking around."""
    for tracked in list(host.tracker.objects.values()):
        if host.can_bind(ref):
            return True
        if host.catalog.get(tracked.object_type).openable and not tracked.has("open") and not tracked.gone:
            if not host.catalog.get(tracked.object_type).pickupable:
                look_into(host, tracked.object_id)
    grid = host.navigation_grid()
    waypoints = [
        (i, j)
        for i in range(1, grid.width, 4)
        for j in range(1, grid.depth, 4)
        if grid.walkable((i, j))
    ]
    for cell in waypoints:
        if host.can_bind(ref):
            return True
        try:
            if host.explore_to(cell):
                for _ in range(4):
                    host.act("Turn Left")
                    if host.can_bind(ref):
                        return True
        except StepFailed:
            continue
        for tracked in list(host.tracker.objects.values()):
            info = host.catalog.get(tracked.object_type)
            if info.openable and not info.pickupable and not tracked.has("open") and tracked.object_id not in host.tracker.opened:
                look_into(host, tracked.object_id)
                if host.can_bind(ref):
                    return True
    return host.can_bind(ref)
