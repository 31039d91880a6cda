"""Object tracker: what the agent has seen, where, and in what state.

HELPER keeps a 3D object memory from its detector; here detections come from the environment's
observation (ids, types, positions, footprints and visible state). The tracker also updates from the
agent's own actions, so it knows what it holds and what it sliced even before looking again.
Tracked attributes use HELPER's vocabulary: held, sliced, cooked, clean, toasted, filled, open, on.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from helper_agent.envs.base import ObjectView, Observation


@dataclass
class TrackedObject:
    object_id: str
    object_type: str
    position: tuple[float, float, float]
    footprint: tuple[tuple[int, int], ...] = ()
    parent_id: str | None = None
    attributes: dict[str, bool] = field(default_factory=dict)
    contents: tuple[str, ...] = ()
    controls: tuple[str, ...] = ()
    last_seen: int = 0
    gone: bool = False

    def has(self, attribute: str) -> bool:
        return bool(self.attributes.get(attribute, False))


def _attributes(view: ObjectView) -> dict[str, bool]:
    state = view.state
    cooked = bool(state.get("isCooked", False))
    return {
        "open": bool(state.get("isOpen", False)),
        "on": bool(state.get("isToggled", False)),
        "clean": not bool(state.get("isDirty", False)),
        "dirty": bool(state.get("isDirty", False)),
        "cooked": cooked,
        "toasted": cooked and view.object_type == "BreadSliced",
        "filled": bool(state.get("isFilledWithLiquid", False)),
        "sliced": view.object_type.endswith("Sliced") or view.object_type == "EggCracked",
    }


class ObjectTracker:
    """Remembers every object seen, keyed by id."""

    def __init__(self) -> None:
        self.objects: dict[str, TrackedObject] = {}
        self.held_id: str | None = None
        self.step = 0
        self.opened: set[str] = set()

    def update(self, observation: Observation) -> None:
        self.step += 1
        self.held_id = observation.held_id
        for view in observation.visible:
            tracked = self.objects.get(view.object_id)
            attrs = _attributes(view)
            attrs["held"] = view.object_id == observation.held_id
            if tracked is None:
                self.objects[view.object_id] = TrackedObject(
                    view.object_id,
                    view.object_type,
                    view.position,
                    view.footprint,
                    view.parent_id,
                    attrs,
                    tuple(view.state.get("receptacleObjectIds", ())),
                    tuple(view.state.get("controlledObjects", ())),
                    self.step,
                )
            else:
                tracked.position = view.position
                tracked.footprint = view.footprint or tracked.footprint
                tracked.parent_id = view.parent_id
                tracked.attributes = attrs
                tracked.contents = tuple(view.state.get("receptacleObjectIds", ()))
                tracked.controls = tuple(view.state.get("controlledObjects", ()))
                tracked.last_seen = self.step
                tracked.gone = False
            if attrs["open"]:
                self.opened.add(view.object_id)
        for oid, tracked in self.objects.items():
            if oid != observation.held_id and tracked.attributes.get("held"):
                tracked.attributes["held"] = False

    def forget(self, object_id: str) -> None:
        """An object ceased to exist (sliced into pieces) or was found not to be where we thought."""
        if object_id in self.objects:
            self.objects[object_id].gone = True

    def known(self, object_id: str) -> bool:
        tracked = self.objects.get(object_id)
        return tracked is not None and not tracked.gone

    def of_type(self, object_type: str) -> list[TrackedObject]:
        return [t for t in self.objects.values() if t.object_type == object_type and not t.gone]

    def types_seen(self) -> set[str]:
        return {t.object_type for t in self.objects.values() if not t.gone}
