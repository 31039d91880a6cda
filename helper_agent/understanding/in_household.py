"""A request's classes read as the household's: "the lamp" is the FloorLamp of a living room that has
one, not a `Lamp` the executor would search for until its step limit.

A person says the generic word; the catalog has the generic class beside its kinds (Lamp beside
FloorLamp and DeskLamp), so the planner writes the generic one and the lexical mapper keeps it. In
the app, "turn on the lamp and put the remote on the sofa" in a living room with a FloorLamp looked
for a `Lamp` five times (issue 54). Here every class a program makes is read against the classes the
household holds, by the one rule of `kinds` (a class the household lacks stands for the
kind of it the household has: a class whose name ends in its name), and the program is written with
the household's class before it runs, so the absent class never reaches the executor.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from helper_agent.program import ClassMapper, CompiledProgram, compile_program
from helper_agent.understanding.kinds import household_class, with_classes

__all__ = ["household_classes", "in_household"]


def household_classes(objects: Iterable[Mapping[str, Any]]) -> frozenset[str]:
    """The object classes a household holds, from its AI2-THOR-style object metadata
    (`Environment.objects_metadata()`)."""
    return frozenset(str(o["objectType"]) for o in objects if o.get("objectType"))


def in_household(compiled: CompiledProgram, present: Collection[str],
                 mapper: ClassMapper | None = None) -> tuple[CompiledProgram, dict[str, str]]:
    """`compiled` with every class it makes that the household lacks written as the household's kind
    of it (`household_class`), compiled again; and what was written for what ({"Lamp": "FloorLamp"},
    keyed by the name the program wrote). Unchanged, with {}, when every class is there or has no kind
    there. `ProgramError` if the rewritten program does not compile (it compiled before with the
    generic class, so only a check the kind fails and the generic passes could do that)."""
    moved: dict[str, str] = {}
    for ref in compiled.objects:
        cls = household_class(ref.object_class, present)
        if cls != ref.object_class:
            moved[ref.requested_class or ref.object_class] = cls
    if not moved:
        return compiled, {}
    return compile_program(with_classes(compiled.source, moved), class_mapper=mapper), moved
