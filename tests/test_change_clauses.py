"""Clause breaks of a request (understanding/clauses.py) and new objects with contents
(`new_holder`, `Grounding.holder` in understanding/): the deterministic parts of reading changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from helper_agent.evals.studies import personalization as P
from helper_agent.graphs.helper.adaptation import request_words
from helper_agent.program.edits.grammar import edit_grammar
from helper_agent.program.edits.language import EditError, parse_edit
from helper_agent.program.edits.tree import program_classes
from helper_agent.understanding.clauses import Clauses, asks_something, names_something
from helper_agent.understanding.grounding import Grounding
from helper_agent.understanding.phrases import new_holder

# the calibration suite's first routine: wash the mug and two bowls
OMAR = P.load_suite(Path(P.__file__).parent / "data" / "personalization_calibration.json").routine("the Omar dishes").program


def refine(text: str, changes: list[str], name: str = "the Omar dishes") -> tuple[list[str], list[str]]:
    return Clauses.of(text, request_words(text, name)).refine(changes)


def test_a_span_joining_two_changes_with_and_is_split() -> None:
    changes, notes = refine("Omar dishes, but skip the mug and wash a plate too.", ["skip the mug and wash a plate too"])
    assert changes == ["skip the mug", "wash a plate too"]
    assert notes == ["split 'skip the mug and wash a plate too' into 'skip the mug' | 'wash a plate too'"]


def test_three_changes_in_one_span_and_a_count_on_one_side() -> None:
    text = "Omar dishes with a cup instead of the mug and three bowls and a pan too."
    changes, _ = refine(text, ["with a cup instead of the mug and three bowls and a pan too"])
    assert changes == ["with a cup instead of the mug", "three bowls", "a pan too"]


def test_no_split_where_one_side_names_nothing() -> None:
    # "wash them" and "then dry" name no object and no count: one change stays one change
    changes, notes = refine("Omar dishes, but wash them and then dry the bowls.", ["wash them and then dry the bowls"])
    assert changes == ["wash them and then dry the bowls"] and notes == []
    assert names_something(["three", "of", "them"]) and not names_something(["this", "time"])


def test_a_clause_the_model_left_out_is_added_after_a_change_is_found() -> None:
    text = "Omar dishes: a cup rather than the mug, three bowls, and clean a plate too."
    changes, notes = refine(text, ["a cup rather than the mug"])
    assert changes == ["a cup rather than the mug", "three bowls", "clean a plate too"]
    assert notes == ["added 'three bowls' (a clause no change covered)",
                     "added 'clean a plate too' (a clause no change covered)"]


def test_none_stays_none_and_clauses_naming_nothing_are_not_added() -> None:
    assert refine("Omar dishes, please, and thanks a lot.", []) == ([], [])
    assert refine("Omar dishes with three bowls, thanks a lot.", ["three bowls"]) == (["three bowls"], [])


def test_words_before_the_routines_name_are_not_added() -> None:
    # the clause before the name ("In the kitchen") is not a change of the routine
    text = "In the kitchen, do the Omar dishes, but three bowls, and a pan."
    assert refine(text, ["three bowls"])[0] == ["three bowls", "a pan"]


def test_a_change_the_model_did_not_copy_is_kept() -> None:
    # a model without a grammar may write words that are not the request's: kept, not split
    assert refine("Omar dishes, but no mug.", ["leave out the mug"]) == (["leave out the mug"], [])


def test_clauses_need_the_requests_own_words() -> None:
    with pytest.raises(ValueError, match="not the request's words"):
        Clauses.of("Omar dishes, please.", ["Omar"])


# ------------------------------------------------------------------ new objects with contents
@pytest.mark.parametrize(("text", "holder"), [
    ("and then a plate of toast", "Plate"), ("a mug of coffee for me", "Mug"), ("add a bowl of apple slices", "Bowl"),
    ("another cup of coffee", "Cup"), ("a cup instead of the mug", ""), ("a cup in place of the mug", ""),
    ("the plate of toast on the table", ""), ("two slices of apple", ""), ("a slice of lettuce", ""),
])
def test_a_new_holder_is_an_indefinite_object_class_followed_by_of(text: str, holder: str) -> None:
    assert new_holder(text) == holder


def test_a_new_object_with_contents_is_only_written_by_the_planner() -> None:
    grounding = Grounding.of("and then a plate of toast", OMAR)
    assert grounding.holder == "Plate"
    grammar = edit_grammar(program_classes(OMAR), grounding=grounding)
    assert grammar.splitlines()[0] == 'root ::= "add task"'
    grounding.check(parse_edit("add task"), OMAR)
    with pytest.raises(EditError, match="a new Plate with something in it.*add task"):
        grounding.check(parse_edit("add Plate like Bowl"), OMAR)
    # the routine's own Mug with contents is still a new object: not a count of mugs
    with pytest.raises(EditError, match="add task"):
        Grounding.of("a mug of coffee for me", OMAR).check(parse_edit("count Mug 2"), OMAR)
    assert Grounding.of("a cup instead of the mug", OMAR).holder == ""


# ------------------------------------------------------------------ what a change admits
def test_a_change_that_names_an_object_is_not_none() -> None:
    grounding = Grounding.of("skip the mug", OMAR)
    assert '"none"' not in edit_grammar(program_classes(OMAR), grounding=grounding)
    with pytest.raises(EditError, match="names Mug: it asks for something"):
        grounding.check(parse_edit("none"), OMAR)
    grounding.check(parse_edit("remove Mug"), OMAR)
    assert '"none"' in edit_grammar(program_classes(OMAR), grounding=Grounding.of("this time", OMAR))


def test_one_thing_in_place_of_another_adds_nothing() -> None:
    grounding = Grounding.of("in a pot instead of the bowls", OMAR)
    assert grounding.contrast and grounding.kinds() == {"replace", "move"}
    grammar = edit_grammar(program_classes(OMAR), grounding=grounding)
    assert '"add ' not in grammar and '"replace " old " with " new' in grammar
    with pytest.raises(EditError, match="in place of another: replace or move, do not add"):
        grounding.check(parse_edit("add Pot like Bowl"), OMAR)
    grounding.check(parse_edit("replace Bowl with Pot"), OMAR)
    assert not Grounding.of("a pot too", OMAR).contrast


def test_a_span_of_a_coordinator_only_is_dropped() -> None:
    # the 0.5B copied "then" and "a plate of toast" as two changes
    changes, notes = refine("The Omar dishes and then a plate of toast.", ["then", "a plate of toast"])
    assert changes == ["a plate of toast"] and notes == ["dropped 'then' (a coordinator only)"]


def test_a_rejected_edit_is_not_offered_again() -> None:
    grounding = Grounding.of("a pan too", OMAR)
    grammar = edit_grammar(program_classes(OMAR), grounding=grounding, rejected=[parse_edit("add Pan like Mug")])
    assert '"add Pan like " ("Bowl")' in grammar and '"replace " old " with " new' in grammar
    grammar = edit_grammar(program_classes(OMAR), rejected=[parse_edit("count Bowl 3"), parse_edit("add task")])
    assert '"count Bowl " ("0" | "1" | "2" | "4"' in grammar and '"count Mug " ("0" | "1" | "2" | "3"' in grammar
    assert '"add task"' not in grammar and '"remove " old' in grammar


def test_skip_names_only_a_step_the_routine_does() -> None:
    """The 0.5B answered "skip the bowls" with "skip Bowl empty", "skip Bowl toast", ...: steps the
    routine never does. With the program's steps, the grammar offers only "skip Bowl clean"."""
    from helper_agent.program.edits.tree import program_steps

    assert program_steps(OMAR) == {"Mug": ["clean"], "Bowl": ["clean"]}
    grounding = Grounding.of("skip washing the bowls", OMAR)
    grammar = edit_grammar(program_classes(OMAR), grounding=grounding, steps=program_steps(OMAR))
    assert '"skip Bowl " ("clean")' in grammar and '"skip " old' not in grammar
    # "skip the bowls" is doing without them (the calibration suite's 114 requests): remove only
    assert edit_grammar(program_classes(OMAR), grounding=Grounding.of("skip the bowls", OMAR),
                        steps=program_steps(OMAR)).startswith('root ::= "remove " old\nold ::= "Bowl"\n')
    assert '"skip ' not in edit_grammar(["Pillow"], grounding=Grounding.of("skip the pillow", OMAR), steps={})
    # put is for an object the routine lacks
    grounding = Grounding.of("skip the bowls", OMAR)
    assert "put" not in grounding.kinds()
    with pytest.raises(EditError, match="put brings in an object the routine lacks"):
        grounding.check(parse_edit("put Bowl on Mug"), OMAR)


def test_a_dish_that_holds_things_is_not_copied() -> None:
    """ "served in a bowl" came out as "add Bowl like Plate": an empty washed bowl beside the plate
    of slices. A copy of what holds other things would hold nothing."""
    from helper_agent.program.edits.apply import apply_edit
    from helper_agent.program.edits.tree import program_roles

    snack = ('plate = InteractionObject("Plate", attributes=["clean"])\nplate.clean()\nplate.put_down()\n'
             'for i in range(2):\n    apple_slice = InteractionObject("AppleSliced")\n    apple_slice.pickup_and_place(plate)')
    assert program_roles(snack) == (["Plate", "AppleSliced"], ["AppleSliced"])
    with pytest.raises(EditError, match="a copy of the Plate would hold nothing .the AppleSliced go on or in the Plate"
                                        " itself.: to use a Bowl instead, replace the Plate"):
        apply_edit(snack, parse_edit("add Bowl like Plate"))


# ------------------------------------------------------------------ the extended calibration suite's rules
def test_a_change_that_names_nothing_is_no_change() -> None:
    text = "Omar dishes, thanks. I'm in a hurry, and my sister is visiting, so three bowls."
    changes, notes = refine(text, ["I'm in a hurry", "three bowls"])
    assert changes == ["three bowls"]
    assert notes == ["dropped 'I'm in a hurry' (names nothing the routine or the world knows)"]
    # a request whose only "change" is a context sentence keeps the routine as it is
    assert refine("Good morning! My sister is visiting, so the Omar dishes.", ["My sister is visiting"])[0] == []
    # a step, a liquid or a count is something asked for
    assert refine("Omar dishes without washing them.", ["without washing them"])[0] == ["without washing them"]
    assert refine("Omar dishes and make me a coffee.", ["make me a coffee"])[0] == ["make me a coffee"]
    assert asks_something(["double", "it"]) and not asks_something(["guests", "are", "coming", "tonight"])


def test_the_contents_of_one_thing_are_not_split() -> None:
    text = "Omar dishes without the mug, and a salad with lettuce and tomato too."
    changes, _ = refine(text, ["without the mug, and a salad with lettuce and tomato too"])
    assert changes == ["without the mug", "a salad with lettuce and tomato too"]
    # "and" before a thing of its own (an article, a count) or after "instead of" still divides
    assert refine("Omar dishes with a bowl of apple and a pan.", ["with a bowl of apple and a pan"])[0] == [
        "with a bowl of apple", "a pan"]
    assert refine("Omar dishes with a cup instead of the mug and bowls too.", ["with a cup instead of the mug and bowls too"])[0] == [
        "with a cup instead of the mug", "bowls too"]


@pytest.mark.parametrize(("text", "holder"), [
    ("a bowl with two apple slices too", "Bowl"), ("and a salad with lettuce and tomato", "salad"),
    ("with a slice of apple instead of the toast", ""), ("the bowl with the apples", ""),
])
def test_a_new_thing_with_contents(text: str, holder: str) -> None:
    assert new_holder(text) == holder


def test_a_change_inside_another_is_dropped() -> None:
    # the 0.5B copied "wash the", "wash the bowl instead of the mug" and "the mug" for one change
    text = "Do the Omar dishes, but wash the bowl instead of the mug."
    changes, notes = refine(text, ["wash the", "wash the bowl instead of the mug", "the mug"])
    assert changes == ["wash the bowl instead of the mug"]
    assert notes == ["dropped 'wash the' (inside another change)", "dropped 'the mug' (inside another change)"]
