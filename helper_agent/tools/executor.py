"""The executor: compiled subgoals -> TEACh actions, with HELPER's pre-condition checks and recovery.

One `Executor` lives for one episode (or one round of the graph, with bindings passed in). It runs
subgoals in order: each program object is bound to one object the tracker has seen (the rules are in
`grounding.py`), the agent walks there on the grid (`navigation.py`) and issues the interaction,
each action one TEACh step. Before each step the pre-condition checks (switchable for ablation)
adjust the plan: fetch a knife before slicing, open a closed receptacle before placing, put down
what is held before picking up, skip toggling what is already on or off and opening what is open,
slice a whole object when its slices are needed, and leave as it is an object whose state already
is what the step would make it (a step whose effect holds is done: `satisfied.py`). Macros (Clean,
Cook, Toast, FillUp, Empty) expand into these primitives (`macros.py`). An object not yet seen goes to the locator (`search.py`,
`locator.py`), which searches through the executor's `SearchHost` interface.

On a failed action the error is diagnosed into a failure description; the executor then tries
a corrective move matching the description once and, if that does not help, another instance of the
object once, before reporting the failure to its caller (the graph asks the LLM for a correction).
Episodes stop at TEACh's limits: 1000 steps or 30 failed actions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from helper_agent.config import get_settings
from helper_agent.envs.base import Environment, NavigationGrid, Observation
from helper_agent.perception.diagnosis import Diagnosis, FailureDiagnoser
from helper_agent.perception.tracker import ObjectTracker, TrackedObject
from helper_agent.program.subgoals import ObjectRef, Subgoal, SubgoalKind
from helper_agent.tools import macros
from helper_agent.tools.errors import EpisodeLimit, ObjectNotFound, StepFailed
from helper_agent.tools.grounding import KNIVES, Grounding, is_sliced_class, whole_version
from helper_agent.tools.navigation import Target, look_actions, path_actions, plan_to_target, shortest_path
from helper_agent.tools.satisfied import (
    STATE_EFFECTS,
    piece_origin,
    sliced_key,
    state_effect_holds,
    unclaimed_pieces,
)
from helper_agent.tools.search import Locator, explore
from helper_agent.world.catalog import Catalog, load_catalog
from helper_agent.world.geometry import INTERACTION_DISTANCE

__all__ = [
    "ActionRecord",
    "EpisodeLimit",
    "ExecutionResult",
    "Executor",
    "ExecutorConfig",
    "Locator",
    "ObjectNotFound",
    "Prechecks",
    "StepFailed",
    "SubgoalTrace",
    "describe_trace",
]

# Fixtures whose door swings towards the agent: stand two cells away to open them.
SWING_DOORS = ("Fridge",)


@dataclass
class Prechecks:
    """HELPER's pre-condition checks; each can be switched off for ablation.

    `skip_done_effects` is not one of HELPER's: it is the executor's rule for every method (a step
    whose effect already holds is done, `satisfied.py`), so `off()` keeps it; switch it off by name.
    """

    knife_before_slice: bool = True
    open_before_place: bool = True
    put_down_before_pickup: bool = True
    skip_redundant_toggle: bool = True
    skip_redundant_open: bool = True
    slice_before_sliced: bool = True
    # A step whose effect already holds (sliced, clean, full, empty, cooked, toasted) is done
    # without acting, and slicing never searches for a whole object whose pieces are there.
    skip_done_effects: bool = True

    @classmethod
    def off(cls) -> Prechecks:
        """HELPER's six checks off (its `precheck` ablation; LLM-Planner's controller)."""
        return cls(False, False, False, False, False, False, skip_done_effects=True)


@dataclass
class ExecutorConfig:
    """What the executor may do on its own: checks, limits, recovery, looking around and searching."""

    prechecks: Prechecks = field(default_factory=Prechecks)
    # TEACh's 1000 steps and 30 failed actions unless HELPER_MAX_STEPS / HELPER_MAX_FAILURES say otherwise
    max_steps: int = field(default_factory=lambda: get_settings().max_steps)
    max_failures: int = field(default_factory=lambda: get_settings().max_failures)
    corrective_moves: bool = True
    retry_other_instance: bool = True
    initial_scan: bool = True
    # When False, an object not seen yet stops the run with status "not_found" so that the
    # caller (the graph's locate node) can search for it; when True the executor searches itself.
    search_unseen: bool = True
    # Callers pass their run's seed; every choice the executor makes is deterministic, so it is unused.
    seed: int = 0


@dataclass
class ActionRecord:
    """One action issued, as the environment answered it."""

    action: str
    object_id: str | None
    success: bool
    error: str = ""


@dataclass
class SubgoalTrace:
    """What one subgoal did: its actions, notes (pre-checks, searches, recoveries) and first object bound."""

    subgoal: str
    status: str = "pending"  # done, skipped, failed, not_found
    actions: list[ActionRecord] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    object_id: str | None = None
    # Done because its effect already held (nothing acted on for it; looking around may have been).
    already: bool = False


class ExecutionListener(Protocol):
    """Told when each subgoal starts and ends (the graph turns these into trace spans)."""

    def subgoal_started(self, trace: SubgoalTrace) -> None: ...

    def subgoal_finished(self, trace: SubgoalTrace) -> None: ...


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
    # The step that needed it was a slice (or the walk to one): its pieces would do as well, so a
    # search may stop at them (`Executor.can_bind` with a ref carrying the "sliced" attribute).
    missing_sliced: bool = False

    @property
    def ended_by_limit(self) -> bool:
        return self.status in ("step_limit", "failure_limit")


class Executor:
    """Runs subgoals in an environment. One executor lives for one episode (it keeps bindings).

    Besides `run`, it offers searchers the `SearchHost` interface (`position`, `room_type`,
    `can_bind`, `env_type`, `walk_to`, `act`, `explore_to`, `navigation_grid`, `note`, `tracker`,
    `catalog`) and macros the `MacroHost` one (its primitives).
    """

    def __init__(
        self,
        env: Environment,
        *,
        config: ExecutorConfig | None = None,
        catalog: Catalog | None = None,
        diagnoser: FailureDiagnoser | None = None,
        locator: Locator | None = None,
        bindings: dict[str, str] | None = None,
        listener: ExecutionListener | None = None,
    ) -> None:
        self.env = env
        self.listener = listener
        self.config = config or ExecutorConfig()
        self.catalog = catalog or load_catalog()
        self.diagnoser = diagnoser
        self.locator = locator
        self.tracker = ObjectTracker()
        # Program object -> simulator object id; passed in to keep bindings across the graph's
        # execute/correct rounds of one request.
        self.grounding = Grounding(self.tracker, self.catalog, bindings)
        self._trace: SubgoalTrace | None = None
        # The subgoal running and the ones after it: a walk to an object is part of the step that
        # follows it (`_next`), a step that carries a whole object to be cut later is moot once only
        # its pieces are left (`cut_later_done`), and a washing later picks a dirty one (`_to_be_cleaned`).
        self._from_here: Sequence[Subgoal] = ()
        self._scanned = False
        # The latest observation; every action refreshes it, so looking up where the agent is
        # never recomputes perception.
        self._obs: Observation = env.observe()
        self.tracker.update(self._obs)

    @property
    def bindings(self) -> dict[str, str]:
        """Program object (`ObjectRef.instance_key`) -> environment object id, kept by `grounding`."""
        return self.grounding.bindings

    @bindings.setter
    def bindings(self, value: dict[str, str]) -> None:
        self.grounding.bindings = value

    # ------------------------------------------------------------------ the loop
    def run(self, subgoals: Sequence[Subgoal], start: int = 0) -> ExecutionResult:
        """Execute subgoals in order (from index `start`) until done, a failure it cannot repair,
        or an episode limit. `completed` in the result counts from the start of the list."""
        traces: list[SubgoalTrace] = []
        for index, subgoal in enumerate(subgoals):
            if index < start:
                continue
            self._from_here = subgoals[index:]
            trace = SubgoalTrace(subgoal.describe())
            traces.append(trace)
            self._trace = trace
            if self.listener is not None:
                self.listener.subgoal_started(trace)
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
                result.missing_sliced = self._slices_would_do(subgoal, missing.ref)
                return result
            except StepFailed as failed:
                trace.status = "failed"
                return self._result("failed", index, subgoal, failed.error, self._diagnose(failed.error), traces)
            finally:
                if self.listener is not None:
                    self.listener.subgoal_finished(trace)
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
        """Add a line to the trace of the current subgoal (pre-checks, searches, recoveries)."""
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
            if bad is not None and self.grounding.candidates(acted_on, self.position, exclude={bad}):
                self.note(f"retrying with another {acted_on.object_class} instead of {bad}")
                self.grounding.exclude(key, bad)
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
            macros.move_back(self)
        elif kind in ("too_far", "not_visible"):
            if failed.object_id is None:
                return False
            self.walk_to(failed.object_id, force=True)
        elif kind == "blocked_move":
            macros.move_alternate_viewpoint(self)
        else:
            return False
        self.note(f"corrective move for '{kind}'")
        return True

    # ------------------------------------------------------------------ subgoal semantics
    def _run(self, subgoal: Subgoal) -> None:
        kind = subgoal.kind
        if kind is SubgoalKind.DO_NOTHING:
            return
        move = macros.MOVES.get(kind)
        if move is not None:
            move(self)
            return
        assert subgoal.target is not None, f"{kind} needs a target"
        ref = subgoal.target
        macro = macros.MACROS.get(kind)
        if macro is not None:
            if not self.effect_holds(kind, macros.acted_on(ref, kind)):
                macro(self, ref)
        elif kind in (SubgoalKind.NAVIGATE, SubgoalKind.PICKUP, SubgoalKind.PLACE) and self.cut_later_done(ref):
            return
        elif kind is SubgoalKind.NAVIGATE:
            if not self.next_step_done(ref):
                self.walk_to(self.resolve(ref))
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
        else:  # pragma: no cover - exhaustive over SubgoalKind
            raise ValueError(f"unsupported subgoal {kind}")

    # primitives, with their pre-condition checks ------------------------------
    def pickup(self, ref: ObjectRef) -> str:
        """Hold the object bound to `ref`; returns its id."""
        oid = self.resolve(ref)
        held = self.tracker.held_id
        if held == oid:
            return oid
        if held is not None and self.config.prechecks.put_down_before_pickup:
            self.note(f"pre-check: putting down {held} before picking up")
            self.put_down()
        self.interact("Pickup", oid)
        return oid

    def place(self, ref: ObjectRef, receptacle: ObjectRef) -> None:
        held = self.tracker.held_id
        oid = self.bindings.get(ref.instance_key)
        if oid is None or held != oid:
            oid = self.pickup(ref)
        rid = self.resolve(receptacle, for_placing=oid)
        self.ensure_open_for_placing(rid)
        self.interact("Place", rid)

    def ensure_open_for_placing(self, rid: str) -> None:
        """The open-before-place pre-check: open a closed receptacle before placing into it."""
        tracked = self.tracker.objects[rid]
        if (
            self.config.prechecks.open_before_place
            and self.catalog.get(tracked.object_type).openable
            and not tracked.has("open")
        ):
            self.note(f"pre-check: opening {rid} before placing")
            self.interact("Open", rid)

    def put_down(self) -> None:
        """Put what is held on the nearest free surface (looking for a counter if none is seen)."""
        held = self.tracker.held_id
        if held is None:
            return
        held_type = self.env_type(held)
        spot = self.grounding.free_surface(held_type, self.position)
        if spot is None:
            # Nothing suitable seen yet: look for a counter with room.
            spot = self.find(ObjectRef("__counter", "CounterTop"), required=False, for_placing=held)
        if spot is None:
            raise StepFailed("Place", None, "No valid positions to place object found: no free surface seen")
        self.interact("Place", spot)

    def open_close(self, ref: ObjectRef, opening: bool) -> None:
        oid = self.resolve(ref)
        tracked = self.tracker.objects[oid]
        if not self.catalog.get(tracked.object_type).openable:
            self.note(f"{tracked.object_type} is not openable: skipped")
            return
        if self.config.prechecks.skip_redundant_open and tracked.has("open") == opening:
            self.already(f"pre-check: {oid} is already {'open' if opening else 'closed'}")
            return
        self.interact("Open" if opening else "Close", oid)

    def toggle(self, ref: ObjectRef, on: bool) -> None:
        oid = self.resolve(ref)
        tracked = self.tracker.objects[oid]
        if self.config.prechecks.skip_redundant_toggle and tracked.has("on") == on:
            self.already(f"pre-check: {oid} is already {'on' if on else 'off'}")
            return
        self.interact("ToggleOn" if on else "ToggleOff", oid)

    def slice(self, ref: ObjectRef, *, step: bool = True) -> None:
        """Cut the whole object `ref` names (`step`: it is the current subgoal's own effect, not a
        pre-check's slice for pieces another step needs)."""
        target = whole_version(ref)
        if self.config.prechecks.skip_done_effects and self.already_sliced(target, step=step):
            return
        oid = self.resolve(target)
        held = self.tracker.held_id
        if self.config.prechecks.knife_before_slice and (held is None or self.env_type(held) not in KNIVES):
            self.note("pre-check: fetching a knife before slicing")
            self.pickup(self.grounding.knife_ref())
        self.interact("Slice", oid)
        self.bindings.pop(target.instance_key, None)
        # Remember what was cut for this program object: a replan's `tomato.slice()` is then done.
        self.bindings[sliced_key(target.instance_key)] = oid

    # steps whose effect already holds -------------------------------------------
    def already(self, why: str) -> None:
        """The current step is done because its effect already holds: say why in the trace."""
        self.note(why)
        if self._trace is not None:
            self._trace.already = True

    def next_step_done(self, ref: ObjectRef) -> bool:
        """Whether the walk to `ref` is for a next step whose effect already holds, so it is needless.

        Compiled programs walk to an object before slicing or switching it: without this, the walk
        to a tomato sliced before would search the house for a whole one before the slice step
        could find it done."""
        upcoming = self._next
        if upcoming is None or upcoming.target != ref or not self.config.prechecks.skip_done_effects:
            return False
        if upcoming.kind is SubgoalKind.SLICE:
            return self.already_sliced(whole_version(ref))
        if upcoming.kind in STATE_EFFECTS:
            return self.effect_holds(upcoming.kind, macros.acted_on(ref, upcoming.kind))
        return False

    @property
    def _next(self) -> Subgoal | None:
        """The subgoal after the one running."""
        return self._from_here[1] if len(self._from_here) > 1 else None

    def _acts_on(self, ref: ObjectRef, kind: SubgoalKind, *, now: bool) -> bool:
        """Whether a later subgoal (with `now`, also the one running) does `kind` to `ref`'s object."""
        steps = self._from_here if now else self._from_here[1:]
        return any(s.kind is kind and s.target is not None and s.target.instance_key == ref.instance_key
                   for s in steps)

    def _to_be_cleaned(self, ref: ObjectRef) -> ObjectRef:
        """`ref` with the attribute "clean" when this or a later step of the program washes its
        object, so a dirty one is chosen over one that is clean already (`Grounding.candidates`):
        "wash the plate and the bowl" (calibration cal-078) washed the nearest of three bowls,
        a clean one, and left the dirty one the person meant."""
        if "clean" in ref.attributes or not self._acts_on(ref, SubgoalKind.CLEAN, now=True):
            return ref
        return replace(ref, attributes=(*ref.attributes, "clean"))

    def cut_later_done(self, ref: ObjectRef) -> bool:
        """Whether a walk to, pick-up or placing of the whole object `ref` is moot: the program cuts
        it later, and it counts as cut already (`already_sliced`: only its pieces are left). Why:
        "could you put some toasted bread on a plate" (calibration cal-012) picked up the bread
        before slicing it in a kitchen whose bread was already sliced, and searched 680 steps for a
        whole one; the one-step lookahead of `next_step_done` covers only the walk right before the
        slice. Off with the pre-check."""
        if not self.config.prechecks.skip_done_effects or is_sliced_class(ref.object_class):
            return False
        if self.grounding.bound(ref) is not None:
            return False
        return self._acts_on(ref, SubgoalKind.SLICE, now=False) and self.already_sliced(ref)

    def effect_holds(self, kind: SubgoalKind, ref: ObjectRef) -> bool:
        """Whether the object `ref` binds to already has the state step `kind` would give it (it is
        bound, and searched for when unseen, as the step itself would). Off with the pre-check."""
        checks = self.config.prechecks
        if not checks.skip_done_effects:
            return False
        # Switching and opening keep HELPER's own switches (LLM-Planner's controller has them off).
        if kind in (SubgoalKind.TOGGLE_ON, SubgoalKind.TOGGLE_OFF) and not checks.skip_redundant_toggle:
            return False
        if kind in (SubgoalKind.OPEN, SubgoalKind.CLOSE) and not checks.skip_redundant_open:
            return False
        oid = self.resolve(ref)
        word = state_effect_holds(kind, self.tracker.objects[oid])
        if word is None:
            return False
        self.already(f"pre-check: {oid} is already {word}: nothing to do")
        return True

    def already_sliced(self, target: ObjectRef, *, step: bool = True) -> bool:
        """Whether the whole object `target` names counts as sliced already, so the step is done.

        Not when a whole object is bound to it (that one is to be cut). Yes when this program object
        was sliced earlier in the request, or when pieces of its class are seen that no other
        program object's slicing made (looking around once first when neither a whole one nor a
        piece is in sight): the pieces then stand for it, and no whole one is searched for.
        `step`: the slice is the current subgoal (its trace says it was done already).
        """
        key = target.instance_key
        say = self.already if step else self.note
        if self.grounding.bound(target) is not None:
            return False
        cut = self.bindings.get(sliced_key(key))
        if cut is not None:
            say(f"pre-check: {target.object_class} {cut} was sliced earlier in this request")
            return True
        pieces = self._pieces_for(target)
        if not pieces and not self.grounding.candidates(target, self.position):
            self._initial_scan()
            pieces = self._pieces_for(target)
        if not pieces:
            return False
        origin = piece_origin(pieces[0].object_id)
        self.bindings[sliced_key(key)] = origin
        if self._trace is not None:
            self._trace.object_id = self._trace.object_id or pieces[0].object_id
        say(f"pre-check: {pieces[0].object_type} seen ({pieces[0].object_id}): the {target.object_class} is already sliced")
        return True

    def pour(self, ref: ObjectRef, target: ObjectRef) -> None:
        oid = self.bindings.get(ref.instance_key)
        if oid is None or self.tracker.held_id != oid:
            oid = self.pickup(ref)
        tid = self.resolve(target)
        self.interact("Pour", tid)

    # ------------------------------------------------------------------ binding objects
    def env_type(self, oid: str) -> str:
        """The type of an object id (as tracked, else from the id)."""
        return self.grounding.object_type(oid)

    def can_bind(self, ref: ObjectRef) -> bool:
        """Whether a seen object can stand for `ref` now (what a searcher looks for).

        A ref with the "sliced" attribute ("a sliced Tomato", what a slice step that found nothing
        asks the locate node to search for) is also found by unclaimed pieces of its class: the
        step will then be done without a whole one."""
        if self.grounding.candidates(ref, self.position):
            return True
        return "sliced" in ref.attributes and bool(self._pieces_for(ref))

    def _pieces_for(self, ref: ObjectRef) -> list[TrackedObject]:
        try:
            piece_type = self.catalog.get(ref.object_class).sliced_type
        except KeyError:
            return []
        return unclaimed_pieces(self.tracker, piece_type, ref.instance_key, self.bindings) if piece_type else []

    def _slices_would_do(self, subgoal: Subgoal, missing: ObjectRef) -> bool:
        """Whether the step that did not find `missing` is a slice of it (or the walk to one)."""
        if not self.config.prechecks.skip_done_effects or subgoal.target is None:
            return False
        if subgoal.kind not in (SubgoalKind.SLICE, SubgoalKind.NAVIGATE):
            return False
        slicing = subgoal if subgoal.kind is SubgoalKind.SLICE else self._next
        if subgoal.kind is SubgoalKind.NAVIGATE and (slicing is None or slicing.target != subgoal.target):
            return False
        return (slicing is not None and slicing.kind is SubgoalKind.SLICE and slicing.target is not None
                and whole_version(slicing.target).instance_key == missing.instance_key)

    def resolve(self, ref: ObjectRef, for_placing: str | None = None) -> str:
        """The object id bound to a program object, binding (and searching) if needed."""
        oid = self.grounding.bound(ref, for_placing)
        if oid is not None:
            return oid
        pre_slice = self.config.prechecks.slice_before_sliced and is_sliced_class(ref.object_class)
        if pre_slice and not self.tracker.of_type(ref.object_class):
            # Look around before deciding there are none: a later round's executor starts with
            # nothing seen, and pieces the round before cut stood out of view (a correction's
            # "put the tomato slice on the plate" went looking for a whole tomato to cut).
            self._initial_scan()
        if pre_slice and not self.tracker.of_type(ref.object_class):
            self.note(f"pre-check: no {ref.object_class} seen yet: slicing a whole one first")
            self._whole_of_the_program(whole_version(ref))
            self.slice(whole_version(ref), step=False)
        found = self.find(ref, for_placing=for_placing)
        assert found is not None
        return found

    def _whole_of_the_program(self, whole: ObjectRef) -> None:
        """Let the pre-check's cut take the program's own whole object when no other is seen: the
        one the program holds, else one it bound. Movable things bound to a program object are off
        limits to others (`Grounding.candidates`), so "pick up the lettuce, put a lettuce slice in
        the bowl" (calibration cal-016) held the only lettuce and found nothing to cut."""
        if self.grounding.bound(whole) is not None or self.grounding.candidates(whole, self.position):
            return
        own = [oid for key, oid in self.bindings.items()
               if not key.startswith("__") and self.tracker.known(oid) and self.env_type(oid) == whole.object_class]
        held = self.tracker.held_id
        if own:
            self.grounding.bind(whole, held if held in own else own[0])

    def find(self, ref: ObjectRef, required: bool = True, for_placing: str | None = None) -> str | None:
        """Bind `ref` to the best seen object; look around, then search, when none is seen.

        None when nothing is found and `ref` is not `required`; otherwise `ObjectNotFound`, or a
        failed Place when objects of the class were seen but none has room for `for_placing`.
        """
        ranked = self._to_be_cleaned(ref)  # the candidates ranked for what the program does to them
        candidates = self.grounding.candidates(ranked, self.position, for_placing=for_placing)
        if not candidates:
            self._initial_scan()
            candidates = self.grounding.candidates(ranked, self.position, for_placing=for_placing)
        if not candidates and required and self.config.search_unseen:
            # Without a configured locator, search systematically (no LLM involved).
            locator = self.locator if self.locator is not None else explore
            self.note(f"{ref.object_class} not seen yet: searching with {getattr(locator, '__name__', type(locator).__name__)}")
            if locator(self, ref):
                candidates = self.grounding.candidates(ranked, self.position, for_placing=for_placing)
        if not candidates:
            if not required:
                return None
            if for_placing is not None and self.grounding.candidates(ref, self.position):
                raise StepFailed(
                    "Place", None, f"No valid positions to place object found: every {ref.object_class} seen is full"
                )
            pieces = 0 if is_sliced_class(ref.object_class) else len(self.tracker.of_type(f"{ref.object_class}Sliced"))
            raise ObjectNotFound(ref, pieces)
        oid = candidates[0].object_id
        self.grounding.bind(ref, oid)
        if self._trace is not None:
            self._trace.object_id = self._trace.object_id or oid
        return oid

    def _initial_scan(self) -> None:
        """Turn around once in place to see the room (HELPER's agent also starts by looking around)."""
        if self._scanned or not self.config.initial_scan:
            return
        self._scanned = True
        self.look_around()

    def look_around(self) -> list[Observation]:
        """Look 30 degrees down and turn once in place; the observation after each action.

        Every method's agent starts this way. Looking 30 degrees down sees counters from 0.25 m to
        across the room, and the floor. The observations are what a caller that shows the model
        only its current view can show instead of the view it started with.
        """
        seen: list[Observation] = []
        for action in [*look_actions(self._obs.pose[3], 30), *["Turn Left"] * 4]:
            self.act(action)
            seen.append(self._obs)
        return seen

    # ------------------------------------------------------------------ walking
    @property
    def position(self) -> tuple[float, float]:
        """Where the agent stands, in metres (x, z), as last observed."""
        return self._obs.position

    @property
    def room_type(self) -> str:
        """The kind of room, for the locator's prompt.

        The `Environment` protocol does not carry it: an environment may say it with a `room_type`
        attribute; else the symbolic world's state says it; else "house".
        """
        own = getattr(self.env, "room_type", None)
        if isinstance(own, str) and own:
            return own
        return getattr(getattr(self.env, "state", None), "room_type", "house")

    def navigation_grid(self) -> NavigationGrid:
        return self.env.navigation_grid()

    def interact(self, action: str, oid: str) -> None:
        """Walk into reach of the object when needed (always, to open a swinging door), then act."""
        if not self.in_reach(oid) or (self.env_type(oid) in SWING_DOORS and action in ("Open", "Close")):
            self.walk_to(oid, swing=action in ("Open", "Close"))
        self.act(action, oid)

    def in_reach(self, oid: str) -> bool:
        """Whether the object is held or, in the last observation, within reach: `walk_to` is then
        a no-op (the step-wise agents leave walking to it out of their grammar)."""
        for view in self._obs.visible:
            if view.object_id == oid:
                return view.interactable
        return oid == self.tracker.held_id

    def tracked_attributes(self, oid: str) -> Mapping[str, bool] | None:
        """What the agent last saw of the object's state (open, on, ...; None if never seen): the
        step-wise agents offer no action that would leave it as it is."""
        tracked = self.tracker.objects.get(oid)
        return None if tracked is None else tracked.attributes

    def walk_to(self, oid: str, *, force: bool = False, swing: bool = False) -> None:
        """Walk to a pose with the object in reach (a no-op when it is, unless `force` or `swing`).

        `swing`: the action will open or close it, so keep room for a swinging door.
        """
        if oid == self.tracker.held_id:
            return
        if not force and not swing and self.in_reach(oid):
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
