"""What a request asked that the household does not show (`understanding/outcome.py`), read from
the embedded world's own metadata before and after the asked-for change."""

from __future__ import annotations

from typing import Any

from helper_agent.envs.symbolic import SymbolicEnv
from helper_agent.understanding.outcome import preposition, unmet, unmet_sentence
from helper_agent.world.generator import generate_scene
from helper_agent.world.metadata import export_state


def kitchen() -> SymbolicEnv:
    env = SymbolicEnv()
    env.reset(export_state(generate_scene(3, "Kitchen")))
    return env


def first(objects: list[dict[str, Any]], cls: str) -> dict[str, Any]:
    return next(o for o in objects if o["objectType"] == cls)


def test_a_placement_not_made_is_said_and_one_made_is_not() -> None:
    objects = kitchen().objects_metadata()
    mug, basin = first(objects, "Mug"), first(objects, "SinkBasin")
    assert basin["objectId"] not in mug["parentReceptacles"]
    assert unmet("put the mug in the sink", objects) == ["The mug is not in the sink basin."]
    moved = [dict(o, parentReceptacles=[basin["objectId"]]) if o is mug else o for o in objects]
    assert unmet("put the mug in the sink", moved) == []


def test_a_step_not_done_is_said() -> None:
    objects = kitchen().objects_metadata()
    assert "The tomato is not sliced." in unmet("slice the tomato", objects)
    sliced = [dict(o, isSliced=True) if o["objectType"] == "Tomato" else o for o in objects]
    assert "The tomato is not sliced." not in unmet("slice the tomato", sliced)


def test_a_switch_not_made_is_said() -> None:
    env = SymbolicEnv()
    env.reset(export_state(generate_scene(2020, "LivingRoom")))
    objects = env.objects_metadata()
    assert any(o["objectType"] == "Television" for o in objects)
    off = [dict(o, isToggled=False) if o["objectType"] == "Television" else o for o in objects]
    on = [dict(o, isToggled=True) if o["objectType"] == "Television" else o for o in objects]
    assert unmet("switch the TV on", off) == ["The television is not switched on."]
    assert unmet("switch the TV on", on) == []


def test_nothing_read_is_nothing_said() -> None:
    assert unmet("could you give me a hand", kitchen().objects_metadata()) == []
    # a plant that looks thirsty asks for water (issue 63's example)
    assert unmet("the plant looks thirsty", kitchen().objects_metadata()) == ["The plant is not watered."]
    assert unmet_sentence([]) == ""


def test_the_sentence_before_the_question() -> None:
    assert unmet_sentence(["The mug is not in the sink basin.", "The tomato is not sliced."]) == \
        "Not done yet: the mug is not in the sink basin. The tomato is not sliced."


def test_in_or_on_from_the_catalogs_shapes() -> None:
    assert [preposition(c) for c in ("Fridge", "Bowl", "Plate", "DiningTable", "Sofa")] == \
        ["in", "in", "on", "on", "on"]


def test_the_persons_own_preposition_wins() -> None:
    assert preposition("GarbageCan", "throw the apple into the bin") == "in"
    assert preposition("Fridge", "put the apple on top of the fridge") == "on"
    # two kinds in one request: the catalog decides
    assert preposition("Plate", "put the apple in the bowl and the bread on the plate") == "on"


def test_a_definite_plural_is_every_one_the_household_holds() -> None:
    objects = kitchen().objects_metadata()
    basin = first(objects, "SinkBasin")
    mug = first(objects, "Mug")
    second = dict(mug, objectId="Mug|second", parentReceptacles=[])
    one_in = [dict(o, parentReceptacles=[basin["objectId"]]) if o is mug else o for o in objects] + [second]
    assert unmet("put the mugs in the sink", one_in) == ["Not all 2 mugs are in the sink basin."]
    both_in = one_in[:-1] + [dict(second, parentReceptacles=[basin["objectId"]])]
    assert unmet("put the mugs in the sink", both_in) == []


def test_boiling_is_read_from_the_word() -> None:
    objects = kitchen().objects_metadata()
    assert "The potato is not boiled." in unmet("boil a potato", objects)
    boiled = [dict(o, simbotIsBoiled=True) if o["objectType"] == "Potato" else o for o in objects]
    assert "The potato is not boiled." not in unmet("boil a potato", boiled)


def test_coffee_and_a_watered_plant_are_read_from_their_words() -> None:
    objects = kitchen().objects_metadata()
    lacks = unmet("make a coffee and water the plant", objects)
    assert "There is no coffee in a mug or a cup." in lacks and "The plant is not watered." in lacks
    done = [dict(o, simbotIsFilledWithCoffee=True) if o["objectType"] == "Mug" else
            dict(o, isFilledWithLiquid=True) if o["objectType"] == "HousePlant" else o for o in objects]
    assert unmet("make a coffee and water the plant", done) == []
    assert "There is no coffee in a mug or a cup." not in unmet("wipe the coffee table", objects)


def test_a_plant_that_needs_watering_asks_for_water() -> None:
    dry = [{"objectType": "HousePlant", "objectId": "HousePlant|1", "isFilledWithLiquid": False}]
    assert unmet("the plant needs watering", dry) == ["The plant is not watered."]
    assert unmet("the plant needs watering", [dict(dry[0], isFilledWithLiquid=True)]) == []
