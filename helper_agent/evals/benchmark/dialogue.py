"""The dialogue writer of the built-in benchmark: TEACh-style commander–driver chats for task instances.

A TEACh game opens with a short chat: the driver (the robot) asks what to do, the commander states the
task, often over several turns, answers the driver's questions and points at where things are. This
module writes such chats for the instances `families.py` builds, from phrasing templates kept as data
(`data/phrasings/*.json`):

- ``common.json``: natural names of object types ("SinkBasin" -> "sink"), plurals, articles, and the small
  talk shared by every split (greetings, acknowledgements, closings);
- ``seen.json``: task requests, location hints and clarifying questions for train and valid_seen;
- ``unseen.json``: the same intents worded differently, used only for valid_unseen, so that no
  valid_unseen request is phrased as any train request.

Everything is deterministic given the `random.Random` passed in. Utterances never contain CamelCase
type names: every object type is spoken through `natural_name`.
"""

from __future__ import annotations

import functools
import itertools
import json
import random
import re
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any

from helper_agent.evals.benchmark.families import FamilyInstance
from helper_agent.teach.instances import instruction_text

__all__ = [
    "PHRASINGS",
    "indefinite",
    "instruction_text",
    "natural_name",
    "plural",
    "request_sentences",
    "request_templates",
    "unit",
    "write_dialogue",
]

PHRASINGS: tuple[str, ...] = ("seen", "unseen")
COMMANDER = "Commander"
DRIVER = "Driver"

_PACKAGE = "helper_agent.evals.benchmark"
_DATA_DIR = "data/phrasings"
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_CAMEL_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_NUMBER_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}
_NUMBER_STYLES = ("word", "digit", "article")
_DERIVED_SLICE = re.compile(r"^(?P<base>[A-Z]\w*?)Sliced$")

Turn = tuple[str, str]


# --------------------------------------------------------------------------- data
def _load(name: str) -> dict[str, Any]:
    path = resources.files(_PACKAGE).joinpath(f"{_DATA_DIR}/{name}.json")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:  # pragma: no cover - packaging error
        raise RuntimeError(f"cannot read phrasing data {_DATA_DIR}/{name}.json: {exc}") from exc
    if not isinstance(data, dict):  # pragma: no cover - packaging error
        raise TypeError(f"{_DATA_DIR}/{name}.json must hold a JSON object")
    return data


@functools.cache
def _common() -> dict[str, Any]:
    return _load("common")


@functools.cache
def _pool(phrasing: str) -> dict[str, Any]:
    if phrasing not in PHRASINGS:
        raise ValueError(f"unknown phrasing {phrasing!r}; expected one of {', '.join(PHRASINGS)}")
    return _load(phrasing)


# --------------------------------------------------------------------------- names
@functools.cache
def natural_name(object_type: str) -> str:
    """How people say an object type: "SinkBasin" -> "sink", "CoffeeMachine" -> "coffee maker",
    "TomatoSliced" -> "tomato slice", "RemoteControl" -> "remote"; unknown types are split at their
    capitals and lower-cased ("PepperShaker" -> "pepper shaker")."""
    names: Mapping[str, str] = _common()["names"]
    if object_type in names:
        return names[object_type]
    sliced = _DERIVED_SLICE.match(object_type)
    if sliced:
        return f"{natural_name(sliced.group('base'))} slice"
    parts = _CAMEL_PARTS.findall(object_type)
    return " ".join(p.lower() for p in parts) if parts else object_type.lower()


def plural(name: str) -> str:
    """The plural of a natural name ("knife" -> "knives", "tomato" -> "tomatoes", "box" -> "boxes")."""
    overrides: Mapping[str, str] = _common()["plurals"]
    if name in overrides:
        return overrides[name]
    head, _, last = name.rpartition(" ")
    prefix = f"{head} " if head else ""
    if last in overrides:
        return prefix + overrides[last]
    if last.endswith(("s", "x", "ch", "sh", "z")):
        return f"{prefix}{last}es"
    if len(last) > 1 and last.endswith("y") and last[-2] not in "aeiou":
        return f"{prefix}{last[:-1]}ies"
    if len(last) > 1 and last.endswith("o") and last[-2] not in "aeiou":
        return f"{prefix}{last}es"
    if last.endswith("fe"):
        return f"{prefix}{last[:-2]}ves"
    return f"{prefix}{last}s"


def unit(name: str) -> str:
    """One countable item of a natural name, for "every"/"each" ("bread" -> "loaf of bread")."""
    return _common()["units"].get(name, name)


def indefinite(name: str) -> str:
    """The natural name with an indefinite article ("an apple", "a mug", "a loaf of bread")."""
    overrides: Mapping[str, str] = _common()["indefinites"]
    if name in overrides:
        return overrides[name]
    return f"{'an' if name[:1] in 'aeiou' else 'a'} {name}"


def _preposition(receptacle_type: str) -> str:
    return "in" if receptacle_type in _common()["places"]["in"] else "on"


def _place(receptacle_type: str) -> str:
    name = natural_name(receptacle_type)
    return indefinite(name) if receptacle_type in _common()["places"]["indefinite"] else f"the {name}"


# --------------------------------------------------------------------------- slots
def _number(count: int, style: str) -> str:
    if style == "digit":
        return str(count)
    if style == "article" and count == 1:
        return "a"
    return _NUMBER_WORDS.get(count, str(count))


def _join(items: Sequence[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} and {items[-1]}"


def _slice_phrase(count: int, name: str, style: str, order: int, cooked: bool = False) -> str:
    noun = "slice" if count == 1 else "slices"
    cooked_word = "cooked " if cooked else ""
    if order == 0:
        return f"{_number(count, style)} {cooked_word}{noun} of {name}"
    return f"{_number(count, style)} {cooked_word}{name} {noun}"


def _ingredients(instance: FamilyInstance) -> list[tuple[int, str, bool]]:
    """(count, natural name, cooked) of the sliced ingredients a sandwich or salad asks for."""
    out = []
    for kind in ("lettuce", "tomato", "potato"):
        count = int(instance.slots.get(kind, "0") or 0)
        if count:
            out.append((count, kind, kind == "potato"))
    return out


def _base_slots(instance: FamilyInstance) -> dict[str, str]:
    slots = instance.slots
    values: dict[str, str] = {}
    if "object" in slots:
        name = natural_name(slots["object"])
        values.update(object=name, objects=plural(name), a_object=indefinite(name), item=unit(name))
    if "receptacle" in slots:
        kind = slots["receptacle"]
        values.update(receptacle=natural_name(kind), spot=natural_name(kind), prep=_preposition(kind))
    if "container" in slots:
        name = natural_name(slots["container"])
        values.update(container=name, a_container=indefinite(name))
    if "state" in slots:
        values["state"] = slots["state"]
    if "count" in slots:
        count = int(slots["count"])
        one = count == 1
        values.update(
            slices="slice" if one else "slices",
            pieces="piece" if one else "pieces",
            them="it" if one else "them",
            they="it" if one else "they",
            count_word=_number(count, "word"),
        )
    return values


def _slot_variants(instance: FamilyInstance, phrasing: str) -> list[dict[str, str]]:
    """Every way the dialogue may word the instance's slots (number style, ingredient order, dish)."""
    base = _base_slots(instance)
    count = int(instance.slots["count"]) if "count" in instance.slots else None
    ingredients = _ingredients(instance) if instance.family in ("sandwich", "salad") else []
    dishes: list[str] = []
    if instance.family == "breakfast":
        dishes = list(_pool(phrasing)["breakfast_dishes"][instance.slots.get("dish", "toast")])
    variants: list[dict[str, str]] = []
    for style, order in itertools.product(_NUMBER_STYLES, (0, 1)):
        values = dict(base)
        if count is not None:
            values["n"] = _number(count, style)
        if ingredients:
            values["fillings"] = _join(
                [_slice_phrase(c, n, style, order, cooked) for c, n, cooked in ingredients]
            )
            values["filling_names"] = _join([n for _, n, _ in ingredients])
            values["bread"] = (
                _slice_phrase(2, "toast", style, 0) if order == 0 else f"{_number(2, style)} pieces of toast"
            )
        for dish in dishes or [None]:
            final = dict(values)
            if dish is not None:
                final["dish_phrase"] = dish
            if final not in variants:
                variants.append(final)
    return variants


def _render(template: str, values: Mapping[str, str]) -> str:
    def fill(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in values:
            raise ValueError(
                f"phrasing template {template!r} needs slot {key!r}, which this task does not have"
            )
        return values[key]

    return _PLACEHOLDER.sub(fill, template)


# --------------------------------------------------------------------------- public helpers
def request_templates(family: str, phrasing: str = "seen") -> list[tuple[str, ...]]:
    """The request templates of a family in a pool; each is a tuple of commander turns (1 = one turn)."""
    requests = _pool(phrasing)["requests"]
    if family not in requests:
        raise KeyError(f"no {phrasing} request phrasings for family {family!r}")
    return [(t,) if isinstance(t, str) else tuple(t) for t in requests[family]]


def request_sentences(instance: FamilyInstance, phrasing: str = "seen") -> set[str]:
    """Every commander request utterance the pool can produce for this instance (all templates, steps
    and slot wordings): used to check that unseen dialogues never reuse a seen request."""
    out: set[str] = set()
    for values in _slot_variants(instance, phrasing):
        for steps in request_templates(instance.family, phrasing):
            out.update(_render(step, values) for step in steps)
    return out


# --------------------------------------------------------------------------- the writer
def _maybe_capitalize(text: str, rng: random.Random, p: float = 0.2) -> str:
    return text[:1].upper() + text[1:] if rng.random() < p else text


def write_dialogue(
    instance: FamilyInstance,
    rng: random.Random,
    *,
    phrasing: str = "seen",
    locations: Mapping[str, str] | None = None,
) -> list[Turn]:
    """A TEACh-style commander–driver chat asking for `instance`.

    `phrasing` picks the template pool ("seen" for train/valid_seen, "unseen" for valid_unseen);
    `locations` maps object types to the receptacle type each sits in ({"Mug": "Cabinet"}), and the
    commander mentions some of them, unprompted or when the driver asks.
    """
    pool = _pool(phrasing)
    common = _common()
    values = rng.choice(_slot_variants(instance, phrasing))
    steps = rng.choice(request_templates(instance.family, phrasing))
    turns: list[Turn] = []

    def say(speaker: str, text: str) -> None:
        turns.append((speaker, text))

    # Opening: who speaks first, and how.
    r = rng.random()
    if r < 0.55:
        say(DRIVER, _maybe_capitalize(rng.choice(common["driver_openers"]), rng))
    elif r < 0.75:
        say(DRIVER, _maybe_capitalize(rng.choice(common["driver_greetings"]), rng))
        say(COMMANDER, rng.choice(common["commander_greetings"]))
        if rng.random() < 0.5:
            say(DRIVER, rng.choice(common["driver_task_asks"]))
    elif r < 0.9:
        say(COMMANDER, rng.choice(common["commander_greetings"]))
        if rng.random() < 0.5:
            say(DRIVER, rng.choice(common["driver_greetings"]))

    # The request, possibly step by step with the driver reporting progress in between.
    for i, step in enumerate(steps):
        say(COMMANDER, _render(step, values))
        if i < len(steps) - 1:
            p = rng.random()
            if p < 0.45:
                say(DRIVER, rng.choice(common["driver_step_acks"]))
            elif p < 0.6:
                say(DRIVER, rng.choice(common["driver_acks"]))
    if rng.random() < 0.4:
        say(DRIVER, rng.choice(common["driver_acks"]))

    # Middle: location hints (volunteered or asked for) and clarifying questions, in random order.
    events: list[list[Turn]] = []
    located = sorted((locations or {}).items())
    if located:
        for object_type, receptacle_type in rng.sample(located, k=min(len(located), rng.randint(1, 3))):
            name = natural_name(object_type)
            loc = {"object": name, "a_object": indefinite(name), "place": _place(receptacle_type)}
            loc["at_place"] = f"{_preposition(receptacle_type)} {loc['place']}"
            if rng.random() < 0.5:
                exchange = [
                    (DRIVER, _render(rng.choice(pool["location_questions"]), loc)),
                    (COMMANDER, _render(rng.choice(pool["location_answers"]), loc)),
                ]
            else:
                exchange = [(COMMANDER, _render(rng.choice(pool["location_hints"]), loc))]
            if rng.random() < 0.3:
                exchange.append((DRIVER, rng.choice(common["driver_hint_acks"])))
            events.append(exchange)
    questions = pool["questions"].get(instance.family, [])
    if questions and rng.random() < 0.35:
        question, answer = rng.choice(questions)
        events.append([(DRIVER, _render(question, values)), (COMMANDER, _render(answer, values))])
    rng.shuffle(events)
    for exchange in events:
        turns.extend(exchange)

    # Closing: the driver reports back, the commander signs off.
    c = rng.random()
    if c < 0.3:
        say(DRIVER, rng.choice(common["driver_closings"]))
        say(COMMANDER, rng.choice(common["commander_closings"]))
    elif c < 0.45 and turns[-1][0] == DRIVER:
        say(COMMANDER, rng.choice(common["commander_acks"]))
    return turns
