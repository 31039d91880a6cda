"""What a request asked that the household does not show after the agent acted: read the request
(`asked.asked`: its placements and the steps its words name) and compare it with the objects.

Why: in the app every subgoal of "put the pillow in the vase" was marked done and the agent asked
"Is the task completed to your satisfaction?"; nothing said the pillow was not in the vase, and a
person who trusts the page presses "done" (issue 63). The agent says what it sees first:
"The pillow is not in the vase." A person still answers the question; this is the agent's own
account, read from the household it acted on, never the benchmark's checker.

One rule per kind of thing asked, each read from the objects' metadata (TEACh's names):

- a placement (`Placement`: `count` of `placed` on or in a `where`): that many objects of the class
  (or a kind of it) have an object of `where`'s class among their `parentReceptacles`;
- coffee and a watered plant (words, not classes): a mug or cup filled with coffee; a house plant
  filled with water; a dish made by cracking (`scope.DISH_STEPS`: an omelette is a cracked egg,
  cooked): the cracked egg exists and is cooked;
- boil (the word, not a program step): a cookable object of a class the request names is boiled;
- slice: an object of the class is sliced, or its pieces exist; clean: one of the class is not
  dirty (of those the request could mean, one is enough); cook and toast: one is cooked;
  toggle_on / toggle_off: one is (not) toggled.

Only what the words name is checked, so the statement can be wrong only where the reading is; a
request the reading finds nothing in (`asked` is empty) gets no statement.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from helper_agent.understanding.asked import Asked, asked
from helper_agent.understanding.kinds import kinds_of
from helper_agent.understanding.scope import DISH_STEPS, STEP_OBJECTS
from helper_agent.understanding.words import named_classes, plain_name
from helper_agent.world.catalog import load_catalog

__all__ = ["Lack", "lacks", "others", "preposition", "read_request", "thing_name", "unmet", "unmet_sentence"]

_STATE_CHECKS: dict[str, tuple[str, bool, str]] = {
    "clean": ("isDirty", False, "is not clean"),
    "cook": ("isCooked", True, "is not cooked"),
    "toast": ("isCooked", True, "is not toasted"),
    "toggle_on": ("isToggled", True, "is not switched on"),
    "toggle_off": ("isToggled", False, "is not switched off"),
    "fill_up": ("isFilledWithLiquid", True, "is not filled"),
}
"""A step, the metadata flag it makes and its value, and what the person reads when none has it."""


_DISH_CHECKS: tuple[tuple[str, Callable[[Sequence[Mapping[str, Any]]], bool], str, str], ...] = (
    (r"\bcoffees?\b(?!\s+(?:machine|maker|table|mug|cup))",
     lambda objects: any(o.get("simbotIsFilledWithCoffee") for o in objects), "There is no coffee in a mug or a cup.",
     "coffee"),
    (r"\bwater(?:s|ed|ing)?\s+(?:the\s+|my\s+|a\s+)?(?:house\s*)?plants?\b|\bplants?\b.*\b(?:water(?:s|ed|ing)?|thirsty|dry)\b",
     lambda objects: not [o for o in objects if o.get("objectType") == "HousePlant"]
     or any(o.get("isFilledWithLiquid") for o in objects if o.get("objectType") == "HousePlant"),
     "The plant is not watered.", "water"),
)
"""Words for what the embedded world makes that no class names: coffee (a mug or cup filled with
coffee) and a watered plant (a house plant filled with water); a request that says the word asks for it.
Each: the words' pattern, the check, the sentence, and the step (`program/steps.py`'s name) that makes it."""


@dataclass(frozen=True)
class Lack:
    """One thing a request asked that the household does not show: the sentence the person reads,
    and what would meet it, as a tuple a step-wise method can act on (`understanding/parts.py`):

    - `("place", placed, where, count)`: `count` of `placed` on or in a `where`;
    - `("served_dirty", placed, where)`: they are, on a dish that is not clean;
    - `("slice", cls)`, `(method, cls)` for a state step (`clean`, `cook`, `toast`, `toggle_on`,
      `toggle_off`, `fill_up`) no object of `cls` shows;
    - `("every", method, cls, count)`: the words asked it of every one (`Asked.every`) and `count`
      do not show it;
    - `("serve", cls, where, method)`: what the request makes (`method`: toast, cook) is not where
      "them" were to go;
    - `("switch", method, *classes)`: none of the things the word may mean is switched;
    - `("coffee",)`, `("water",)`: the dish words of `_DISH_CHECKS`;
    - `("crack", "cook" | "")`: the egg of a dish made by cracking is not cracked (or not cooked);
    - `("boil", cls)`: a food the words name is not boiled."""

    sentence: str
    want: tuple[str, ...]


def read_request(request: str, objects: Sequence[Mapping[str, Any]], present: Collection[str] | None = None) -> Asked:
    """The request read against the household (`asked`), once for `unmet` and `others`: a definite
    plural ("the apples") is every one the household holds, as the planner reads it."""
    types = set(present) if present is not None else {str(o.get("objectType")) for o in objects}
    return asked(request, types, Counter(str(o.get("objectType", "")) for o in objects))


def _cracked(request: str, objects: Sequence[Mapping[str, Any]]) -> list[Lack]:
    """A dish word made by cracking (`scope.DISH_STEPS`: "omelette" is a cracked egg cooked, "crack an
    egg"): the piece cracking makes exists, and is cooked when the dish's steps cook it."""
    whole, piece = STEP_OBJECTS["crack"][:2]
    for word, steps in DISH_STEPS.items():
        if "crack" not in steps or not re.search(rf"\b{word}s?\b", request, re.I):
            continue
        cooked = "cook" if "cook" in steps else ""
        if not _of_class(objects, piece):
            return [Lack(f"No {plain_name(whole)} is cracked.", ("crack", cooked))]
        if cooked and not any(o.get("isCooked") for o in _of_class(objects, piece)):
            return [Lack(f"The {thing_name(piece)} is not cooked.", ("crack", cooked))]
        return []
    return []


def preposition(where: str, request: str = "") -> str:
    """The preposition the person used ("in the sink", "onto the sofa") when the request has only
    one kind; else the catalog's shape: "in" for a place that opens or holds liquid (a fridge, a
    bowl), "on" for the rest (a table, a plate, a sofa)."""
    said = {("in" if w in _IN_WORDS else "on") for w in re.findall(r"\b(?:into|inside|in|onto|on)\b",
                                                                     request.lower())}
    if len(said) == 1:
        return said.pop()
    catalog = load_catalog()
    if where not in catalog:
        return "on"
    kind = catalog.get(where)
    return "in" if kind.openable or kind.can_fill_with_liquid else "on"


_IN_WORDS = frozenset({"in", "into", "inside"})


def _of_class(objects: Sequence[Mapping[str, Any]], cls: str) -> list[Mapping[str, Any]]:
    classes = {cls, *kinds_of(cls, {str(o.get("objectType")) for o in objects})}
    return [o for o in objects if o.get("objectType") in classes]


def _on(objects: Sequence[Mapping[str, Any]], placed: str, where: str,
        clean_only: bool = False) -> list[Mapping[str, Any]]:
    """The objects of `placed`'s class on or in one of `where`'s class (a clean one, with `clean_only`)."""
    places = {str(o.get("objectId")) for o in _of_class(objects, where) if not (clean_only and o.get("isDirty"))}
    return [o for o in _of_class(objects, placed) if places & set(o.get("parentReceptacles") or [])]


def _placement_met(objects: Sequence[Mapping[str, Any]], placed: str, where: str, count: int) -> bool:
    return len(_on(objects, placed, where)) >= count


def thing_name(cls: str) -> str:
    """A class as a person names the thing: a piece as what it was cut from ("BreadSliced" -> "bread
    slice", "EggCracked" -> "cracked egg"), the rest as `plain_name` says it."""
    catalog = load_catalog()
    base = catalog.base_type(cls) if cls in catalog else cls
    if base == cls:
        return plain_name(cls)
    return f"cracked {plain_name(base)}" if cls.endswith("Cracked") else f"{plain_name(base)} slice"


def _listed(phrases: Sequence[str]) -> str:
    """ "the desk lamp", "the desk lamp and the floor lamp", "the light switch, ... and the floor lamp"."""
    return phrases[0] if len(phrases) == 1 else ", ".join(phrases[:-1]) + " and " + phrases[-1]


def _at(where: str, request: str) -> str:
    """Where a thing goes, as the person reads it: "on the dining table", "in the sink basin"."""
    return f"{preposition(where, request)} the {plain_name(where)}"


def _toggled(objects: Sequence[Mapping[str, Any]], cls: str, method: str) -> list[Mapping[str, Any]]:
    """The objects of `cls` in the state `method` (toggle_on / toggle_off) makes."""
    return [o for o in _of_class(objects, cls) if bool(o.get("isToggled")) is (method == "toggle_on")]


def _sliced(objects: Sequence[Mapping[str, Any]], cls: str) -> bool:
    catalog = load_catalog()
    piece = catalog.get(cls).sliced_type if cls in catalog else None
    return any(o.get("isSliced") for o in _of_class(objects, cls)) or bool(piece and _of_class(objects, piece))


def unmet(request: str, objects: Sequence[Mapping[str, Any]], reading: Asked | None = None,
          present: Collection[str] | None = None) -> list[str]:
    """What the request asked that the objects do not show, one plain sentence each ("The pillow
    is not in the vase."), in the order asked; empty when everything is met or nothing was read.
    `reading`: the request already read (`read_request`), else it is read here against the objects."""
    return list(dict.fromkeys(lack.sentence for lack in lacks(request, objects, reading, present)))


def lacks(request: str, objects: Sequence[Mapping[str, Any]], reading: Asked | None = None,
          present: Collection[str] | None = None) -> list[Lack]:
    """`unmet`'s sentences with what would meet each (`Lack.want`), in the order asked, once each."""
    reading = reading if reading is not None else read_request(request, objects, present)
    out: list[Lack] = []
    catalog = load_catalog()
    served: set[str] = set()  # dishes whose cleanness the placement's check already said
    for p in reading.placements:
        where = _at(p.where, request)
        if not _placement_met(objects, p.placed, p.where, p.count):
            out.append(Lack(f"Not all {p.count} {thing_name(p.placed)}s are {where}." if p.count > 1 else
                            f"The {thing_name(p.placed)} is not {where}.", ("place", p.placed, p.where, str(p.count))))
        elif ("clean", p.where) in reading.steps and len(_on(objects, p.placed, p.where, clean_only=True)) < p.count:
            # food is served on a clean dish: on a dirty plate while another is clean is not that (cal-073)
            out.append(Lack(f"The {plain_name(p.where)} the {thing_name(p.placed)} is {preposition(p.where, request)} "
                            "is not clean.", ("served_dirty", p.placed, p.where)))
            served.add(p.where)
    for method, cls in reading.steps:
        if method == "slice":
            if not _sliced(objects, cls):
                out.append(Lack(f"The {plain_name(cls)} is not sliced.", ("slice", cls)))
            continue
        check = _STATE_CHECKS.get(method)
        things = _of_class(objects, cls)
        if check is None or (method == "clean" and cls in served):
            continue
        flag, value, says = check
        if not things:
            if cls in catalog and catalog.base_type(cls) != cls:
                # "a couple of cooked potato slices" with no potato cut: nothing the step could have
                # been done to (calibration cal-025, whose plan cooked no slice and said nothing)
                out.append(Lack(f"No {thing_name(cls)} {says.replace('is not ', 'is ')}.", (method, cls)))
            continue
        left = [o for o in things if bool(o.get(flag)) is not value]
        if cls in reading.every and left:  # "all the bowls are dirty, please clean them": each one
            out.append(Lack(f"Not every {thing_name(cls)} {says.replace('is not ', 'is ')}.",
                            ("every", method, cls, str(len(left)))))
        elif not any(bool(o.get(flag)) is value for o in things):
            out.append(Lack(f"The {thing_name(cls)} {says}.", (method, cls)))
    if reading.everything_to:  # "... and serve them on a plate": what the request makes goes there
        for method, cls in reading.steps:
            if method in ("toast", "cook") and _of_class(objects, cls) and not _on(objects, cls, reading.everything_to):
                out.append(Lack(f"The {thing_name(cls)} is not {_at(reading.everything_to, request)}.",
                                ("serve", cls, reading.everything_to, method)))
    for method, classes in reading.either_switches:  # "put the light on": any one of them does
        if not any(_toggled(objects, c, method) for c in classes):
            state = "on" if method == "toggle_on" else "off"
            out.append(Lack(f"None of {_listed([f'the {thing_name(c)}' for c in classes])} is switched {state}."
                            if len(classes) > 1 else
                            f"The {thing_name(classes[0])} is not switched {state}.", ("switch", method, *classes)))
    for pattern, holds, says, step in _DISH_CHECKS:  # what the embedded world makes that no class names
        if re.search(pattern, request, re.I) and not holds(objects):
            out.append(Lack(says, (step,)))
    out += _cracked(request, objects)
    if re.search(r"\bboil(?:s|ed|ing)?\b", request, re.I):  # boiling is no program step: read from the word
        for cls in named_classes(request):
            things = [o for o in _of_class(objects, cls) if o.get("cookable")]
            if things and not any(o.get("simbotIsBoiled") for o in things):
                out.append(Lack(f"The {plain_name(cls)} is not boiled.", ("boil", cls)))
    return list(dict.fromkeys(out))


def others(request: str, objects: Sequence[Mapping[str, Any]], reading: Asked | None = None,
           present: Collection[str] | None = None) -> list[str]:
    """What the request's words are met without, which the person may have meant too: one sentence
    each, in the order asked; empty when there is nothing else of the kind.

    - "the book goes on the desk" with a second book on the shelf: "Another book is not on the
      desk." (a definite singular where the household holds several; "a book" asks for any one);
    - "put the light on" where the desk lamp is on and the floor lamp off: "The floor lamp is still
      off." (a word that several of the household's things answer to).

    Why: the words were done, the person wanted every one (calibration cal-053, cal-057, cal-062),
    and the agent asked "is it done?" saying nothing. These are said with the question, after what
    is unmet; they are no claim that something asked is undone."""
    reading = reading if reading is not None else read_request(request, objects, present)
    out: list[str] = []
    for p in reading.placements:
        if p.count != 1 or not p.definite or not _placement_met(objects, p.placed, p.where, 1):
            continue
        placed_ids = {str(o.get("objectId")) for o in _on(objects, p.placed, p.where)}
        rest = [o for o in _of_class(objects, p.placed) if str(o.get("objectId")) not in placed_ids]
        if rest:
            where = _at(p.where, request)
            name = thing_name(p.placed)
            out.append(f"Another {name} is not {where}." if len(rest) == 1 else
                       f"{len(rest)} more {name}s are not {where}.")
    switches = [(m, (c,)) for m, c in reading.steps if m in ("toggle_on", "toggle_off")]
    for method, classes in [*switches, *reading.either_switches]:
        if not any(_toggled(objects, c, method) for c in classes):
            continue  # unmet says so
        left = [f"the other {thing_name(c)}" if done else f"the {thing_name(c)}"
                for c in classes
                if len(done := _toggled(objects, c, method)) < len(_of_class(objects, c))]
        if left:
            names = _listed(left)
            state = "off" if method == "toggle_on" else "on"
            out.append(f"{names[:1].upper()}{names[1:]} {'is' if len(left) == 1 else 'are'} still {state}.")
    return list(dict.fromkeys(out))


def unmet_sentence(lacks: Sequence[str], remarks: Sequence[str] = ()) -> str:
    """The statement before the question: "Not done yet: the pillow is not in the vase." ("" when
    nothing is unmet), then what else of the kind is left (`others`: "Another book is not on the
    desk.")."""
    said: list[str] = []
    if lacks:
        first, *rest = lacks
        said = ["Not done yet: " + " ".join([first[:1].lower() + first[1:], *rest])]
    return " ".join([*said, *remarks])
