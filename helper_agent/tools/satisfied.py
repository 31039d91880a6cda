"""Steps whose effect already holds: slicing what is sliced, cleaning what is clean, switching on
what is on. Such a step is done, not acted on and never searched for.

Why: with the 1.5B model, "slice a tomato and put a slice on a clean plate" sliced the tomato and
stopped; the correction's replan wrote the whole program again, `tomato.slice()` included, and the
executor searched 650 steps for a whole tomato that no longer existed. A person would see the
slices and go on. The rule is the step's end state, read from what the agent has seen (the
tracker's attributes), never from the simulator's ground truth, so it holds for every method that
runs steps through the executor and in any environment.

Two kinds of effect:

- **State effects** (`STATE_EFFECTS`): the step sets one tracked attribute of the object it acts
  on (clean, filled, cooked, toasted, on, open). It holds when the object the step is bound to
  already has that value. Which object a step binds to is left to `grounding.py`'s rules; a step
  does not prefer an object because it is already done (a "clean all mugs" program binding its
  first mug to the one clean mug would leave a dirty one behind).
- **Class effects** (slicing): the object the step names is replaced by pieces of another class
  (Tomato -> TomatoSliced). The step holds when pieces of its class are seen that no other program
  object's slicing claims (`unclaimed_pieces`), or when this program object was sliced earlier in
  the request (`sliced_key` in the bindings, which the graph keeps across the request's rounds).
  AI2-THOR and the embedded world both name a piece `<whole id>|<PieceType>_<n>`, so a piece
  says which whole it came from (`piece_origin`).
"""

from __future__ import annotations

from collections.abc import Mapping

from helper_agent.perception.tracker import ObjectTracker, TrackedObject
from helper_agent.program.subgoals import SubgoalKind

__all__ = ["STATE_EFFECTS", "piece_origin", "sliced_key", "state_effect_holds", "unclaimed_pieces"]

#: The tracked attribute a step sets, and the value it sets it to.
STATE_EFFECTS: dict[SubgoalKind, tuple[str, bool]] = {
    SubgoalKind.CLEAN: ("clean", True),
    SubgoalKind.FILL_UP: ("filled", True),
    SubgoalKind.EMPTY: ("filled", False),
    SubgoalKind.COOK: ("cooked", True),
    SubgoalKind.TOAST: ("toasted", True),
    SubgoalKind.TOGGLE_ON: ("on", True),
    SubgoalKind.TOGGLE_OFF: ("on", False),
    SubgoalKind.OPEN: ("open", True),
    SubgoalKind.CLOSE: ("open", False),
}
_WORDS = {
    ("clean", True): "clean",
    ("filled", True): "full",
    ("filled", False): "empty",
    ("cooked", True): "cooked",
    ("toasted", True): "toasted",
    ("on", True): "on",
    ("on", False): "off",
    ("open", True): "open",
    ("open", False): "closed",
}
_SLICED_PREFIX = "__sliced:"


def state_effect_holds(kind: SubgoalKind, tracked: TrackedObject) -> str | None:
    """The word for the end state when `kind`'s effect already holds on `tracked` ("clean",
    "on"), else None (also for steps without a state effect)."""
    effect = STATE_EFFECTS.get(kind)
    if effect is None:
        return None
    attribute, value = effect
    if tracked.has(attribute) != value:
        return None
    return _WORDS[effect]


def sliced_key(instance_key: str) -> str:
    """The bindings key that records which whole object a program object's slicing cut.

    It starts with "__" like the executor's own references, so it never counts as taking an object
    away from the program (the whole is gone anyway)."""
    return f"{_SLICED_PREFIX}{instance_key}"


def piece_origin(object_id: str) -> str:
    """The id of the whole object a piece was cut from ("Tomato|1|TomatoSliced_0" -> "Tomato|1")."""
    return object_id.rsplit("|", 1)[0] if "|" in object_id else object_id


def unclaimed_pieces(
    tracker: ObjectTracker, piece_type: str, instance_key: str, bindings: Mapping[str, str]
) -> list[TrackedObject]:
    """Seen pieces of `piece_type` that another program object's slicing did not make, nearest
    whole first by id (deterministic): what shows that the program object `instance_key` may
    count as sliced. Two tomatoes to slice stay two: the second does not count the first's pieces."""
    own = sliced_key(instance_key)
    claimed = {oid for key, oid in bindings.items() if key.startswith(_SLICED_PREFIX) and key != own}
    pieces = [t for t in tracker.of_type(piece_type) if piece_origin(t.object_id) not in claimed]
    return sorted(pieces, key=lambda t: t.object_id)
