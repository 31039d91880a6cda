"""What a request asked that the household does not show (`understanding/outcome.py`), read from
the embedded world's own metadata before and after the asked-for change."""

from __future__ import annotations

from typing import Any

from helper_agent.envs.symbolic import SymbolicEnv
from helper_agent.understanding.asked import Placement, asked
from helper_agent.understanding.outcome import others, preposition, unmet, unmet_sentence
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


def thing(cls: str, n: int = 0, on: str | None = None, **flags: Any) -> dict[str, Any]:
    """One object's metadata, as the embedded world writes it, on or in `on` (an objectId)."""
    return {"objectId": f"{cls}|{n}", "objectType": cls, "parentReceptacles": [on] if on else None, **flags}


def test_a_placement_said_subject_first_is_read() -> None:
    """ "the book goes on the desk" names the thing before its verb (calibration cal-053, cal-058)."""
    present = {"Book", "Desk", "Egg", "Pot", "Mug", "Sink"}
    assert asked("the book goes on the desk, please", present, {"Book": 1}).placements == (Placement("Book", "Desk"),)
    assert asked("the eggs should go in the pot", present, {"Egg": 2}).placements == (Placement("Egg", "Pot", 2),)
    assert asked("stash the credit card in a drawer", {"CreditCard", "Drawer"}, {}).placements == \
        (Placement("CreditCard", "Drawer"),)
    # walking somewhere is no placement, and a thing only said to be somewhere is not one either
    assert asked("go to the sink and put the mug in it", present, {}).placements == ()
    assert asked("the mug on the counter needs a wash", present | {"CounterTop"}, {}).placements == ()


def test_a_definite_plural_of_the_one_there_is_that_one() -> None:
    assert asked("leave the mugs on the dining table", {"Mug", "DiningTable"}, {"Mug": 1}).placements == \
        (Placement("Mug", "DiningTable", 1),)


def test_the_others_of_the_kind_a_definite_singular_left_are_named() -> None:
    desk = thing("Desk")
    placed = [desk, thing("Book", 1, on="Desk|0"), thing("Book", 2, on="Shelf|0"), thing("Shelf")]
    assert unmet("the book goes on the desk", placed) == []
    assert others("the book goes on the desk", placed) == ["Another book is not on the desk."]
    three = [*placed, thing("Book", 3, on="Shelf|0")]
    assert others("put the book on the desk", three) == ["2 more books are not on the desk."]
    # "a book" is any one; every book placed leaves nothing to name; nothing placed is unmet, not a remark
    assert others("put a book on the desk", placed) == []
    every = [desk, thing("Book", 1, on="Desk|0"), thing("Book", 2, on="Desk|0")]
    assert others("put the book on the desk", every) == []
    none = [desk, thing("Book", 1, on="Shelf|0"), thing("Book", 2, on="Shelf|0"), thing("Shelf")]
    assert others("put the book on the desk", none) == []
    assert unmet("put the book on the desk", none) == ["The book is not on the desk."]


def test_a_light_any_lamp_answers_and_the_ones_still_off() -> None:
    """ "put the light on" is met by one light; the rest are named (calibration cal-062)."""
    dark = [thing("LightSwitch", isToggled=False), thing("DeskLamp", isToggled=False), thing("FloorLamp", isToggled=False)]
    assert unmet("put the light on", dark) == [
        "None of the light switch, the desk lamp and the floor lamp is switched on."]
    assert others("put the light on", dark) == []
    one = [dict(o, isToggled=o["objectType"] == "DeskLamp") for o in dark]
    assert unmet("put the light on", one) == []
    assert others("put the light on", one) == ["The light switch and the floor lamp are still off."]
    lamps = [o for o in one if o["objectType"] != "LightSwitch"]
    assert others("get the lamp on", lamps) == ["The floor lamp is still off."]
    assert others("switch the desk lamp on", lamps) == []


def test_food_on_a_dirty_dish_is_not_served() -> None:
    """A slice on the dirty plate while a clean one is elsewhere is not "on a plate" as food is
    served (calibration cal-073's second round said nothing)."""
    objects = [thing("Plate", 1, isDirty=True), thing("Plate", 2, isDirty=False),
               thing("BreadSliced", 1, on="Plate|1", isCooked=True)]
    said = unmet("put a slice of toast on a plate", objects)
    assert said == ["The plate the bread slice is on is not clean."]
    clean = [dict(o, isDirty=False) if o["objectId"] == "Plate|1" else o for o in objects]
    assert unmet("put a slice of toast on a plate", clean) == []


def test_a_step_on_pieces_none_were_cut_for_is_said() -> None:
    objects = [thing("Potato", 1), thing("Plate", 1, isDirty=False)]
    assert "No potato slice is cooked." in unmet("make a couple of cooked potato slices and serve them on a plate",
                                                 objects)
    cooked = [*objects, thing("PotatoSliced", 1, isCooked=True)]
    assert unmet("make a couple of cooked potato slices and serve them on a plate", cooked) == \
        ["The potato slice is not on the plate."]
    served = [*objects, thing("PotatoSliced", 1, on="Plate|1", isCooked=True)]
    assert unmet("make a couple of cooked potato slices and serve them on a plate", served) == []


def test_the_remarks_follow_what_is_unmet() -> None:
    assert unmet_sentence([], ["Another book is not on the desk."]) == "Another book is not on the desk."
    assert unmet_sentence(["The tomato is not sliced."], ["The floor lamp is still off."]) == \
        "Not done yet: the tomato is not sliced. The floor lamp is still off."


def test_a_dish_made_by_cracking_is_read_from_the_dish_table() -> None:
    """An omelette is a cracked egg, cooked (`scope.DISH_STEPS`)."""
    whole = [thing("Egg", 1), thing("Plate", 1)]
    assert unmet("an omelette for lunch, please", whole) == ["No egg is cracked."]
    raw = [thing("EggCracked", 1, isCooked=False), thing("Plate", 1)]
    assert unmet("make me an omelette", raw) == ["The cracked egg is not cooked."]
    assert unmet("make me an omelette", [dict(raw[0], isCooked=True), raw[1]]) == []
    assert unmet("crack an egg", raw) == []


def test_a_dish_served_on_a_plate_holds_every_food_named() -> None:
    """ "a salad of 2 lettuce slices and 1 tomato slice, served on a plate": the subject-first
    reading places the last food; the salad puts the others on the same plate."""
    present = {"Lettuce", "Tomato", "Plate", "Knife"}
    found = asked("could you toss together a salad of 2 lettuce slices and 1 tomato slice, served on a plate",
                  present, {}).placements
    assert set(found) == {Placement("LettuceSliced", "Plate"), Placement("TomatoSliced", "Plate")}
    # something other than the dish's foods put on the plate leaves the dish to the words
    assert asked("make a salad with lettuce and put the apple on the plate", present | {"Apple"}, {}).placements == \
        (Placement("Apple", "Plate"),)
