"""A missing part as a program: what a finished program left undone, written in the action API.

After a request's program ran, the person says what is still missing ("you didn't put the tomato
slice on the plate"). The 0.5B planner, asked to write only that part, mostly wrote the program it
had just run again (on the calibration suite of `helper eval requests`, 8 of the first 25 cases
needed a correction and every replan of the greedy model repeated its program or part of it). What
is missing is a short list of steps on object classes (`Missing`), and each has one way to be done
in the action API; this module writes them, deterministically, so the part is exactly what was
missing and nothing the last program did already.

The part runs in the household the last program left, with the executor's bindings kept across the
request's rounds: its k-th object of a class is the earlier program's k-th object of that class
(`<class>#<k>`), so "the tomato slice" is the slice the first program cut and "the plate" the plate
it picked up. Steps are ordered so each one's input exists before it is used: what changes a thing
(slice, clean, fill, cook) before where it goes, the place last but switching on or off.

Reading a person's words into `Missing` is not here (`understanding/missing.py` reads English);
this module knows only the action API.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from helper_agent.program.edits.tree import var_for

__all__ = ["MISSING_STEPS", "Missing", "part_program"]

MISSING_STEPS: dict[str, int] = {
    "slice": 0, "open": 1, "clean": 2, "empty": 3, "fill_up": 3, "cook": 4, "toast": 4, "boil": 4,
    "coffee": 5, "water": 5, "place": 6, "close": 7, "toggle_on": 8, "toggle_off": 8,
}
"""The steps a missing part can hold, with their order (a lower rank runs first)."""

_METHOD = ("slice", "open", "clean", "empty", "fill_up", "cook", "toast", "close", "toggle_on", "toggle_off")
"""Steps that are one method of the object itself."""


@dataclass(frozen=True)
class Missing:
    """One thing left undone: `step` on an object of class `cls`.

    `place` is where `place` puts it (a receptacle class), the vessel `water` carries water in, or
    the pot `boil` boils it in; `count` how many objects of the class it is done to (the first
    `count` of the part's objects of that class)."""

    step: str
    cls: str
    place: str = ""
    count: int = 1

    def __post_init__(self) -> None:
        if self.step not in MISSING_STEPS:
            raise ValueError(f"unknown missing step {self.step!r}; expected one of {', '.join(MISSING_STEPS)}")
        if self.step in ("place", "water") and not self.place:
            raise ValueError(f"a {self.step} step needs a place")
        if self.count < 1:
            raise ValueError("count must be at least 1")

    def describe(self) -> str:
        """The step as the log says it: "place TomatoSliced in Plate", "toast BreadSliced x2"."""
        where = f" in {self.place}" if self.place else ""
        times = f" x{self.count}" if self.count > 1 else ""
        return f"{self.step} {self.cls}{where}{times}"


def part_program(missing: Sequence[Missing]) -> str:
    """The program that does `missing`, in step order (`MISSING_STEPS`, stable); "" when empty.

    The k-th object of a class is one object throughout the part: the "bread slice" that is toasted
    is the one then placed, and "two bread slices on the plate" places it and a second one. Counts
    are written out, one object each, not as a loop: a loop's objects would be new ones, after the
    one a single step already changed. What a step uses (the receptacle, the pot) is made once."""
    steps = sorted(dict.fromkeys(missing), key=lambda m: MISSING_STEPS[m.step])
    lines: list[str] = []
    names: dict[tuple[str, int], str] = {}
    taken: set[str] = set()

    def obj(cls: str, k: int = 1) -> str:
        if (cls, k) not in names:
            for earlier in range(1, k):  # the k-th object of a class is made after the ones before it
                obj(cls, earlier)
            var = var_for(cls, taken)
            taken.add(var)
            lines.append(f'{var} = InteractionObject("{cls}")')
            names[(cls, k)] = var
        return names[(cls, k)]

    for m in steps:
        tools = _tools(m, obj)
        for k in range(1, m.count + 1):
            lines += _body(m, obj(m.cls, k), tools)
    return "\n".join(lines) + "\n" if lines else ""


def _tools(m: Missing, make: Callable[[str], str]) -> dict[str, str]:
    """The other objects a step uses, made (once, at top level) before it (`make(cls)` -> its variable)."""
    if m.step == "place":
        return {"place": make(m.place)}
    if m.step == "coffee":
        return {"machine": make("CoffeeMachine")}
    if m.step == "water":
        return {"vessel": make(m.place)}
    if m.step == "boil":
        return {"pot": make(m.place or "Pot"), "burner": make("StoveBurner")}
    return {}


def _body(m: Missing, var: str, tools: dict[str, str]) -> list[str]:
    """The statements of one step on the object `var`."""
    if m.step in _METHOD:
        return [f"{var}.{m.step}()"]
    if m.step == "place":
        return [f"{var}.pickup_and_place({tools['place']})"]
    if m.step == "coffee":
        return [f"{var}.pickup_and_place({tools['machine']})", f"{tools['machine']}.toggle_on()"]
    if m.step == "water":
        return [f"{tools['vessel']}.fill_up()", f"{tools['vessel']}.pour({var})"]
    # boil: a pot of water on a burner that is on, the thing in the pot (the examples' boil-01)
    pot, burner = tools["pot"], tools["burner"]
    return [f"{pot}.fill_up()", f"{pot}.pickup_and_place({burner})", f"{var}.pickup_and_place({pot})",
            f"{burner}.toggle_on()"]
