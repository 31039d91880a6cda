"""What a request's words ask a program to end with: the things it puts on or in something, and
the steps it asks for on the things it names (`asked`). The HELPER graph's scope check
(`graphs.helper.scoping.completed`) adds what a first plan left out of these, with the edit language.

Read from the calibration run of the 0.5B on main (first plans, before any correction):

- "a slice of toast on a plate" was a bread slice carried to a plate, never toasted (cal-010), as
  was "could you put some toasted bread on a plate" (cal-012);
- "slice a tomato and put a slice on a clean plate" sliced and washed, and put nothing on the
  plate (cal-014); "put two slices of apple in a bowl" and "a slice of tomato in a bowl" sliced and
  stopped (cal-015, cal-018).

The rules, one for every request:

- **Placed.** A class right before "on"/"in"/... and a receptacle right after it (past an article
  and one adjective: "on a clean plate"), as `phrases.placements` reads them; "a slice" or "a
  piece" there stands for a slice of the sliceable class the request names. It is a placement
  only when a verb of placing comes before it in its sentence ("put", "set", "serve": `PLACING_VERBS`)
  or it is a piece wanted new ("a slice of toast on a plate", "two slices of apple in a bowl":
  an indefinite article or a number, `_new_thing`); otherwise the words say where a thing *is*:
  "the mug on the counter needs a wash first" (TEACh's sample coffee dialogue, whose gold program
  then got a second mug to put on the counter and failed) or a TEACh commander's "I saw a plate in
  a cabinet" (the built-in benchmark's gold programs got that plate added 13 times in 521). A
  sentence ends at ".", "!", "?", ";" or a speaker's turn. A plural with no number is how many the
  household has when a definite determiner says "all of them" ("put the newspapers on the coffee
  table", "my keys", "all the mugs": English's definite plural is every one there is, and TEACh's
  "Put All X On Y" checks exactly that); with none ("put apples in a bowl", "some apples") it is
  left alone. (Chosen on the calibration suite: the first plans of cal-050, 052, 054 put one
  newspaper, key chain or mug and the person said "you didn't put every ...".) What is placed is a slice
  (the catalog's `sliced_type`) when the words say so: "slice(s) of X", "X slice(s)", a cut step
  word, or toasting (bread is toasted a slice at a time). The number before it ("two slices") is
  how many, else one. Put in the toaster is toasted ("pop a bread slice in the toaster", cal-009,
  whose first plan picked the slice up and put it down): the toaster's step is the placement. A
  place that is the tool of a step the words name is where that step is done ("wash two plates in
  the sink"), not a placement.
- **Steps.** Toasting and cooking the words name ("toast", "toasted", "cooked", "fried"): on what
  the request names or places that can take them, the slice first; added only to a plan that
  toasts (cooks) nothing (`graphs.helper.scoping.completed`): which thing the plan cooks is the
  planner's reading ("a salad of lettuce and a cooked potato slice" cooks the potato, not the first
  thing named).
  Cooking "in boiling water" is the boiling a plan does in its pot on the stove, not a cook step. And food is served on a clean
  dish: a slice put on or in a dish that can be dirty asks for the dish washed (every TEACh goal
  that serves food wants its dish clean, as a person does; on the calibration subset's run "put two
  slices of apple in a bowl" and "a slice of tomato in a bowl" put the slices in a dirty bowl).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from helper_agent.program.semantics import affords
from helper_agent.program.steps import STEP_TOOLS, tools_for
from helper_agent.understanding.kinds import household_class, kinds_of
from helper_agent.understanding.words import (
    ALSO_MEANS,
    ARTICLES,
    CLAUSE_BREAKS,
    INDEFINITE,
    LOCATIVE,
    NUMBER_WORDS,
    PIECE_WORDS,
    PLACING_VERBS,
    SPAN_WORD,
    WHOLE_WORDS,
    class_before,
    class_from,
    exact_class,
    named_classes,
    named_steps,
    past_article,
    plain_name,
    stems,
)
from helper_agent.world.catalog import load_catalog

__all__ = ["Asked", "Placement", "asked"]

_PIECES = PIECE_WORDS
_DEFINITE = frozenset({"the", "my", "your", "our", "his", "her", "their", "these", "those", "all"})
"""Determiners that make a plural every one there is ("the apples", "my keys", "all mugs")."""
_INTO = tuple(w for w in LOCATIVE if w != "at")
_TABLE_STEPS = {"clean": "clean", "cook": "cook", "toast": "toast", "fill_up": "fill"}
"""The step words' methods as the tool table's steps (`program/steps.py`)."""
"""The words that put a thing on or in another; "at" says where a step happens ("wash the mug and
two bowls at the sink" puts nothing in the sink)."""
_MADE_STEPS = ("toast", "cook")
"""The steps whose end state the person sees on the thing served (a toasted slice, a cooked one);
cleaning is left to the planner, who writes it for the dish that needs it."""


@dataclass(frozen=True)
class Placement:
    """`count` objects of class `placed` put on or in an object of class `where`."""

    placed: str
    where: str
    count: int = 1
    # "the book", "my keys": one the person has in mind, not "a book" (any one); how the words said
    # it, not what is placed, so two placements of the same things compare equal
    definite: bool = field(default=False, compare=False)


@dataclass(frozen=True)
class Asked:
    """What the words ask a program to end with: placements, and (method, class) steps."""

    placements: tuple[Placement, ...] = ()
    steps: tuple[tuple[str, str], ...] = ()
    everything_to: str = ""  # "... and put them both on the dining table": where all that is served goes
    # switches the word leaves open: ("toggle_on", ("LightSwitch", "DeskLamp", "FloorLamp")) for "put the light on"
    either_switches: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # the classes the words quantify over all of ("all the bowls are dirty, please clean them",
    # "every desk lamp"): a step asked of them is asked of each one, not of one (`_every`)
    every: tuple[str, ...] = ()


def _sliced(cls: str) -> str:
    catalog = load_catalog()
    return (catalog.get(cls).sliced_type or cls) if cls in catalog else cls


def _count_before(words: list[str], j: int) -> int:
    """The number up to three words before index `j` ("two slices of apple"), else 1."""
    for k in (j - 1, j - 2, j - 3):
        if k >= 0 and words[k].lower() in NUMBER_WORDS:
            return NUMBER_WORDS[words[k].lower()]
    return 1


def _plural(word: str, cls: str) -> bool:
    """Whether `word`, which names `cls`, is its plural ("apples")."""
    return word.lower().endswith("s") and not cls.lower().endswith(word.lower())


_BOUNDARY = re.compile(rf"{SPAN_WORD.pattern}|[.!?;<]")


def _sentence_starts(text: str) -> list[int]:
    """For each word of `text` (as `SPAN_WORD` finds them), the index of the first word of its
    sentence: a sentence ends at ".", "!", "?", ";" or a speaker's turn ("<Commander> ...")."""
    out: list[int] = []
    start = 0
    for token in _BOUNDARY.findall(text):
        if token in ".!?;<":
            start = len(out)
        else:
            out.append(start)
    return out


def _new_thing(lower: list[str], start: int, j: int) -> bool:
    """Whether the thing right before index `j` is wanted new: its nearest article or number (within
    its sentence, from `start`) is indefinite or a number ("a slice of toast on a plate", "two slices
    of apple in a bowl"), not "the" ("the bread slice in the fridge" is one that is there)."""
    for k in range(j - 1, max(start, j - 6) - 1, -1):
        if lower[k] in INDEFINITE or lower[k] in NUMBER_WORDS or lower[k] == "some":
            return True
        if lower[k] in ARTICLES or lower[k] in ("this", "that", "my", "your"):
            return False
    return False


def _definite_plural(lower: list[str], j: int, placed: str) -> bool:
    """Whether the words before index `j` are a definite plural of `placed`: "the apples", "my
    keys", "all mugs". Not with a word between ("the dirty mugs" are some of them, which ones the
    words leave to the household's state)."""
    if not _plural(lower[j - 1], placed) or j < 2:
        return False
    if lower[j - 2] in _DEFINITE:
        return True
    # a two-word name: "the remote controls"
    return j >= 3 and lower[j - 3] in _DEFINITE and exact_class(" ".join(lower[j - 2:j])) == placed


_AUXILIARIES = frozenset({"should", "must", "can", "could", "will", "would", "to", "need", "needs", "be", "is", "are",
                          "has", "have", "got", "gets"})
"""Words between a thing and its verb of placing ("the eggs should go in", "the plates need to go
on"): English's auxiliaries and modals, a closed class."""


def _subject_end(lower: list[str], stemmed: list[set[str]], j: int) -> int:
    """Where the thing placed ends, for the locative word at `j`: `j` itself ("put the book on"),
    or, when a verb of placing stands right before `j`, the index of that verb past the auxiliaries
    before it ("the book goes on the desk", "the eggs should go in the pot", "toast served on a
    plate": the thing is the subject). Chosen on the calibration suite: cal-053 and cal-058 named
    their placements this way and no reading saw them."""
    if not (stemmed[j - 1] & set(PLACING_VERBS)):
        return j
    k = j - 1
    while k > 0 and lower[k - 1] in _AUXILIARIES:
        k -= 1
    return k if k > 0 else j


_TOGGLE_VERBS = frozenset({"turn", "switch", "flip", "put", "get"})


def _switches(text: str, present: Collection[str]) -> tuple[list[tuple[str, str]], list[tuple[str, tuple[str, ...]]]]:
    """The switches the words ask for, as (toggle_on | toggle_off, the household's class): a clause
    with a verb of switching and the particle "on" or "off" right after it or at the clause's end
    ("switch the TV on", "turn off the lamp"), of the first class it names that can be switched. Not
    a class whose word names others too (`words.ALSO_MEANS`: "the light"), whose switch is the
    planner's reading. Why: "switch the TV on" (calibration cal-060) came back as walks and no
    switch. Second, those the word leaves open, as (toggle_on | toggle_off, the household's classes
    it may mean): "put the light on" where a light switch, a desk lamp and a floor lamp are, which any
    one of them does as the words go (`outcome` says so, and names the others: cal-062)."""
    catalog = load_catalog()
    out: list[tuple[str, str]] = []
    either: list[tuple[str, tuple[str, ...]]] = []
    for clause in CLAUSE_BREAKS.split(text):
        words = SPAN_WORD.findall(clause)
        lower = [w.lower() for w in words]
        verb = next((i for i, w in enumerate(lower) if w in _TOGGLE_VERBS), None)
        if verb is None:
            continue
        particle = next((w for i, w in enumerate(lower) if w in ("on", "off") and (i == verb + 1 or i == len(lower) - 1)),
                        None)
        if particle is None:
            continue
        open_word: tuple[str, ...] = ()  # "the light": a later class may say which ("the desk light")
        for cls in named_classes(" ".join(words[verb + 1:])):
            if cls in ALSO_MEANS:
                open_word = open_word or tuple(dict.fromkeys(
                    c for c in (cls, *(k for also in ALSO_MEANS[cls] for k in (also, *kinds_of(also, present))))
                    if c in present and c in catalog and catalog.get(c).toggleable))
                continue
            if cls not in catalog or not catalog.get(cls).toggleable:
                continue
            open_word = ()
            if cls not in present and len(kinds_of(cls, present)) > 1:
                # "the lamp" in a room with a desk lamp and a floor lamp: which one is the planner's reading
                open_word = tuple(kinds_of(cls, present))
                break
            out.append((f"toggle_{particle}", household_class(cls, present)))
            break
        if open_word:
            either.append((f"toggle_{particle}", open_word))
    return out, either


_ASSEMBLED = {"salad": 0, "sandwich": 2}
"""Dishes put together from the slices of the foods the words name, served on a plate, and how many
toasted bread slices hold them (TEACh's Salad and Sandwich, as `scope.DISH_STEPS` reads the words)."""


def _assembled(lower: list[str], named: Sequence[str], found: Sequence[Placement],
               present: Collection[str]) -> list[Placement]:
    """The placements a salad or a sandwich the words ask for is made of: a slice of each sliceable
    food named (bread aside) on a plate, and for a sandwich two bread slices (toasted: `asked`), less
    those the words place there themselves; [] when the words name no such dish, name no food for
    it, or place something else on a dish already.
    Calibration cal-063/064/065 ("make a salad with lettuce and tomato") sliced the foods and left
    the slices where they were cut."""
    dish = next((d for d in _ASSEMBLED if any(w.startswith(d) for w in lower)), None)
    catalog = load_catalog()
    served = [p for p in found if p.where in ("Plate", "Bowl")]
    if dish is None:
        return []
    plate = next((d for d in ("Plate", "Bowl") if d in present), "Plate")
    wholes = dict.fromkeys(c.removesuffix("Sliced") for c in named)
    foods = [c for c in wholes if c in catalog and catalog.get(c).sliceable and c != "Bread"]
    if not foods:
        return []
    out = [Placement(household_class(_sliced(c), present), plate) for c in foods]
    if _ASSEMBLED[dish]:
        out.insert(0, Placement("BreadSliced", plate, _ASSEMBLED[dish]))
    if any(p.placed not in {o.placed for o in out} for p in served):
        return []  # something else is put on the dish already: what the dish holds is the words' reading
    # "a salad of 2 lettuce slices and 1 tomato slice, served on a plate" (the built-in benchmark's
    # wording): "served on" placed the last food named; the dish holds the others too
    return [p for p in out if p.placed not in {s.placed for s in served}]


_ALL_OF = r"\b(?:all|every|each)\s+(?:of\s+)?(?:the\s+|my\s+|your\s+|these\s+|those\s+)?"
"""English's universal quantifiers before a noun: "all the bowls", "every mug", "each of the lamps"."""


def _every(text: str, cls: str) -> bool:
    """Whether the words quantify over all of `cls` ("all the plates", "every loaf of bread", "each
    desk lamp"). Chosen on the built-in benchmark's valid_seen dialogues (issue 62: "all the bowls
    are dirty, please clean them" was read as one bowl to clean)."""
    name = r"\s+".join(re.escape(w) for w in plain_name(cls).split())
    return re.search(_ALL_OF + rf"(?:\w+\s+of\s+)?{name}(?:e?s)?\b", text, re.I) is not None


def asked(text: str, present: Collection[str], counts: Mapping[str, int] | None = None) -> Asked:
    """What `text` asks a program to end with, in a household holding `present` classes (a named
    class is the household's kind of it: `household_class`); `counts`, how many of each class the
    household holds, makes a definite plural that many (without it such a plural is left alone)."""
    words = SPAN_WORD.findall(text)
    sentence = _sentence_starts(text)
    lower = [w.lower() for w in words]
    stemmed = [set(stems(w)) for w in lower]
    steps = set(named_steps(text)) | ({"toast"} if any("toast" in s for s in stemmed) else set())
    cut = bool(steps & {"slice", "toast"})
    named = named_classes(text)
    sliceable = [c for c in named if c in load_catalog() and load_catalog().get(c).sliceable]
    found: list[Placement] = []
    catalog = load_catalog()
    everything_to = ""
    for j, w in enumerate(lower):
        if w not in _INTO or not j:
            continue
        k = past_article(words, j)
        where = class_from(words, k) or class_from(words, k + 1)  # past one adjective: "a clean plate"
        if not where or where not in catalog or not catalog.get(where).receptacle:
            continue
        if (lower[j - 1] in WHOLE_WORDS and not everything_to
                and any(x & set(PLACING_VERBS) for x in stemmed[sentence[j]:j])):
            # "make me coffee and toast and put them both on the dining table" (calibration cal-068):
            # the pronoun is everything the request makes, which the words name no class for
            everything_to = household_class(where, present)
            continue
        noun = _subject_end(lower, stemmed, j)  # "the book goes on the desk": the thing is before the verb
        placed = class_before(words, noun)
        piece = any(x & set(_PIECES) for x in stemmed[max(0, noun - 4): noun])
        start = sentence[j]
        if not (any(x & set(PLACING_VERBS) for x in stemmed[start:j]) or (piece and _new_thing(lower, start, j))):
            continue  # "the mug on the counter needs a wash": where a thing is, not where it goes
        count = _count_before(lower, noun - 1)
        if placed is not None and not piece and count == 1 and _every(" ".join(words[start:noun]), placed):
            count = (counts or {}).get(household_class(placed, present), 0) or 1  # "every loaf of bread"
        if placed is None and piece and sliceable:  # "put a slice on the plate": of the sliceable class named
            placed = sliceable[0]
        elif placed is None:
            continue
        elif not piece and count == 1 and _plural(words[noun - 1], placed):
            # "put the apples in a bowl": every apple there is; "put apples in a bowl": not said
            have = (counts or {}).get(household_class(placed, present), 0)
            if not (have and _definite_plural(lower, noun, placed)):
                continue
            count = have  # "leave the mugs on the dining table" with one mug there: that one (cal-054)
        cls = _sliced(placed) if (piece or cut) else placed
        if where in STEP_TOOLS["toast"] and affords("toast", _sliced(placed)):
            steps.add("toast")  # "pop a bread slice in the toaster": put in to be toasted (cal-009)
            continue
        if where in tools_for(_TABLE_STEPS[m] for m in steps if m in _TABLE_STEPS):
            continue  # "wash two plates in the sink": where the step is done, not where they go
        if not any(p.where == household_class(where, present) for p in found):
            definite = any(lower[k] in _DEFINITE for k in range(max(start, noun - 3), noun))
            found.append(Placement(household_class(cls, present), household_class(where, present), count,
                                   definite and not _new_thing(lower, start, noun)))
    for j, w in enumerate(lower):  # "a coffee and a plate of toast" (calibration cal-067): toast on a new plate
        if w != "of" or j < 2 or not (lower[j - 2] in INDEFINITE or lower[j - 2] in NUMBER_WORDS):
            continue
        dish = exact_class(words[j - 1])
        if dish is None or dish not in catalog or not (catalog.get(dish).receptacle and catalog.get(dish).pickupable):
            continue
        count = NUMBER_WORDS.get(lower[j + 1], 1) if j + 1 < len(lower) else 1
        food = next(iter(named_classes(" ".join(words[j + 1:j + 4]))), None)
        if food is None or food not in catalog or not catalog.get(food).pickupable:
            continue
        where = household_class(dish, present)
        if not any(p.where == where for p in found):
            found.append(Placement(household_class(_sliced(food) if cut else food, present), where, count))
    served_dish = _assembled(lower, named, found, present)
    found += served_dish
    if any(p.placed == "BreadSliced" for p in served_dish):
        steps.add("toast")
    things = [p.placed for p in found] + [_sliced(c) if cut else c for c in named]
    out: list[tuple[str, str]] = []
    if any("boil" in x for x in stemmed):
        steps.discard("cook")  # "cook the potato in boiling water": the pot's boiling cooks it, not a cook step
    for method in (m for m in _MADE_STEPS if m in steps):
        target = next((c for c in things if affords(method, c) and load_catalog().get(c).pickupable), None)
        if target:
            out.append((method, target))
    if "slice" in steps:
        # "cut a potato into slices" (calibration cal-045) came back as `potato.cook()`: the thing
        # named is to end up cut (a plan that cuts it, or uses its pieces, does that:
        # `graphs.helper.scoping.completed`)
        out += [("slice", c) for c in sliceable[:1]]
    for p in found:  # food is served on a clean dish
        dish = catalog.get(p.where) if p.where in catalog else None
        if (catalog.base_type(p.placed) != p.placed and dish is not None and dish.pickupable
                and dish.dirtyable and ("clean", p.where) not in out):
            out.append(("clean", p.where))
    if "clean" in steps:
        # "the pot needs cleaning" (calibration cal-037) came back as `pot.empty()`: what the words
        # ask to wash is to end up clean (a plan that washes it does that: `graphs.helper.scoping.completed`)
        out += [("clean", c) for c in dict.fromkeys(household_class(n, present) for n in named)
                if c in catalog and catalog.get(c).dirtyable and ("clean", c) not in out]
    switches, either = _switches(text, present)
    out += [switch for switch in switches if switch not in out]
    every = tuple(c for c in dict.fromkeys(household_class(n, present) for n in named) if _every(text, c))
    return Asked(tuple(found), tuple(out), everything_to, tuple(either), every)
