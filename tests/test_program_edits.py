"""The edit language over a program's syntax tree (`helper_agent.program.edits`) and the reading of a
change it is written for (`understanding/`): every edit kind,
rejections with a reason the model can act on, and the grammar that constrains the model."""

from __future__ import annotations

import pytest

from helper_agent.program import compile_program
from helper_agent.program.edits.append import append_program
from helper_agent.program.edits.apply import apply_edit, in_form, poured_into, replaced_steps
from helper_agent.program.edits.grammar import edit_grammar
from helper_agent.program.edits.language import Edit, EditError, parse_edit
from helper_agent.program.edits.tree import program_classes, served
from helper_agent.understanding.grounding import Grounding
from helper_agent.understanding.part_check import PartLacks, part_lacks
from helper_agent.understanding.phrases import (
    contrast_parts,
    negated_objects,
    placements,
    unwanted_steps,
)
from helper_agent.understanding.words import named_steps

CLEANING = """for i in range(2):
    plate = InteractionObject("Plate", attributes=["clean"])
    plate.clean()
    plate.put_down()
for i in range(2):
    cup = InteractionObject("Cup", attributes=["clean"])
    cup.clean()
    cup.put_down()
"""

SANDWICH = """plate = InteractionObject("Plate", attributes=["clean"])
plate.clean()
plate.put_down()
for i in range(2):
    bread_slice = InteractionObject("BreadSliced")
    bread_slice.toast()
    bread_slice.pickup_and_place(plate)
tomato_slice = InteractionObject("TomatoSliced")
tomato_slice.pickup_and_place(plate)
"""

TIDY = """sofa = InteractionObject("Sofa")
remote_control = InteractionObject("RemoteControl")
remote_control.pickup_and_place(sofa)
"""


def kinds(program: str) -> list[tuple[str, str | None]]:
    """The compiled program as (subgoal kind, target class) pairs: what it would do."""
    return [(s.kind.value, s.target.object_class if s.target else None) for s in compile_program(program).subgoals]


def apply(program: str, line: str) -> str:
    return apply_edit(program, parse_edit(line))


def test_every_edit_line_round_trips() -> None:
    for line in ["none", "replace Cup with Bowl", "count Plate 1", "remove Mug", "move Pillow to Sofa",
                 "add Pan like Bowl", "add task", "step PotatoSliced cook", "skip BreadSliced toast"]:
        assert parse_edit(line).text() == line
    with pytest.raises(EditError, match="not an edit"):
        parse_edit("make it nicer")


def test_replace_changes_the_class_and_the_variable() -> None:
    out = apply(CLEANING, "replace Cup with Bowl")
    assert 'bowl = InteractionObject("Bowl", attributes=["clean"])' in out and "cup" not in out.lower()
    assert out.count("bowl.clean()") == 1 and "range(2)" in out
    assert program_classes(out) == ["Plate", "Bowl"]


def test_a_new_class_keeps_the_form_of_the_object_it_stands_for() -> None:
    """"Lettuce instead of tomato" in a routine that places tomato slices means lettuce slices."""
    out = apply(SANDWICH, "replace TomatoSliced with Lettuce")
    assert 'lettuce_slice = InteractionObject("LettuceSliced")' in out and "lettuce_slice.pickup_and_place(plate)" in out
    assert in_form(parse_edit("replace TomatoSliced with Lettuce")).text() == "replace TomatoSliced with LettuceSliced"
    assert in_form(parse_edit("add Potato like BreadSliced")).text() == "add PotatoSliced like BreadSliced"
    assert in_form(parse_edit("replace Plate with BreadSliced")).text() == "replace Plate with Bread"  # a whole for a whole
    assert in_form(parse_edit("replace Plate with Bowl")).text() == "replace Plate with Bowl"
    assert in_form(parse_edit("replace TomatoSliced with Plate")).text() == "replace TomatoSliced with Plate"  # no PlateSliced
    assert in_form(parse_edit("move TomatoSliced to Bowl")).text() == "move TomatoSliced to Bowl"


def test_count_sets_unrolls_and_makes_loops() -> None:
    three = apply(CLEANING, "count Plate 3")
    assert three.startswith("for i in range(3):\n    plate =")
    one = apply(CLEANING, "count Plate 1")
    assert one.startswith('plate = InteractionObject("Plate", attributes=["clean"])\nplate.clean()\nplate.put_down()\nfor i in range(2):')
    two = apply(SANDWICH, "count TomatoSliced 2")
    assert 'for i in range(2):\n    tomato_slice = InteractionObject("TomatoSliced")\n    tomato_slice.pickup_and_place(plate)' in two
    assert kinds(apply(CLEANING, "count Cup 0")) == kinds(apply(CLEANING, "remove Cup"))


def test_count_repeats_an_object_but_not_the_fixtures_it_uses() -> None:
    coffee = ('mug = InteractionObject("Mug")\ncoffee_machine = InteractionObject("CoffeeMachine")\n'
              "mug.pickup_and_place(coffee_machine)\ncoffee_machine.toggle_on()\n")
    out = apply(coffee, "count Mug 2")
    assert out.startswith('coffee_machine = InteractionObject("CoffeeMachine")\nfor i in range(2):\n    mug =')
    assert len(compile_program(out).objects) == 3  # one machine, two mugs


def test_remove_drops_the_object_and_its_steps() -> None:
    out = apply(CLEANING, "remove Plate")
    assert "Plate" not in out and kinds(out) == kinds(CLEANING)[len(kinds(CLEANING)) // 2:]


def test_remove_takes_the_machine_that_only_worked_on_what_it_held() -> None:
    # "no coffee": the coffee machine was switched on for the mug; with the mug gone it goes too
    out = apply(BREAKFAST, "remove Mug")
    assert "Mug" not in out and "CoffeeMachine" not in out and "toggle_on" not in out
    assert out.startswith(BREAKFAST.split("mug =")[0])  # the toast on its plate is untouched
    # a place with steps of its own stays (the plate is cleaned and put down), and so does a place
    # something else still uses, or a lamp switched on that held nothing
    assert "plate.clean()" in apply(BREAKFAST, "remove BreadSliced")
    lamp = 'lamp = InteractionObject("FloorLamp")\nlamp.toggle_on()\n'
    assert apply(lamp + SOFA, "remove RemoteControl") == lamp + SOFA.replace(
        'remote_control = InteractionObject("RemoteControl")\nremote_control.pickup_and_place(sofa)\n', "")
    with pytest.raises(EditError, match="does nothing"):
        apply(apply(SOFA, "remove RemoteControl"), "remove Newspaper")


def test_move_changes_where_it_goes_and_drops_the_unused_fixture() -> None:
    out = apply(TIDY, "move RemoteControl to ArmChair")
    assert out == ('arm_chair = InteractionObject("ArmChair")\nremote_control = InteractionObject("RemoteControl")\n'
                   "remote_control.pickup_and_place(arm_chair)\n")
    put_down = apply(CLEANING, "move Cup to DiningTable")
    assert "cup.place(dining_table)" in put_down and "cup.put_down()" not in put_down


def test_moving_into_another_dish_gives_it_the_old_dishs_preparation() -> None:
    snack = ('plate = InteractionObject("Plate", attributes=["clean"])\nplate.clean()\nplate.put_down()\n'
             'for i in range(2):\n    apple_slice = InteractionObject("AppleSliced")\n    apple_slice.pickup_and_place(plate)')
    out = apply(snack, "move AppleSliced to Bowl")
    assert out == snack.replace('"Plate"', '"Bowl"').replace("plate", "bowl") + "\n"
    # a fixture is no dish: the washed plate stays, the slices go on the counter
    counter = apply(snack, "move AppleSliced to CounterTop")
    assert "plate.clean()" in counter and "apple_slice.pickup_and_place(counter_top)" in counter
    # the box of the keys has no preparation of its own: an ordinary move
    assert apply(TIDY.replace("Sofa", "Box").replace("sofa", "box"), "move RemoteControl to Bowl").startswith(
        'bowl = InteractionObject("Bowl")\n')


def test_add_like_copies_the_steps_once_after_the_original() -> None:
    out = apply(SANDWICH, "add LettuceSliced like TomatoSliced")
    assert out.endswith('tomato_slice.pickup_and_place(plate)\nlettuce_slice = InteractionObject("LettuceSliced")\n'
                        "lettuce_slice.pickup_and_place(plate)\n")
    in_loop = apply(CLEANING, "add Bowl like Cup")
    assert in_loop.endswith('bowl = InteractionObject("Bowl", attributes=["clean"])\nbowl.clean()\nbowl.put_down()\n')


def test_step_and_skip() -> None:
    potato = apply(SANDWICH, "replace TomatoSliced with PotatoSliced")
    out = apply(potato, "step PotatoSliced cook")
    assert 'potato_slice = InteractionObject("PotatoSliced")\npotato_slice.cook()\npotato_slice.pickup_and_place(plate)' in out
    with pytest.raises(EditError, match="a TomatoSliced cannot be toasted"):
        apply(SANDWICH, "step TomatoSliced toast")
    untoasted = apply(SANDWICH, "skip BreadSliced toast")
    assert "toast" not in untoasted and ("toast", "BreadSliced") not in kinds(untoasted)
    assert apply(SANDWICH, "step BreadSliced toast") == SANDWICH  # already done: nothing to change


def test_add_task_appends_a_part_sharing_fixtures_and_renaming_objects() -> None:
    part = ('sofa = InteractionObject("Sofa")\nremote_control = InteractionObject("RemoteControl")\n'
            "remote_control.pickup_and_place(sofa)\n")
    out = append_program(TIDY, part)
    assert out.count('InteractionObject("Sofa")') == 1  # the part uses the routine's sofa
    assert "remote_control_2.pickup_and_place(sofa)" in out  # a second remote is another object


def test_invalid_edits_are_rejected_with_a_reason() -> None:
    with pytest.raises(EditError, match=r"other steps use the Plate \(bread_slice, tomato_slice\); move them elsewhere"):
        apply(SANDWICH, "remove Plate")
    with pytest.raises(EditError, match="the routine has no Mug; its objects are Plate, Cup"):
        apply(CLEANING, "replace Mug with Bowl")
    with pytest.raises(EditError, match="would make an invalid program: .*CoffeeMachine"):
        apply(CLEANING, "replace Cup with CoffeeMachine")  # a coffee machine cannot be washed and put down
    with pytest.raises(EditError, match="no step does cook to the Plate"):
        apply(CLEANING, "skip Plate cook")
    with pytest.raises(EditError, match="does nothing"):
        apply(TIDY, "remove RemoteControl")


def test_no_change_keeps_the_program_byte_for_byte() -> None:
    odd = "# my routine\nplate = InteractionObject( 'Plate' )\nplate.clean()   # rinse\n"
    assert apply_edit(odd, Edit("none")) is odd
    assert apply(odd, "replace Plate with Plate") is odd
    assert apply(CLEANING, "count Plate 2") is CLEANING


def test_the_grammar_admits_only_the_programs_classes_as_targets() -> None:
    grammar = edit_grammar(program_classes(CLEANING), known=["Bowl", "Cup", "Plate", "Mug"])
    assert 'old ::= "Cup" | "Plate"\n' in grammar
    assert 'new ::= "Bowl" | "Cup" | "Mug" | "Plate"\n' in grammar
    assert '"add task"' in grammar and '"none"' in grammar


def test_an_edit_brings_in_only_what_the_change_names() -> None:
    """A named object the routine lacks must come in; an edit brings in nothing nobody named."""
    vase = Grounding.of("and put the vase on the side table", TIDY)
    # the vase holds nothing: it is what comes in, never a destination (the side table is where it goes)
    assert vase.named == ("Vase", "SideTable") and vase.must_bring and vase.new_classes == ("Vase",)
    assert vase.handled == ("Vase",)
    vase.check(parse_edit("add Vase like RemoteControl"))
    for wrong, why in [("move RemoteControl to Sofa", "the Vase itself, which holds nothing"),
                       ("move RemoteControl to SideTable", "the Vase itself"),
                       ("replace Sofa with SideTable", "may only bring in"),
                       ("remove RemoteControl", "does not have"), ("none", "it asks for something")]:
        with pytest.raises(EditError, match=why):
            vase.check(parse_edit(wrong))
    coffee = Grounding.of("make me a coffee", TIDY)  # names no object: nothing may be brought in
    assert coffee.named == () and not coffee.must_bring
    coffee.check(parse_edit("add task"))
    with pytest.raises(EditError, match="names no object"):
        coffee.check(parse_edit("move RemoteControl to Box"))
    grammar = edit_grammar(program_classes(TIDY), grounding=coffee)
    assert '"move "' not in grammar and '"add task"' in grammar and "new ::=" not in grammar
    grammar = edit_grammar(program_classes(TIDY), grounding=vase)
    assert '"none"' not in grammar and '"remove "' not in grammar and '"move "' not in grammar
    assert 'new ::= "Vase"\n' in grammar
    # a slice named by its fruit: both forms may come in (in_form picks the routine's)
    assert set(Grounding.of("tomato instead of the lettuce", SANDWICH.replace("Tomato", "Lettuce").replace("tomato", "lettuce")).new_classes) == {"Tomato", "TomatoSliced"}
    # both objects already in the routine: an edit between them is fine
    sofa = Grounding.of("the remote on the sofa", TIDY)
    assert not sofa.must_bring
    sofa.check(parse_edit("move RemoteControl to Sofa"))


def test_add_like_needs_an_object_with_steps() -> None:
    with pytest.raises(EditError, match="the Sofa has no steps of its own to copy.*RemoteControl"):
        apply(TIDY, "add Vase like Sofa")


def test_the_worked_edit_examples_keep_the_grounding_rule() -> None:
    """The prompt's examples must not show an edit the grammar would refuse."""
    from helper_agent.graphs.helper.adaptation import _edit_shots

    for program, change, line in _edit_shots():
        Grounding.of(change, program).check(in_form(parse_edit(line)))


def test_roles_limit_what_move_and_add_like_can_name() -> None:
    """`move` names what the routine puts somewhere, `add ... like` what has steps, and where the
    change names one of the routine's objects, the edit is about that one."""
    from helper_agent.program.edits.tree import program_roles

    assert program_roles(TIDY) == (["RemoteControl"], ["RemoteControl"])
    # the plate holds the slices: a copy of it would hold nothing (see test_change_clauses)
    assert program_roles(SANDWICH) == (["Plate", "BreadSliced", "TomatoSliced"], ["BreadSliced", "TomatoSliced"])
    movers, doers = program_roles(TIDY)
    grammar = edit_grammar(program_classes(TIDY), movers=movers, doers=doers)
    assert 'mover ::= "RemoteControl"' in grammar and 'doer ::= "RemoteControl"' in grammar
    about = Grounding.of("toast the tomato instead of the bread", SANDWICH)
    assert about.about(program_classes(SANDWICH)) == ["BreadSliced", "TomatoSliced"]
    with pytest.raises(EditError, match="the change is about BreadSliced, TomatoSliced, not the Plate"):
        Grounding.of("no bread, more tomato", SANDWICH).check(parse_edit("remove Plate"), SANDWICH)


def test_put_places_one_new_object_on_what_the_change_names() -> None:
    """`put B on C`: the planner wrote "vase.pickup(); vase.go_to()" for "put the vase on the side
    table" on the calibration suite; the edit places it, reusing the routine's own receptacle."""
    out = apply(TIDY, "put Vase on SideTable")
    assert out == TIDY + ('side_table = InteractionObject("SideTable")\nvase = InteractionObject("Vase")\n'
                          "vase.pickup_and_place(side_table)\n")
    assert apply(TIDY, "put Pillow on Sofa").endswith('pillow = InteractionObject("Pillow")\npillow.pickup_and_place(sofa)\n')
    assert "sofa_2" not in apply(TIDY, "put Pillow on Sofa")
    with pytest.raises(EditError, match="a Sofa cannot be picked up"):
        apply(TIDY, "put Sofa on Bed")
    grounding = Grounding.of("and put the vase on the side table", TIDY)
    grammar = edit_grammar(program_classes(TIDY), grounding=grounding)
    assert '"put " new " on " place' in grammar and 'place ::= "SideTable"\n' in grammar
    grounding.check(parse_edit("put Vase on SideTable"), TIDY)
    with pytest.raises(EditError, match="put it on or in what the change names: SideTable"):
        grounding.check(parse_edit("put Vase on Sofa"), TIDY)
    assert parse_edit("put Vase on SideTable").describe() == "also a vase on the side table"
    assert "put" not in Grounding.of("a vase instead of the remote", TIDY).kinds()


# ------------------------------------------------------------------ the extended calibration suite's rules
BREAKFAST = """bread_slice = InteractionObject("BreadSliced")
bread_slice.toast()
plate = InteractionObject("Plate", attributes=["clean"])
plate.clean()
plate.put_down()
bread_slice.pickup_and_place(plate)
mug = InteractionObject("Mug", attributes=["clean"])
mug.clean()
coffee_machine = InteractionObject("CoffeeMachine")
mug.pickup_and_place(coffee_machine)
coffee_machine.toggle_on()
"""

SOFA = """sofa = InteractionObject("Sofa")
remote_control = InteractionObject("RemoteControl")
remote_control.pickup_and_place(sofa)
newspaper = InteractionObject("Newspaper")
newspaper.pickup_and_place(sofa)
"""


def test_what_a_routine_serves() -> None:
    # the plate (not the toast on it) and the mug left in the coffee machine; both things on the sofa
    assert served(BREAKFAST) == ["Plate", "Mug"]
    assert served(SOFA) == ["RemoteControl", "Newspaper"]
    assert served(SANDWICH) == ["Plate"] and served(CLEANING) == ["Plate", "Cup"]


def test_move_all_places_everything_served() -> None:
    out = apply(SOFA, "move all to ArmChair")
    assert out == ('arm_chair = InteractionObject("ArmChair")\n'
                   'remote_control = InteractionObject("RemoteControl")\nremote_control.pickup_and_place(arm_chair)\n'
                   'newspaper = InteractionObject("Newspaper")\nnewspaper.pickup_and_place(arm_chair)\n')
    assert parse_edit("move all to ArmChair") == Edit("move_all", value="ArmChair")
    assert apply(out, "move all to ArmChair") == out  # already there: byte for byte


def test_move_all_carries_what_a_machine_made_after_it() -> None:
    out = apply(BREAKFAST, "move all to DiningTable")
    lines = out.splitlines()
    assert lines[0] == 'dining_table = InteractionObject("DiningTable")'
    assert "plate.place(dining_table)" in lines and "plate.put_down()" not in lines
    # the coffee is made first, then the mug is carried to the table
    assert lines[-2:] == ["coffee_machine.toggle_on()", "mug.pickup_and_place(dining_table)"]
    assert ("place", "DiningTable") not in kinds(BREAKFAST)
    with pytest.raises(EditError, match="no step puts anything anywhere"):
        apply('lamp = InteractionObject("FloorLamp")\nlamp.toggle_on()\n', "move all to Sofa")


def test_a_pronoun_destination_is_about_everything_served() -> None:
    grounding = Grounding.of("but put them on the armchair", SOFA)
    assert grounding.whole and grounding.kinds() == {"move_all"}
    grammar = edit_grammar(program_classes(SOFA), grounding=grounding)
    assert grammar.splitlines()[0] == 'root ::= "move all to " new' and 'new ::= "ArmChair"' in grammar
    with pytest.raises(EditError, match="move all to"):
        grounding.check(parse_edit("move RemoteControl to ArmChair"), SOFA)
    grounding.check(parse_edit("move all to ArmChair"), SOFA)
    for text in ("serve it all at the dining table", "put both on the coffee table", "everything on the armchair"):
        assert Grounding.of(text, SOFA).whole, text
    # naming what moves, or naming no destination, is not about everything
    assert not Grounding.of("put the newspaper on the armchair", SOFA).whole
    assert not Grounding.of("make it five", SOFA).whole
    with pytest.raises(EditError, match="move that object only"):
        Grounding.of("put the newspaper on the armchair", SOFA).check(parse_edit("move all to ArmChair"), SOFA)


def test_a_replacement_leaves_out_steps_the_new_object_cannot_take() -> None:
    # before: "replace BreadSliced with Apple" kept the toasting and was rejected as an invalid program
    edit = parse_edit("replace BreadSliced with Apple")
    assert replaced_steps(BREAKFAST, edit) == ["toast"]
    out = apply_edit(BREAKFAST, edit)
    assert out.splitlines()[:2] == ['apple_slice = InteractionObject("AppleSliced")',
                                    'plate = InteractionObject("Plate", attributes=["clean"])']
    assert "toast" not in out and "apple_slice.pickup_and_place(plate)" in out
    assert edit.describe(dropped=["toast"]) == "apple instead of bread slice (not toasted)"
    # steps the new object can take stay
    assert replaced_steps(CLEANING, parse_edit("replace Cup with Bowl")) == []
    assert "bowl.clean()" in apply(CLEANING, "replace Cup with Bowl")


def test_the_steps_a_change_names_for_the_new_object_follow_a_replacement() -> None:
    grounding = Grounding.of("a cooked potato slice instead of the tomato", SANDWICH)
    assert grounding.new_steps == ("cook",)
    edit = parse_edit("replace TomatoSliced with PotatoSliced")
    after = apply_edit(SANDWICH, edit)
    assert grounding.follow_up(edit, after) == [Edit("step", "PotatoSliced", "cook")]
    assert "potato_slice.cook()" in apply_edit(after, Edit("step", "PotatoSliced", "cook"))
    # a step the new object cannot take, or no step named, adds nothing
    assert Grounding.of("a toasted tomato slice instead of the bread", SANDWICH).follow_up(
        parse_edit("replace BreadSliced with TomatoSliced"), apply(SANDWICH, "replace BreadSliced with TomatoSliced")) == []
    assert Grounding.of("lettuce instead of the tomato", SANDWICH).follow_up(edit, after) == []
    assert named_steps("washed, then chopped and fried") == ["clean", "slice", "cook"]


def test_a_liquid_names_the_object_that_holds_it() -> None:
    # "two coffees", "no coffee": the Mug the coffee machine fills, though the change names no class
    grounding = Grounding.of("two coffees", BREAKFAST)
    assert grounding.vessels == ("Mug",) and grounding.about(program_classes(BREAKFAST)) == ["Mug"]
    assert Grounding.of("fill it with water", 'cup = InteractionObject("Cup")\ncup.fill_up()\n').vessels == ("Cup",)
    assert Grounding.of("no coffee", SOFA).about(program_classes(SOFA)) == program_classes(SOFA)


def test_a_replacement_no_edit_makes_falls_back_to_remove_and_add() -> None:
    grounding = Grounding.of("with a slice of apple instead of the toast", BREAKFAST)
    assert grounding.fallback(BREAKFAST) == (Edit("remove", "BreadSliced"), "with a slice of apple")
    assert Grounding.of("two coffees", BREAKFAST).fallback(BREAKFAST) is None  # no replacement
    assert Grounding.of("a cup instead of the vase", BREAKFAST).fallback(BREAKFAST) is None  # not the routine's


def test_a_count_is_the_number_the_change_says() -> None:
    # "double the tomato" in a routine of two slices is four; "three bowls" is three, nothing else
    grounding = Grounding.of("double the tomato", SANDWICH.replace("tomato_slice = ", "for i in range(2):\n    tomato_slice = ")
                             .replace("tomato_slice.pickup", "    tomato_slice.pickup"))
    assert grounding.times == 2 and grounding.numbers_for(["TomatoSliced"]) == {"TomatoSliced": ["4"]}
    grammar = edit_grammar(["Plate", "BreadSliced", "TomatoSliced"], grounding=grounding)
    assert '"count TomatoSliced " ("4")' in grammar and "num" not in grammar.splitlines()[0]
    with pytest.raises(EditError, match="asks for 4 of them, not 3"):
        grounding.check(parse_edit("count TomatoSliced 3"))
    assert Grounding.of("three bowls", CLEANING).numbers_for(["Plate", "Cup"]) == {"Plate": ["3"], "Cup": ["3"]}
    assert Grounding.of("make it 5", CLEANING).numbers == (5,)
    assert Grounding.of("no cups", CLEANING).numbers_for(["Cup"]) is None


def test_a_counted_object_repeats_without_the_steps_of_others() -> None:
    # "two slices of toast": the plate is washed once, before the loop, not again with toast on it
    out = apply(BREAKFAST, "count BreadSliced 2")
    assert out.splitlines()[:6] == ['plate = InteractionObject("Plate", attributes=["clean"])', "plate.clean()",
                                    "plate.put_down()", "for i in range(2):",
                                    '    bread_slice = InteractionObject("BreadSliced")', "    bread_slice.toast()"]
    assert out.splitlines()[6] == "    bread_slice.pickup_and_place(plate)"


def test_a_liquid_the_routine_holds_asks_for_something() -> None:
    # "no coffee" named no class, so the 0.5B could answer none; the mug is what it is about
    grounding = Grounding.of("no coffee", BREAKFAST)
    assert "none" not in grounding.kinds()
    with pytest.raises(EditError, match="asks for something"):
        grounding.check(parse_edit("none"), BREAKFAST)
    grounding.check(parse_edit("remove Mug"), BREAKFAST)


def test_a_thing_put_somewhere_is_brought_in_not_a_destination() -> None:
    # "a box on the sofa": the Box is placed (it can hold things, but here it is the thing put)
    grounding = Grounding.of("a box on the sofa", SOFA)
    assert grounding.handled == ("Box",) and "move" not in grounding.kinds()
    grounding.check(parse_edit("put Box on Sofa"), SOFA)
    with pytest.raises(EditError):
        grounding.check(parse_edit("move Newspaper to Sofa"), SOFA)
    assert Grounding.of("served in a bowl", SANDWICH).handled == ()  # a destination stays one


def test_what_something_takes_the_place_of_is_replaced_not_moved() -> None:
    # the 0.5B answered "wash a plate instead of the mug" with "move Mug to Plate" (a mug put on a plate)
    program = 'mug = InteractionObject("Mug", attributes=["clean"])\nmug.clean()\nmug.put_down()\n'
    grounding = Grounding.of("wash a plate instead of the mug", program)
    grammar = edit_grammar(program_classes(program), grounding=grounding, movers=["Mug"], doers=["Mug"])
    assert '"move "' not in grammar and '"replace " old " with " new' in grammar
    with pytest.raises(EditError, match="replace it, do not move it"):
        grounding.check(parse_edit("move Mug to Plate"), program)
    grounding.check(parse_edit("replace Mug with Plate"), program)


def test_a_change_naming_only_where_things_go_adds_nothing() -> None:
    # "served in a bowl" came out as "add task" (a new bowl of its own) on the calibration suite
    grounding = Grounding.of("served in a bowl", SANDWICH)
    assert grounding.destination_only and not {"add_task", "add_like", "put"} & grounding.kinds()
    with pytest.raises(EditError, match="names only where things go"):
        grounding.check(parse_edit("add task"), SANDWICH)
    assert not Grounding.of("put the laptop on the sofa too", SOFA).destination_only


BEDROOM = """bed = InteractionObject("Bed")
book = InteractionObject("Book")
book.pickup_and_place(bed)
"""


def test_what_a_change_puts_where() -> None:
    assert placements("without the remote, the newspaper on the coffee table, and a box on the sofa") == {
        "Newspaper": "CoffeeTable", "Box": "Sofa"}
    assert placements("put the keys in the box and the pillow on the armchair") == {"KeyChain": "Box", "Pillow": "ArmChair"}
    assert placements("turn on the light") == {} and placements("served in a bowl") == {}


def test_a_copy_goes_where_the_change_puts_it() -> None:
    """ "a pen on the desk" answered with "add Pen like Book": the pen gets the book's steps but goes
    on the desk, not on the bed the book goes to (before: rejected, a bed cannot hold a pen)."""
    grounding = Grounding.of("a pen on the desk", BEDROOM)
    edit = grounding.placed(in_form(parse_edit("add Pen like Book")))
    assert edit.place == "Desk" and edit.text() == "add Pen like Book on Desk"
    assert edit.describe() == "also a pen (like the book) on the desk"
    program = apply_edit(BEDROOM, edit)
    assert kinds(program)[-4:] == [("Navigate", "Pen"), ("Pickup", "Pen"), ("Navigate", "Desk"), ("Place", "Pen")]
    assert 'desk = InteractionObject("Desk")\npen = InteractionObject("Pen")\npen.pickup_and_place(desk)' in program
    assert "book.pickup_and_place(bed)" in program
    with pytest.raises(EditError):  # without the place, the copy would go on the bed
        apply_edit(BEDROOM, parse_edit("add Pen like Book"))
    # a copy whose steps put it nowhere is put there too; a change that names no place leaves the copy as it is
    washed = 'mug = InteractionObject("Mug", attributes=["clean"])\nmug.clean()\n'
    cup = apply_edit(washed, Grounding.of("a cup on the dining table too", washed).placed(parse_edit("add Cup like Mug")))
    assert cup.rstrip().endswith("cup.clean()\ncup.place(dining_table)")
    assert Grounding.of("wash a cup too", washed).placed(parse_edit("add Cup like Mug")).place == ""


WATERING = """cup = InteractionObject("Cup")
cup.fill_up()
house_plant = InteractionObject("HousePlant")
cup.pour(house_plant)
mug = InteractionObject("Mug", attributes=["clean"])
mug.clean()
mug.put_down()
"""
COFFEE_PART = """mug = InteractionObject("Mug", attributes=["clean"])
mug.clean()
coffee_machine = InteractionObject("CoffeeMachine")
mug.pickup_and_place(coffee_machine)
coffee_machine.toggle_on()
"""


def test_a_new_part_takes_up_the_object_the_routine_prepared() -> None:
    """ "the Hana watering, then a mug of coffee": the coffee is made in the mug the routine washed
    (one mug, washed once), not in a second mug the kitchen may not have."""
    program = append_program(WATERING, COFFEE_PART)
    assert program.count("InteractionObject(\"Mug\"") == 1 and program.count("mug.clean()") == 1
    assert program.rstrip().endswith("mug.put_down()\ncoffee_machine = InteractionObject(\"CoffeeMachine\")\n"
                                     "mug.pickup_and_place(coffee_machine)\ncoffee_machine.toggle_on()")
    # a plate holding toast is not free: a plate of tomato slices gets a plate of its own
    toast = ('bread_slice = InteractionObject("BreadSliced")\nbread_slice.toast()\n'
             'plate = InteractionObject("Plate", attributes=["clean"])\nplate.clean()\nplate.put_down()\n'
             "bread_slice.pickup_and_place(plate)\n")
    part = 'plate = InteractionObject("Plate")\ntomato_slice = InteractionObject("TomatoSliced")\ntomato_slice.pickup_and_place(plate)\n'
    assert append_program(toast, part).count("InteractionObject(\"Plate\"") == 2
    # nor is a mug left in the coffee machine, nor one of two, nor one the part wants with an attribute it lacks
    assert append_program(COFFEE_PART, COFFEE_PART).count("InteractionObject(\"Mug\"") == 2
    two = WATERING + 'mug_2 = InteractionObject("Mug", attributes=["clean"])\nmug_2.clean()\nmug_2.put_down()\n'
    assert append_program(two, COFFEE_PART).count("InteractionObject(\"Mug\"") == 3
    plain = WATERING.replace('"Mug", attributes=["clean"]', '"Mug"').replace("mug.clean()\n", "")
    assert append_program(plain, COFFEE_PART).count("InteractionObject(\"Mug\"") == 2


def test_a_part_lacks_what_its_words_name() -> None:
    potato = 'plate = InteractionObject("Plate")\npotato_slice = InteractionObject("PotatoSliced")\npotato_slice.pickup_and_place(plate)\n'
    assert part_lacks("a plate of two tomato slices", potato) == PartLacks(classes=("TomatoSliced",))
    assert not part_lacks("a plate of two potato slices", potato)
    assert not part_lacks("then a mug of coffee for me", COFFEE_PART)
    # "make a plate of toast" written without toasting (omar-three-3)
    assert part_lacks("make a plate of toast", potato.replace("PotatoSliced", "BreadSliced")) == PartLacks(steps=("toast",))
    with pytest.raises(EditError, match="does not parse"):  # the planner is asked again, as for a lack
        part_lacks("a plate of toast", "from = InteractionObject(\"Mug\")")
    # what the planner is told when it writes the part again: objects by class, steps as calls
    from helper_agent.graphs.helper.adapt import _lacking
    assert _lacking(PartLacks(("TomatoSliced",), ("toast",))) == (
        "the request names TomatoSliced, and this program makes no TomatoSliced; the request asks for toast, "
        "and this program never calls toast(): write the program with TomatoSliced and toast()")


def test_the_ways_of_putting_one_thing_in_place_of_another() -> None:
    """(what is wanted, what it takes the place of), whichever comes first in the words."""
    assert contrast_parts("a cup instead of the mug") == ("a cup", "the mug")
    assert contrast_parts("replace the plate with a bowl") == ("a bowl", "the plate")
    assert contrast_parts("swap the candle for the soap bottle") == ("the soap bottle", "the candle")
    assert contrast_parts("change the apple to tomato") == ("tomato", "the apple")
    assert contrast_parts("substitute a mug for the cup") == ("a mug", "the cup")
    assert contrast_parts("the soap bottle, not the soap bar") == ("the soap bottle", "the soap bar")
    assert contrast_parts("not the mug but a cup") == ("a cup", "the mug")
    for none in ("switch the lights on", "put the pen on the bed", "no coffee today", "change it to be cooked"):
        assert contrast_parts(none) is None
    # "replace the plate with a bowl" read backwards was "move Plate to Bowl" (batch 3, sofia-two-1)
    grounding = Grounding.of("replace the plate with a bowl", SANDWICH)
    assert grounding.old_named == ("Plate",) and "add_like" not in grounding.kinds()
    with pytest.raises(EditError, match="replace it, do not move it"):
        grounding.check(parse_edit("move Plate to Bowl"), SANDWICH)
    grounding.check(parse_edit("replace Plate with Bowl"), SANDWICH)


def test_a_step_the_change_says_not_to_do_is_skipped() -> None:
    """ "leave the slices uncooked" became "remove TomatoSliced" (batch 3, elena-three-1): only
    `skip` of that step is admitted."""
    assert unwanted_steps("leave the slices uncooked") == ["cook"]
    assert unwanted_steps("skip cooking the potato") == unwanted_steps("the potato slice not cooked") == ["cook"]
    assert unwanted_steps("don't wash the mug") == ["clean"]
    for none in ("no toast", "without the toast", "the cooked potato, not the tomato", "under the table", "wash a bowl too"):
        assert unwanted_steps(none) == []
    program = SANDWICH
    grounding = Grounding.of("leave the bread untoasted", program)
    assert grounding.kinds() == {"skip"}
    grammar = edit_grammar(program_classes(program), grounding=grounding, steps={"BreadSliced": ["toast"], "Plate": ["clean"]})
    assert grammar.startswith('root ::= "skip BreadSliced " ("toast")\n')
    with pytest.raises(EditError, match="not to toast"):
        grounding.check(parse_edit("remove BreadSliced"), program)
    assert "toast" not in apply_edit(program, parse_edit("skip BreadSliced toast"))


def test_a_thing_to_do_without_is_removed() -> None:
    """ "no coffee" became "skip Mug clean" (the mug still went to the coffee machine) and "skip the
    bowls" "skip Bowl clean": a negated object admits only `remove`; a negated step only `skip`."""
    assert negated_objects("no coffee") == ["coffee"] and negated_objects("skip the bowls") == ["Bowl"]
    assert negated_objects("without the remote") == ["RemoteControl"]
    assert negated_objects("skip cooking the potato") == [] and negated_objects("the soap bottle, not the soap bar") == []
    assert Grounding.of("no coffee", BREAKFAST).kinds() == {"remove"}
    assert Grounding.of("skip the plate", SANDWICH).kinds() == {"remove"}
    assert Grounding.of("skip toasting the bread", SANDWICH).kinds() == {"skip"}
    with pytest.raises(EditError, match="do without the Mug: write remove"):
        Grounding.of("no coffee", BREAKFAST).check(parse_edit("skip Mug clean"), BREAKFAST)
    Grounding.of("no coffee", BREAKFAST).check(parse_edit("remove Mug"), BREAKFAST)


def test_a_replacement_replaces_what_the_change_names() -> None:
    """ "swap the pillow for the newspaper" in a routine with no pillow came out as "replace
    RemoteControl with Pillow" (a helper chat session): the old thing is the one named first."""
    tidy = TIDY.replace("Sofa", "ArmChair").replace("sofa", "arm_chair")
    grounding = Grounding.of("swap the pillow for the newspaper", tidy)
    with pytest.raises(EditError, match="in place of the Pillow, not of the RemoteControl; the routine has no Pillow"):
        grounding.check(parse_edit("replace RemoteControl with Pillow"), tidy)
    pillows = tidy.replace("RemoteControl", "Pillow").replace("remote_control", "pillow")
    grounding = Grounding.of("swap the pillow for the newspaper", pillows)
    grounding.check(parse_edit("replace Pillow with Newspaper"), pillows)
    with pytest.raises(EditError, match="in place of the Pillow, not of the ArmChair$"):
        grounding.check(parse_edit("replace ArmChair with Newspaper"), pillows)
    with pytest.raises(EditError, match="the Pillow is what the change replaces"):
        grounding.check(parse_edit("replace Pillow with Pillow"), pillows)


COFFEE_ROUTINE = ('mug = InteractionObject("Mug", attributes=["clean"])\n'
                  'coffee_machine = InteractionObject("CoffeeMachine")\n'
                  "mug.pickup_and_place(coffee_machine)\ncoffee_machine.toggle_on()\n")


def test_a_cup_instead_of_the_brewing_mug_gets_the_coffee_poured() -> None:
    """A coffee machine holds only a mug, so "replace Mug with Cup" cannot compile; the routine
    brews as before and pours the coffee into a new cup."""
    edit = parse_edit("replace Mug with Cup")
    with pytest.raises(EditError, match="CoffeeMachine cannot hold a Cup"):
        apply_edit(COFFEE_ROUTINE, edit)
    poured = poured_into(COFFEE_ROUTINE, edit)
    assert poured == COFFEE_ROUTINE + 'cup = InteractionObject("Cup")\nmug.pour(cup)\n'
    kinds = [s.kind.value for s in compile_program(poured).subgoals]
    assert kinds[-1] == "Pour" and "Place" in kinds


@pytest.mark.parametrize(("program", "edit"), [
    (COFFEE_ROUTINE, "replace Mug with Plate"),  # a plate holds no liquid
    (COFFEE_ROUTINE, "replace CoffeeMachine with Cup"),  # the machine holds no liquid itself
    ('mug = InteractionObject("Mug")\nmug.clean()\nmug.put_down()\n', "replace Mug with Cup"),  # nothing poured in
    (COFFEE_ROUTINE, "move Mug to Cup"),  # no replacement
])
def test_only_a_filled_vessel_replaced_by_another_is_poured(program: str, edit: str) -> None:
    assert poured_into(program, parse_edit(edit)) is None
