"""A loop that makes a new object each time runs no more times than the household has such objects
(`fit_loops`): a tree transform of `for i in range(n)`.

Why: "wash all the pots" (calibration suite of `helper eval requests`, cal-038) was written as
`for i in range(3): pot = InteractionObject("Pot", ...); pot.clean(); ...` in a household with two
pots, and "every plate is dirty, please wash them all" (cal-039) as two rounds with one plate. Every
pot was washed after two rounds; the third round searched for a pot that does not exist for 300
steps, and the corrections of its failures moved a cup and a bowl out of the sink: changes nobody
asked for. The executor binds each `InteractionObject` a loop makes to another object, so the loop
cannot do more rounds than the household holds objects of the class it makes; the count of the
rounds is the planner's guess, the count of the objects is the household's fact.

The rule: a `for NAME in range(n)` loop (literal n) whose body makes an object first, as
`x = InteractionObject("Class", ...)`, runs min(n, the household's count of Class) times when the
household holds at least one. A class the household holds none of is left alone: pieces (a
`TomatoSliced`) appear only when something is sliced, and a class that is not there is the
refusal's and the executor's to report. Nothing here reads English; the caller hands the counts.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from helper_agent.program.edits.tree import ctor_class, parse_tree, render_tree

__all__ = ["fit_loops"]


def _rounds(loop: ast.For) -> int | None:
    """n of `range(n)` with a literal n, else None (`range(a, b)` and lists are left alone)."""
    it = loop.iter
    if (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"
            and len(it.args) == 1 and not it.keywords and isinstance(it.args[0], ast.Constant)
            and type(it.args[0].value) is int):
        return it.args[0].value
    return None


def _made_first(loop: ast.For) -> str | None:
    """The class of the object the loop's body makes first, when its first statement makes one."""
    first = loop.body[0] if loop.body else None
    if isinstance(first, ast.Assign) and len(first.targets) == 1 and isinstance(first.targets[0], ast.Name):
        return ctor_class(first.value)
    return None


def fit_loops(program: str, counts: Mapping[str, int]) -> tuple[str, list[str]]:
    """The program with each loop of the module docstring cut to the household's count, and a note
    per loop cut ("the household has 2 Pot: 2 rounds, not 3"). Unchanged, with no note, when no
    loop asks for more than there is."""
    tree = parse_tree(program)
    notes: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.For):
            continue
        rounds, cls = _rounds(node), _made_first(node)
        have = counts.get(cls, 0) if cls else 0
        if rounds is None or cls is None or have < 1 or rounds <= have:
            continue
        node.iter = ast.Call(func=ast.Name("range", ast.Load()), args=[ast.Constant(have)], keywords=[])
        notes.append(f"the household has {have} {cls}: {have} round{'s' if have > 1 else ''}, not {rounds}")
    return (render_tree(tree), notes) if notes else (program, [])
