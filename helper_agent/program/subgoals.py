"""The subgoal vocabulary shared by the program compiler and the executor.

A compiled program is a flat list of `Subgoal`s. Each names the object it acts on through an
`ObjectRef`, which records the program's description of the object (class, landmark, attributes)
and an `instance_key` that is unique per constructor evaluation in the program. The executor binds
every instance key to one concrete simulator object, so `plate.pickup(); plate.place(sink)` acts on
one plate, and two `InteractionObject("Plate")` constructions act on two different plates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class SubgoalKind(StrEnum):
    """What a subgoal does. Macros (Clean, Cook, Toast, FillUp, Empty) expand in the executor."""

    NAVIGATE = "Navigate"
    PICKUP = "Pickup"
    PLACE = "Place"
    PUT_DOWN = "PutDown"
    OPEN = "Open"
    CLOSE = "Close"
    TOGGLE_ON = "ToggleOn"
    TOGGLE_OFF = "ToggleOff"
    SLICE = "Slice"
    POUR = "Pour"
    FILL_UP = "FillUp"
    EMPTY = "Empty"
    CLEAN = "Clean"
    COOK = "Cook"
    TOAST = "Toast"
    MOVE_BACK = "MoveBack"
    MOVE_CLOSER = "MoveCloser"
    MOVE_ALTERNATE_VIEWPOINT = "MoveAlternateViewpoint"
    DO_NOTHING = "DoNothing"


@dataclass(frozen=True)
class ObjectRef:
    """The program's description of one object instance.

    `object_class` is an AI2-THOR object type known to the catalog (after closest-class mapping);
    `requested_class` keeps what the program wrote, so the trace can say when it was mapped.
    """

    instance_key: str
    object_class: str
    landmark: str | None = None
    attributes: tuple[str, ...] = ()
    requested_class: str | None = None

    def describe(self) -> str:
        text = self.object_class
        if self.attributes:
            text = f"{' '.join(self.attributes)} {text}"
        if self.landmark:
            text = f"{text} near {self.landmark}"
        return text


@dataclass(frozen=True)
class Subgoal:
    """One step of a compiled program.

    `target` is the object acted on (None for agent moves such as MoveBack); `receptacle` is the
    place or pour destination; `line` is the program line it came from (0 when it was inserted
    by a rewrite rule); `note` says why a rewrite inserted it.
    """

    kind: SubgoalKind
    target: ObjectRef | None = None
    receptacle: ObjectRef | None = None
    line: int = 0
    note: str = ""
    extra: dict[str, str] = field(default_factory=dict, compare=False, hash=False)

    def describe(self) -> str:
        text = self.kind.value
        if self.target is not None:
            text += f"({self.target.describe()}"
            if self.receptacle is not None:
                text += f" -> {self.receptacle.describe()}"
            text += ")"
        if self.note:
            text += f"  [{self.note}]"
        return text
