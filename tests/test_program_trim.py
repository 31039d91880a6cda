"""The tree transform that removes a program's steps on some classes (`program/edits/trim.py`), used
by the scope check so that a plan doing what was asked and more keeps the asked part."""

from __future__ import annotations

import pytest

from helper_agent.program import compile_program
from helper_agent.program.edits.language import EditError
from helper_agent.program.edits.trim import trim_classes
from helper_agent.program.subgoals import SubgoalKind

COFFEE_AND_TOAST = """mug = InteractionObject("Mug", attributes=["clean"])
mug.clean()
coffee_machine = InteractionObject("CoffeeMachine")
mug.pickup_and_place(coffee_machine)
coffee_machine.toggle_on()
toaster = InteractionObject("Toaster")
toaster.toggle_on()
plate = InteractionObject("Plate", attributes=["clean"])
plate.clean()
plate.put_down()
bread_slice = InteractionObject("BreadSliced")
bread_slice.toast()
bread_slice.pickup_and_place(plate)
"""


def classes_changed(program: str) -> set[str]:
    kinds = {SubgoalKind.NAVIGATE, SubgoalKind.OPEN, SubgoalKind.CLOSE}
    return {s.target.object_class for s in compile_program(program).subgoals if s.kind not in kinds and s.target}


def test_the_toast_and_its_plate_go_and_the_coffee_stays_untouched() -> None:
    cut = trim_classes(COFFEE_AND_TOAST, {"Toaster", "Plate", "BreadSliced"})
    assert cut.program.splitlines() == COFFEE_AND_TOAST.splitlines()[:5]
    assert classes_changed(cut.program) == {"Mug", "CoffeeMachine"}
    assert "toaster.toggle_on()" in cut.removed and "bread_slice.pickup_and_place(plate)" in cut.removed


def test_a_receptacle_a_kept_object_is_put_on_stays_without_its_own_steps() -> None:
    """Putting the slice on the plate does not change the plate: the plate stays, unwashed."""
    cut = trim_classes(COFFEE_AND_TOAST, {"Plate"})
    assert 'plate = InteractionObject("Plate")' in cut.program and "plate.clean()" not in cut.program
    assert "bread_slice.pickup_and_place(plate)" in cut.program
    assert classes_changed(cut.program) == {"Mug", "CoffeeMachine", "Toaster", "BreadSliced"}


def test_a_fixture_left_idle_goes_with_the_object_it_served() -> None:
    """Without the mug the coffee machine would only be switched on for nothing."""
    cut = trim_classes(COFFEE_AND_TOAST, {"Mug"})
    assert "coffee_machine" not in cut.program and "mug" not in cut.program
    assert classes_changed(cut.program) == {"Toaster", "Plate", "BreadSliced"}


def test_loops_pours_and_what_the_planner_declared_itself() -> None:
    program = """bowl = InteractionObject("Bowl")
pot = InteractionObject("Pot")
pot.pour(bowl)
for i in range(2):
    apple_slice = InteractionObject("AppleSliced")
    apple_slice.pickup_and_place(bowl)
spare = InteractionObject("Lettuce")
"""
    cut = trim_classes(program, {"AppleSliced", "Bowl"})
    # pouring into the bowl changes the bowl; the pot only poured, so it goes too; the planner's own
    # unused lettuce is not the transform's business
    assert cut.program.splitlines() == ['spare = InteractionObject("Lettuce")']
    assert "pot.pour(bowl)" in cut.removed


def test_nothing_to_remove_returns_the_program_itself_and_an_unparsable_one_raises() -> None:
    assert trim_classes(COFFEE_AND_TOAST, {"Lettuce"}).program is COFFEE_AND_TOAST
    assert trim_classes(COFFEE_AND_TOAST, {"Lettuce"}).removed == ()
    assert trim_classes('mug = InteractionObject("Mug")\nmug.pickup()\n', {"Mug"}).program == ""
    with pytest.raises(EditError):
        trim_classes("mug = (", {"Mug"})


def test_an_unasked_cut_goes_with_its_attribute_and_the_knife_it_needed() -> None:
    program = """knife = InteractionObject("Knife")
knife.pickup()
apple = InteractionObject("Apple", attributes=["sliced"])
apple.slice()
knife.put_down()
bowl = InteractionObject("Bowl")
apple.pickup_and_place(bowl)
"""
    cut = trim_classes(program, {"Knife"}, {"slice"})
    assert cut.program.splitlines() == ['apple = InteractionObject("Apple")', 'bowl = InteractionObject("Bowl")',
                                        "apple.pickup_and_place(bowl)"]


def test_a_place_loses_its_moves_and_keeps_what_is_put_in_it() -> None:
    program = 'bowl = InteractionObject("Bowl")\nbowl.pickup()\nbowl.put_down()\napple = InteractionObject("Apple")\n' \
              "apple.pickup_and_place(bowl)\n"
    cut = trim_classes(program, (), (), {"Bowl"})
    assert cut.removed == ("bowl.pickup()", "bowl.put_down()")
    assert classes_changed(cut.program) == {"Apple"}
