"""What the person says is missing, read as the steps that add it (`program/edits/part.py` writes them).

After the first program ran, the person answers the feedback question with what is still wrong:
"no, you didn't toast the bread slice and you didn't put the bread slice on the plate", "the bowl
isn't clean", "the toast in the bowl is right, but you didn't make the coffee". The replan used to
hand that to the 0.5B planner with the last program and what it achieved; on the calibration suite
of `helper eval requests` (main 58a7598) every correction round's greedy replan repeated the
program it was about, or the part of it that had worked, and no correction fixed a request. A
correction names a step and the things it is about in a handful of English constructions, so it
is read here, deterministically, into `Missing` steps; only a correction this reader cannot read
goes to the planner.

The reading, clause by clause (a clause ends at a comma, a full stop, "and", "but" or "then"):

- **Only what is asked.** A clause counts when it says something is not so or still wanted: a
  negation ("didn't", "isn't", "no", "not", "never"), or a word of wanting or lacking ("forgot",
  "missing", "still", "need", "should", "want", "also", "too", "please"), or it is an order that
  starts with a step ("put two slices in the bowl"). "the toast in the bowl
  is right" asks for nothing and is kept as it is.
- **Steps** are the action API's step words (`understanding.words.STEP_WORDS`: wash, toast, cut,
  fill, ...) and the few words for the compound steps: brew/coffee, boil, water (a thing that is not
  a vessel), crack (a knife's cut), turn/switch on or off, and put/place/set/move with a place.
  "dirty" asks for a wash. A step word after an article is a noun ("the toast", "a slice"), so the
  class it names is read instead.
- **Things** are the classes the words name (`understanding.words.exact_class`: two-word names
  first, plurals and synonyms); "it"/"them" is the last clause's thing. The thing of a place is the
  class before the locative ("on", "in", ...), the place the class after it; "every"/"all" means
  every one in the household; a plural thing is as many as the request counts for it (else two),
  and what changes it (toast, cook, clean) is done to as many as are placed.
- **Coffee** is made in the vessel the clause or the request names (a mug or a cup), else a mug.

`MissingReading.unread` keeps the asking clauses that name a thing but no step this reader knows
("there's no bread slice"): the graph then leaves the whole correction to the planner, since a
part that does only some of what was said would be judged done when it is not.
Household facts (how many there are of "every", which vessel carries water, whether a slice exists
to be placed or must be cut first) are filled in by `for_household`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from helper_agent.program.edits.part import Missing
from helper_agent.program.edits.tree import program_steps
from helper_agent.program.steps import vessels
from helper_agent.understanding.asked import asked
from helper_agent.understanding.kinds import kinds_of
from helper_agent.understanding.words import (
    CLAUSE_BREAKS,
    NUMBER_WORDS,
    SPAN_WORD_OR_DIGIT,
    STEP_WORDS,
    exact_class,
    named_classes,
    stems,
)
from helper_agent.world.catalog import load_catalog

__all__ = ["MissingReading", "for_household", "places_of", "put_back", "read_missing", "undo_other_kinds"]

_ASKING = frozenset({"no", "not", "never", "nothing", "forgot", "forget", "forgotten", "missed", "missing", "still",
                     "need", "needs", "needed", "should", "want", "wanted", "also", "too", "please", "yet", "without",
                     "meant", "mean"})
"""Words that say a clause asks for something: English's negations and words of wanting or lacking."""
_ANSWERS = frozenset({"no", "nope", "yes", "yeah", "well", "oh", "hmm", "sorry", "ok", "okay"})
"""Words that answer the question ("no, ...") before what is missing; not a clause's own negation."""
_DETERMINERS = frozenset({"a", "an", "the", "my", "your", "some", "any", "no", "this", "that", "one", "each",
                          "every", "of"})
_LOCATIVE = frozenset({"on", "in", "onto", "into", "inside", "at"})
_PRONOUNS = frozenset({"it", "them", "they", "one"})
_EVERY = frozenset({"every", "all", "each"})
_PLACING = frozenset({"put", "place", "set", "move", "bring", "leave", "lay"})
_EXTRA_STEPS = {"crack": "slice", "boil": "boil", "brew": "coffee", "coffee": "coffee", "dirty": "clean",
                "water": "water"}
"""Step words beyond the API's own (`STEP_WORDS`): its compound steps in a person's words."""
_COFFEE_VESSELS = ("Mug", "Cup")
_PIECES = frozenset({"slice", "slices", "piece", "pieces"})


@dataclass
class MissingReading:
    """The steps a correction asks for, and the asking clauses read as no step (`unread`)."""

    missing: list[Missing] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)
    every: set[str] = field(default_factory=set)  # classes the person wants done to every one
    back: list[str] = field(default_factory=list)  # classes the person wants put back where they were

    @property
    def complete(self) -> bool:
        """Every asking clause was read, and at least one step: the part can stand for the correction."""
        return bool(self.missing or self.back) and not self.unread


_NT = frozenset({"didnt", "isnt", "arent", "wasnt", "werent", "dont", "doesnt", "havent", "hasnt", "hadnt", "cant",
                 "wont", "couldnt", "wouldnt", "shouldnt"})
"""English's negated auxiliaries written without the apostrophe ("didnt")."""


def _n_t(word: str) -> bool:
    return word.endswith(("n't", "n’t")) or word in _NT


def _asks(words: Sequence[str]) -> bool:
    return any(w in _ASKING or _n_t(w) for w in words)


def _step_of(word: str) -> str | None:
    for stem in stems(word):
        if stem in _EXTRA_STEPS:
            return _EXTRA_STEPS[stem]
        if stem in STEP_WORDS:
            return STEP_WORDS[stem]
    return None


@dataclass
class _Token:
    index: int
    kind: str  # class, step, place (a placing verb), locative, toggle (on/off after turn/switch), every, pronoun
    value: str = ""
    plural: bool = False


def _tokens(words: list[str]) -> list[_Token]:
    """The clause's words as classes, steps and the few function words a reading needs."""
    out: list[_Token] = []
    lower = [w.lower() for w in words]
    turning = False
    i = 0
    while i < len(words):
        w, prev = lower[i], lower[i - 1] if i else ""
        two = exact_class(f"{words[i]} {words[i + 1]}") if i + 1 < len(words) else None
        if two:
            out.append(_Token(i, "class", two, plural=lower[i + 1].endswith("s")))
            i += 2
            continue
        step = _step_of(w)
        piece = _piece(step, words[i + 1] if i + 1 < len(words) else "")
        if piece:  # "the cracked egg", "a sliced potato": the pieces, not a step
            out.append(_Token(i, "class", piece))
            i += 2
            continue
        if w in _PIECES and i + 2 < len(words) and lower[i + 1] == "of":
            whole = next((c for n in (2, 1) if (c := exact_class(" ".join(words[i + 2:i + 2 + n])))), None)
            kind = load_catalog().types.get(whole) if whole else None
            if kind is not None and kind.sliced_type:  # "a slice of bread", "two slices of apple"
                out.append(_Token(i, "class", kind.sliced_type, plural=w.endswith("s")))
                i += 3
                continue
        if w in ("turn", "turned", "switch", "switched"):
            turning = True
        elif w in ("on", "off") and (turning or i == len(words) - 1):
            out.append(_Token(i, "toggle", "toggle_on" if w == "on" else "toggle_off"))
        elif w in _LOCATIVE:
            out.append(_Token(i, "locative", w))
        elif w in _EVERY:
            out.append(_Token(i, "every"))
        elif w in _PRONOUNS and prev not in _DETERMINERS:
            out.append(_Token(i, "pronoun"))
        elif w in _PLACING:
            out.append(_Token(i, "place"))
        elif step == "water" and prev in ("with", "of", "some", "no", "any"):
            pass  # "fill the mug with water": the fill is the step
        elif step and (step == "coffee" or prev not in _DETERMINERS or not exact_class(words[i])):
            out.append(_Token(i, "step", step))
        elif cls := exact_class(words[i]):
            out.append(_Token(i, "class", cls, plural=w.endswith("s") and w != cls.lower()))
        i += 1
    return out


def _piece(step: str | None, word: str) -> str | None:
    """The pieces a participle of cutting names with the next word ("cracked egg" -> EggCracked)."""
    whole = exact_class(word) if step == "slice" and word else None
    kind = load_catalog().types.get(whole) if whole else None
    return kind.sliced_type if kind is not None and kind.sliced_type else None


def read_missing(feedback: str, request: str = "") -> MissingReading:
    """The steps `feedback` says are missing (see the module docstring); `request` gives the counts
    and the coffee vessel it names."""
    reading = MissingReading()
    last_thing: str | None = None
    words_all = SPAN_WORD_OR_DIGIT.findall(feedback)
    if not words_all:
        return reading
    for clause in CLAUSE_BREAKS.split(feedback):
        words = SPAN_WORD_OR_DIGIT.findall(clause)
        while words and words[0].lower() in _ANSWERS and len(words) > 1:
            words = words[1:]
        if not words or (len(words) == 1 and words[0].lower() in _ANSWERS):
            continue
        lower = [w.lower() for w in words]
        if not _asks(lower) and not (lower[0] in _PLACING or _step_of(lower[0])):  # nor an order: "put it there"
            continue
        tokens = _tokens(words)
        if _undoes(lower):  # "you shouldn't have moved the plate": put it back, not move it again
            thing = next((t.value for t in tokens if t.kind == "class"), None)
            thing = thing or (last_thing if any(t.kind == "pronoun" for t in tokens) else None)
            if thing is None:
                reading.unread.append(clause.strip())
            elif thing not in reading.back:
                reading.back.append(thing)
            last_thing = thing or last_thing
            continue
        found = _clause_steps(tokens, request, last_thing, reading)
        things = [t.value for t in tokens if t.kind == "class"]
        if not found and things and not any(t.kind in ("step", "toggle", "place", "locative") for t in tokens):
            found = _as_in_request(things[0], request)  # "no, I meant every book", "the floor lamp too"
            if found and any(t.kind == "every" for t in tokens):
                reading.every.add(things[0])
        if found:
            reading.missing.extend(m for m in found if m not in reading.missing)
            last_thing = found[0].cls
        elif things or any(t.kind == "step" for t in tokens):
            reading.unread.append(clause.strip())
        if things:
            last_thing = things[0] if not found else last_thing
    reading.missing = _as_many_as_placed(reading.missing)
    return reading


_MOVE_WORDS = frozenset("move moved moving put placed take took taken pick picked carry carried touch touched".split())
_MODAL_NOT = frozenset({"shouldn't", "shouldnt", "don't", "dont", "mustn't", "mustnt"})
_WISH = frozenset({"ask", "asked", "want", "wanted", "need", "needed", "tell", "told"})


def _undoes(lower: Sequence[str]) -> bool:
    """Whether a clause asks to undo a move rather than make one: a moving verb with "back" or
    "where it was" ("put the cup back"), under a negated modal ("you shouldn't have moved the
    plate", "don't move the mug"), or under a negated wish ("I didn't ask you to move the bowl").
    "you didn't put the slice on the plate" is none of these: a move not made, read as missing."""
    if not any(w in _MOVE_WORDS for w in lower):
        return False
    text = " ".join(lower)
    if "back" in lower or "where it was" in text or "where they were" in text:
        return True
    negated = any(_n_t(w) or w in ("not", "never") for w in lower)
    return any(w in _MODAL_NOT for w in lower) or (negated and any(w in _WISH for w in lower))


def _parent(obj: Mapping[str, Any]) -> str:
    """Where an object is: the first receptacle it is in or on, "held" when picked up, else ""."""
    if obj.get("isPickedUp"):
        return "held"
    parents = obj.get("parentReceptacles") or []
    return str(parents[0]) if parents else ""


def places_of(objects: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Where each object that can be picked up is (`_parent`): the household's record a request
    keeps of where things were when it started, so a correction can put a moved thing back."""
    return {str(o["objectId"]): _parent(o) for o in objects if o.get("pickupable") and o.get("objectId")}


def put_back(classes: Sequence[str], objects: Sequence[Mapping[str, Any]],
             start: Mapping[str, str]) -> list[Missing] | None:
    """The place steps that return each object of `classes` that moved since `start` (`places_of`
    when the request began) to the kind of receptacle it was in or on; None when an object of one
    of them did not move or its place is not known (the part could not do what the person said).

    Why: "you shouldn't have moved the plate" was read by the planner as another program about
    plates; the household's own record says where the plate was. The receptacle is written by its
    class, as every step of a part is, so it may be another one of that class (another counter)."""
    kinds = {str(o.get("objectId")): str(o.get("objectType")) for o in objects}
    out: list[Missing] = []
    for cls in classes:
        moved = [o for o in objects if o.get("objectType") == cls and str(o.get("objectId")) in start
                 and _parent(o) != start[str(o.get("objectId"))]]
        places = [kinds.get(start[str(o.get("objectId"))], "") for o in moved]
        if not moved or not all(places):
            return None
        for place in dict.fromkeys(places):
            out.append(Missing("place", cls, place=place, count=places.count(place)))
    return out


_CHANGES = frozenset({"clean", "cook", "toast", "fill_up", "empty"})


def _as_many_as_placed(missing: list[Missing]) -> list[Missing]:
    """A change to things of a class done to as many of them as the correction places: "you didn't
    toast the bread slice and you didn't put the bread slices on the plate" serves two toasted
    slices, not one toasted and one plain."""
    placed: dict[str, int] = {}
    for m in missing:
        if m.step == "place":
            placed[m.cls] = max(placed.get(m.cls, 1), m.count)
    return [Missing(m.step, m.cls, m.place, max(m.count, placed.get(m.cls, 1))) if m.step in _CHANGES else m
            for m in missing]


def _clause_steps(tokens: list[_Token], request: str, last_thing: str | None, reading: MissingReading) -> list[Missing]:
    classes = [t for t in tokens if t.kind == "class"]
    steps = [t.value for t in tokens if t.kind == "step"]
    toggles = [t.value for t in tokens if t.kind == "toggle"]
    locative = next((t for t in tokens if t.kind == "locative"), None)
    place = next((t for t in classes if locative and t.index > locative.index), None)
    before = [t for t in classes if not locative or t.index < locative.index]
    every = any(t.kind == "every" for t in tokens)
    pronoun = any(t.kind == "pronoun" for t in tokens)
    thing_token = before[0] if before else None
    thing = thing_token.value if thing_token else (last_thing if pronoun or not classes else None)
    if thing is None and place is not None and "coffee" not in steps and not any(t.kind == "place" for t in tokens):
        thing, place = place.value, None  # "you didn't slice in the bowl": no placement without a thing
        place_cls = None
    else:
        place_cls = place.value if place else None
    out: list[Missing] = []
    if "coffee" in steps:
        vessel = next((c.value for c in classes if c.value in _COFFEE_VESSELS), None) or _request_vessel(request)
        out.append(Missing("coffee", vessel))
        steps = [s for s in steps if s != "coffee"]
        if thing in _COFFEE_VESSELS or thing is None:
            thing, place_cls = None, None
    if thing is None:
        return out
    count = _count(thing, thing_token, request)
    if every:
        reading.every.add(thing)
    if toggles and _catalog_flag(thing, "toggleable"):
        out.append(Missing(toggles[0], thing))
    for step in dict.fromkeys(steps):
        if step == "place":
            continue
        if step == "water":
            if thing not in vessels():
                out.append(Missing("water", thing, place="Cup"))  # the vessel is the household's (`for_household`)
            else:
                out.append(Missing("fill_up", thing))
        elif step == "boil":
            out.append(Missing("boil", thing, place=place_cls or ""))
        else:
            out.append(Missing(step, thing, count=count))
    if place_cls and place_cls != thing and not any(m.step in ("boil", "coffee") for m in out):
        out.append(Missing("place", thing, place=place_cls, count=count))
    return out


def _as_in_request(thing: str, request: str) -> list[Missing]:
    """A correction that names a thing and no step ("no, I meant every book", "the floor lamp too,
    please"): what the request asked of that thing's kind, done to it; [] when the request asked
    nothing of it. The request is read as `asked` reads it: its placement of the class (or a kind of
    it), its switch of the class, or a switch its word leaves open among several ("put the light
    on": the light switch, a desk lamp, a floor lamp). Why: in a real chat session (issue 63,
    `results/requests/chat-0.5b-issue63b.txt`) both answers went to the planner, which repeated the
    program three times, and the agent asked the same question again having done nothing."""
    reading = asked(request, {thing, *named_classes(request)}, None)

    def same_kind(cls: str) -> bool:  # the class itself, a kind of it, or what it is a kind of
        return cls == thing or cls in kinds_of(thing) or thing in kinds_of(cls)

    for p in reading.placements:
        if same_kind(p.placed):
            return [Missing("place", thing, place=p.where)]
    for method, cls in reading.steps:
        if method in ("toggle_on", "toggle_off") and same_kind(cls):
            return [Missing(method, thing)]
    for method, classes in reading.either_switches:
        if thing in classes:
            return [Missing(method, thing)]
    return []


def _catalog_flag(cls: str, flag: str) -> bool:
    kind = load_catalog().types.get(cls)
    return bool(kind and getattr(kind, flag))


def _request_vessel(request: str) -> str:
    for word in SPAN_WORD_OR_DIGIT.findall(request):
        cls = exact_class(word)
        if cls in _COFFEE_VESSELS:
            return cls
    return "Mug"


def _count(thing: str, token: _Token | None, request: str) -> int:
    """How many of a plural thing: the number the request says before its name, else two."""
    if token is None or not token.plural:
        return 1
    words = [w.lower() for w in SPAN_WORD_OR_DIGIT.findall(request)]
    for i, w in enumerate(words):
        n = int(w) if w.isdigit() else NUMBER_WORDS.get(w)
        if n and n > 1:
            ahead = " ".join(words[i + 1:i + 5])
            if any(exact_class(part) == thing for part in _phrases(ahead)) or _names_whole(ahead, thing):
                return n
    return 2


def _phrases(text: str) -> list[str]:
    words = text.split()
    return [" ".join(words[i:i + n]) for n in (2, 1) for i in range(len(words) - n + 1)]


def _names_whole(text: str, thing: str) -> bool:
    """"two slices of apple" counts AppleSliced: the whole's name and a slice word in the words."""
    whole = thing.removesuffix("Sliced")
    return whole != thing and "slice" in text and any(exact_class(w) == whole for w in text.split())


def for_household(reading: MissingReading, objects: Sequence[Mapping[str, Any]], request: str = "") -> list[Missing]:
    """The reading's steps made concrete in this household:

    - a thing wanted done to every one (`every`) is done to as many as the household has;
    - water is carried in a vessel the request names, else one the household has;
    - a slice to be placed or changed when the household has no slice of that kind yet is cut from
      its whole first (a step's input made before the step)."""
    types = [str(o.get("objectType", "")) for o in objects]
    out: list[Missing] = []
    for m in reading.missing:
        if m.cls in reading.every:
            m = Missing(m.step, m.cls, m.place, max(1, types.count(m.cls)))
        if m.step == "water":
            m = Missing("water", m.cls, _water_vessel(types, request), m.count)
        out.append(m)
    cut = {m.cls for m in out if m.step == "slice"}
    for m in list(out):
        whole = m.cls.removesuffix("Sliced")
        if whole != m.cls and m.cls not in types and whole not in cut and whole in types:
            out.insert(0, Missing("slice", whole))
            cut.add(whole)
    return list(dict.fromkeys(out))


def _water_vessel(types: Sequence[str], request: str) -> str:
    named = [exact_class(w) for w in SPAN_WORD_OR_DIGIT.findall(request)]
    kinds = vessels()
    for cls in named:
        if cls in kinds and cls in types:
            return cls
    return next((v for v in ("Cup", "Mug", "Bowl", "Pot", "WateringCan", "Bottle") if v in types and v in kinds), "Cup")


_UNDO = {"toggle_on": "toggle_off", "toggle_off": "toggle_on"}
"""The steps a part can take back by doing their opposite."""


def _kin(a: str, b: str) -> bool:
    """Whether two classes are kinds of one class (DeskLamp and FloorLamp of Lamp: `kinds_of`)."""
    for n in range(1, 4):
        tail = "".join(re.findall(r"[A-Z][a-z]*", a)[-n:])
        if tail and tail != a and tail != b and a in kinds_of(tail) and b in kinds_of(tail):
            return True
    return False


_ADDS = re.compile(r"\b(?:too|also|as well|both|besides|in addition)\b", re.I)
"""Words that add to what was done rather than replace it."""


def undo_other_kinds(missing: Sequence[Missing], done: Sequence[str], said: str) -> list[Missing]:
    """`missing`, and the opposite of each switch an earlier round made on another kind of the class
    a missing switch is on, when no words said (`said`: the request and the correction) name that kind.

    Why: "turn on the lamp" in a living room with a desk lamp and a floor lamp switched the desk lamp
    on (the household's first kind of Lamp, `kinds.py`); the person said "no, you didn't turn
    on the floor lamp", and the part switched the floor lamp on and left the desk lamp on, a change
    nobody asked for (calibration suite of `helper eval requests`, cal-062 and cal-069). The person
    naming the other kind says which lamp "the lamp" was; the first one was a wrong reading, and a
    switch is taken back by its opposite. Only switches: a move has no single way back. Not when
    the correction says the kind is wanted besides ("the floor lamp too", "also the floor lamp", "as
    well", "both"): English's words of addition keep the first switch (a real chat session switched
    the desk lamp off after "the floor lamp too, please")."""
    if _ADDS.search(said.rsplit("\n", 1)[-1]):
        return list(missing)
    named = set(named_classes(said))
    extra: list[Missing] = []
    for m in missing:
        if m.step not in _UNDO:
            continue
        for program in done:
            try:
                steps = program_steps(program)
            except ValueError:  # EditError: a program that does not parse took no step to undo
                continue
            for cls, methods in steps.items():
                if cls != m.cls and m.step in methods and cls not in named and _kin(cls, m.cls):
                    extra.append(Missing(_UNDO[m.step], cls))
    return list(dict.fromkeys([*missing, *extra]))
