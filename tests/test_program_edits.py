"""The edit language over a program's syntax tree (`helper_agent.program.edits`): every edit kind,
rejections with a reason the model can act on, and the grammar that constrains the model."""

from __future__ import annotations

import pytest

from helper_agent.program import compile_program
from helper_agent.program.edits import (
    Edit,
    EditError,
    Grounding,
    append_program,
    apply_edit,
    edit_grammar,
    in_form,
    parse_edit,
    program_classes,
)

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
    from helper_agent.program.edits import program_roles

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
