"""Macros and corrective moves: what the executor does for one subgoal that is more than one action.

Macros (`clean`, `fill_up`, `empty`, `toast`, `cook`) expand a program's end-state request into the
primitive steps a person would take: a sink, a faucet on and off; a toaster on and off; a microwave,
or a pan on a burner and its knob. Corrective moves (`move_back`, `move_closer`,
`move_alternate_viewpoint`) are the agent moves HELPER's corrective programs and the executor's
recovery use.

They are written against `MacroHost`, the executor's primitives (which carry the pre-condition
checks), so this module does not import the executor; the executor dispatches to `MACROS` and
`MOVES` by subgoal kind.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from helper_agent.perception.tracker import ObjectTracker
from helper_agent.program.subgoals import ObjectRef, SubgoalKind
from helper_agent.tools.errors import StepFailed
from helper_agent.tools.grounding import Grounding, sliced_version


class Acting(Protocol):
    """Issues one TEACh action; raises `StepFailed` on failure and `EpisodeLimit` at the limits."""

    def act(self, action: str, object_id: str | None = None) -> None: ...


class MacroHost(Acting, Protocol):
    """The executor's primitives a macro is made of (the `Executor` implements them)."""

    tracker: ObjectTracker
    grounding: Grounding

    def note(self, text: str) -> None: ...

    def interact(self, action: str, oid: str) -> None:
        """Walk into reach of the object if needed, then act on it."""
        ...

    def pickup(self, ref: ObjectRef) -> str:
        """Hold the object bound to `ref` (pre-checks included); its id."""
        ...

    def resolve(self, ref: ObjectRef, for_placing: str | None = None) -> str:
        """The object bound to `ref`, binding and searching when needed."""
        ...

    def find(self, ref: ObjectRef, required: bool = True, for_placing: str | None = None) -> str | None:
        """Bind `ref` to a seen object (scanning, searching when required); None when optional and absent."""
        ...

    def ensure_open_for_placing(self, rid: str) -> None:
        """The open-before-place pre-condition check."""
        ...


# ---------------------------------------------------------------------------- macros
def acted_on(ref: ObjectRef, kind: SubgoalKind) -> ObjectRef:
    """The object a macro changes: a slice of the bread when a program toasts the loaf, else `ref`
    (the executor checks it for an effect that already holds before running the macro)."""
    if kind is SubgoalKind.TOAST and ref.object_class == "Bread":
        return sliced_version(ref, "Bread")
    return ref


def rinse(host: MacroHost, ref: ObjectRef, why: str) -> None:
    """Sink basin, faucet on and off, pick up again: cleans and fills with water."""
    oid = host.pickup(ref)
    basin_ref = ObjectRef(f"__sink_for_{ref.instance_key}", "SinkBasin")
    basin = host.resolve(basin_ref, for_placing=oid)
    host.interact("Place", basin)
    faucet = host.grounding.faucet_at(basin) or host.find(ObjectRef("__faucet", "Faucet"), required=False)
    if faucet is not None:
        if not host.tracker.objects[faucet].has("on"):
            host.interact("ToggleOn", faucet)
        host.interact("ToggleOff", faucet)
    host.note(why)
    host.interact("Pickup", oid)


def clean(host: MacroHost, ref: ObjectRef) -> None:
    rinse(host, ref, "cleaned in the sink")


def fill_up(host: MacroHost, ref: ObjectRef) -> None:
    rinse(host, ref, "filled with water at the sink")


def empty(host: MacroHost, ref: ObjectRef) -> None:
    """Pour the held object's liquid into a sink (nothing to do when it is empty)."""
    oid = host.pickup(ref)
    if not host.tracker.objects[oid].has("filled"):
        host.note(f"{oid} is already empty")
        return
    basin = host.resolve(ObjectRef(f"__sink_for_{ref.instance_key}", "SinkBasin"))
    host.interact("Pour", basin)


def toast(host: MacroHost, ref: ObjectRef) -> None:
    """A slice (of the bread, when the program names the loaf) into the toaster, on and off."""
    host.pickup(acted_on(ref, SubgoalKind.TOAST))
    toaster = host.resolve(ObjectRef("__toaster", "Toaster"))
    host.interact("Place", toaster)
    if not host.tracker.objects[toaster].has("on"):
        host.interact("ToggleOn", toaster)
    host.interact("ToggleOff", toaster)


def cook(host: MacroHost, ref: ObjectRef) -> None:
    """Microwave when there is one (open, place, close, on, off, open, pick up), else a pan on a burner."""
    oid = host.pickup(ref)
    microwave = host.find(ObjectRef("__microwave", "Microwave"), required=False)
    if microwave is not None:
        host.ensure_open_for_placing(microwave)
        if host.tracker.objects[microwave].contents:
            host.note("microwave is not empty; cooking anyway")
        host.interact("Place", microwave)
        host.interact("Close", microwave)
        host.interact("ToggleOn", microwave)
        host.interact("ToggleOff", microwave)
        host.interact("Open", microwave)
        host.interact("Pickup", oid)
        return
    pan = host.resolve(ObjectRef("__pan", "Pan"), for_placing=oid)
    host.interact("Place", pan)
    burner = host.tracker.objects[pan].parent_id
    if burner is None or host.grounding.object_type(burner) != "StoveBurner":
        host.pickup(ObjectRef("__pan", "Pan"))
        burner = host.resolve(ObjectRef("__burner", "StoveBurner"), for_placing=pan)
        host.interact("Place", burner)
    knob = host.grounding.knob_for(burner) or burner
    if not host.tracker.objects[knob].has("on"):
        host.interact("ToggleOn", knob)
    host.interact("ToggleOff", knob)
    host.interact("Pickup", oid)


# ---------------------------------------------------------------------------- corrective moves
def _first_that_works(host: Acting, actions: tuple[str, ...]) -> None:
    for action in actions:
        try:
            host.act(action)
            return
        except StepFailed:
            continue


def move_back(host: Acting) -> None:
    """Step away from what is in front (backwards, or sideways when the back is blocked)."""
    _first_that_works(host, ("Backward", "Pan Left", "Pan Right"))


def move_closer(host: Acting) -> None:
    """One step forward, when the way is free."""
    _first_that_works(host, ("Forward",))


def move_alternate_viewpoint(host: Acting) -> None:
    """Look from somewhere else: a step sideways, or back."""
    _first_that_works(host, ("Pan Right", "Pan Left", "Backward"))


MACROS: dict[SubgoalKind, Callable[[MacroHost, ObjectRef], None]] = {
    SubgoalKind.FILL_UP: fill_up,
    SubgoalKind.EMPTY: empty,
    SubgoalKind.CLEAN: clean,
    SubgoalKind.TOAST: toast,
    SubgoalKind.COOK: cook,
}

MOVES: dict[SubgoalKind, Callable[[Acting], None]] = {
    SubgoalKind.MOVE_BACK: move_back,
    SubgoalKind.MOVE_CLOSER: move_closer,
    SubgoalKind.MOVE_ALTERNATE_VIEWPOINT: move_alternate_viewpoint,
}
