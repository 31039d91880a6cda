"""The edit language, one line per edit, and an edit in a person's words.

    replace Cup with Bowl        every Cup of the program becomes a Bowl (its steps stay, but for the
                                 ones a Bowl cannot take: an apple slice instead of toast is not toasted)
    count Plate 1                how many Plates: the loop's bound, a loop made, unrolled; 0 removes
    remove Mug                   the Mug and every step on it
    move Pillow to Sofa          where the Pillow is put (placing steps, or putting it down)
    move all to DiningTable      where everything the routine serves goes (`tree.served`): "put them all there"
    add Pan like Bowl            one Pan more, with the steps one Bowl gets
    put Vase on SideTable        one Vase more, put on or in the SideTable (made if the routine has none)
    add task                     a new part the planner writes from the change's words (`append_program`)
    step PotatoSliced cook       one more step on the object, right after it is made
    skip BreadSliced toast       drop that step
    none                         the change asks for nothing the program does
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["EDIT_KINDS", "PARTICIPLES", "STEP_METHODS", "Edit", "EditError", "class_words", "parse_edit"]

EDIT_KINDS = ("none", "replace", "count", "remove", "move", "move_all", "add_like", "put", "add_task", "step", "skip")
# Steps that change an object's state, which `step`/`skip` may add or drop.
STEP_METHODS = ("clean", "toast", "cook", "slice", "fill_up", "empty", "toggle_on", "toggle_off", "open", "close")


class EditError(ValueError):
    """An edit that cannot be applied; the message says why, in words the model can act on."""


@dataclass(frozen=True)
class Edit:
    """One edit; `target` is a class of the program, `value` a new class or a method."""

    kind: str
    target: str = ""
    value: str = ""
    count: int = 0
    place: str = ""  # add ... like: where the change puts the new object ("a pen on the desk": Desk)

    def text(self) -> str:
        """The edit as the model writes it."""
        return {
            "none": "none",
            "replace": f"replace {self.target} with {self.value}",
            "count": f"count {self.target} {self.count}",
            "remove": f"remove {self.target}",
            "move": f"move {self.target} to {self.value}",
            "move_all": f"move all to {self.value}",
            "add_like": f"add {self.value} like {self.target}" + (f" on {self.place}" if self.place else ""),
            "put": f"put {self.value} on {self.target}",
            "add_task": "add task",
            "step": f"step {self.target} {self.value}",
            "skip": f"skip {self.target} {self.value}",
        }[self.kind]

    def describe(self, before: int | None = None, destination: str | None = None,
                 items: Sequence[str] = (), dropped: Sequence[str] = ()) -> str:
        """The edit in a person's words ("bowl instead of cup"), for the reply that lists the changes.
        `before`: how many of the target the routine made (count); `destination`: where it went (move);
        `items`: what a `move all` moves; `dropped`: the steps a replacement cannot take."""
        t, v = class_words(self.target), class_words(self.value)
        if self.kind == "replace":
            skipped = f" (not {', '.join(PARTICIPLES.get(m, m) for m in dropped)})" if dropped else ""
            return f"{v} instead of {t}{skipped}"
        if self.kind == "move_all":
            what = " and ".join(f"the {class_words(c)}" for c in items) or "everything"
            return f"{what} to the {v}"
        if self.kind == "count":
            was = f" instead of {before}" if before is not None else ""
            return f"{self.count} {t}{'' if self.count == 1 else 's'}{was}"
        if self.kind == "remove":
            return f"no {t}"
        if self.kind == "move":
            was = f" instead of the {class_words(destination)}" if destination else ""
            return f"the {t} to the {v}{was}"
        if self.kind == "add_like":
            return f"also a {v} (like the {t})" + (f" on the {class_words(self.place)}" if self.place else "")
        if self.kind == "put":
            return f"also a {v} on the {t}"
        if self.kind == "step":
            return f"{self.value.replace('_', ' ')} the {t} too"
        if self.kind == "skip":
            return f"do not {self.value.replace('_', ' ')} the {t}"
        if self.kind == "add_task":
            return "a new part"
        return "no change"


def class_words(cls: str | None) -> str:
    """A class name as words: BreadSliced -> bread slice, RemoteControl -> remote control."""
    if not cls:
        return ""
    text = re.sub(r"Sliced$", "Slice", cls)
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text).lower()


# How a step reads once done, for `Edit.describe` ("apple instead of bread slice (not toasted)").
PARTICIPLES = {"clean": "washed", "toast": "toasted", "cook": "cooked", "slice": "sliced", "fill_up": "filled",
               "empty": "emptied", "toggle_on": "switched on", "toggle_off": "switched off", "open": "opened",
                "close": "closed"}


_EDIT = re.compile(
    r"^(?:(?P<none>none)|(?P<task>add task)|replace (?P<r0>\w+) with (?P<r1>\w+)|count (?P<c0>\w+) (?P<c1>\d+)"
    r"|remove (?P<rm>\w+)|move all to (?P<ma>\w+)|move (?P<m0>\w+) to (?P<m1>\w+)|add (?P<a1>\w+) like (?P<a0>\w+)"
    r"|put (?P<p1>\w+) on (?P<p0>\w+)"
    r"|(?P<sk>step|skip) (?P<s0>\w+) (?P<s1>\w+))$"
)


def parse_edit(line: str) -> Edit:
    """The edit a line states (the grammar's language); EditError for anything else."""
    m = _EDIT.match(" ".join(line.strip().split()))
    if m is None:
        raise EditError(f"not an edit: {line.strip()[:80]!r}")
    if m["none"]:
        return Edit("none")
    if m["task"]:
        return Edit("add_task")
    if m["r0"]:
        return Edit("replace", m["r0"], m["r1"])
    if m["c0"]:
        return Edit("count", m["c0"], count=int(m["c1"]))
    if m["rm"]:
        return Edit("remove", m["rm"])
    if m["ma"]:
        return Edit("move_all", value=m["ma"])
    if m["m0"]:
        return Edit("move", m["m0"], m["m1"])
    if m["a0"]:
        return Edit("add_like", m["a0"], m["a1"])
    if m["p0"]:
        return Edit("put", m["p0"], m["p1"])
    return Edit(m["sk"], m["s0"], m["s1"])

