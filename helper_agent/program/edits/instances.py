"""A program acts on no more objects of a class than the household holds (`fit_instances`): a tree
transform of the constructions outside loops, the companion of `loops.fit_loops`.

Every `InteractionObject(...)` the program evaluates is bound by the executor to another object
(`program/subgoals.py`), so a program that constructs a class more often than the household holds
it sends the executor searching, to its step limit, for an object that is not there. Two ways this
happened:
- A planner that repeats a part writes `plate = InteractionObject("Plate")` a second time for the
  same plate. In a real `helper chat` session (results/requests/chat-0.5b-issue54-final.txt, the
  Ben breakfast) the second plate's `Clean` was "not found" five times in a household with one plate.
- A routine taught where there were two remote controls ("every remote on the sofa") makes
  `remote_control` and `remote_control_2`; replayed in a household with one, it searched 678 steps
  for the second and never reached the television after it.

The rule: outside loops, the constructions of a class beyond the household's count of it (when the
household holds at least one) stand for an object already made: the construction goes, and its
variable is the last kept one of that class. Not for pieces (a `TomatoSliced` is counted before
anything is cut) or a class a loop also makes (`fit_loops` caps the loop). Nothing here reads
English; the caller hands the counts.
"""

from __future__ import annotations

from collections.abc import Mapping

from helper_agent.program.edits.tree import (
    FORMS,
    Decl,
    declarations,
    group_of,
    parse_tree,
    receiver,
    rename_var,
    render_tree,
    used_as_argument,
)

__all__ = ["absent_walks", "fit_instances"]


def _excess(decls: list[Decl], have: int) -> list[tuple[Decl, str]]:
    """The constructions beyond the first `have` (in program order), each with the variable of the
    last kept construction before it."""
    out: list[tuple[Decl, str]] = []
    kept: list[str] = []
    for d in decls:
        if len(kept) < have:
            kept.append(d.var)
        else:
            out.append((d, kept[-1]))
    return out


def fit_instances(program: str, counts: Mapping[str, int]) -> tuple[str, list[str]]:
    """The program with the constructions of the module docstring merged into the objects made
    before them, and a note per class ("the household has 1 Plate: the program's 2 are that one").
    Unchanged, with no note, when no class is made more often than the household holds it."""
    tree = parse_tree(program)
    every = declarations(tree)
    in_loops = {d.cls for d in every if d.loop is not None}
    classes_of: dict[str, set[str]] = {}
    for d in every:
        classes_of.setdefault(d.var, set()).add(d.cls)
    by_class: dict[str, list[Decl]] = {}
    for d in every:
        if d.loop is None and d.cls not in in_loops and not d.cls.endswith(FORMS):
            by_class.setdefault(d.cls, []).append(d)
    notes: list[str] = []
    for cls, decls in by_class.items():
        have = counts.get(cls, 0)
        if have < 1 or len(decls) <= have:
            continue
        merged = 0
        for d, var in _excess(decls, have):
            if d.var != var and len(classes_of[d.var]) > 1:
                continue  # a name that also makes another class: renaming it would change that object too
            d.body.remove(d.stmt)
            if d.var != var:
                rename_var([tree], d.var, var)
            merged += 1
        if merged:
            notes.append(f"the household has {have} {cls}: the program's {len(decls)} are "
                         f"{'that one' if have == 1 else f'those {have}'}")
    return (render_tree(tree), notes) if notes else (program, [])


def absent_walks(program: str, counts: Mapping[str, int]) -> list[str]:
    """The classes the program only walks to (`go_to`, no other step) that the household holds none
    of (pieces aside: they appear when something is cut). Such a walk cannot be made and serves no
    step: "switch the TV on" (calibration cal-060) walked to a desk lamp copied from an example, in a
    room without one, and searched 600 steps before the television."""
    tree = parse_tree(program)
    calls: dict[str, set[str]] = {}
    for d in declarations(tree):
        methods = calls.setdefault(d.cls, set())
        methods.update(hit[1] for stmt in group_of(d)[1:] if (hit := receiver(stmt)))
        if used_as_argument(tree, d.var):
            methods.add("(argument)")
    return [cls for cls, methods in calls.items()
            if methods == {"go_to"} and counts.get(cls, 0) < 1 and not cls.endswith(FORMS)]
