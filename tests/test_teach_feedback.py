"""Feedback text generated from unmet goal conditions."""

from __future__ import annotations

from helper_agent.teach import check_task, default_registry, feedback_from_progress, object_phrase
from helper_agent.teach.goal_state import make_object


def test_object_phrases():
    assert object_phrase("BreadSliced") == "bread slice"
    assert object_phrase("EggCracked") == "cracked egg"
    assert object_phrase("CoffeeMachine") == "coffee machine"
    assert object_phrase("Mug") == "mug"
    assert object_phrase("TVStand") == "TV stand"


def test_success_gives_no_feedback():
    t = default_registry().instantiate("Coffee")
    mug = make_object("Mug", "Mug|1", simbotIsFilledWithCoffee=True)
    assert feedback_from_progress(check_task(t, [mug])) == ""


def test_sandwich_feedback_names_subtask_and_object():
    t = default_registry().instantiate("Sandwich", ["1", "1"])
    on_plate = ["Plate|1"]
    scene = [
        make_object("Plate", "Plate|1", receptacle=True),
        make_object("BreadSliced", "Bread|1|BreadSliced_1", isCooked=True, parentReceptacles=on_plate),
        make_object("BreadSliced", "Bread|1|BreadSliced_2", parentReceptacles=on_plate),
        make_object("LettuceSliced", "Lettuce|1|LettuceSliced_1", parentReceptacles=on_plate),
        make_object("TomatoSliced", "Tomato|1|TomatoSliced_1", parentReceptacles=on_plate),
        make_object("Knife", "Knife|1"),
        make_object("Sink", "Sink|1", receptacle=True),
    ]
    text = feedback_from_progress(check_task(t, scene))
    assert text == (
        "You failed to complete the subtask: 2 x Toast a slice of bread. "
        "For the bread slice: The bread slice needs to be toasted. "
        "You failed to complete the subtask: Prepare a sandwich."
    )


def test_feedback_tells_objects_of_one_type_apart_and_is_deterministic():
    t = default_registry().instantiate("Clean All X", ["Drinkware"])
    scene = [
        make_object("Mug", "Mug|1", classes=["Drinkware"], isDirty=True),
        make_object("Cup", "Cup|1", classes=["Drinkware"], isDirty=True),
        make_object("Mug", "Mug|2", classes=["Drinkware"], isDirty=True),
        make_object("Sink", "Sink|1", receptacle=True),
    ]
    progress = check_task(t, scene)
    text = feedback_from_progress(progress)
    assert text == (
        "You failed to complete the subtask: Wash every Drinkware. "
        "For the first mug: The Drinkware needs to be rinsed clean with water. "
        "For the cup: The Drinkware needs to be rinsed clean with water. "
        "For the second mug: The Drinkware needs to be rinsed clean with water."
    )
    assert feedback_from_progress(check_task(t, scene)) == text
