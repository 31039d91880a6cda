"""What a request may change: the objects it names and the tools the steps it implies need. A
program that changes anything else goes back to the planner with the reason (`graphs.helper.nodes.validate`).

Unasked changes came from retrieved examples copied whole: "a coffee would be great right now"
got lettuce in a washed bowl, a switched-on toaster, toast beside the coffee (issue 54; 12 of the
reported suite's 46 requests with the 0.5B). The rule, one for every request:

- **Named.** The classes the request's words name (`words.named_classes`), each with the
  household's kinds of it ("lamp" -> the FloorLamp there: `kinds.py`) and its forms (a
  Tomato and its TomatoSliced, an Egg and its EggCracked).
- **Steps.** The steps the words name (`words.named_steps`: wash, slice, toast, cook, fill ...),
  a slice when a noun for a piece goes with a sliceable thing named ("a hot piece of potato":
  `PIECE_WORDS`), and a crack when what is cooked is a food the catalog cuts into one piece ("a
  cooked egg" is cracked and cooked, as TEACh's cooked egg is; `_one_piece`),
  and the steps a dish word stands for (`DISH_STEPS`: "coffee" is made in the coffee machine, a
  "sandwich" is toasted bread and sliced fillings served on a plate, "omelette" is a cracked egg cooked).
- **Needed by a step.** Each step's tools, from the table the requests benchmark scores with
  (`program/steps.py`: the knife to slice, the sink to wash, the toaster to toast, the coffee
  machine for coffee), and what a step makes or carries when the request need not name it
  (`STEP_OBJECTS`: the bread a toast is, a vessel for coffee or water, the dish a served thing
  goes on). Toasting also slices (bread is toasted a slice at a time).

What a program **changes** is every object a step acts on (picks up, places, toggles, slices,
cleans, cooks, fills, empties; `CHANGING`) and what it pours into; a receptacle something is only
put on or in is not changed, and opening is how the agent searches (as in the benchmark).

**When the rule does not apply** (`request_scope` returns None), so nothing is falsely rejected:
- the request names no object and no dish ("clean up the kitchen", "breakfast please"): its words
  leave what to change to the planner;
- the request uses a word for a whole meal or chore (`GENERIC_WORDS`: breakfast, lunch, tidy, "set
  the table" ...): what such a meal or chore holds is not in its words (a taught routine's *name*,
  "the Mo snack", is not part of what it asks: the caller passes the taught request's body);
- the request asks for a dish of ingredients (a dish word that serves: "sandwich", "salad") and
  names no food: what goes in it is the household's, not the words' ("make a sandwich" in the
  built-in benchmark's dialogues; its gold program's lettuce slice was trimmed as unasked);
- a named word has no class in the household nor a kind of it there ("put the light on" names a
  LightSwitch; a room without one means a lamp): the word says something the classes do not;
- a recalled routine (the caller's choice, `graphs.helper.nodes.validate`): a routine's program is
  what the person asked for by its name.

Chosen on the calibration suite without the LLM: every calibration case's gold program
(`tests/requests_gold.py`) passes (`tests/test_scope.py`). A TEACh dialogue (the built-in
benchmark's, TEACh's own) is a request like any other and is read by the same rule: every TfD gold
program of a generated built-in benchmark passes too (`tests/test_scope.py`; merged first without
the piece, egg, vessel and sandwich readings, the gold-answering graph's SR fell from 100 to 94.44).
An EDH dialogue is its history so far: the rule asks of a program only what that history asks.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from helper_agent.program.steps import KNIVES, tools_for, vessels
from helper_agent.program.subgoals import Subgoal, SubgoalKind
from helper_agent.understanding.kinds import household_class, kinds_of
from helper_agent.understanding.words import (
    ALSO_MEANS,
    LOCATIVE,
    PIECE_WORDS,
    SPAN_WORD,
    class_from,
    exact_class,
    named_classes,
    named_steps,
    stems,
)
from helper_agent.world.catalog import load_catalog

__all__ = ["ALSO_MEANS", "CHANGING", "DISH_STEPS", "GENERIC_WORDS", "STEP_OBJECTS", "Scope", "changed_classes", "request_scope"]

# The steps of the action API a request's step words name (`words.STEP_WORDS`), as the table's steps.
_METHOD_STEPS = {"clean": "clean", "toast": "toast", "cook": "cook", "slice": "slice", "fill_up": "fill"}

DISH_STEPS: dict[str, tuple[str, ...]] = {
    "coffee": ("coffee",), "espresso": ("coffee",), "brew": ("coffee",),
    "toast": ("toast",), "boil": ("boil",), "omelette": ("crack", "cook"), "omelet": ("crack", "cook"),
    "crack": ("crack",), "microwave": ("cook",), "water": ("water",), "drink": ("water",),
    "sandwich": ("toast", "slice", "serve"), "salad": ("slice", "serve"),
    "serve": ("serve",), "put": ("serve",),
}
"""Words for a dish or a way of making one, and the steps it is made by: the household's dishes
(TEACh's kitchen tasks), in English's words for them. "put" serves too (food put on a table goes on
a dish: calibration's "make me coffee and toast and put them both on the dining table")."""

GENERIC_WORDS = ("breakfast", "lunch", "dinner", "supper", "meal", "snack", "tidy", "chores", "set")
"""Words for a whole meal or chore ("set" as in "set the table"): what it holds is not in the words
(the rule does not apply)."""

_DISHES = ("Plate", "Bowl")


def _step_objects() -> dict[str, tuple[str, ...]]:
    return {
        "toast": ("Bread", "BreadSliced", *KNIVES),  # bread is toasted a slice at a time
        "crack": ("Egg", "EggCracked"),
        "coffee": vessels(),
        "water": vessels(),
        "fill": vessels(),
        "serve": _DISHES,
    }


STEP_OBJECTS = _step_objects()
"""What a step makes or carries that a request need not name (the rule's third part)."""

CHANGING = frozenset({SubgoalKind.PICKUP, SubgoalKind.PLACE, SubgoalKind.PUT_DOWN, SubgoalKind.TOGGLE_ON,
                      SubgoalKind.TOGGLE_OFF, SubgoalKind.SLICE, SubgoalKind.POUR, SubgoalKind.FILL_UP,
                      SubgoalKind.EMPTY, SubgoalKind.CLEAN, SubgoalKind.COOK, SubgoalKind.TOAST})
"""The subgoals that change their target (navigating, opening and closing do not)."""

_FORMS = ("Sliced", "Cracked")
_CUTS = _FORMS
SLICING = ("slice", "crack", "toast")
"""The steps that cut an object (`slice()` cracks an egg too; bread is toasted a slice at a time). A request none of whose steps cuts
does not ask for a cut form of what it names, nor for a cut: "put the apples in a bowl" (calibration
cal-056) was sliced with a knife by the 0.5B, copying a slicing example."""


def _cuts(steps: Iterable[str]) -> bool:
    return any(s in SLICING for s in steps)


def _forms(cls: str) -> set[str]:
    """A class with its whole and its cut forms that the catalog has: Tomato <-> TomatoSliced."""
    base = cls
    for suffix in _FORMS:
        if cls.endswith(suffix) and cls != suffix:
            base = cls[: -len(suffix)]
    names = set(load_catalog().names())
    return {c for c in (cls, base, *(base + s for s in _FORMS)) if c in names}


_MOVES = frozenset({SubgoalKind.PICKUP, SubgoalKind.PLACE, SubgoalKind.PUT_DOWN})


@dataclass(frozen=True)
class Scope:
    """What a request may change: the classes it names, the steps it implies, and all allowed classes;
    `places`: the named classes the words only put things on or in (`_places`)."""

    named: tuple[str, ...]
    steps: tuple[str, ...]
    allowed: frozenset[str]
    places: frozenset[str] = frozenset()

    def unmoved(self, subgoals: Sequence[Subgoal]) -> list[str]:
        """The `places` the subgoals move (pick up, put down, place) and change in no other way: "put
        the apples in a bowl" asks nothing of the bowl but to hold them (calibration cal-056 picked
        the bowl up; the benchmark counts a moved bowl as unasked). A place the program also washes
        or fills keeps its moves (the plate of a plate of toast is washed and set down)."""
        other = {s.target.object_class for s in subgoals if s.target and s.kind in CHANGING and s.kind not in _MOVES}
        moved = [s.target.object_class for s in subgoals if s.kind in _MOVES and s.target]
        return list(dict.fromkeys(c for c in moved if c in self.places and c not in other))

    def outside(self, classes: Iterable[str]) -> list[str]:
        """The classes of `classes` the request may not change, in order, once each."""
        return list(dict.fromkeys(c for c in classes if c not in self.allowed))

    def unasked_steps(self, subgoals: Iterable[Subgoal]) -> list[str]:
        """The steps (methods) of `subgoals` no step of the request asks for: a cut (`slice`) when
        none of its steps cuts (`SLICING`); the other steps are how named things are made ready
        (the mug of a coffee is washed first), so they are not judged."""
        cuts = any(sub.kind == SubgoalKind.SLICE for sub in subgoals)
        return ["slice"] if cuts and not _cuts(self.steps) else []

    def reason(self, outside: Sequence[str], steps: Sequence[str] = (), unmoved: Sequence[str] = ()) -> str:
        """The planner's retry message for a program that changes `outside` (or does `steps`, or moves
        the places of `unmoved`)."""
        if not outside and not steps and unmoved:
            return (f"the request only puts things on or in the {' or '.join(unmoved)}; leave it where it is and "
                    "change only what the request asks for")
        if not outside:
            return (f"the request does not ask to {' or '.join(steps)} anything; leave that out and change only "
                    "what the request asks for")
        them = " or ".join(outside)
        it = "it" if len(outside) == 1 else "them"
        return (f"the request does not mention {them}, and no step it asks for needs {it}; leave {it} out and "
                "change only what the request asks for")


def _there(cls: str, present: Collection[str]) -> bool:
    """Whether the household holds the class, a form of it (a Bread for a BreadSliced) or a kind of it."""
    return any(f in present or kinds_of(f, present) for c in (cls, *ALSO_MEANS.get(cls, ())) for f in _forms(c))


def _sliceable(cls: str) -> bool:
    catalog = load_catalog()
    return cls in catalog and catalog.get(cls).sliceable


def _food(cls: str) -> bool:
    """Whether the catalog counts `cls` (or the whole it is cut from) as food."""
    catalog = load_catalog()
    return cls in catalog and "Food" in catalog.get(catalog.base_type(cls)).simbot_classes


def _one_piece(cls: str) -> bool:
    """Whether the catalog cuts `cls` into exactly one piece (an Egg into its EggCracked: cracking):
    such a food is cooked as that piece, so a request to cook it asks for the cut (cooking a potato
    does not: it cuts into eight slices, and a whole potato cooks)."""
    catalog = load_catalog()
    return cls in catalog and catalog.get(cls).sliceable and catalog.get(cls).slice_count == 1


def _words(text: str) -> set[str]:
    return {s for w in SPAN_WORD.findall(text) for s in stems(w)}


def request_scope(text: str, present: Collection[str]) -> Scope | None:
    """What `text` (a request, with any feedback on it) may change in a household holding `present`
    classes; None when the rule does not apply (see the module docstring)."""
    words = _words(text)
    if words & set(GENERIC_WORDS):
        return None
    named = named_classes(text)
    if any(not _there(c, present) for c in named):
        return None
    served = [w for w, dish in DISH_STEPS.items() if "serve" in dish and w not in ("serve", "put") and w in words]
    if served and not any(_food(c) for c in named):
        return None  # "make a sandwich": what goes in it is not in the words
    steps = [_METHOD_STEPS[m] for m in named_steps(text) if m in _METHOD_STEPS]
    steps += [s for w, dish in DISH_STEPS.items() if w in words for s in dish]
    if not named and not any(w in words for w in DISH_STEPS if w not in ("serve", "put", "drink")):
        return None
    if any(c.endswith("Sliced") for c in named) or (words & set(PIECE_WORDS) and any(_sliceable(c) for c in named)):
        steps.append("slice")  # "a hot piece of potato" is a PotatoSliced, as "a potato slice" is
    if "cook" in steps and any(_one_piece(c) for c in named):
        steps.append("crack")  # "a cooked egg" is an egg cracked and cooked (TEACh's Omelette)
    steps = list(dict.fromkeys(steps))
    allowed: set[str] = set()
    cuts = _CUTS if _cuts(steps) else ()
    for cls in named:
        for form in {f for c in (cls, *ALSO_MEANS.get(cls, ())) for f in _forms(c)}:
            if form == cls or not form.endswith(_FORMS) or form.endswith(cuts):
                allowed |= {form, *kinds_of(form, present)}
    allowed |= tools_for(s for s in steps if s != "serve")
    allowed |= {c for s in steps for c in STEP_OBJECTS.get(s, ())}
    # a vessel a step carries ("make a coffee in the mug": the mug goes to the coffee machine) is no mere place
    carried = {c for s in steps if s != "serve" for c in STEP_OBJECTS.get(s, ())}
    return Scope(tuple(named), tuple(steps), frozenset(allowed), _places(text, present) - carried)


def _places(text: str, present: Collection[str]) -> frozenset[str]:
    """The classes (as the household's kinds) that every mention of comes right after "on"/"in"/...
    (past an article and one adjective: "in a clean bowl"): what the words only put things on or in."""
    words = SPAN_WORD.findall(text)
    after: set[str] = set()
    elsewhere: set[str] = set()
    i = 0
    while i < len(words):
        found = class_from(words, i)
        if not found:
            i += 1
            continue
        lead = [w.lower() for w in words[max(0, i - 3):i]]
        located = any(w in LOCATIVE for w in lead[-3:]) and not any(w in ("and", "then") for w in lead)
        (after if located else elsewhere).add(found)
        i += 2 if exact_class(" ".join(words[i:i + 2])) == found and i + 1 < len(words) else 1
    return frozenset(household_class(c, present) for c in after - elsewhere)


def changed_classes(subgoals: Iterable[Subgoal]) -> list[str]:
    """The classes a compiled program changes (`CHANGING` targets, and what it pours into), in order."""
    out: list[str] = []
    for sub in subgoals:
        if sub.kind in CHANGING and sub.target is not None:
            out.append(sub.target.object_class)
        if sub.kind == SubgoalKind.POUR and sub.receptacle is not None:
            out.append(sub.receptacle.object_class)
    return list(dict.fromkeys(out))
