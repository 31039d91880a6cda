"""The grammar of one edit over a program (GBNF), so a model can only write an edit that fits it.

Where the routine's object is meant, only the program's own classes are admitted. What a change
lets an edit touch (the classes it names, the kinds of edit it admits) is read from the person's
words by the understanding of requests (`understanding/grounding.py`); the grammar takes that
reading as an `EditScope` and knows no English itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from helper_agent.program.edits.language import EDIT_KINDS, STEP_METHODS, Edit, EditError
from helper_agent.program.edits.tree import base_class
from helper_agent.world.catalog import load_catalog

__all__ = ["EditScope", "edit_grammar", "put_places"]


class EditScope(Protocol):
    """What one change lets an edit touch, as the grammar reads it (`Grounding` is one)."""

    @property
    def named(self) -> tuple[str, ...]: ...  # the classes the change names
    @property
    def new_classes(self) -> tuple[str, ...]: ...  # the classes an edit may bring in
    @property
    def contrast(self) -> bool: ...  # one thing in place of another
    @property
    def old_named(self) -> tuple[str, ...]: ...  # what it takes the place of
    @property
    def unwanted(self) -> tuple[str, ...]: ...  # steps the change says not to do

    def about(self, classes: Sequence[str]) -> list[str]: ...  # of `classes`, the ones the change is about
    def kinds(self) -> set[str]: ...  # the edit kinds the change admits
    def numbers_for(self, classes: Sequence[str]) -> dict[str, list[str]] | None: ...  # counts `count` may set


def _alternatives(names: Iterable[str]) -> str:
    return " | ".join(f'"{n}"' for n in names)


def edit_grammar(classes: Sequence[str], known: Sequence[str] | None = None, *, allow_task: bool = True,
                 grounding: EditScope | None = None, movers: Sequence[str] | None = None,
                 doers: Sequence[str] | None = None, rejected: Sequence[Edit] = (),
                 steps: dict[str, list[str]] | None = None) -> str:
    """GBNF for one edit over a program whose object classes are `classes` (where the routine's
    object is meant, only those are admitted; `move` only what is put somewhere, `movers`, and
    `add ... like` only what has steps, `doers`: see `program_roles`); a new class is any of `known`
    (default: the catalog), or with `grounding` only a class the change names, and the routine's
    object one the change names where it names one (`EditScope.about`). The `rejected` edits of this
    change are not admitted again (on the calibration suite the 0.5B repeated a rejected edit on
    every retry, at a higher temperature too). With `steps` (`program_steps`), `skip` names only a
    step the program does (the 0.5B wrote "skip Bowl empty" for "skip the bowls", three times over)."""
    if not classes:
        raise EditError("the program makes no objects to edit")
    known = list(known) if known is not None else load_catalog().names()
    old, movers, doers = list(classes), list(movers if movers is not None else classes), list(doers if doers is not None else classes)
    if grounding is not None:
        known = [k for k in known if k in grounding.new_classes]
        old, movers, doers = (grounding.about(c) for c in (old, movers, doers))
        if grounding.contrast:  # what something takes the place of is replaced, not moved
            movers = [m for m in movers if base_class(m) not in {base_class(o) for o in grounding.old_named}]
    places = put_places(classes, grounding, known)
    kinds = grounding.kinds() if grounding is not None else set(EDIT_KINDS)
    if grounding is not None and grounding.unwanted and steps is not None and kinds == {"skip"}:
        steps = {c: [m for m in ms if m in grounding.unwanted] for c, ms in steps.items()}
    if not allow_task:
        kinds.discard("add_task")
    numbers = grounding.numbers_for(old) if grounding is not None else None
    count_form = (" | ".join(f'"count {c} " ({_alternatives(numbers[c])})' for c in sorted(set(old)) if numbers.get(c))
                  if numbers is not None else '"count " old " " num')
    forms = [(kind, form) for kind, form in (
        ("none", '"none"'), ("count", count_form), ("remove", '"remove " old'),
        ("step", '"step " old " " method'), ("skip", _skip_form(old, steps)),
        ("replace", '"replace " old " with " new'), ("move", '"move " mover " to " new'),
        ("move_all", '"move all to " new'),
        ("add_like", '"add " new " like " doer'), ("put", '"put " new " on " place'), ("add_task", '"add task"'),
    ) if kind in kinds and form and (kind not in ("replace", "move", "move_all", "add_like", "put") or known)
        and (kind != "put" or places)
        and (kind not in ("move", "move_all") or movers) and (kind != "add_like" or doers)]
    if rejected:
        slots = {"count": ("count ", old, " ", numbers if numbers is not None else [str(n) for n in range(21)]),
                 "remove": ("remove ", old, "", [""]),
                 "step": ("step ", old, " ", STEP_METHODS),
                 "skip": ("skip ", old, " ", {c: list(steps.get(c, [])) if steps is not None else list(STEP_METHODS)
                                             for c in old}),
                 "replace": ("replace ", old, " with ", known), "move": ("move ", movers, " to ", known),
                 "move_all": ("move all to ", [""], "", known),
                 "add_like": ("add ", known, " like ", doers), "none": ("none", [""], "", [""]),
                 "put": ("put ", known, " on ", places),
                 "add_task": ("add task", [""], "", [""])}
        banned = {kind: {_slot_values(e) for e in rejected if e.kind == kind} for kind, _ in forms}
        forms = [(kind, _without(slots[kind], banned[kind]) if banned[kind] else form) for kind, form in forms]
        forms = [(kind, form) for kind, form in forms if form]
    if not forms:  # every form taken away (a contrast that names no class the routine has, say)
        forms = [("none", '"none"')]
    return "\n".join([
        f"root ::= {' | '.join(f for _, f in forms)}",
        f"old ::= {_alternatives(sorted(set(old)))}",
        *([f"mover ::= {_alternatives(sorted(set(movers)))}"] if movers else []),
        *([f"doer ::= {_alternatives(sorted(set(doers)))}"] if doers else []),
        *([f"new ::= {_alternatives(sorted(set(known)))}"] if known else []),
        *([f"place ::= {_alternatives(places)}"] if places and "put" in kinds else []),
        'num ::= [0-9] | "1" [0-9] | "20"',
        f"method ::= {_alternatives(STEP_METHODS)}",
    ]) + "\n"


def _skip_form(old: Sequence[str], steps: dict[str, list[str]] | None) -> str:
    """`skip` over `old` and any method, or (with `steps`) only the steps each class gets ("" if none)."""
    if steps is None:
        return '"skip " old " " method'
    return " | ".join(f'"skip {c} " ({_alternatives(steps[c])})' for c in sorted(set(old)) if steps.get(c))


def put_places(classes: Sequence[str], grounding: EditScope | None, known: Sequence[str]) -> list[str]:
    """Where `put` may put a new object: a receptacle the change names, else one of the program's
    (without a grounding: any receptacle of `known` or the program)."""
    catalog = load_catalog()
    holds = [c for c in dict.fromkeys(classes) if c in catalog and catalog.get(c).receptacle]
    if grounding is None:
        return sorted(set(holds) | {c for c in known if c in catalog and catalog.get(c).receptacle})
    named = [c for c in grounding.named if c in catalog and catalog.get(c).receptacle and c not in grounding.new_classes]
    return sorted(set(named or holds))


def _slot_values(edit: Edit) -> tuple[str, str]:
    """An edit's two slots in the order its line shows them (`add B like A`: B, then A)."""
    if edit.kind in ("add_like", "put"):
        return edit.value, edit.target
    if edit.kind == "count":
        return edit.target, str(edit.count)
    return edit.target, edit.value


def _without(slot: tuple[str, Sequence[str], str, Sequence[str] | dict[str, list[str]]],
             banned: set[tuple[str, str]]) -> str:
    """A form written out value by value, less the banned (first, second) pairs ("" if none is left);
    the seconds may depend on the first (a dict)."""
    prefix, firsts, mid, seconds = slot
    alts = []
    for a in sorted(set(firsts)):
        rest = [b for b in (seconds.get(a, []) if isinstance(seconds, dict) else seconds) if (a, b) not in banned]
        if rest == [""]:
            alts.append(f'"{prefix}{a}"')
        elif rest:
            alts.append(f'"{prefix}{a}{mid}" ({_alternatives(rest)})')
    return " | ".join(alts)

