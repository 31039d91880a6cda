"""A program without the steps that change objects of some classes (`trim_classes`): a tree
transform, so that a plan which does what was asked *and* more keeps the asked part.

Why a transform and not a retry: the 0.5B planner does not listen to a scope rejection. On the
calibration suite ("could you make me a coffee?", cal-001) it wrote the same plate and bread slice,
copied from a retrieved breakfast example, on all three attempts, and the last one ran with them.
Its coffee part was right each time; removing what nobody asked for is deterministic and keeps it.

What goes, for the classes `drop`:

- every step that changes an object of those classes: its receiver's `CHANGING_METHODS` (picking
  up, placing, putting down, switching, slicing, cleaning, cooking, toasting, filling, emptying,
  pouring), and a `pour` into one of them; going to, opening and closing one are not changes (the
  executor opens things to search, as the benchmark counts it);
- the end-state attributes of its declarations (`attributes=["clean"]` compiles to a clean step);
- then whatever only those steps needed: a declaration nothing uses any more, a loop left empty,
  and a fixture the removed objects were put in that now only gets switched (the coffee machine of
  a removed mug; `apply.drop_unused_fixtures`), repeated until nothing more goes.

An object of a dropped class that a kept step still uses stays, unchanged (the plate a kept slice
is put on: putting something on a plate does not change the plate). Nothing here reads English or
decides which classes are unasked: the caller does (`graphs/helper/scoping.py`).
"""

from __future__ import annotations

import ast
from collections.abc import Collection
from dataclasses import dataclass

from helper_agent.program import api
from helper_agent.program.edits.apply import drop_unused_fixtures
from helper_agent.program.edits.tree import (
    PLACING,
    ctor_class,
    drop_empty_loops,
    parse_tree,
    receiver,
    render_tree,
)
from helper_agent.program.subgoals import SubgoalKind

__all__ = ["CHANGING_METHODS", "MOVING_METHODS", "Trimmed", "trim_classes"]

_NOT_CHANGING = (SubgoalKind.NAVIGATE, SubgoalKind.OPEN, SubgoalKind.CLOSE)
CHANGING_METHODS = frozenset(name for name, spec in api.OBJECT_METHODS.items() if spec.kind not in _NOT_CHANGING)
"""The object methods that change their receiver (`go_to`, `open` and `close` do not)."""


@dataclass(frozen=True)
class Trimmed:
    """The program without the steps on the dropped classes, and the statements removed (as source)."""

    program: str
    removed: tuple[str, ...]


def _calls(stmts: list[ast.stmt]) -> int:
    """How many object calls a statement list holds (loops included): a loop without one does nothing."""
    return sum(1 for s in stmts for n in ast.walk(s) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute))


MOVING_METHODS = frozenset({"pickup", "put_down", "place", "pickup_and_place"})


def trim_classes(program: str, drop: Collection[str], methods: Collection[str] = (),
                 unmoved: Collection[str] = (), unvisited: Collection[str] = ()) -> Trimmed:
    """`program` without the steps that change objects of the classes `drop`, without every call
    of `methods` (a cut nobody asked for: `slice`) with the attributes that stand for them, without
    the moves (`MOVING_METHODS`) of objects of the classes `unmoved` (a place things only go on or
    in), without the `go_to` of objects of the classes `unvisited` (a walk to something the request
    has no use for), and without what only those steps needed (see the module docstring). The
    classes are the ones the program's constructors write. An `EditError` when the program does
    not parse."""
    tree = parse_tree(program)
    removed: list[str] = []
    dropped_vars: set[str] = set()

    def walk(body: list[ast.stmt], classes: dict[str, str]) -> None:
        for stmt in list(body):
            if isinstance(stmt, ast.For):
                walk(stmt.body, classes)
                continue
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                cls = ctor_class(stmt.value)
                classes[stmt.targets[0].id] = cls or ""
                if cls in drop:
                    dropped_vars.add(stmt.targets[0].id)
                    _strip_attributes(stmt, removed, None)
                elif methods:
                    _strip_attributes(stmt, removed, methods)
                continue
            hit = receiver(stmt)
            if hit is None:
                continue
            var, method, call = hit
            arg = call.args[0] if call.args else None
            into = classes.get(arg.id, "") if isinstance(arg, ast.Name) else ""
            if ((classes.get(var) in drop and method in CHANGING_METHODS) or (method == "pour" and into in drop)
                    or method in methods or (classes.get(var) in unmoved and method in MOVING_METHODS)
                    or (classes.get(var) in unvisited and method == "go_to")):
                removed.append(ast.unparse(stmt))
                body.remove(stmt)

    used_before = _loaded(tree)
    walk(tree.body, {})
    used_before |= dropped_vars
    places = _places_of_removed(removed)
    while True:
        before = ast.dump(tree)
        _drop_unused(tree.body, tree, removed, used_before)
        drop_unused_fixtures(tree, among=places, idle_steps=("toggle_on", "toggle_off"))
        _drop_idle_loops(tree.body)
        drop_empty_loops(tree.body)
        if ast.dump(tree) == before:
            break
    if not removed:
        return Trimmed(program, ())
    return Trimmed(render_tree(tree) if tree.body else "", tuple(removed))


def _strip_attributes(stmt: ast.Assign, removed: list[str], methods: Collection[str] | None) -> None:
    """The end-state attributes (`api.ATTRIBUTE_METHODS`, with their synonyms) off a declaration:
    all of them (`methods` None), or those that stand for one of `methods`."""
    call = stmt.value
    assert isinstance(call, ast.Call)

    def goes(node: ast.expr) -> bool:
        attr = api.normalise_attribute(node.value) if isinstance(node, ast.Constant) and isinstance(node.value, str) else None
        return attr is not None and (methods is None or api.ATTRIBUTE_METHODS[attr] in methods)

    for kw in call.keywords:
        if kw.arg == "attributes" and isinstance(kw.value, ast.List):
            kept = [e for e in kw.value.elts if not goes(e)]
            if len(kept) != len(kw.value.elts):
                removed.append(f"{ast.unparse(stmt.targets[0])} attributes {ast.unparse(kw.value)}")
                kw.value.elts = kept
    call.keywords = [kw for kw in call.keywords if not (kw.arg == "attributes" and isinstance(kw.value, ast.List)
                                                         and not kw.value.elts)]


def _places_of_removed(removed: list[str]) -> set[str]:
    """The variables the removed steps put things in or on (a fixture that may now be idle)."""
    out: set[str] = set()
    for text in removed:
        try:
            node = ast.parse(text).body[0]
        except (SyntaxError, IndexError):
            continue
        hit = receiver(node)
        if hit and hit[1] in (*PLACING, "pour") and hit[2].args and isinstance(hit[2].args[0], ast.Name):
            out.add(hit[2].args[0].id)
    return out


def _loaded(tree: ast.AST) -> set[str]:
    """The variables the tree reads."""
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _drop_unused(body: list[ast.stmt], tree: ast.Module, removed: list[str], candidates: set[str]) -> None:
    """Declarations of `candidates` (objects of the dropped classes, and objects the program used
    before the trim) whose variable nothing in the program uses any more: what only removed steps
    needed. A declaration the planner wrote and never used is not this transform's business."""
    used = _loaded(tree)
    for stmt in list(body):
        if isinstance(stmt, ast.For):
            _drop_unused(stmt.body, tree, removed, candidates)
        elif (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
              and ctor_class(stmt.value) and stmt.targets[0].id in candidates and stmt.targets[0].id not in used):
            removed.append(ast.unparse(stmt))
            body.remove(stmt)


def _drop_idle_loops(body: list[ast.stmt]) -> None:
    """Loops that no longer call anything (only declarations left) do nothing."""
    for stmt in list(body):
        if isinstance(stmt, ast.For):
            _drop_idle_loops(stmt.body)
            if not _calls(stmt.body):
                stmt.body.clear()
