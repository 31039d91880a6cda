"""Requests the household's things cannot take: read what a request asks each named thing to do
and check it against the catalog's affordances before anything is planned.

Why: in the app, "slice the mug" washed the mug and moved it, "put the pillow in the vase" picked
the vase up and put it down, "put the dining table in the fridge" walked to the table; every
subgoal was marked done and nothing said the request was not (issue 63). The planner cannot write
what the words ask, so it writes something else; a person told the same would say why not.

The reading, one rule for every request (no list of requests):

- **Steps.** In each clause (`words.CLAUSE_BREAKS`), a step word (`words.named_steps`: slice,
  cut, wash, cook, toast, fill, empty, open, close) or a verb of switching with "on"/"off" asks
  that step of the first class the clause names after the word ("slice the mug": slice a Mug).
- **Placements.** In a clause with a verb of placing (`words.PLACING_VERBS`), the class named right
  before "in"/"on"/"into"/... is put in or on the class named right after it (past an article and
  one adjective): "put the pillow in the vase" puts a Pillow in a Vase.
- **Checked against the catalog** (`program.semantics`, the checks the compiler applies to a
  program, read from `world/data/object_catalog.json`): a step the class does not afford
  (`affords`), a thing that cannot be carried, a place that is not a receptacle or does not take
  the thing (`accepts`). Only classes the household holds are judged (absent ones are
  `absent.py`'s), and a class is the household's kind of it ("the lamp": its FloorLamp).

The reason is written for a person, from the affordance that fails: "a mug can't be sliced", "a
vase can't hold anything", "a dining table can't be picked up", "a microwave can't hold a house
plant". A request is infeasible when one thing it asks cannot be done; the other parts are not
attempted either (the person decides what to ask instead).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from helper_agent.program.semantics import accepts, affords
from helper_agent.understanding.kinds import household_class
from helper_agent.understanding.words import (
    ARTICLES,
    CLAUSE_BREAKS,
    NUMBER_WORDS,
    PLACING_VERBS,
    SPAN_WORD,
    STEP_WORDS,
    class_before,
    class_from,
    past_article,
    plain_name,
    request_as_task,
    stems,
)
from helper_agent.world.catalog import load_catalog

__all__ = ["Infeasible", "infeasible"]

_STEP_WORDS: dict[str, str] = {**STEP_WORDS, "dice": "slice", "shut": "close"}
"""English words for the steps of the action API (`words.STEP_WORDS`, and two words a step is
asked with but that name nothing to cut or close in a program), each to the method whose
affordance the catalog decides."""
_TOGGLE = "toggle_on"
_TOGGLE_VERBS = ("switch", "turn")
_PARTICLES = frozenset({"up", "off", "on", "out", "down"})
_NOUN_BEFORE = frozenset({*ARTICLES, *NUMBER_WORDS, "some", "my", "your", "our", "his", "her", "their", "its", "of",
                          "few", "more", "this", "that", "these", "those"})
"""Words after which a step word is a noun or an adjective ("two slices", "the washed mug"), not a
step asked for: English's determiners and number words."""
_INTO = ("in", "into", "inside", "on", "onto")
_CANNOT = {
    "slice": "can't be sliced", "clean": "can't be washed", "cook": "can't be cooked", "toast": "can't be toasted",
    "fill_up": "can't be filled", "empty": "can't be emptied", "open": "can't be opened", "close": "can't be closed",
    _TOGGLE: "can't be switched on or off", "carry": "can't be picked up",
}
"""Why not, per action API method (whose check `program.semantics` holds), for a person."""


def _a(cls: str) -> str:
    name = plain_name(cls)
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


@dataclass(frozen=True)
class Infeasible:
    """What a request asks that a thing of the household cannot take: the step (or "carry", or
    "hold" for a place), the class it is asked of, the place of a placement, and the reason."""

    step: str
    cls: str
    reason: str
    where: str = ""

    def sentence(self, request: str) -> str:
        """"I can't slice the mug: a mug can't be sliced." (what the person reads)."""
        what = request_as_task(request)
        return f"I can't {what or 'do that'}: {self.reason}."


def _step_of(word: str) -> str | None:
    return next((_STEP_WORDS[s] for s in stems(word) if s in _STEP_WORDS), None)


def _steps(clause: str) -> list[tuple[str, str, int]]:
    """(step, class, word index) for each step word of a clause and the first class named after it."""
    words = SPAN_WORD.findall(clause)
    lower = [w.lower() for w in words]
    out: list[tuple[str, str, int]] = []
    for i, word in enumerate(lower):
        if i and (lower[i - 1] in _NOUN_BEFORE or class_from(words, i - 1)):
            continue  # "two slices", "the washed mug", "a lettuce slice": a noun or an adjective
        step = _step_of(word)
        if step is None and word in _TOGGLE_VERBS and any(w in ("on", "off") for w in lower[i + 1:]):
            step = _TOGGLE
        if step is None:
            continue
        # The step's object follows it, past determiners, "up" (a switch's "on"/"off") and at most
        # one adjective: "slice the mug", "chop up the bowl", "wash the dirty mug", "switch on the
        # TV"; "a toasted slice on a plate" asks no slicing of the plate.
        k = i + 1
        while k < len(lower) and ((lower[k] in _PARTICLES and step == _TOGGLE) or lower[k] == "up"
                                  or lower[k] in _NOUN_BEFORE):
            k += 1
        named = class_from(words, k) or (class_from(words, k + 1) if k + 1 < len(words) else None)
        if named:
            out.append((step, named, i))
    return out


def _placements(clause: str) -> list[tuple[str, str, str]]:
    """(thing, place, "in" or "on") for each placement a clause with a verb of placing asks for."""
    words = SPAN_WORD.findall(clause)
    lower = [w.lower() for w in words]
    if not any(set(stems(w)) & set(PLACING_VERBS) for w in lower):
        return []
    out: list[tuple[str, str, str]] = []
    for j, word in enumerate(lower):
        if word not in _INTO or not j:
            continue
        k = past_article(words, j)
        where = class_from(words, k) or class_from(words, k + 1)
        thing = class_before(words, j)
        if where and thing:
            out.append((thing, where, "in" if word in ("in", "into", "inside") else "on"))
    return out


def infeasible(request: str, present: Collection[str]) -> Infeasible | None:
    """The first thing `request` asks of a class the household holds (`present`) that the catalog
    says it cannot take, else None (see the module docstring)."""
    catalog = load_catalog()
    held = set(present)

    def here(cls: str) -> str | None:
        mine = household_class(cls, held)
        return mine if mine in held and mine in catalog else None

    for clause in CLAUSE_BREAKS.split(request):
        for step, named, _ in _steps(clause):
            cls = here(named)
            if cls is None:
                continue
            if step == _TOGGLE and any(catalog.controlled_type(t) == cls for t in catalog.names()):
                continue  # a sink basin or a burner is switched by its faucet or knob
            if not affords(step, cls):
                return Infeasible(step, cls, f"{_a(cls)} {_CANNOT[step]}")
        for named, named_where, preposition in _placements(clause):
            thing, where = here(named), here(named_where)
            if thing is None or where is None or thing == where:
                continue
            if not catalog.get(thing).pickupable:
                return Infeasible("carry", thing, f"{_a(thing)} {_CANNOT['carry']}", where)
            if not catalog.get(where).receptacle:
                return Infeasible("hold", thing, f"{_a(where)} can't hold anything", where)
            piece = catalog.get(thing).sliced_type
            if not accepts("place", thing, where) and not (piece and accepts("place", piece, where)):
                # (a whole loaf "in the toaster" is its slices: the planner cuts it first)
                return Infeasible("hold", thing, f"{_a(thing)} doesn't go {preposition} {_a(where)}", where)
    return None
