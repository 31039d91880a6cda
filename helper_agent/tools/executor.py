"""The executor: compiled subgoals -> TEACh actions, with HELPER's pre-condition checks.

It binds each program object (an `ObjectRef.instance_key`) to one concrete object the tracker has
seen, walks there on the grid, and issues the interaction. Before each step the pre-condition checks
(switchable for ablation) adjust the plan: fetch a knife before slicing, open a closed receptacle
before placing, put down what is held before picking up, skip toggling what is already on or off
and opening what is open, slice a whole object when its slices are needed. Macros (Clean, Cook,
Toast, FillUp, Empty) expand into primitive steps. An object not yet seen goes to the locator.

On a failed action the error is diagnosed into a failure description; the executor then tries
a corrective move matching the description once and, if that does not help, another instance of the
object once, before reporting the failure to its caller (the graph asks the LLM for a correction).
Episodes stop at TEACh's limits: 1000 steps or 30 failed actions.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from helper_agent.envs.base import Environment
from helper_agent.perception.diagnosis import Diagnosis, FailureDiagnoser
from helper_agent.perception.tracker import ObjectTracker, TrackedObject
from helper_agent.program.subgoals import ObjectRef, Subgoal, SubgoalKind
from helper_agent.tools.navigation import Target, look_actions, path_actions, plan_to_target, shortest_path
from helper_agent.world.catalog import Catalog, load_catalog
from helper_agent.world.geometry import INTERACTION_DISTANCE
from helper_agent.world.state import occupancy

KNIVES = ("Knife", "ButterKnife")
SURFACES = ("CounterTop", "DiningTable", "SideTable", "CoffeeTable", "Desk", "Shelf", "Dresser", "Sofa", "Bed")
SWING_DOORS = ("Fridge",)
WATER_CONTAINERS = ("Pot", "Bowl", "Cup", "Mug", "Kettle", "WateringCan")


class EpisodeLimit(Exception):
    """Raised internally when TEACh's step or failure limit is reached."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class StepFailed(Exception):
    """An action failed; carries the simulator's error and the object acted on."""

    def __init__(self, action: str, object_id: str | None, error: str) -> None:
        super().__init__(f"{action} {object_id or ''}: {error}".strip())
        self.action = action
        self.object_id = object_id
        self.error = error


class ObjectNotFound(Exception):
    def __init__(self, ref: ObjectRef) -> None:
        super().__init__(f"could not find {ref.describe()}")
        self.ref = ref


@dataclass
class Prechecks:
    """HELPER's pre-condition checks; each can be switched off for ablation."""

    knife_before_slice: bool = True
    open_before_place: bool = True
    put_down_before_pickup: bool = True
    skip_redundant_toggle: bool = True
    skip_redundant_open: bool = True
    slice_before_sliced: bool = True

    @classmethod
    def off(cls) -> Prechecks:
        return cls(False, False, False, False, False, False)


@dataclass
class ExecutorConfig:
    prechecks: Prechecks = field(default_factory=Prechecks)
    max_steps: int = 1000
    max_failures: int = 30
    corrective_moves: bool = True
    retry_other_instance: bool = True
    initial_scan: bool = True
    # When False, an object not seen yet stops the run with status "not_found" so that the
    # caller (the graph's locate node) can search for it; when True the executor searches itself.
    search_unseen: bool = True
    seed: int = 0


@dataclass
class ActionRecord:
    action: str
    object_id: str | None
    success: bool
    error: str = ""


@dataclass
class SubgoalTrace:
    subgoal: str
    status: str = "pending"  # done, skipped, failed, not_found
    actions: list[ActionRecord] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    object_id: str | None = None


@dataclass
class ExecutionResult:
    """How a run of subgoals ended, and its full trace."""

    status: str  # done, failed, not_found, step_limit, failure_limit
    completed: int
    failed_subgoal: Subgoal | None = None
    error: str = ""
    diagnosis: Diagnosis | None = None
    trace: list[SubgoalTrace] = field(default_factory=list)
    steps: int = 0
    failures: int = 0
    missing: str | None = None  # the object class not found, when status is "not_found"
    missing_key: str | None = None  # and the program object that needed it

    @property
    def ended_by_limit(self) -> bool:
        return self.status in ("step_limit", "failure_limit")


Locator = Callable[["Executor", ObjectRef], bool]


class Executor:
    """Runs subgoals in an environment. One executor lives for one episode (it keeps bindings)."""

    def __init__(
        self,
        env: Environment,
        *,
        config: ExecutorConfig | None = None,
        catalog: Catalog | None = None,
        diagnoser: FailureDiagnoser | None = None,
        locator: Locator | None = None,
        bindings: dict[str, str] | None = None,
    ) -> None:
        self.env = env
        self.config = config or ExecutorConfig()
        self.catalog = catalog or load_catalog()
        self.diagnoser = diagnoser
        self.locator = locator
        self.tracker = ObjectTracker()
        # Program object -> simulator object id; passed in to keep bindings across the graph's
        # execute/correct rounds of one request.
        self.bindings: dict[str, str] = dict(bindings or {})
        self.rng = random.Random(self.config.seed)
        self._trace: SubgoalTrace | None = None
        self._scanned = False
        # The latest observation; every action refreshes it, so looking up where the agent is
        # never recomputes perception.
        self._obs = env.observe()
        self.tracker.update(self._obs)

    # ------------------------------------------------------------------ public API
    def run(self, subgoals: Sequence[Subgoal], start: int = 0) -> ExecutionResult:
        """Execute subgoals in order (from index `start`) until done, a failure it cannot repair,
        or an episode limit. `completed` in the result counts from the start of the list."""
        traces: list[SubgoalTrace] = []
        for index, subgoal in enumerate(subgoals):
            if index < start:
                continue
            trace = SubgoalTrace(subgoal.describe())
            traces.append(trace)
            self._trace = trace
            try:
                self._run_with_recovery(subgoal)
                if trace.status == "pending":
                    trace.status = "done"
            except EpisodeLimit as limit:
                trace.status = "stopped"
                return self._result(limit.reason, index, subgoal, str(limit), None, traces)
            except ObjectNotFound as missing:
                trace.status = "not_found"
                result = self._result("not_found", index, subgoal, str(missing), None, traces)
                result.missing = missing.ref.object_class
                result.missing_key = missing.ref.instance_key
                return result
            except StepFailed as failed:
                trace.status = "failed"
                return self._result("failed", index, subgoal, failed.error, self._diagnose(failed.error), traces)
        return self._result("done", len(subgoals), None, "", None, traces)

    def _result(
        self,
        status: str,
        completed: int,
        subgoal: Subgoal | None,
        error: str,
        diagnosis: Diagnosis | None,
        traces: list[SubgoalTrace],
    ) -> ExecutionResult:
        return ExecutionResult(
            status, completed, subgoal, error, diagnosis, traces, self.env.steps, self.env.failures
        )

    # ------------------------------------------------------------------ acting
    def act(self, action: str, object_id: str | None = None) -> None:
        """Issue one TEACh action; raises StepFailed on failure and EpisodeLimit at the limits."""
        if self.env.steps >= self.config.max_steps:
            raise EpisodeLimit("step_limit")
        if self.env.failures >= self.config.max_failures:
            raise EpisodeLimit("failure_limit")
        outcome = self.env.step(action, object_id)
        self._obs = outcome.observation
        self.tracker.update(self._obs)
        if self._trace is not None:
            self._trace.actions.append(ActionRecord(action, object_id, outcome.result.success, outcome.result.error))
        if not outcome.result.success:
            if self.env.failures >= self.config.max_failures:
                raise EpisodeLimit("failure_limit")
            raise StepFailed(action, object_id, outcome.result.error)
        if action == "Slice" and object_id is not None:
            self.tracker.forget(object_id)
        if self.env.steps >= self.config.max_steps:
            raise EpisodeLimit("step_limit")

    def note(self, text: str) -> None:
        if self._trace is not None:
            self._trace.notes.append(text)

    def _diagnose(self, error: str) -> Diagnosis | None:
        return self.diagnoser.diagnose(error) if self.diagnoser is not None else None

    # ------------------------------------------------------------------ recovery
    def _run_with_recovery(self, subgoal: Subgoal) -> None:
        try:
            self._run(subgoal)
            return
        except StepFailed as failed:
            first = failed
        diagnosis = self._diagnose(first.error)
        kind = diagnosis.kind if diagnosis else _kind_from_text(first.error)
        self.note(f"failed: {first.error} -> {diagnosis.description if diagnosis else kind}")
        if self.config.corrective_moves and self._corrective_move(kind, first):
            try:
                self._run(subgoal)
                return
            except StepFailed as again:
                first = again
        # Retry once on another instance of the object acted on: the receptacle for Place and
        # Pour (the held object stays in hand), the target otherwise.
        acted_on = subgoal.receptacle if subgoal.kind in (SubgoalKind.PLACE, SubgoalKind.POUR) else subgoal.target
        if self.config.retry_other_instance and acted_on is not None:
            key = acted_on.instance_key
            bad = self.bindings.pop(key, None)
            if bad is not None and self._candidates(acted_on, exclude={bad}):
                self.note(f"retrying with another {acted_on.object_class} instead of {bad}")
                self._excluded.setdefault(key, set()).add(bad)
                try:
                    self._run(subgoal)
                    return
                except StepFailed:
                    pass  # report the original failure, which the correction should address
            elif bad is not None:
                self.bindings[key] = bad
        raise first

    def _corrective_move(self, kind: str, failed: StepFailed) -> bool:
        """A move matching the failure description; True when one was made."""
        if kind in ("blocked_open", "blocks_interaction"):
            self.move_back()
        elif kind in ("too_far", "not_visible"):
            if failed.object_id is None:
                return False
            self._walk_to(failed.object_id, force=True)
        elif kind == "blocked_move":
            self.move_alternate_viewpoint()
        else:
            return False
        self.note(f"corrective move for '{kind}'")
        return True

    # ------------------------------------------------------------------ subgoal semantics
    def _run(self, subgoal: Subgoal) -> None:
        kind = subgoal.kind
        if kind is SubgoalKind.DO_NOTHING:
            return
        if kind is SubgoalKind.MOVE_BACK:
            self.move_back()
            return
        if kind is SubgoalKind.MOVE_CLOSER:
            self.move_closer()
            return
        if kind is SubgoalKind.MOVE_ALTERNATE_VIEWPOINT:
            self.move_alternate_viewpoint()
            return
        assert subgoal.target is not None, f"{kind} needs a target"
        ref = subgoal.target
        if kind is SubgoalKind.NAVIGATE:
            self._walk_to(self.resolve(ref))
        elif kind is SubgoalKind.PICKUP:
            self.pickup(ref)
        elif kind is SubgoalKind.PLACE:
            assert subgoal.receptacle is not None
            self.place(ref, subgoal.receptacle)
        elif kind is SubgoalKind.PUT_DOWN:
            self.put_down()
        elif kind in (SubgoalKind.OPEN, SubgoalKind.CLOSE):
            self.open_close(ref, kind is SubgoalKind.OPEN)
        elif kind in (SubgoalKind.TOGGLE_ON, SubgoalKind.TOGGLE_OFF):
            self.toggle(ref, kind is SubgoalKind.TOGGLE_ON)
        elif kind is SubgoalKind.SLICE:
            self.slice(ref)
        elif kind is SubgoalKind.POUR:
            assert subgoal.receptacle is not None
            self.pour(ref, subgoal.receptacle)
        elif kind is SubgoalKind.FILL_UP:
            self.fill_up(ref)
        elif kind is SubgoalKind.EMPTY:
            self.empty(ref)
        elif kind is SubgoalKind.CLEAN:
            self.clean(ref)
        elif kind is SubgoalKind.TOAST:
            self.toast(ref)
        elif kind is SubgoalKind.COOK:
            self.cook(ref)
        else:  # pragma: no cover - exhaustive over SubgoalKind
            raise ValueError(f"unsupported subgoal {kind}")

    # primitives -------------------------------------------------------------
    def pickup(self, ref: ObjectRef) -> str:
        oid = self.resolve(ref)
        held = self.tracker.held_id
        if held == oid:
            return oid
        if held is not None and self.config.prechecks.put_down_before_pickup:
            self.note(f"pre-check: putting down {held} before picking up")
            self.put_down()
        self._interact("Pickup", oid)
        return oid

    def place(self, ref: ObjectRef, receptacle: ObjectRef) -> None:
        held = self.tracker.held_id
        oid = self.bindings.get(ref.instance_key)
        if oid is None or held != oid:
            oid = self.pickup(ref)
        rid = self.resolve(receptacle, for_placing=oid)
        self._ensure_open_for_placing(rid)
        self._interact("Place", rid)

    def _ensure_open_for_placing(self, rid: str) -> None:
        tracked = self.tracker.objects[rid]
        if (
            self.config.prechecks.open_before_place
            and self.catalog.get(tracked.object_type).openable
            and not tracked.has("open")
        ):
            self.note(f"pre-check: opening {rid} before placing")
            self._interact("Open", rid)

    def put_down(self) -> None:
        held = self.tracker.held_id
        if held is None:
            return
        held_type = self.env_type(held)
        spot = self._free_surface(held_type)
        if spot is None:
            # Nothing suitable seen yet: look for a counter with room.
            spot = self._find_or_locate(ObjectRef("__counter", "CounterTop"), required=False, for_placing=held)
        if spot is None:
            raise StepFailed("Place", None, "No valid positions to place object found: no free surface seen")
        self._interact("Place", spot)

    def open_close(self, ref: ObjectRef, opening: bool) -> None:
        oid = self.resolve(ref)
        tracked = self.tracker.objects[oid]
        if not self.catalog.get(tracked.object_type).openable:
            self.note(f"{tracked.object_type} is not openable: skipped")
            return
        if self.config.prechecks.skip_redundant_open and tracked.has("open") == opening:
            self.note(f"pre-check: {oid} is already {'open' if opening else 'closed'}")
            return
        self._interact("Open" if opening else "Close", oid)

    def toggle(self, ref: ObjectRef, on: bool) -> None:
        oid = self.resolve(ref)
        tracked = self.tracker.objects[oid]
        if self.config.prechecks.skip_redundant_toggle and tracked.has("on") == on:
            self.note(f"pre-check: {oid} is already {'on' if on else 'off'}")
            return
        self._interact("ToggleOn" if on else "ToggleOff", oid)

    def slice(self, ref: ObjectRef) -> None:
        target = self._whole_version(ref)
        oid = self.resolve(target)
        held = self.tracker.held_id
        if self.config.prechecks.knife_before_slice and (held is None or self.env_type(held) not in KNIVES):
            self.note("pre-check: fetching a knife before slicing")
            knife = self._knife_ref()
            self.pickup(knife)
        self._interact("Slice", oid)
        self.bindings.pop(target.instance_key, None)

    def pour(self, ref: ObjectRef, target: ObjectRef) -> None:
        oid = self.bindings.get(ref.instance_key)
        if oid is None or self.tracker.held_id != oid:
            oid = self.pickup(ref)
        tid = self.resolve(target)
        self._interact("Pour", tid)

    # macros -----------------------------------------------------------------
    def _rinse(self, ref: ObjectRef, why: str) -> None:
        """Sink basin, faucet on and off, pick up again: cleans and fills with water."""
        oid = self.pickup(ref)
        basin_ref = ObjectRef(f"__sink_for_{ref.instance_key}", "SinkBasin")
        basin = self.resolve(basin_ref, for_placing=oid)
        self._interact("Place", basin)
        faucet = self._faucet_for(basin)
        if faucet is not None:
            if not self.tracker.objects[faucet].has("on"):
                self._interact("ToggleOn", faucet)
            self._interact("ToggleOff", faucet)
        self.note(why)
        self._interact("Pickup", oid)

    def clean(self, ref: ObjectRef) -> None:
        self._rinse(ref, "cleaned in the sink")

    def fill_up(self, ref: ObjectRef) -> None:
        self._rinse(ref, "filled with water at the sink")

    def empty(self, ref: ObjectRef) -> None:
        oid = self.pickup(ref)
        if not self.tracker.objects[oid].has("filled"):
            self.note(f"{oid} is already empty")
            return
        basin = self.resolve(ObjectRef(f"__sink_for_{ref.instance_key}", "SinkBasin"))
        self._interact("Pour", basin)

    def toast(self, ref: ObjectRef) -> None:
        self.pickup(self._sliced_version(ref, "Bread") if ref.object_class == "Bread" else ref)
        toaster = self.resolve(ObjectRef("__toaster", "Toaster"))
        self._interact("Place", toaster)
        if not self.tracker.objects[toaster].has("on"):
            self._interact("ToggleOn", toaster)
        self._interact("ToggleOff", toaster)

    def cook(self, ref: ObjectRef) -> None:
        """Microwave when there is one (open, place, close, on, off, open, pick up), else a pan on a burner."""
        oid = self.pickup(ref)
        microwave = self._find_or_locate(ObjectRef("__microwave", "Microwave"), required=False)
        if microwave is not None:
            self._ensure_open_for_placing(microwave)
            if self.tracker.objects[microwave].contents:
                self.note("microwave is not empty; cooking anyway")
            self._interact("Place", microwave)
            self._interact("Close", microwave)
            self._interact("ToggleOn", microwave)
            self._interact("ToggleOff", microwave)
            self._interact("Open", microwave)
            self._interact("Pickup", oid)
            return
        pan = self.resolve(ObjectRef("__pan", "Pan"), for_placing=oid)
        self._interact("Place", pan)
        burner = self.tracker.objects[pan].parent_id
        if burner is None or self.env_type(burner) != "StoveBurner":
            self.pickup(ObjectRef("__pan", "Pan"))
            burner = self.resolve(ObjectRef("__burner", "StoveBurner"), for_placing=pan)
            self._interact("Place", burner)
        knob = self._knob_for(burner) or burner
        if not self.tracker.objects[knob].has("on"):
            self._interact("ToggleOn", knob)
        self._interact("ToggleOff", knob)
        self._interact("Pickup", oid)

    # corrective moves -------------------------------------------------------
    def move_back(self) -> None:
        """Step away from what is in front (backwards, or sideways when the back is blocked)."""
        for action in ("Backward", "Pan Left", "Pan Right"):
            try:
                self.act(action)
                return
            except StepFailed:
                continue

    def move_closer(self) -> None:
        try:
            self.act("Forward")
        except StepFailed:
            pass

    def move_alternate_viewpoint(self) -> None:
        for action in ("Pan Right", "Pan Left", "Backward"):
            try:
                self.act(action)
                return
            except StepFailed:
                continue

    # ------------------------------------------------------------------ binding objects
    @property
    def _excluded(self) -> dict[str, set[str]]:
        if not hasattr(self, "_excluded_store"):
            self._excluded_store: dict[str, set[str]] = {}
        return self._excluded_store

    def env_type(self, oid: str) -> str:
        tracked = self.tracker.objects.get(oid)
        return tracked.object_type if tracked else oid.split("|", 1)[0]

    def _candidates(self, ref: ObjectRef, exclude: set[str] | None = None, for_placing: str | None = None) -> list[TrackedObject]:
        # Objects bound to other program objects are off limits, except for the executor's own
        # helper references (a knife to slice with, a sink to rinse in): those may reuse them.
        internal = ref.instance_key.startswith("__")
        taken = set() if internal else {oid for key, oid in self.bindings.items() if key != ref.instance_key}
        excluded = (exclude or set()) | self._excluded.get(ref.instance_key, set())
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
            ptype = self.env_type(for_placing)
            found = [
                t
                for t in found
                if t.object_id != for_placing
                and (occupancy(t.contents) < self.catalog.get(t.object_type).capacity or for_placing in t.contents)
                and self.catalog.accepts(t.object_type, ptype)
            ]
        wanted = set(ref.attributes)
        ax, az = self._obs.position

        def score(t: TrackedObject) -> tuple[float, float, str]:
            # Objects that already have the requested end state are not preferred for the
            # "clean"/"cooked" requests: those attributes describe what the program will do.
            # Prefer things in plain sight over things inside closed receptacles, then the nearest.
            hidden = 1.0 if t.parent_id and self._inside_closed(t.object_id) else 0.0
            # Like a person, take a clean dish over a dirty one when nothing asks for washing.
            mismatch = 0.5 if t.has("dirty") and "clean" not in wanted else 0.0
            dist = math.hypot(t.position[0] - ax, t.position[2] - az)
            # A switch (stove knob) is most likely meant for what this program has used (the
            # burner it put the pot on), then for something that holds anything.
            idle = 0.0
            if t.controls:
                used = set(self.bindings.values())
                idle = 0.0 if used & set(t.controls) else 0.25 if self._drives_occupied(t) else 0.5
            return (hidden + mismatch + idle, dist, t.object_id)

        return sorted(found, key=score)

    def _inside_closed(self, oid: str) -> bool:
        parent = self.tracker.objects.get(oid)
        seen = 0
        while parent is not None and parent.parent_id is not None and seen < 8:
            parent = self.tracker.objects.get(parent.parent_id)
            seen += 1
            if parent is not None and self.catalog.get(parent.object_type).openable and not parent.has("open"):
                return True
        return False

    def resolve(self, ref: ObjectRef, for_placing: str | None = None) -> str:
        """The object id bound to a program object, binding (and searching) if needed."""
        oid = self.bindings.get(ref.instance_key)
        if oid is not None and self.tracker.known(oid):
            if for_placing is None or self._fits(oid, for_placing):
                return oid
        if (
            self.config.prechecks.slice_before_sliced
            and _is_sliced_class(ref.object_class)
            and not self.tracker.of_type(ref.object_class)
        ):
            self.note(f"pre-check: no {ref.object_class} seen yet: slicing a whole one first")
            self._make_slices(ref)
        found = self._find_or_locate(ref, for_placing=for_placing)
        assert found is not None
        return found

    def _fits(self, rid: str, oid: str) -> bool:
        tracked = self.tracker.objects[rid]
        return oid in tracked.contents or occupancy(tracked.contents) < self.catalog.get(tracked.object_type).capacity

    def _find_or_locate(self, ref: ObjectRef, required: bool = True, for_placing: str | None = None) -> str | None:
        candidates = self._candidates(ref, for_placing=for_placing)
        if not candidates:
            self._initial_scan()
            candidates = self._candidates(ref, for_placing=for_placing)
        if not candidates and required and self.config.search_unseen:
            locator = self.locator
            if locator is None:
                # Without a configured locator, search systematically (no LLM involved).
                from helper_agent.tools.locator import explore as locator
            self.note(f"{ref.object_class} not seen yet: searching with {getattr(locator, '__name__', type(locator).__name__)}")
            if locator(self, ref):
                candidates = self._candidates(ref, for_placing=for_placing)
        if not candidates:
            if not required:
                return None
            if for_placing is not None and self._candidates(ref):
                raise StepFailed(
                    "Place", None, f"No valid positions to place object found: every {ref.object_class} seen is full"
                )
            raise ObjectNotFound(ref)
        oid = candidates[0].object_id
        self.bindings[ref.instance_key] = oid
        if self._trace is not None:
            self._trace.object_id = self._trace.object_id or oid
        return oid

    def _initial_scan(self) -> None:
        """Turn around once in place to see the room (HELPER's agent also starts by looking around)."""
        if self._scanned or not self.config.initial_scan:
            return
        self._scanned = True
        # Looking 30 degrees down sees counters from 0.25 m to across the room, and the floor.
        horizon = self._obs.pose[3]
        for action in look_actions(horizon, 30):
            self.act(action)
        for _ in range(4):
            self.act("Turn Left")

    def _whole_version(self, ref: ObjectRef) -> ObjectRef:
        if _is_sliced_class(ref.object_class):
            return ObjectRef(f"{ref.instance_key}__whole", _whole_class(ref.object_class), ref.landmark)
        return ref

    def _sliced_version(self, ref: ObjectRef, whole: str) -> ObjectRef:
        return ObjectRef(f"{ref.instance_key}__slice", f"{whole}Sliced", ref.landmark, ref.attributes)

    def _make_slices(self, ref: ObjectRef) -> None:
        self.slice(self._whole_version(ref))

    def _knife_ref(self) -> ObjectRef:
        for knife in KNIVES:
            if self.tracker.of_type(knife):
                return ObjectRef(f"__{knife.lower()}", knife)
        return ObjectRef("__knife", "Knife")

    def _faucet_for(self, basin: str) -> str | None:
        for oid, tracked in self.tracker.objects.items():
            if tracked.object_type == "Faucet" and tracked.footprint and tracked.footprint == self.tracker.objects[basin].footprint:
                return oid
        return self._find_or_locate(ObjectRef("__faucet", "Faucet"), required=False)

    def _knob_for(self, burner: str) -> str | None:
        for oid, tracked in self.tracker.objects.items():
            if burner in tracked.controls:
                return oid
        return None

    def _drives_occupied(self, tracked: TrackedObject) -> bool:
        """A switch (stove knob) whose controlled object holds something: the one a program means."""
        return any(
            (target := self.tracker.objects.get(oid)) is not None and bool(target.contents) for oid in tracked.controls
        )

    def _free_surface(self, held_type: str) -> str | None:
        ax, az = self._obs.position
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

        return min(
            options, key=lambda t: (crowded(t), math.hypot(t.position[0] - ax, t.position[2] - az), t.object_id)
        ).object_id

    # ------------------------------------------------------------------ walking
    def _interact(self, action: str, oid: str) -> None:
        if not self._in_reach(oid) or (self.env_type(oid) in SWING_DOORS and action in ("Open", "Close")):
            self._walk_to(oid, swing=action in ("Open", "Close"))
        self.act(action, oid)

    def _in_reach(self, oid: str) -> bool:
        for view in self._obs.visible:
            if view.object_id == oid:
                return view.interactable
        return oid == self.tracker.held_id

    def _walk_to(self, oid: str, force: bool = False, swing: bool = False) -> None:
        if oid == self.tracker.held_id:
            return
        if not force and not swing and self._in_reach(oid):
            return
        tracked = self.tracker.objects.get(oid)
        if tracked is None:
            raise StepFailed("Navigate", oid, f"{oid} has not been seen")
        gap = 2 if tracked.object_type in SWING_DOORS or (swing and self.env_type(oid) in SWING_DOORS) else 1
        if tracked.parent_id and not tracked.footprint:
            root = self.tracker.objects.get(tracked.parent_id)
            if root is not None and root.object_type in SWING_DOORS:
                gap = 2
        target = Target(*tracked.position, footprint=tracked.footprint, min_gap_cells=gap)
        grid = self.env.navigation_grid()
        i, j, rotation, horizon = self._obs.pose
        actions = plan_to_target(grid, (i, j), rotation, horizon, target)
        if actions is None and gap > 1:
            actions = plan_to_target(grid, (i, j), rotation, horizon, Target(*tracked.position, footprint=tracked.footprint))
        if actions is None:
            raise StepFailed("Navigate", oid, f"no path to a pose within {INTERACTION_DISTANCE} m of {oid}")
        for action in actions:
            self.act(action)

    def explore_to(self, cell: tuple[int, int]) -> bool:
        """Walk to a cell (used by the locator's systematic exploration); False when unreachable."""
        grid = self.env.navigation_grid()
        i, j, rotation, _ = self._obs.pose
        path = shortest_path(grid, (i, j), {cell})
        if path is None:
            return False
        actions, _ = path_actions(path, rotation)
        for action in actions:
            self.act(action)
        return True


def _is_sliced_class(name: str) -> bool:
    return name.endswith("Sliced") or name == "EggCracked"


def _whole_class(name: str) -> str:
    if name == "EggCracked":
        return "Egg"
    return name[: -len("Sliced")]


def _kind_from_text(error: str) -> str:
    """A keyword fallback for when no diagnoser is configured."""
    text = error.lower()
    if "blocked from opening" in text or "blocked from closing" in text:
        return "blocked_open"
    if "too far" in text:
        return "too_far"
    if "not visible" in text:
        return "not_visible"
    if "blocked from moving" in text:
        return "blocked_move"
    return "other"


def describe_trace(result: ExecutionResult) -> list[dict[str, Any]]:
    """A JSON-friendly trace: one entry per subgoal with its actions and notes."""
    return [
        {
            "subgoal": t.subgoal,
            "status": t.status,
            "object": t.object_id,
            "actions": [
                {"action": a.action, "object": a.object_id, "success": a.success, **({"error": a.error} if a.error else {})}
                for a in t.actions
            ],
            "notes": t.notes,
        }
        for t in result.trace
    ]
