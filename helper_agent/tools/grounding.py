"""Grounding: which environment object stands for each object a program names.

A program names objects by class and instance key (`ObjectRef`: "mug#1", a Mug); the environment
knows objects by id. `Grounding` keeps the bindings between the two for one episode and chooses,
among the objects the tracker has seen, the one a program object should bind to: of the right
class, not taken by another program object, with room for what is to be placed, in plain sight and
near rather than hidden or far. It also answers the lookups the executor's moves need (a knife to
slice with, the faucet of a sink, the knob of a burner, a free surface to put something down).

It never acts. Searching for what has not been seen, slicing a whole object for its slices and
walking belong to the executor, which asks `Grounding` what fits, so these rules can be read and
tested without an environment.
"""

from __future__ import annotations

import math

from helper_agent.perception.tracker import ObjectTracker, TrackedObject
from helper_agent.program.subgoals import ObjectRef
from helper_agent.world.catalog import Catalog
from helper_agent.world.state import occupancy

KNIVES = ("Knife", "ButterKnife")
SURFACES = ("CounterTop", "DiningTable", "SideTable", "CoffeeTable", "Desk", "Shelf", "Dresser", "Sofa", "Bed")

Point = tuple[float, float]


# ---------------------------------------------------------------------------- sliced and whole objects
def is_sliced_class(name: str) -> bool:
    """Classes that exist only once a whole object is cut (or an egg cracked)."""
    return name.endswith("Sliced") or name == "EggCracked"


def whole_class(name: str) -> str:
    """The class to cut to get a sliced class: "BreadSliced" -> "Bread", "EggCracked" -> "Egg"."""
    if name == "EggCracked":
        return "Egg"
    return name[: -len("Sliced")]


def whole_version(ref: ObjectRef) -> ObjectRef:
    """The whole object to cut for a sliced program object (its own program object), else `ref`."""
    if is_sliced_class(ref.object_class):
        return ObjectRef(f"{ref.instance_key}__whole", whole_class(ref.object_class), ref.landmark)
    return ref


def sliced_version(ref: ObjectRef, whole: str) -> ObjectRef:
    """A slice of `whole` for a program that names the whole object ("toast the bread")."""
    return ObjectRef(f"{ref.instance_key}__slice", f"{whole}Sliced", ref.landmark, ref.attributes)


def _distance(t: TrackedObject, near: Point) -> float:
    return math.hypot(t.position[0] - near[0], t.position[2] - near[1])


class Grounding:
    """Bindings of program objects to environment objects, and the rules for choosing them.

    `bindings` maps `ObjectRef.instance_key` to an object id; the executor's caller passes it in
    and reads it back to keep bindings across the graph's execute/correct rounds of one request.
    `excluded` remembers, per program object, the objects that already failed for it.
    """

    def __init__(self, tracker: ObjectTracker, catalog: Catalog, bindings: dict[str, str] | None = None) -> None:
        self.tracker = tracker
        self.catalog = catalog
        self.bindings: dict[str, str] = dict(bindings or {})
        self.excluded: dict[str, set[str]] = {}

    def object_type(self, oid: str) -> str:
        """The type of an object: as tracked, else read from its id (ids start with the type)."""
        tracked = self.tracker.objects.get(oid)
        return tracked.object_type if tracked else oid.split("|", 1)[0]

    # ------------------------------------------------------------------ choosing
    def candidates(
        self,
        ref: ObjectRef,
        near: Point,
        exclude: set[str] | None = None,
        for_placing: str | None = None,
    ) -> list[TrackedObject]:
        """Seen objects `ref` may bind to, best first (`near` is where the agent stands).

        With `for_placing`, only receptacles that accept that object and have room for it.
        """
        # Objects bound to other program objects are off limits, except for the executor's own
        # helper references (a knife to slice with, a sink to rinse in): those may reuse them, and
        # what they used stays free for the program (the knife the executor sliced the apple with
        # is the knife a later `knife.pickup()` means; before, the only knife was "not found").
        internal = ref.instance_key.startswith("__")
        taken = set() if internal else {oid for key, oid in self.bindings.items()
                                         if key != ref.instance_key and not key.startswith("__")}
        excluded = (exclude or set()) | self.excluded.get(ref.instance_key, set())
        classes = {ref.object_class}
        if ref.object_class in ("Sink", "SinkBasin"):
            classes = {"SinkBasin"}
        if ref.object_class in ("Bathtub", "BathtubBasin"):
            classes = {"BathtubBasin"}
        found = [
            t
            for t in self.tracker.objects.values()
            if t.object_type in classes and not t.gone and t.object_id not in excluded
        ]
        # Receptacles may be shared between program objects; movable things may not.
        if not self.catalog.get(next(iter(classes))).receptacle or self.catalog.get(next(iter(classes))).pickupable:
            found = [t for t in found if t.object_id not in taken]
        if for_placing is not None:
            ptype = self.object_type(for_placing)
            found = [
                t
                for t in found
                if t.object_id != for_placing
                and (occupancy(t.contents) < self.catalog.get(t.object_type).capacity or for_placing in t.contents)
                and self.catalog.accepts(t.object_type, ptype)
            ]
        wanted = set(ref.attributes)

        def score(t: TrackedObject) -> tuple[float, float, str]:
            # Objects that already have the requested end state are not preferred for the
            # "clean"/"cooked" requests: those attributes describe what the program will do.
            # Prefer things in plain sight over things inside closed receptacles, then the nearest.
            hidden = 1.0 if t.parent_id and self.inside_closed(t.object_id) else 0.0
            # Like a person, take a clean dish over a dirty one when nothing asks for washing, and
            # the dirty one when the program washes it.
            mismatch = 0.5 if t.has("dirty") != ("clean" in wanted) else 0.0
            dist = _distance(t, near)
            # A switch (stove knob) is most likely meant for what this program has used (the
            # burner it put the pot on), then for something that holds anything.
            idle = 0.0
            if t.controls:
                used = set(self.bindings.values())
                idle = 0.0 if used & set(t.controls) else 0.25 if self.drives_occupied(t) else 0.5
            return (hidden + mismatch + idle, dist, t.object_id)

        return sorted(found, key=score)

    def inside_closed(self, oid: str) -> bool:
        """Whether a closed receptacle (at any depth, up to 8) hides the object."""
        parent = self.tracker.objects.get(oid)
        seen = 0
        while parent is not None and parent.parent_id is not None and seen < 8:
            parent = self.tracker.objects.get(parent.parent_id)
            seen += 1
            if parent is not None and self.catalog.get(parent.object_type).openable and not parent.has("open"):
                return True
        return False

    def fits(self, rid: str, oid: str) -> bool:
        """Whether receptacle `rid` (a tracked object) has room for `oid`, or holds it already."""
        tracked = self.tracker.objects[rid]
        return oid in tracked.contents or occupancy(tracked.contents) < self.catalog.get(tracked.object_type).capacity

    # ------------------------------------------------------------------ bindings
    def bound(self, ref: ObjectRef, for_placing: str | None = None) -> str | None:
        """The object `ref` is bound to, while it still exists (and has room for `for_placing`)."""
        oid = self.bindings.get(ref.instance_key)
        if oid is not None and self.tracker.known(oid):
            if for_placing is None or self.fits(oid, for_placing):
                return oid
        return None

    def bind(self, ref: ObjectRef, oid: str) -> None:
        self.bindings[ref.instance_key] = oid

    def exclude(self, key: str, oid: str) -> None:
        """Never bind program object `key` to `oid` again in this episode (it failed for it)."""
        self.excluded.setdefault(key, set()).add(oid)

    # ------------------------------------------------------------------ lookups for the executor's moves
    def knife_ref(self) -> ObjectRef:
        """The executor's own reference to a knife: of a kind seen already, a Knife otherwise."""
        for knife in KNIVES:
            if self.tracker.of_type(knife):
                return ObjectRef(f"__{knife.lower()}", knife)
        return ObjectRef("__knife", "Knife")

    def faucet_at(self, basin: str) -> str | None:
        """A seen faucet standing at the basin (sharing its footprint), or None."""
        for oid, tracked in self.tracker.objects.items():
            if tracked.object_type == "Faucet" and tracked.footprint and tracked.footprint == self.tracker.objects[basin].footprint:
                return oid
        return None

    def knob_for(self, burner: str) -> str | None:
        """The seen switch (stove knob) that controls `burner`, or None."""
        for oid, tracked in self.tracker.objects.items():
            if burner in tracked.controls:
                return oid
        return None

    def drives_occupied(self, tracked: TrackedObject) -> bool:
        """A switch (stove knob) whose controlled object holds something: the one a program means."""
        return any(
            (target := self.tracker.objects.get(oid)) is not None and bool(target.contents) for oid in tracked.controls
        )

    def free_surface(self, held_type: str, near: Point) -> str | None:
        """The nearest seen surface that takes `held_type` and keeps room for the task, or None."""
        options = [
            t
            for t in self.tracker.objects.values()
            if t.object_type in SURFACES
            and not t.gone
            and occupancy(t.contents) < self.catalog.get(t.object_type).capacity
            and self.catalog.accepts(t.object_type, held_type)
        ]
        if not options:
            return None

        def crowded(t: TrackedObject) -> bool:
            # Keep some room on surfaces for what the task itself must put there.
            return self.catalog.get(t.object_type).capacity - occupancy(t.contents) < 3

        return min(options, key=lambda t: (crowded(t), _distance(t, near), t.object_id)).object_id
