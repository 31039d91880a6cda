"""The benchmark's dialogue writer: TEACh-style commander–driver chats from phrasing templates."""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from importlib import resources

import pytest

from helper_agent.evals.benchmark.dialogue import (
    PHRASINGS,
    indefinite,
    instruction_text,
    natural_name,
    plural,
    request_sentences,
    request_templates,
    unit,
    write_dialogue,
)
from helper_agent.evals.benchmark.families import FAMILIES, FamilyInstance
from helper_agent.world.catalog import load_catalog

SEEDS = range(24)
CAMEL = re.compile(r"\b[A-Z]*[a-z]+[A-Z]\w*|\b[A-Z]{2,}[a-z]\w*")
ALL_TYPES = Counter({t: 2 for t in load_catalog().types})
WORDS_2 = re.compile(r"\b(two|2)\b")
WORDS_1 = re.compile(r"\b(one|1|a)\b")


def instance(family: str, seed: int) -> FamilyInstance:
    inst = FAMILIES[family](ALL_TYPES, random.Random(seed))
    assert inst is not None, family
    return inst


def commander_lines(turns):
    return [u for s, u in turns if s == "Commander"]


def pool_strings(phrasing: str) -> set[str]:
    """Every request, hint and question string of a pool (not the shared small talk)."""
    data = json.loads(
        resources.files("helper_agent.evals.benchmark").joinpath(f"data/phrasings/{phrasing}.json").read_text("utf-8")
    )
    out: set[str] = set()

    def walk(node):
        if isinstance(node, str):
            out.add(node)
        elif isinstance(node, list):
            for x in node:
                walk(x)
        elif isinstance(node, dict):
            for k, v in node.items():
                if k != "_about":
                    walk(v)

    walk(data)
    return out


# --------------------------------------------------------------------------- names
def test_natural_names():
    assert natural_name("SinkBasin") == "sink"
    assert natural_name("CounterTop") == "counter"
    assert natural_name("DiningTable") == "table"
    assert natural_name("HousePlant") == "plant"
    assert natural_name("StoveBurner") == "stove"
    assert natural_name("CoffeeMachine") == "coffee maker"
    assert natural_name("Mug") == "mug"
    assert natural_name("TomatoSliced") == "tomato slice"
    assert natural_name("PepperShaker") == "pepper shaker"
    assert natural_name("TVStand") == "tv stand"
    assert natural_name("SomeNewThing") == "some new thing"
    for t in load_catalog().types:
        name = natural_name(t)
        assert name == name.lower() and name.strip() == name and name, t


def test_plurals_and_articles():
    assert plural("knife") == "knives"
    assert plural("butter knife") == "butter knives"
    assert plural("tomato") == "tomatoes"
    assert plural("box") == "boxes"
    assert plural("watch") == "watches"
    assert plural("floor lamp") == "floor lamps"
    assert plural("bread") == "loaves of bread"
    assert indefinite("apple") == "an apple"
    assert indefinite("mug") == "a mug"
    assert indefinite("bread") == "a loaf of bread"
    assert unit("bread") == "loaf of bread"
    assert unit("mug") == "mug"


def test_instruction_text():
    turns = [("Driver", "hi, what should I do today?"), ("Commander", "make me a coffee")]
    assert instruction_text(turns) == "<Driver> hi, what should I do today? <Commander> make me a coffee"
    assert instruction_text([]) == ""


def test_unknown_phrasing_rejected():
    with pytest.raises(ValueError, match="unknown phrasing"):
        write_dialogue(instance("coffee", 0), random.Random(0), phrasing="test")


# --------------------------------------------------------------------------- pools
def test_every_family_has_enough_templates():
    for family in FAMILIES:
        assert len(request_templates(family, "seen")) >= 4, family
        assert len(request_templates(family, "unseen")) >= 3, family
        # step-by-step variants exist somewhere in each pool
    for phrasing in PHRASINGS:
        multi = sum(len(t) > 1 for f in FAMILIES for t in request_templates(f, phrasing))
        assert multi >= 10, phrasing


def test_pools_are_disjoint():
    for family in FAMILIES:
        seen = {s for t in request_templates(family, "seen") for s in t}
        unseen = {s for t in request_templates(family, "unseen") for s in t}
        assert seen.isdisjoint(unseen), (family, seen & unseen)
    assert pool_strings("seen").isdisjoint(pool_strings("unseen"))


def test_unseen_dialogues_never_contain_a_seen_request():
    locations = {"Knife": "Fridge", "Mug": "Cabinet", "Bread": "CounterTop"}
    for family in FAMILIES:
        for seed in SEEDS:
            inst = instance(family, seed)
            seen = request_sentences(inst, "seen")
            turns = write_dialogue(inst, random.Random(seed), phrasing="unseen", locations=locations)
            text = instruction_text(turns)
            leaked = [s for s in seen if s in text]
            assert not leaked, (family, seed, leaked, text)
            # and the unseen request is really there
            unseen = request_sentences(inst, "unseen")
            assert any(line in unseen for line in commander_lines(turns)), (family, text)


# --------------------------------------------------------------------------- dialogues
@pytest.mark.parametrize("phrasing", PHRASINGS)
def test_every_family_gets_a_dialogue(phrasing):
    for family in FAMILIES:
        for seed in SEEDS:
            inst = instance(family, seed)
            turns = write_dialogue(inst, random.Random(seed), phrasing=phrasing)
            assert len(turns) >= 1
            assert all(s in ("Commander", "Driver") for s, _ in turns)
            for _, u in turns:
                assert u and u == u.strip() and "{" not in u and "}" not in u and "_" not in u, u
                assert len(u.split()) <= 30, u
                assert "  " not in u, u
            requests = request_sentences(inst, phrasing)
            assert any(line in requests for line in commander_lines(turns)), (family, seed, turns)


def test_deterministic_given_rng():
    locations = {"Mug": "Cabinet", "Knife": "Drawer"}
    for family in FAMILIES:
        inst = instance(family, 3)
        a = write_dialogue(inst, random.Random(11), locations=locations)
        b = write_dialogue(inst, random.Random(11), locations=locations)
        assert a == b
        others = {tuple(write_dialogue(inst, random.Random(s), locations=locations)) for s in range(10)}
        assert len(others) >= 5, family


def test_step_by_step_requests_span_several_turns():
    inst = FamilyInstance("toast", "Toast", (), "")
    found = False
    for seed in range(60):
        lines = commander_lines(write_dialogue(inst, random.Random(seed)))
        if "slice the bread" in lines and "now toast one slice" in lines:
            assert lines.index("slice the bread") < lines.index("now toast one slice")
            found = True
    assert found


def test_count_object_and_receptacle_words_appear():
    two = FamilyInstance(
        "n_slices_in_y",
        "N Slices Of X In Y",
        ("2", "Tomato", "on", "Plate"),
        "",
        {"count": "2", "object": "Tomato", "receptacle": "Plate", "preposition": "on"},
    )
    one = FamilyInstance(
        "n_slices_in_y",
        "N Slices Of X In Y",
        ("1", "Apple", "in", "Bowl"),
        "",
        {"count": "1", "object": "Apple", "receptacle": "Bowl", "preposition": "in"},
    )
    for phrasing in PHRASINGS:
        for seed in range(40):
            text = instruction_text(write_dialogue(two, random.Random(seed), phrasing=phrasing)).lower()
            assert WORDS_2.search(text) and "tomato" in text and "plate" in text, text
            turns = write_dialogue(one, random.Random(seed), phrasing=phrasing)
            text = instruction_text(turns).lower()
            requests = request_sentences(one, phrasing)
            request = " ".join(u for u in commander_lines(turns) if u in requests)
            assert WORDS_1.search(request) and "apple" in text and "bowl" in text, text
            assert not WORDS_2.search(request) and "slices" not in request, request


def _expected_words(inst: FamilyInstance) -> list[str]:
    s = inst.slots
    words = []
    for key in ("object", "receptacle", "container"):
        if key in s:
            words.append(natural_name(s[key]))
    if inst.family in ("sandwich", "salad"):
        words += [k for k in ("lettuce", "tomato", "potato") if int(s.get(k, "0"))]
    if inst.family == "breakfast":
        words += ["coffee", "lettuce" if s["dish"] == "sandwich" else "toast"]
    if inst.family in ("coffee",):
        words.append("coffee")
    if inst.family in ("toast", "plate_of_toast", "sandwich", "salad"):
        words.append(
            "salad" if inst.family == "salad" else "sandwich" if inst.family == "sandwich" else "toast"
        )
    if inst.family == "water_plant":
        words.append("plant")
    if inst.family == "toggle_all":
        words.append(s["state"])
    return words


def test_slot_words_appear_for_every_family():
    for phrasing in PHRASINGS:
        for family in FAMILIES:
            for seed in SEEDS:
                inst = instance(family, seed)
                text = instruction_text(write_dialogue(inst, random.Random(seed), phrasing=phrasing)).lower()
                for word in _expected_words(inst):
                    assert re.search(rf"\b{re.escape(word)}", text), (family, word, text)
                if "count" in inst.slots and inst.slots["count"] == "2":
                    assert WORDS_2.search(text), text
                if family in ("sandwich", "salad"):  # absent ingredients are never mentioned
                    for k in ("lettuce", "tomato", "potato"):
                        if not int(inst.slots.get(k, "0")):
                            assert k not in text, (family, k, text)


def test_no_camel_case_type_names_leak():
    types = set(load_catalog().types)
    locations = {
        "CoffeeMachine": "CounterTop",
        "ButterKnife": "SinkBasin",
        "RemoteControl": "TVStand",
        "PepperShaker": "DiningTable",
        "Knife": "StoveBurner",
    }
    for phrasing in PHRASINGS:
        for family in FAMILIES:
            for seed in SEEDS:
                turns = write_dialogue(
                    instance(family, seed), random.Random(seed), phrasing=phrasing, locations=locations
                )
                for _, u in turns:
                    assert not CAMEL.search(u), u
                    assert not any(
                        w in types
                        for w in re.findall(r"[A-Za-z]+", u)
                        if w[:1].isupper() and w not in ("I",) and u.index(w) > 0
                    ), u


@pytest.mark.parametrize("phrasing", PHRASINGS)
@pytest.mark.parametrize(
    ("receptacle", "spoken"),
    [
        ("Cabinet", "in a cabinet"),
        ("Fridge", "in the fridge"),
        ("SinkBasin", "in the sink"),
        ("CounterTop", "on the counter"),
        ("DiningTable", "on the table"),
        ("StoveBurner", "on the stove"),
    ],
)
def test_location_hints_name_the_receptacle(phrasing, receptacle, spoken):
    inst = instance("toggle_all", 0)
    for seed in range(20):
        turns = write_dialogue(inst, random.Random(seed), phrasing=phrasing, locations={"Knife": receptacle})
        hints = [
            u
            for i, (s, u) in enumerate(turns)
            if s == "Commander" and ("knife" in u or (i > 0 and "knife" in turns[i - 1][1]))
        ]
        assert len(hints) == 1 and spoken in hints[0], turns


def test_location_hints_are_both_volunteered_and_asked_for():
    inst = instance("clean_x", 0)
    asked = volunteered = 0
    for seed in range(40):
        turns = write_dialogue(inst, random.Random(seed), locations={"Knife": "Drawer"})
        for i, (speaker, u) in enumerate(turns):
            if "drawer" in u and speaker == "Commander":
                if i > 0 and turns[i - 1][0] == "Driver" and "knife" in turns[i - 1][1]:
                    asked += 1
                else:
                    volunteered += 1
    assert asked >= 5 and volunteered >= 5


def test_variety_of_requests_and_openings():
    for phrasing, minimum in (("seen", 4), ("unseen", 3)):
        for family in FAMILIES:
            inst = instance(family, 1)
            requests = request_sentences(inst, phrasing)
            used = set()
            for seed in range(40):
                used.update(
                    u
                    for u in commander_lines(write_dialogue(inst, random.Random(seed), phrasing=phrasing))
                    if u in requests
                )
            assert len(used) >= minimum, (phrasing, family, used)
    inst = instance("coffee", 0)
    first = {write_dialogue(inst, random.Random(s))[0] for s in range(60)}
    assert len(first) >= 8
    assert any(sp == "Driver" for sp, _ in first) and any(sp == "Commander" for sp, _ in first)
    texts = [instruction_text(write_dialogue(inst, random.Random(s))) for s in range(60)]
    assert any("what should I do today" in t for t in texts)
    assert any("?" in t for t in texts)
