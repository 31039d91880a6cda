"""A new part the planner wrote (an `add task` edit), joined to the routine (`append_program`)."""

from __future__ import annotations

import ast
from collections import Counter

from helper_agent.program.edits.language import STEP_METHODS
from helper_agent.program.edits.tree import (
    Decl,
    checked_program,
    declarations,
    group_of,
    last_place,
    names_in,
    parse_tree,
    pickupable,
    receiver,
    rename_var,
    used_as_argument,
    var_for,
)
from helper_agent.world.catalog import load_catalog

__all__ = ["append_program"]

def append_program(program: str, part: str, *, check: bool = True) -> str:
    """`program` followed by `part` (a new part the planner wrote). The part's objects get fresh
    names where the program uses them already, except a fixture (a class nothing picks up) the
    program makes at top level, which the part uses instead of making a second one."""
    tree, extra = parse_tree(program), parse_tree(part)
    mine = {d.cls: d.var for d in declarations(tree) if d.loop is None}
    free = _free_objects(tree)
    taken = names_in(tree)
    for d in declarations(extra):
        if d.loop is None and not pickupable(d.cls) and d.cls in load_catalog() and d.cls in mine and not d.stmt.value.keywords:  # type: ignore[attr-defined]
            d.body.remove(d.stmt)
            rename_var([extra], d.var, mine[d.cls])
        elif d.loop is None and d.cls in free and _attributes(d) <= _attributes(free[d.cls]):
            routine_object = free.pop(d.cls)
            done = {hit[1] for hit in map(receiver, group_of(routine_object)[1:]) if hit and hit[1] in STEP_METHODS}
            for stmt in group_of(d)[1:]:  # the routine washed the mug already: not again
                hit = receiver(stmt)
                if hit and hit[1] in done and not hit[2].args:
                    d.body.remove(stmt)
            d.body.remove(d.stmt)
            rename_var([extra], d.var, routine_object.var)
        elif d.var in taken:
            new = var_for(d.cls, taken | names_in(extra))
            rename_var([extra], d.var, new)
            taken.add(new)
    tree.body.extend(extra.body)
    return checked_program(tree, check, "the new part does not fit the routine")


def _free_objects(tree: ast.Module) -> dict[str, Decl]:
    """The routine's objects a new part takes up rather than making another of the class: one object
    of its class, made at top level, that can be carried, holds nothing and is left where it was
    prepared (put down, or never placed): "the Hana watering (wash the mug), then a mug of coffee"
    makes the coffee in the washed mug. A plate with toast on it, or a mug left in the coffee
    machine, is not free; a part wanting one makes its own. Read from the calibration suite (batch 2,
    hana-one-3), where the part's second mug was looked for in a kitchen with one."""
    decls = declarations(tree)
    counts = Counter(d.cls for d in decls)
    out: dict[str, Decl] = {}
    for d in decls:
        last = last_place(d)
        if (d.loop is None and counts[d.cls] == 1 and pickupable(d.cls) and not used_as_argument(tree, d.var)
                and (last is None or last[0] == "put_down")):
            out[d.cls] = d
    return out


def _attributes(decl: Decl) -> set[str]:
    """The attributes an object is made with (`attributes=["clean"]`)."""
    call = decl.stmt.value
    assert isinstance(call, ast.Call)
    return {e.value for kw in call.keywords if kw.arg == "attributes" and isinstance(kw.value, ast.List)
            for e in kw.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}

