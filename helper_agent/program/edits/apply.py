"""An edit of the edit language applied to a program's syntax tree (`apply_edit`).

Each kind of edit is one function over the tree; the result is compiled to check it, and an edit
that does not fit the program, or would make an invalid one, raises `EditError` with a reason.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
from collections.abc import Collection

from helper_agent.program import api
from helper_agent.program.edits.language import STEP_METHODS, Edit, EditError
from helper_agent.program.edits.tree import (
    CTOR,
    FORMS,
    PLACING,
    Decl,
    checked_program,
    ctor_class,
    declarations,
    drop_empty_loops,
    group_of,
    index_in,
    known_class,
    liquid_holders,
    loop_var,
    names_in,
    parse_tree,
    pickupable,
    program_classes,
    program_steps,
    receiver,
    rename_var,
    served_places,
    set_class,
    used_as_argument,
    var_for,
)
from helper_agent.program.semantics import affords
from helper_agent.world.catalog import load_catalog
from helper_agent.world.effects import COFFEE, WATER

__all__ = ["apply_edit", "carry_all", "drop_unused_fixtures", "in_form", "poured_into", "put_made", "replaced_steps"]


def in_form(edit: Edit) -> Edit:
    """`edit` with its new class in the form of the object it stands for.

    "Tomato instead of apple" in a routine that places apple slices means tomato slices: a model
    writes `replace AppleSliced with Tomato`, the person's word, and the routine's steps (placing a
    slice) only make sense for the same form. So for `replace` and `add ... like`, a whole class
    standing for a prepared piece becomes its piece (Tomato -> TomatoSliced) and a piece standing
    for a whole object becomes the whole, when the catalog has that class.
    """
    if edit.kind not in ("replace", "add_like"):
        return edit
    catalog = load_catalog()
    for suffix in FORMS:
        if edit.target.endswith(suffix) and not edit.value.endswith(suffix) and edit.value + suffix in catalog:
            return dataclasses.replace(edit, value=edit.value + suffix)
        if edit.value.endswith(suffix) and not edit.target.endswith(suffix) and edit.value[: -len(suffix)] in catalog:
            return dataclasses.replace(edit, value=edit.value[: -len(suffix)])
    return edit


def apply_edit(program: str, edit: Edit, *, check: bool = True) -> str:
    """`program` with `edit` (`in_form`) applied, compiled to check it (`EditError` with a reason
    when the edit does not fit the program or would make an invalid one). "none", and an edit that
    changes nothing, return `program` itself, byte for byte. "add task" is `append_program`'s job."""
    edit = in_form(edit)
    if edit.kind == "none":
        return program
    if edit.kind == "add_task":
        raise EditError("'add task' needs the new part's program: see append_program")
    if edit.kind == "put":
        return _put(program, edit)
    if edit.kind == "move_all":
        return _move_all(program, edit)
    tree = parse_tree(program)
    decls = [d for d in declarations(tree) if d.cls == edit.target]
    if not decls:
        have = ", ".join(program_classes(program)) or "none"
        raise EditError(f"the routine has no {edit.target}; its objects are {have}")
    changed = _APPLY[edit.kind](tree, decls, edit)
    if not changed:
        return program
    return checked_program(tree, check, f"'{edit.text()}' would make an invalid program")


def replaced_steps(program: str, edit: Edit) -> list[str]:
    """The steps the routine does to `edit.target` that a `replace`'s new class cannot take, which
    `_replace` leaves out ("a slice of apple instead of the toast": an apple slice is not toasted)."""
    if edit.kind != "replace":
        return []
    new = in_form(edit).value
    return [m for m in program_steps(program).get(edit.target, []) if not affords(m, new)]


def _replace(tree: ast.Module, decls: list[Decl], edit: Edit) -> bool:
    """Every target becomes the new class; steps it cannot take are dropped with the attributes that
    stand for them. Read from the extended calibration suite: "a slice of apple instead of the
    toast" kept the toasting and was rejected as an invalid program, so the change was lost."""
    if edit.value == edit.target:
        return False
    known_class(edit.value)
    for d in decls:
        set_class(d.stmt, edit.value)
        for stmt in group_of(d)[1:]:
            hit = receiver(stmt)
            if hit and hit[1] in STEP_METHODS and not affords(hit[1], edit.value):
                d.body.remove(stmt)
        call = d.stmt.value
        assert isinstance(call, ast.Call)
        for kw in call.keywords:
            if kw.arg == "attributes" and isinstance(kw.value, ast.List):
                kw.value.elts = [e for e in kw.value.elts if not (
                    isinstance(e, ast.Constant) and e.value in api.ATTRIBUTE_METHODS
                    and not affords(api.ATTRIBUTE_METHODS[e.value], edit.value))]
    drop_empty_loops(tree.body)
    for node in ast.walk(tree):  # loops over class names: for x in ["Cup", "Mug"]
        if isinstance(node, ast.For) and isinstance(node.iter, (ast.List, ast.Tuple)):
            for i, elt in enumerate(node.iter.elts):
                if isinstance(elt, ast.Constant) and elt.value == edit.target:
                    node.iter.elts[i] = ast.Constant(edit.value)
    others = {d.var for d in declarations(tree) if d.cls != edit.value}
    taken = names_in(tree)
    for var in {d.var for d in decls} - others:
        if var == var_for(edit.target, set()):
            new = var_for(edit.value, taken)
            rename_var([tree], var, new)
            taken.add(new)
    return True


def _count(tree: ast.Module, decls: list[Decl], edit: Edit) -> bool:
    n = edit.count
    if n > api.MAX_LOOP_LENGTH:
        raise EditError(f"at most {api.MAX_LOOP_LENGTH} of a kind")
    if n == 0:
        return _remove(tree, decls, Edit("remove", edit.target))
    if len({id(d.top) for d in decls}) > 1:
        raise EditError(f"the routine makes {edit.target} in {len(decls)} places; change them one by one with "
                        f"remove or add ... like")
    d = decls[0]
    if d.loop is not None:
        loop = d.loop
        if loop is not d.top:
            raise EditError(f"the {edit.target} is made in a nested loop")
        if not (isinstance(loop.iter, ast.Call) and isinstance(loop.iter.func, ast.Name) and loop.iter.func.id == "range"):
            raise EditError(f"the {edit.target} is made once per item of a list, not a number of times")
        makes = {x.cls for x in declarations(ast.Module(body=loop.body, type_ignores=[]))}
        if makes != {edit.target}:
            others = ", ".join(sorted(makes - {edit.target}))
            raise EditError(f"the loop that makes the {edit.target} also makes {others}")
        current = _range_count(loop.iter)
        if current == n:
            return False
        body = tree.body
        if n == 1:
            if isinstance(loop.target, ast.Name) and loop.target.id in names_in(ast.Module(body=loop.body, type_ignores=[])):
                raise EditError("the loop's steps use its counter")
            i = index_in(body, loop)
            body[i:i + 1] = loop.body
        else:
            loop.iter = ast.Call(ast.Name("range", ast.Load()), [ast.Constant(n)], [])
        return True
    if n == 1:
        return False
    # One object made at top level: repeat it in a loop; objects it uses that are made in between
    # (the coffee machine between the mug's steps) are made once, before the loop.
    body = tree.body
    group = group_of(d)
    start, end = index_in(body, d.stmt), index_in(body, group[-1])
    span = body[start:end + 1]
    hoisted = [s for s in span if s is not d.stmt and _not_about(s, d.var)]
    looped = [s for s in span if not any(s is h for h in hoisted)]
    loop = ast.For(target=ast.Name(loop_var(looped), ast.Store()),
                   iter=ast.Call(ast.Name("range", ast.Load()), [ast.Constant(n)], []), body=looped, orelse=[])
    body[start:end + 1] = [*hoisted, loop]
    return True


def _not_about(stmt: ast.stmt, var: str) -> bool:
    """A statement between an object's steps that makes or acts on another object and does not use
    this one: it stays before the loop that repeats the object. Read from the extended calibration
    suite: "two slices of toast" washed the plate again, with toast on it, for every slice."""
    if isinstance(stmt, ast.Assign) and ctor_class(stmt.value):
        return True
    hit = receiver(stmt)
    return hit is not None and hit[0] != var and var not in names_in(ast.Module(body=[stmt], type_ignores=[]))


def _range_count(call: ast.Call) -> int | None:
    values = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, int)]
    if len(values) != len(call.args):
        return None
    return len(range(*values)) if values else None


def _remove(tree: ast.Module, decls: list[Decl], edit: Edit) -> bool:
    for d in decls:
        users = [u for u in used_as_argument(tree, d.var) if u != d.var]
        if users:
            held = ", ".join(sorted(set(users)))
            raise EditError(f"other steps use the {edit.target} ({held}); move them elsewhere first "
                            f"(move ... to ...) or remove them too")
    places = {a.id for d in decls for stmt in group_of(d)[1:] if (hit := receiver(stmt))
              for a in hit[2].args if isinstance(a, ast.Name)}
    for d in decls:
        for stmt in group_of(d):
            if any(s is stmt for s in d.body):
                d.body.remove(stmt)
    for node in ast.walk(tree):
        if isinstance(node, ast.For) and isinstance(node.iter, (ast.List, ast.Tuple)):
            node.iter.elts = [e for e in node.iter.elts if not (isinstance(e, ast.Constant) and e.value == edit.target)]
            if not node.iter.elts:
                node.body.clear()
    drop_empty_loops(tree.body)
    # a place the removed thing was put in, now unused, goes with the steps that only switched it on
    # or off for what it held: the coffee machine once the mug is gone (a cleaned plate stays)
    drop_unused_fixtures(tree, among=places, idle_steps=_SWITCHES)
    if not tree.body:
        raise EditError(f"without the {edit.target} the routine does nothing")
    return True


_SWITCHES = ("toggle_on", "toggle_off")


def _move(tree: ast.Module, decls: list[Decl], edit: Edit) -> bool:
    sites: list[tuple[Decl, ast.stmt, str, ast.Call]] = []
    for d in decls:
        for stmt in group_of(d)[1:]:
            hit = receiver(stmt)
            if hit and hit[1] in (*PLACING, "put_down"):
                sites.append((d, stmt, hit[1], hit[2]))
    if not sites:
        raise EditError(f"no step puts the {edit.target} anywhere; use 'add task' for a new step")
    all_decls = declarations(tree)
    by_var = {x.var: x.cls for x in all_decls}
    if all(m != "put_down" and c.args and isinstance(c.args[0], ast.Name) and by_var.get(c.args[0].id) == edit.value
           for _, _, m, c in sites):
        return False
    if _move_into_dish(tree, all_decls, sites, edit.value):
        return True
    first_top = sites[0][0].top
    top_index = index_in(tree.body, first_top)
    # Reuse an object of the destination's class made at top level before the first placing.
    dest = next((x.var for x in all_decls if x.cls == edit.value and x.loop is None
                 and index_in(tree.body, x.top) < top_index), None)
    if dest is None:
        dest = var_for(edit.value, names_in(tree))
        tree.body.insert(top_index, ast.Assign([ast.Name(dest, ast.Store())],
                                               ast.Call(ast.Name(CTOR, ast.Load()), [ast.Constant(edit.value)], [])))
    for d, stmt, method, call in sites:
        if method == "put_down":
            new = ast.Expr(ast.Call(ast.Attribute(ast.Name(d.var, ast.Load()), "place", ast.Load()),
                                    [ast.Name(dest, ast.Load())], []))
            d.body[index_in(d.body, stmt)] = new
        else:
            call.args = [ast.Name(dest, ast.Load())]
            call.keywords = []
    drop_unused_fixtures(tree)
    return True


def _move_all(program: str, edit: Edit) -> str:
    """Everything the routine serves (`served`) goes on or in the new place: what is put down or
    placed on a surface is placed there instead; what is left in a machine the routine runs (the mug
    in the coffee machine) is carried there after the routine's steps."""
    known_class(edit.value)
    tree = parse_tree(program)
    roots = served_places(tree)
    if not roots:
        raise EditError("no step puts anything anywhere; use 'add task' for a new step")
    toggled = {hit[0] for stmt in ast.walk(tree) if isinstance(stmt, ast.stmt)
               and (hit := receiver(stmt)) and hit[1] == "toggle_on"}
    classes = {x.var: x.cls for x in declarations(tree)}
    if all(arg is not None and classes.get(arg) == edit.value for _, (_, arg) in roots):
        return program
    if not any(x.cls == edit.value and x.loop is None for x in declarations(tree)):
        tree.body.insert(0, ast.Assign([ast.Name(var_for(edit.value, names_in(tree)), ast.Store())],
                                       ast.Call(ast.Name(CTOR, ast.Load()), [ast.Constant(edit.value)], [])))
    after = [d for d, (_, arg) in roots if arg in toggled]
    for cls in dict.fromkeys(d.cls for d, (_, arg) in roots if arg not in toggled):
        _move(tree, [x for x in declarations(tree) if x.cls == cls], Edit("move", cls, edit.value))
    dest = next(x.var for x in declarations(tree) if x.cls == edit.value and x.loop is None)
    for d in after:
        carry = ast.Expr(ast.Call(ast.Attribute(ast.Name(d.var, ast.Load()), "pickup_and_place", ast.Load()),
                                  [ast.Name(dest, ast.Load())], []))
        (d.body if d.loop is not None else tree.body).append(carry)
    drop_unused_fixtures(tree)
    return checked_program(tree, True, f"'{edit.text()}' would make an invalid program")


def _is_dish(cls: str) -> bool:
    catalog = load_catalog()
    return cls in catalog and catalog.get(cls).pickupable and catalog.get(cls).receptacle


def _move_into_dish(tree: ast.Module, all_decls: list[Decl], sites: list[tuple[Decl, ast.stmt, str, ast.Call]],
                    new_cls: str) -> bool:
    """Moving what goes into a dish the routine prepares for it (a plate washed for the slices) to
    another dish: the new dish takes the old one's place and its preparation ("apple slices in a
    bowl instead of on the plate" -> the bowl is washed as the plate was). Read from the
    calibration suite, where the moved slices went into a dirty bowl next to a washed, empty plate."""
    olds = {c.args[0].id if c.args and isinstance(c.args[0], ast.Name) else "" for _, _, m, c in sites if m != "put_down"}
    if len(olds) != 1 or len(sites) != sum(1 for _, _, m, _ in sites if m != "put_down") or not _is_dish(new_cls):
        return False
    old = next(iter(olds))
    decl = next((x for x in all_decls if x.var == old), None)
    if (decl is None or not _is_dish(decl.cls) or not group_of(decl)[1:]
            or len(used_as_argument(tree, old)) != len(sites)):
        return False
    set_class(decl.stmt, new_cls)
    rename_var([tree], old, var_for(new_cls, names_in(tree)))
    return True


def drop_unused_fixtures(tree: ast.Module, among: Collection[str] | None = None,
                          idle_steps: Collection[str] = ()) -> None:
    """Remove top-level objects that nothing uses any more (the armchair once the pillow goes on the
    sofa), with their own steps when all of them are `idle_steps` (none allowed by default: a lamp
    that is switched on does something). `among` limits it to those variables."""
    for d in declarations(tree):
        if d.loop is not None or (among is not None and d.var not in among) or used_as_argument(tree, d.var):
            continue
        group = group_of(d)
        if all((receiver(s) or ("", "", None))[1] in idle_steps for s in group[1:]):
            for stmt in group:
                d.body.remove(stmt)


def _add_like(tree: ast.Module, decls: list[Decl], edit: Edit) -> bool:
    known_class(edit.value)
    d = decls[0]
    classes = {x.var: x.cls for x in declarations(tree)}
    held = [classes.get(v, v) for v in used_as_argument(tree, d.var)]
    if not group_of(d)[1:] or held:
        doers = [x.cls for x in declarations(tree) if group_of(x)[1:] and not used_as_argument(tree, x.var)]
        why = (f"a copy of the {edit.target} would hold nothing (the {', '.join(dict.fromkeys(held))} go on or in "
               f"the {edit.target} itself): to use a {edit.value} instead, replace the {edit.target}"
               if held and group_of(d)[1:] else
               f"the {edit.target} has no steps of its own to copy (things are put on or in it)")
        raise EditError(f"{why}; add the {edit.value} like one of: {', '.join(dict.fromkeys(doers)) or 'nothing'}")
    var = var_for(edit.value, names_in(tree))
    copies = [copy.deepcopy(s) for s in group_of(d)]
    set_class(copies[0], edit.value)  # type: ignore[arg-type]
    rename_var(copies, d.var, var)
    last = d.top if d.loop is not None else group_of(d)[-1]
    at = index_in(tree.body, last) + 1
    tree.body[at:at] = copies
    if edit.place:
        known_class(edit.place)
        copy_decl = next(x for x in declarations(tree) if x.var == var)
        if not any((receiver(s) or ("", "", None))[1] in (*PLACING, "put_down") for s in copies[1:]):
            put_down = ast.Expr(ast.Call(ast.Attribute(ast.Name(var, ast.Load()), "put_down", ast.Load()), [], []))
            tree.body.insert(index_in(tree.body, copies[-1]) + 1, put_down)
        _move(tree, [copy_decl], Edit("move", edit.value, edit.place))
    return True


def _step(tree: ast.Module, decls: list[Decl], edit: Edit) -> bool:
    """The step on each object of the class that lacks it: right after the object is made (it is
    cooked, cleaned, toasted before it is served), but a slice after its other steps, since slicing
    ends the whole object (`potato.slice()` before `potato.cook()` leaves nothing to cook)."""
    if edit.value not in STEP_METHODS:
        raise EditError(f"{edit.value} is not a step; steps are {', '.join(STEP_METHODS)}")
    changed = False
    for d in decls:
        group = group_of(d)
        if any((receiver(s) or ("", "", None))[1] == edit.value for s in group[1:]):
            continue
        call = ast.Expr(ast.Call(ast.Attribute(ast.Name(d.var, ast.Load()), edit.value, ast.Load()), [], []))
        after = group[-1] if edit.value == "slice" else d.stmt
        d.body.insert(index_in(d.body, after) + 1, call)
        changed = True
    return changed


def _skip(tree: ast.Module, decls: list[Decl], edit: Edit) -> bool:
    changed = False
    for d in decls:
        for stmt in group_of(d)[1:]:
            hit = receiver(stmt)
            if hit and hit[1] == edit.value:
                d.body.remove(stmt)
                changed = True
        call = d.stmt.value
        assert isinstance(call, ast.Call)
        for kw in call.keywords:  # an attribute that would bring the step back: attributes=["toasted"]
            if kw.arg == "attributes" and isinstance(kw.value, ast.List):
                attr = {m: a for a, m in api.ATTRIBUTE_METHODS.items()}.get(edit.value)
                kept = [e for e in kw.value.elts if not (isinstance(e, ast.Constant) and e.value == attr)]
                if len(kept) != len(kw.value.elts):
                    kw.value.elts = kept
                    changed = True
    if not changed:
        raise EditError(f"no step does {edit.value} to the {edit.target}")
    drop_empty_loops(tree.body)
    return True


def _put(program: str, edit: Edit) -> str:
    """One new object placed on or in a receptacle: the routine's own, made at top level, if it has
    one (the keys' box takes the watch too), else a new one; appended after the routine's steps.
    With a `count` above one, that many, in a loop ("two apple slices in the bowl")."""
    known_class(edit.value)
    known_class(edit.target)
    if not pickupable(edit.value):
        raise EditError(f"a {edit.value} cannot be picked up; put something that can be carried")
    tree = parse_tree(program)
    dest = next((d.var for d in declarations(tree) if d.cls == edit.target and d.loop is None), None)
    taken = names_in(tree)
    lines = []
    if dest is None:
        dest = var_for(edit.target, taken)
        taken.add(dest)
        lines.append(f'{dest} = {CTOR}("{edit.target}")')
    var = var_for(edit.value, taken)
    if edit.count > 1:
        if edit.count > api.MAX_LOOP_LENGTH:
            raise EditError(f"at most {api.MAX_LOOP_LENGTH} of a kind")
        lines += [f"for {loop_var(tree.body)} in range({edit.count}):", f'    {var} = {CTOR}("{edit.value}")',
                  f"    {var}.pickup_and_place({dest})"]
    else:
        lines += [f'{var} = {CTOR}("{edit.value}")', f"{var}.pickup_and_place({dest})"]
    tree.body.extend(parse_tree("\n".join(lines)).body)
    return checked_program(tree, True, f"'{edit.text()}' would make an invalid program")


def put_made(program: str, value: str, target: str) -> str | None:
    """The program's one object of class `value` made at top level, placed on or in an object of
    class `target` (the program's own made at top level, else a new one) after its steps; None when
    the program makes no such object, or several, or it does not compile. Unlike `put` (one *new*
    object), this finishes what the program made: a toasted slice left in the toaster goes onto the
    plate, rather than a second, untoasted slice (a first plan completed by `scoping.completed`)."""
    known_class(value)
    known_class(target)
    tree = parse_tree(program)
    made = [d for d in declarations(tree) if d.cls == value]
    if len(made) != 1 or made[0].loop is not None:
        return None
    return _carried_to(tree, target, [made[0].var], f"putting the {value} on the {target}")


def _carried_to(tree: ast.Module, where: str, items: list[str], what: str) -> str | None:
    """The tree with each of `items` (variables) picked up and placed on or in the program's own
    `where` made at top level (else a new one) after its steps; None when that does not compile."""
    dest = next((d.var for d in declarations(tree) if d.cls == where and d.loop is None), None)
    lines = []
    if dest is None:
        dest = var_for(where, names_in(tree))
        lines.append(f'{dest} = {CTOR}("{where}")')
    lines += [f"{item}.pickup_and_place({dest})" for item in items]
    tree.body.extend(parse_tree("\n".join(lines)).body)
    try:
        return checked_program(tree, True, f"{what} would make an invalid program")
    except EditError:
        return None


def carry_all(program: str, where: str) -> str | None:
    """The program with everything it serves (`served_places`) carried onto or into an object of
    class `where` after its steps: a thing left on a dish the program does not place goes with its
    dish (the toast on its plate), anything else itself (the mug left in the coffee machine). The
    program's own `where` made at top level, else a new one. None when something served is made in a
    loop (one step after the loop would carry only its last) or the result does not compile; the
    program itself when all is there already. Unlike `move all` (an edit of a routine, which moves
    each placing step), this finishes a first plan whose words say "put them both on the table"."""
    known_class(where)
    catalog = load_catalog()
    tree = parse_tree(program)
    classes = {d.var: d.cls for d in declarations(tree)}
    items: list[str] = []
    for d, (_, arg) in served_places(tree):
        if d.loop is not None:
            return None
        holder = classes.get(arg or "", "")
        dish = holder and holder in catalog and catalog.get(holder).pickupable and catalog.get(holder).receptacle
        item = arg if dish and arg else d.var
        if classes.get(item) != where and (holder != where or dish) and item not in items:
            items.append(item)
    if not items:
        return program
    return _carried_to(tree, where, items, f"carrying everything to the {where}")


def poured_into(program: str, edit: Edit) -> str | None:
    """A `replace` of a vessel the routine fills with a liquid, where the appliance that fills it
    cannot hold the new one ("a cup instead of the mug" for a coffee: a CoffeeMachine takes only a
    Mug): the routine as it was, then its liquid poured into a new object of the new class. None when
    the edit is no such replacement (the old object holds no liquid, the new one cannot, the routine
    makes several of the old one or makes it in a loop) or the result does not compile.

    Found in a real `helper chat` session (results/requests/chat-0.5b-issue54-final.txt): the only
    edit the grammar allowed, `replace Mug with Cup`, was rejected, and the fallback's new part
    brewed in a mug again while the summary said "a cup"."""
    if edit.kind != "replace":
        return None
    catalog = load_catalog()
    new = in_form(edit).value
    if new not in catalog or not catalog.get(new).can_fill_with_liquid or not pickupable(new):
        return None
    if edit.target not in liquid_holders(program, {COFFEE, WATER}):
        return None
    tree = parse_tree(program)
    olds = [d for d in declarations(tree) if d.cls == edit.target]
    if len(olds) != 1 or olds[0].loop is not None:
        return None
    var = var_for(new, names_in(tree))
    tree.body.extend(parse_tree(f'{var} = {CTOR}("{new}")\n{olds[0].var}.pour({var})').body)
    try:
        return checked_program(tree, True, f"pouring into the {new} would make an invalid program")
    except EditError:
        return None


_APPLY = {"replace": _replace, "count": _count, "remove": _remove, "move": _move, "add_like": _add_like,
          "step": _step, "skip": _skip}
