"""What a program's syntax tree holds, for the edits: its objects, their steps, their roles.

The program is parsed with `ast` and never run; an edited tree is written back with `ast.unparse`
(comments are not kept, string literals are written in double quotes as the prompts show them).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass

from helper_agent.program import api
from helper_agent.program.compiler import compile_program
from helper_agent.program.edits.language import STEP_METHODS, EditError
from helper_agent.program.errors import ProgramError
from helper_agent.program.extract import parse_code
from helper_agent.world.catalog import load_catalog
from helper_agent.world.effects import COFFEE, WATER

__all__ = [
    "CTOR", "FORMS", "PLACING", "Decl", "base_class", "checked_program", "ctor_class", "declarations",
    "drop_empty_loops", "group_of", "index_in", "known_class", "last_place", "liquid_holders", "loop_var",
    "names_in", "parse_tree", "pickupable", "program_classes", "program_counts", "program_roles",
    "program_steps", "receiver", "rename_var", "render_tree", "served", "served_places", "set_class",
    "used_as_argument", "var_for",
]
PLACING = ("place", "pickup_and_place")
CTOR = api.OBJECT_CONSTRUCTOR


# Forms an object takes in a program (a slice of a tomato, a cracked egg): the catalog's classes
# with these endings stand for a prepared piece of the class before them.
FORMS = ("Sliced", "Cracked")


def base_class(cls: str) -> str:
    """The whole class a form stands for (TomatoSliced -> Tomato), the class itself for any other."""
    return next((cls[: -len(f)] for f in FORMS if cls.endswith(f)), cls)


@dataclass
class Decl:
    """`var = InteractionObject("Class", ...)` somewhere in the program."""

    var: str
    cls: str
    stmt: ast.Assign
    body: list[ast.stmt]  # the statement list it is in
    loop: ast.For | None  # the loop whose body that list is, if any
    top: ast.stmt  # the top-level statement that holds it (itself, or its loop)


def ctor_class(node: ast.AST) -> str | None:
    """The class of `InteractionObject("Class", ...)`, None for any other node."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == CTOR and node.args
            and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
        return node.args[0].value
    return None


def declarations(tree: ast.Module) -> list[Decl]:
    """Every object the program makes, in order, at top level and inside loops."""
    out: list[Decl] = []

    def visit(body: list[ast.stmt], loop: ast.For | None, top: ast.stmt | None) -> None:
        for stmt in body:
            holder = top or stmt
            if isinstance(stmt, ast.For):
                visit(stmt.body, stmt, holder)
            elif (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                  and ctor_class(stmt.value)):
                out.append(Decl(stmt.targets[0].id, ctor_class(stmt.value) or "", stmt, body, loop, holder))

    visit(tree.body, None, None)
    return out


def receiver(stmt: ast.stmt) -> tuple[str, str, ast.Call] | None:
    """(variable, method, call) of `var.method(...)` on its own line."""
    if (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Attribute)
            and isinstance(stmt.value.func.value, ast.Name)):
        return stmt.value.func.value.id, stmt.value.func.attr, stmt.value
    return None


def group_of(decl: Decl) -> list[ast.stmt]:
    """The declaration and the steps on its object that follow it in the same statement list (up to
    the variable's next assignment)."""
    start = index_in(decl.body, decl.stmt)
    out: list[ast.stmt] = [decl.stmt]
    for stmt in decl.body[start + 1:]:
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == decl.var for t in stmt.targets):
            break
        hit = receiver(stmt)
        if hit and hit[0] == decl.var:
            out.append(stmt)
    return out


def index_in(body: list[ast.stmt], stmt: ast.stmt) -> int:
    """Where `stmt` itself (not an equal one) is in `body`."""
    for i, s in enumerate(body):
        if s is stmt:
            return i
    raise ValueError("statement not in its body")


def used_as_argument(tree: ast.Module, var: str) -> list[str]:
    """The receivers of calls that take `var` as an argument: "lettuce_slice" for
    `lettuce_slice.pickup_and_place(plate)` when `var` is plate."""
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            args = [*node.args, *(k.value for k in node.keywords)]
            if any(isinstance(a, ast.Name) and a.id == var for a in args):
                f = node.func
                out.append(f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else "?")
    return out


def names_in(tree: ast.Module) -> set[str]:
    """Every name the tree uses: what a new variable must not be called."""
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


def var_for(cls: str, taken: set[str]) -> str:
    """A fresh variable for an object of `cls`: BreadSliced -> bread_slice (bread_slice_2 if taken)."""
    base = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", re.sub(r"Sliced$", "Slice", cls)).lower() or "obj"
    name, n = base, 2
    while name in taken or name in api.API_NAMES or name in ("range", "print", "i"):
        name, n = f"{base}_{n}", n + 1
    return name


def rename_var(nodes: Iterable[ast.AST], old: str, new: str) -> None:
    """Every use of the variable `old` under `nodes` becomes `new`."""
    for root in nodes:
        for n in ast.walk(root):
            if isinstance(n, ast.Name) and n.id == old:
                n.id = new


def set_class(stmt: ast.Assign, cls: str) -> None:
    """The constructor of `stmt` makes a `cls` from now on."""
    call = stmt.value
    assert isinstance(call, ast.Call)
    call.args[0] = ast.Constant(cls)


def drop_empty_loops(body: list[ast.stmt]) -> None:
    """Loops an edit left without a statement go (they would not compile)."""
    for stmt in list(body):
        if isinstance(stmt, ast.For):
            drop_empty_loops(stmt.body)
            if not stmt.body:
                body.remove(stmt)


def loop_var(body: list[ast.stmt]) -> str:
    """A loop counter the loop's own steps do not use ("i" unless taken there)."""
    taken = names_in(ast.Module(body=body, type_ignores=[]))
    return next(v for v in ("i", "n", "k", "j") if v not in taken)


def program_roles(program: str) -> tuple[list[str], list[str]]:
    """(movers, doers): the classes of the program that are put somewhere (what `move` can move),
    and the classes that have steps of their own and hold nothing (what `add ... like` can copy: a
    copy of the plate the slices go on would be an empty plate; see `_add_like`)."""
    movers: list[str] = []
    doers: list[str] = []
    tree = parse_tree(program)
    for d in declarations(tree):
        steps = [hit[1] for hit in (receiver(stmt) for stmt in group_of(d)[1:]) if hit]
        if steps and d.cls not in doers and not used_as_argument(tree, d.var):
            doers.append(d.cls)
        if any(m in (*PLACING, "put_down") for m in steps) and d.cls not in movers:
            movers.append(d.cls)
    return movers, doers


def program_steps(program: str) -> dict[str, list[str]]:
    """The state-changing steps (`STEP_METHODS`) the program does to each class: what `skip` can drop."""
    out: dict[str, list[str]] = {}
    for d in declarations(parse_tree(program)):
        for hit in (receiver(stmt) for stmt in group_of(d)[1:]):
            if hit and hit[1] in STEP_METHODS and hit[1] not in out.setdefault(d.cls, []):
                out[d.cls].append(hit[1])
    return {cls: methods for cls, methods in out.items() if methods}


def program_counts(program: str) -> dict[str, int]:
    """How many objects of each class the program makes (empty if it does not compile)."""
    try:
        compiled = compile_program(program)
    except ProgramError:
        return {}
    out: dict[str, set[object]] = {}
    for ref in compiled.objects:
        out.setdefault(ref.object_class, set()).add(ref.instance_key)
    return {cls: len(keys) for cls, keys in out.items()}


def program_classes(program: str) -> list[str]:
    """The object classes a program makes, in order of first appearance."""
    out: list[str] = []
    for d in declarations(parse_tree(program)):
        if d.cls not in out:
            out.append(d.cls)
    return out


def parse_tree(program: str) -> ast.Module:
    """The program's syntax tree; EditError (not ProgramError) when it does not parse."""
    try:
        return parse_code(program)[0]
    except ProgramError as err:
        raise EditError(f"the program does not parse: {err}") from None


_QUOTED = re.compile(r"'([^'\"\\\n]*)'")


def render_tree(tree: ast.Module) -> str:
    """The tree as program text, strings in double quotes (this language's strings hold no quotes)."""
    ast.fix_missing_locations(tree)
    return _QUOTED.sub(r'"\1"', ast.unparse(tree)) + "\n"


def served(program: str) -> list[str]:
    """The classes of what a routine serves: objects it puts somewhere (or down) whose last place is
    not another object it puts somewhere (the plate, not the toast on it; the mug in the coffee
    machine). What "put them all on the table" moves (`move all to`)."""
    return list(dict.fromkeys(d.cls for d, _ in served_places(parse_tree(program))))


def last_place(decl: Decl) -> tuple[str, str | None] | None:
    """(method, receptacle variable or None) of the object's last placing step, if any."""
    last = None
    for stmt in group_of(decl)[1:]:
        hit = receiver(stmt)
        if hit and hit[1] in (*PLACING, "put_down"):
            arg = hit[2].args[0] if hit[2].args else None
            last = (hit[1], arg.id if isinstance(arg, ast.Name) else None)
    return last


def served_places(tree: ast.Module) -> list[tuple[Decl, tuple[str, str | None]]]:
    """The objects `served` names, with their last place."""
    placed = [(d, last) for d in declarations(tree) if (last := last_place(d)) is not None]
    placed_vars = {d.var for d, _ in placed}
    return [(d, last) for d, last in placed if last[1] is None or last[1] not in placed_vars]


def liquid_holders(program: str, liquids: set[str]) -> list[str]:
    """The classes of the program's objects that end up holding one of `liquids`: filled at the sink
    (water) or placed in a coffee machine (coffee), as `world.effects` fills them."""
    tree = parse_tree(program)
    classes = {d.var: d.cls for d in declarations(tree)}
    out: list[str] = []
    for d in declarations(tree):
        for stmt in group_of(d)[1:]:
            hit = receiver(stmt)
            if not hit:
                continue
            arg = hit[2].args[0] if hit[2].args else None
            into = classes.get(arg.id, "") if isinstance(arg, ast.Name) else ""
            if ((WATER in liquids and hit[1] == "fill_up")
                    or (COFFEE in liquids and hit[1] in PLACING and into == "CoffeeMachine")) and d.cls not in out:
                out.append(d.cls)
    return out


def pickupable(cls: str) -> bool:
    """Whether the catalog says `cls` can be carried."""
    catalog = load_catalog()
    return cls in catalog and catalog.get(cls).pickupable


def known_class(cls: str) -> None:
    """EditError unless `cls` is a class of the catalog."""
    if cls not in load_catalog():
        raise EditError(f"{cls} is not an object class")


def checked_program(tree: ast.Module, check: bool, why: str) -> str:
    """The tree as text, compiled first when `check` (an EditError starting with `why` if rejected)."""
    text = render_tree(tree)
    if check:
        try:
            compile_program(text)
        except ProgramError as err:
            raise EditError(f"{why}: {err}") from None
    return text
