"""What a new part the planner wrote lacks of what its words ask for (`part_lacks`): the classes
they name that it makes none of, and the steps they name that it never does. The part is then
written again (`graphs/helper/adapt.py`).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from helper_agent.program.edits.tree import base_class, program_classes, program_steps
from helper_agent.understanding.kinds import household_class
from helper_agent.understanding.words import named_classes, named_steps

__all__ = ["PartLacks", "part_lacks"]


@dataclass(frozen=True)
class PartLacks:
    """What a new part lacks: the object classes the words name that it makes none of, and the steps
    (method names) the words ask for that it never calls. Empty (falsy) when it lacks nothing."""

    classes: tuple[str, ...] = ()
    steps: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.classes) + len(self.steps)


def part_lacks(words: str, part: str, present: Collection[str] | None = None) -> PartLacks:
    """The object classes `words` name that the new part `part` makes none of (in either form:
    "tomato slices" are made as TomatoSliced or Tomato), and the steps they name that it does to
    nothing (`toast` for "a plate of toast"): what the planner is asked to write again. On the
    calibration suite the 0.5B wrote potato slices for "a plate of two tomato slices" (batch 2,
    zainab-three-1) and untoasted bread for "make a plate of toast" (omar-three-3). `EditError`
    when the part does not parse. With `present` (the household's classes), a class the words name
    that the part does not make is the household's kind of it (`household_class`): "turn on the lamp"
    is done by a part that switches on the room's FloorLamp."""
    classes = program_classes(part)
    done = {m for ms in program_steps(part).values() for m in ms}
    made = {base_class(c) for c in classes}
    if any(c.endswith("Sliced") for c in classes):
        done.add("slice")  # a slice is cut by whoever fetches it ("two tomato slices" names no step to write)
    named = [c if present is None or c in classes else household_class(c, present) for c in named_classes(words)]
    return PartLacks(tuple(dict.fromkeys(c for c in named if base_class(c) not in made)),
                     tuple(m for m in named_steps(words) if m not in done))
