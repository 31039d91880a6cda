"""Semantic checks before execution: does each call make sense for the objects it names?

The interpreter knows the program is in the language and that every name is defined; it does not
know that a CoffeeMachine cannot be picked up or that a Toaster holds only bread slices. Those
mistakes would otherwise surface as a failed step in the world, after walking there, and cost an
execution and a correction. Here they are caught from the object catalog's affordance flags, on the
class each object resolved to (after the class mapper), and reported as one `SemanticError` sentence
the retry prompt can carry, e.g.

    line 3: 'coffee_machine.pickup()': a CoffeeMachine cannot be picked up; pick up a Mug and
    place it in the CoffeeMachine instead

What each method needs mirrors what `tools/executor.py` does with it, so no program the executor can
run is rejected:

* pickup, put_down, and the object moved by place / pickup_and_place / pour: pickupable;
* the receptacle of place / pickup_and_place: a receptacle (a Sink's contents go to its SinkBasin)
  that accepts the object, and never the object itself;
* open / close: openable; toggle_on / toggle_off: toggleable;
* slice: sliceable, or a piece of a sliceable type (the executor slices the whole one);
* fill_up: pickupable, holds liquid, fits in a SinkBasin (it is filled under the faucet);
* empty: pickupable and holds liquid (it is poured out into the sink);
* clean: pickupable and fits in a SinkBasin (it is rinsed there);
* cook: cookable, pickupable, and fits in a Microwave or a Pan (the executor's two ways);
* toast: a BreadSliced or anything else the Toaster takes, or a Bread (the executor slices it);
* pour: the target holds liquid or is a receptacle.

Attributes are checked as the method they stand for ("clean" as clean(), ...), except "sliced" on a
piece and attributes the program's own call on that object replaces (the compiler drops those). A
check whose flag the catalog does not give (a stand-in catalog, a list of names) is skipped.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping

from helper_agent.program import api
from helper_agent.program.classes import CatalogView, default_catalog
from helper_agent.program.errors import SemanticError, clip
from helper_agent.program.parsed import Action, ObjectDecl, ParsedProgram

# Types named first in hints, because programs use them most; the rest follow alphabetically.
_FAMILIAR = (
    "Mug", "Cup", "Plate", "Bowl", "Pot", "Pan", "BreadSliced", "TomatoSliced", "PotatoSliced", "Bread",
    "Tomato", "Potato", "Lettuce", "Apple", "Egg", "Knife", "CounterTop", "DiningTable", "SinkBasin",
    "Fridge", "Cabinet", "Microwave", "StoveBurner", "StoveKnob", "CoffeeMachine", "Toaster", "Faucet",
    "Sofa", "Desk", "SideTable", "Shelf", "Drawer", "Box", "Bed", "GarbageCan",
)
_RANK = {name: i for i, name in enumerate(_FAMILIAR)}
_HOLDS = ("place", "pickup_and_place")  # methods whose argument is a receptacle
MOVED = ("pickup", "put_down", "place", "pickup_and_place", "pour")  # methods that lift the object
UNCHECKED = ("go_to",)  # methods any object affords


def familiar(names: Iterable[str], n: int = 3) -> list[str]:
    """Up to `n` of `names`, the commonly used ones first."""
    return sorted(set(names), key=lambda x: (_RANK.get(x, len(_RANK)), x))[:n]


def _either(names: list[str], joiner: str = "or") -> str:
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} {joiner} {names[-1]}"


def _article(name: str) -> str:
    return f"an {name}" if name[:1] in "AEIOU" else f"a {name}"


class _Checker:
    """Answers "why can `method` not be applied to a `cls`?" (None: it can, or the catalog cannot say)."""

    def __init__(self, view: CatalogView) -> None:
        self.view = view
        # what each method needs of its object, beyond being pickupable for the `MOVED` ones
        self.needs: dict[str, Callable[[str], str | None]] = {
            "open": self._open, "close": self._open,
            "toggle_on": self._toggle, "toggle_off": self._toggle,
            "slice": self._slice, "fill_up": self._fill_up, "empty": self._empty,
            "clean": self._clean, "cook": self._cook, "toast": self._toast,
        }

    def flag(self, cls: str, flag: str) -> bool | None:
        return self.view.flag(cls, flag)

    def lacks(self, cls: str, flag: str) -> bool:
        return self.flag(cls, flag) is False

    def fits(self, receptacle: str, obj: str) -> bool:
        return self.view.accepts(receptacle, obj) is not False

    def in_sink(self, cls: str) -> bool:
        return "SinkBasin" not in self.view or self.fits("SinkBasin", cls)

    # -- the object itself ----------------------------------------------------------------------

    def object_reason(self, method: str, cls: str) -> str | None:
        if method in MOVED and self.lacks(cls, "pickupable"):
            return self.not_pickupable(cls)
        check = self.needs.get(method)
        return check(cls) if check is not None else None

    def not_pickupable(self, cls: str) -> str:
        reason = f"{_article(cls)} cannot be picked up"
        holds = familiar(t for t in self.view.names() if self.view.accepts(cls, t)) if self.flag(cls, "receptacle") else []
        if holds:
            return f"{reason}; pick up {_article(holds[0])} and place it in the {cls} instead"
        if self.flag(cls, "toggleable"):
            return f"{reason}; switch it with toggle_on() or toggle_off() instead"
        if self.flag(cls, "openable"):
            return f"{reason}; open() or close() it instead"
        return f"{reason}; go_to() it, or pick up something that can be carried"

    def _open(self, cls: str) -> str | None:
        if not self.lacks(cls, "openable"):
            return None
        examples = _either(familiar(self.view.with_flags("openable"), 4))
        return f"{_article(cls)} cannot be opened or closed; only things such as {examples} open"

    def _toggle(self, cls: str) -> str | None:
        if not self.lacks(cls, "toggleable"):
            return None
        reason = f"{_article(cls)} cannot be switched on or off"
        switches = self.view.controllers(self.view.placement_target(cls))
        if switches:
            name = re.sub(r"(?<!^)(?=[A-Z])", "_", switches[0]).lower()
            return f"{reason}; switch its {switches[0]} instead: {name} = InteractionObject(\"{switches[0]}\")"
        examples = _either(familiar(self.view.with_flags("toggleable"), 4))
        return f"{reason}; only appliances such as {examples} switch"

    def _slice(self, cls: str) -> str | None:
        base = self.view.base_type(cls)
        if not self.lacks(cls, "sliceable") or self.flag(base, "sliceable"):
            return None
        examples = _either(familiar(self.view.with_flags("sliceable"), 4))
        return f"{_article(cls)} cannot be sliced; slice food such as {examples}, holding a Knife"

    def containers(self) -> str:
        found = [t for t in self.view.with_flags("pickupable", "can_fill_with_liquid") if self.in_sink(t)]
        return _either(familiar(found, 4))

    def _fill_up(self, cls: str) -> str | None:
        if self.lacks(cls, "can_fill_with_liquid") or not self.in_sink(cls):
            return f"{_article(cls)} cannot be filled with water at the sink; fill a {self.containers()}"
        return None

    def _empty(self, cls: str) -> str | None:
        if self.lacks(cls, "can_fill_with_liquid"):
            return f"{_article(cls)} holds no liquid to empty; empty a container such as {self.containers()}"
        return None

    def _clean(self, cls: str) -> str | None:
        if self.lacks(cls, "pickupable") or not self.in_sink(cls):
            dishes = [t for t in self.view.with_flags("pickupable", "dirtyable") if self.in_sink(t)]
            return f"{_article(cls)} cannot be washed in the sink; clean dishes such as {_either(familiar(dishes, 4))}"
        return None

    def _cook(self, cls: str) -> str | None:
        cookers = [c for c in ("Microwave", "Pan") if c in self.view]
        cookable = self.flag(cls, "cookable")
        fits = not cookers or any(self.fits(c, cls) for c in cookers)
        if cookable is not False and not self.lacks(cls, "pickupable") and fits:
            return None
        piece = self.view.sliced_type(cls)
        if piece and self.flag(piece, "cookable"):
            return f"a whole {cls} cannot be cooked; cook {_article(piece)} instead (it is sliced for you)"
        if self.flag(cls, "can_fill_with_liquid"):
            return (f"{_article(cls)} cannot be cooked; to boil something, place the {cls} on a StoveBurner "
                    "and switch on the StoveKnob")
        foods = _either(familiar(self.view.with_flags("cookable"), 4))
        return f"{_article(cls)} cannot be cooked; cook food such as {foods}"

    def _toast(self, cls: str) -> str | None:
        if cls == "Bread" or "Toaster" not in self.view or self.view.accepts("Toaster", cls) is not False:
            return None
        slices = familiar(t for t in self.view.names() if self.view.accepts("Toaster", t))
        return f"{_article(cls)} cannot be toasted; toast {_article(slices[0]) if slices else 'a BreadSliced'}"

    # -- the argument ---------------------------------------------------------------------------

    def receptacles_for(self, cls: str) -> list[str]:
        return familiar(t for t in self.view.with_flags("receptacle") if self.view.accepts(t, cls))

    def argument_reason(self, method: str, cls: str, arg: str) -> str | None:
        if method in _HOLDS:
            target = self.view.placement_target(arg)
            if self.lacks(target, "receptacle"):
                where = self.receptacles_for(cls)
                hint = f"; place the {cls} in or on {_either([_article(w) for w in where])}" if where else ""
                return f"{_article(arg)} is not a receptacle: nothing can be placed in or on it{hint}"
            if self.view.accepts(target, cls) is False:
                where = self.receptacles_for(cls)
                piece = self.view.sliced_type(cls)
                if piece and self.view.accepts(target, piece):
                    return f"{_article(arg)} cannot hold a whole {cls}; place {_article(piece)} in it instead"
                hint = f"; place it in or on {_either([_article(w) for w in where])}" if where else ""
                return f"{_article(arg)} cannot hold {_article(cls)}{hint}"
        if method == "pour" and self.lacks(arg, "can_fill_with_liquid") and self.lacks(arg, "receptacle"):
            return f"nothing can be poured into {_article(arg)}; pour into a HousePlant, a SinkBasin or a container"
        return None


def checked_methods(view: CatalogView) -> set[str]:
    """The methods with a check of their own (the tests ask that every API method is decided on)."""
    return set(_Checker(view).needs)


def _describe(decl: ObjectDecl, cls: str) -> str:
    return decl.variable or cls.lower()


def check_program(parsed: ParsedProgram, classes: Mapping[int, str], view: CatalogView | None) -> None:
    """Raise `SemanticError` for the first call in `parsed` that cannot make sense.

    `classes` maps each object index to its resolved catalog class; without a `view` (no catalog)
    only what needs no catalog is checked (an object placed in itself).
    """
    checker = _Checker(view) if view is not None else None
    decls = {d.index: d for d in parsed.objects}
    explicit = {(a.obj, a.method) for a in parsed.actions if a.obj is not None}
    for step in parsed.steps:
        if isinstance(step, ObjectDecl):
            if checker is not None:
                _check_attributes(step, classes[step.index], explicit, checker, parsed)
            continue
        if step.obj is None:
            continue
        _check_action(step, decls, classes, checker, parsed)


def _check_attributes(decl: ObjectDecl, cls: str, explicit: set[tuple[int | None, str]],
                      checker: _Checker, parsed: ParsedProgram) -> None:
    for attr in decl.attributes:
        method = api.ATTRIBUTE_METHODS[attr]
        if (decl.index, method) in explicit or (attr == "sliced" and checker.view.is_piece(cls)):
            continue
        reason = checker.object_reason(method, cls)
        if reason:
            name = _describe(decl, cls)
            reason = _mapped(decl, cls) + reason
            _raise(f"attributes=[\"{attr}\"] asks for {name}.{method}(), but {reason}; "
                   f"leave \"{attr}\" out", decl.line, 0, parsed)


def _check_action(action: Action, decls: Mapping[int, ObjectDecl], classes: Mapping[int, str],
                  checker: _Checker | None, parsed: ParsedProgram) -> None:
    assert action.obj is not None
    cls = classes[action.obj]
    if action.arg is not None and action.arg == action.obj:
        spec = api.OBJECT_METHODS[action.method]
        name = _describe(decls[action.obj], cls)
        what = "into itself" if action.method == "pour" else "in or on itself"
        _raise(f"{name}.{action.method}() would put the {cls} {what}; name another object as the "
               f"{spec.param}", action.line, action.col, parsed)
    if checker is None:
        return
    reason = checker.object_reason(action.method, cls)
    if reason is not None:
        reason = _mapped(decls[action.obj], cls) + reason
    elif action.arg is not None:
        reason = checker.argument_reason(action.method, cls, classes[action.arg])
        if reason is not None:
            reason = _mapped(decls[action.arg], classes[action.arg]) + reason
    if reason:
        _raise(reason, action.line, action.col, parsed)


def _mapped(decl: ObjectDecl, cls: str) -> str:
    """"'coffee maker' is read as CoffeeMachine, and " when the class was mapped, so the planner
    sees which catalog type its name stood for."""
    return f"{decl.object_class!r} is read as {cls}, and " if decl.object_class != cls else ""


def _raise(reason: str, line: int, col: int, parsed: ParsedProgram) -> None:
    snippet = clip(parsed.line_text(line)) if line else ""
    text = f"'{snippet}': {reason}" if snippet else reason
    raise SemanticError(text, line=line or None, col=col or None, snippet=snippet or None)



@functools.lru_cache(maxsize=1)
def _default_checker() -> _Checker | None:
    view = default_catalog()
    return _Checker(view) if view is not None else None


def affords(method: str, cls: str) -> bool:
    """Whether an object of class `cls` can take `method`: the check `compile_program` applies,
    for a decoder that offers only the calls that make sense."""
    checker = _default_checker()
    return checker is None or checker.object_reason(method, cls) is None


def accepts(method: str, cls: str, argument_cls: str) -> bool:
    """Whether `obj.method(argument)` makes sense for an object of class `cls` and an argument of
    class `argument_cls` (the receptacle takes the object; a pour target holds liquid)."""
    checker = _default_checker()
    return checker is None or checker.argument_reason(method, cls, argument_cls) is None
