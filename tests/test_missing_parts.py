"""A correction's missing part: the person's words read as steps (`understanding/missing.py`) and
the steps written in the action API (`program/edits/part.py`), checked by compiling the program."""

from __future__ import annotations

import pytest

from helper_agent.program import compile_program
from helper_agent.program.edits.part import Missing, part_program
from helper_agent.understanding.missing import for_household, read_missing, undo_other_kinds


def steps(feedback: str, request: str = "") -> list[str]:
    return [m.describe() for m in read_missing(feedback, request).missing]


@pytest.mark.parametrize(("feedback", "expected"), [
    ("no, you didn't toast the bread slice", ["toast BreadSliced"]),
    ("no, you didn't toast the bread slice and you didn't put the bread slice on the plate",
     ["toast BreadSliced", "place BreadSliced in Plate"]),
    ("no, you didn't toast the bread slice, the plate isn't clean and you didn't put the bread slice on the plate",
     ["toast BreadSliced", "clean Plate", "place BreadSliced in Plate"]),
    ("no, you didn't slice the potato and you didn't cook the potato slice", ["slice Potato", "cook PotatoSliced"]),
    ("no, you didn't crack the egg and you didn't cook the cracked egg", ["slice Egg", "cook EggCracked"]),
    ("no, there's no coffee in the mug", ["coffee Mug"]),
    ("no, there's still no coffee", ["coffee Mug"]),
    ("no, you didn't water the plant", ["water HousePlant in Cup"]),
    ("no, you didn't fill the pot with water", ["fill_up Pot"]),
    ("no, you didn't boil the potato", ["boil Potato"]),
    ("no, you didn't turn on the desk lamp", ["toggle_on DeskLamp"]),
    ("the lamp isn't on", ["toggle_on Lamp"]),
    ("no, the toast isn't on the plate", ["place BreadSliced in Plate"]),  # "the toast": a noun, not a step
    ("you didn't put every newspaper on the coffee table", ["place Newspaper in CoffeeTable"]),  # not coffee
])
def test_what_the_person_says_is_missing_is_read_as_steps(feedback: str, expected: list[str]) -> None:
    assert steps(feedback) == expected


def test_only_the_clauses_that_ask_for_something_are_read() -> None:
    # The chat: the first clause says what is right, the second what is missing.
    assert steps("the toast in the bowl is right, but you didn't make the coffee", "coffee in a cup and toast") == ["coffee Cup"]
    assert read_missing("yes, thanks").missing == [] and read_missing("no").complete is False


def test_a_clause_that_asks_for_something_unread_leaves_the_correction_to_the_planner() -> None:
    reading = read_missing("no, there's no bread slice and you didn't put the bread slice on the plate")
    assert reading.unread == ["there's no bread slice"] and not reading.complete


def test_counts_come_from_the_request_and_every_from_the_household() -> None:
    reading = read_missing("no, the bowl isn't clean and you didn't put the apple slices in the bowl",
                           "put two slices of apple in a bowl")
    assert [m.describe() for m in reading.missing] == ["clean Bowl", "place AppleSliced in Bowl x2"]
    every = read_missing("no, not every pot is clean")
    objects = [{"objectType": "Pot"}, {"objectType": "Pot"}, {"objectType": "Pot"}, {"objectType": "Bowl"}]
    assert [m.describe() for m in for_household(every, objects)] == ["clean Pot x3"]


def test_what_changes_the_placed_things_is_done_to_each_of_them() -> None:
    assert steps("no, you didn't cook the potato slice and you didn't put the potato slices on the plate",
                 "three cooked potato slices on a plate") == ["cook PotatoSliced x3", "place PotatoSliced in Plate x3"]


def test_the_household_gives_the_water_vessel_and_a_slice_is_cut_before_it_is_used() -> None:
    water = read_missing("you didn't water the plant")
    assert [m.describe() for m in for_household(water, [{"objectType": "Mug"}, {"objectType": "HousePlant"}])] == [
        "water HousePlant in Mug"]
    place = read_missing("you didn't put the tomato slice on the plate")
    whole = [{"objectType": "Tomato"}, {"objectType": "Plate"}]
    assert [m.describe() for m in for_household(place, whole)] == ["slice Tomato", "place TomatoSliced in Plate"]
    cut = whole + [{"objectType": "TomatoSliced"}]
    assert [m.describe() for m in for_household(place, cut)] == ["place TomatoSliced in Plate"]


def test_the_part_is_written_in_step_order_on_one_object_per_class_and_compiles() -> None:
    part = part_program([Missing("place", "BreadSliced", place="Plate"), Missing("toast", "BreadSliced"),
                         Missing("clean", "Plate")])
    assert part == ('plate = InteractionObject("Plate")\nplate.clean()\n'
                    'bread_slice = InteractionObject("BreadSliced")\nbread_slice.toast()\n'
                    "bread_slice.pickup_and_place(plate)\n")
    kinds = [s.describe() for s in compile_program(part).subgoals if not s.describe().startswith("Navigate")]
    assert kinds[-1] == "Place(BreadSliced -> Plate)"


def test_a_count_is_that_many_objects_the_first_being_the_one_other_steps_change() -> None:
    # "you didn't toast the bread slice and you didn't put the bread slices on the plate": the
    # toasted slice is one of the two placed (a loop would make two new ones after it)
    part = part_program([Missing("toast", "BreadSliced"), Missing("place", "BreadSliced", place="Plate", count=2)])
    subgoals = compile_program(part).subgoals
    toasted = [s.target.instance_key for s in subgoals if s.kind.value == "Toast" and s.target]
    placed = [s.target.instance_key for s in subgoals if s.kind.value == "Place" and s.target]
    assert toasted == ["breadsliced#1"] and placed == ["breadsliced#1", "breadsliced#2"]
    assert "for " not in part


def test_the_compound_steps_use_their_tools() -> None:
    coffee = part_program([Missing("coffee", "Mug")])
    assert coffee.splitlines()[-2:] == ["mug.pickup_and_place(coffee_machine)", "coffee_machine.toggle_on()"]
    boil = compile_program(part_program([Missing("boil", "Potato")])).source
    assert "pot.fill_up()" in boil and "potato.pickup_and_place(pot)" in boil and "stove_burner.toggle_on()" in boil
    with pytest.raises(ValueError, match="needs a place"):
        Missing("place", "Mug")


DESK_ON = 'desk_lamp = InteractionObject("DeskLamp")\ndesk_lamp.toggle_on()\n'


def test_a_switch_on_the_kind_the_person_did_not_mean_is_taken_back() -> None:
    """cal-062/069: "the lamp" was read as the desk lamp; the person names the floor lamp."""
    missing = [Missing("toggle_on", "FloorLamp")]
    said = "it's dark in here, put the light on\nno, you didn't turn on the floor lamp"
    assert [m.describe() for m in undo_other_kinds(missing, [DESK_ON], said)] == \
        ["toggle_on FloorLamp", "toggle_off DeskLamp"]


def test_a_kind_someone_named_or_another_class_or_step_is_left_alone() -> None:
    missing = [Missing("toggle_on", "FloorLamp")]
    # The request named the desk lamp too: both were meant.
    assert undo_other_kinds(missing, [DESK_ON], "turn on the desk lamp and the floor lamp") == missing
    # A television is no kind of lamp; a placing has no single way back.
    tv = 'tv = InteractionObject("Television")\ntv.toggle_on()\n'
    assert undo_other_kinds(missing, [tv], "turn on the lamp") == missing
    place = [Missing("place", "FloorLamp", "Sofa")]
    assert undo_other_kinds(place, [DESK_ON], "turn on the lamp") == place
    # A switch the other way is not taken back: the earlier round switched it on, the person wants on.
    assert undo_other_kinds([Missing("toggle_off", "FloorLamp")], [DESK_ON], "turn off the lamp") == \
        [Missing("toggle_off", "FloorLamp")]


@pytest.mark.parametrize(("feedback", "request_", "expected", "every"), [
    ("no, I meant every book", "the book goes on the desk, please", ["place Book in Desk"], {"Book"}),
    ("the floor lamp too, please", "it's dark in here, put the light on", ["toggle_on FloorLamp"], set()),
    ("also the desk lamp, please", "get the lamp on", ["toggle_on DeskLamp"], set()),
])
def test_a_correction_naming_only_a_thing_takes_what_the_request_asked_of_it(
        feedback: str, request_: str, expected: list[str], every: set[str]) -> None:
    """ "no, I meant every book" after "the book goes on the desk": the request's placement, done to
    every book (a real chat session went to the planner, which repeated the program)."""
    reading = read_missing(feedback, request_)
    assert [m.describe() for m in reading.missing] == expected
    assert reading.every == every and reading.complete


def test_a_thing_the_request_asked_nothing_of_is_left_to_the_planner() -> None:
    reading = read_missing("the remote too", "put the book on the sofa")
    assert reading.missing == [] and reading.unread == ["the remote too"] and not reading.complete


@pytest.mark.parametrize("answer", ["the floor lamp too, please", "also the floor lamp", "both lamps, please"])
def test_a_kind_wanted_besides_keeps_the_first_switch(answer: str) -> None:
    """ "the floor lamp too" adds to the desk lamp: nothing is switched back off."""
    missing = [Missing("toggle_on", "FloorLamp")]
    assert undo_other_kinds(missing, [DESK_ON], f"it's dark in here, put the light on\n{answer}") == missing
