"""Grounding rules, without an environment: which seen object a program object binds to.

The tracker is fed hand-made observations, so each rule (in plain sight before hidden, nearest,
clean dishes first, objects of other program objects taken, room for what is placed, the knob of
the burner in use, a free surface that is not crowded) is checked on its own.
"""

from __future__ import annotations

from typing import Any

from helper_agent.envs.base import ObjectView, Observation
from helper_agent.perception.tracker import ObjectTracker
from helper_agent.program.subgoals import ObjectRef
from helper_agent.tools.grounding import (
    Grounding,
    is_sliced_class,
    sliced_version,
    whole_class,
    whole_version,
)
from helper_agent.world.catalog import load_catalog

HERE = (0.0, 0.0)


def view(oid: str, x: float, z: float = 0.0, parent: str | None = None, **state: Any) -> ObjectView:
    """An object seen at (x, z); its type is the id's first part (the last one for a basin)."""
    otype = "SinkBasin" if oid.endswith("|SinkBasin") else oid.split("|", 1)[0]
    return ObjectView(oid, otype, abs(x), True, (x, 0.9, z), parent, (), state)


def grounding(*views: ObjectView, bindings: dict[str, str] | None = None) -> Grounding:
    tracker = ObjectTracker()
    tracker.update(Observation((0, 0, 0, 0), HERE, None, tuple(views)))
    return Grounding(tracker, load_catalog(), bindings)


def ids(found: list) -> list[str]:
    return [t.object_id for t in found]


def test_plain_sight_before_hidden_then_nearest() -> None:
    g = grounding(
        view("Cabinet|1", 0.5, isOpen=False),
        view("Mug|inside", 0.5, parent="Cabinet|1"),
        view("Mug|far", 3.0),
        view("Mug|near", 1.0),
    )
    assert ids(g.candidates(ObjectRef("mug#1", "Mug"), HERE)) == ["Mug|near", "Mug|far", "Mug|inside"]
    assert g.inside_closed("Mug|inside") and not g.inside_closed("Mug|near")
    # From the other side of the room the order of the visible ones flips.
    assert ids(g.candidates(ObjectRef("mug#1", "Mug"), (3.0, 0.0)))[:2] == ["Mug|far", "Mug|near"]


def test_clean_dishes_first_unless_washing_is_asked() -> None:
    g = grounding(view("Plate|dirty", 1.0, isDirty=True), view("Plate|clean", 2.0))
    assert ids(g.candidates(ObjectRef("p", "Plate"), HERE))[0] == "Plate|clean"
    assert ids(g.candidates(ObjectRef("p", "Plate", attributes=("clean",)), HERE))[0] == "Plate|dirty"


def test_objects_of_other_program_objects_are_taken_but_receptacles_are_shared() -> None:
    g = grounding(
        view("Cup|a", 1.0), view("Cup|b", 2.0), view("CounterTop|1", 1.0), bindings={"cup#1": "Cup|a", "counter#1": "CounterTop|1"}
    )
    assert ids(g.candidates(ObjectRef("cup#2", "Cup"), HERE)) == ["Cup|b"]
    assert ids(g.candidates(ObjectRef("cup#1", "Cup"), HERE)) == ["Cup|a", "Cup|b"]
    assert ids(g.candidates(ObjectRef("counter#2", "CounterTop"), HERE)) == ["CounterTop|1"]
    # The executor's own helper references may reuse what the program holds on to.
    assert ids(g.candidates(ObjectRef("__cup", "Cup"), HERE)) == ["Cup|a", "Cup|b"]


def test_what_the_executor_used_stays_free_for_the_program() -> None:
    """The executor sliced the apple with the only knife (its own `__knife` reference); a program
    step on `knife` later binds that knife (before: "could not find Knife" in a kitchen with one)."""
    g = grounding(view("Knife|1", 1.0), bindings={"__knife": "Knife|1"})
    assert ids(g.candidates(ObjectRef("knife#1", "Knife"), HERE)) == ["Knife|1"]
    g.bind(ObjectRef("knife#1", "Knife"), "Knife|1")  # and the executor may still use it after the program did
    assert ids(g.candidates(ObjectRef("__knife", "Knife"), HERE)) == ["Knife|1"]
    assert ids(g.candidates(ObjectRef("knife#2", "Knife"), HERE)) == []  # two program knives are two knives


def test_sink_means_its_basin_and_exclusions_stick() -> None:
    g = grounding(view("Sink|1", 1.0), view("Sink|1|SinkBasin", 1.0), view("Sink|2|SinkBasin", 2.0))
    assert ids(g.candidates(ObjectRef("s", "Sink"), HERE)) == ["Sink|1|SinkBasin", "Sink|2|SinkBasin"]
    g.exclude("s", "Sink|1|SinkBasin")
    assert ids(g.candidates(ObjectRef("s", "Sink"), HERE)) == ["Sink|2|SinkBasin"]
    assert ids(g.candidates(ObjectRef("s", "Sink"), HERE, exclude={"Sink|2|SinkBasin"})) == []


def test_placing_needs_room_and_an_accepting_receptacle() -> None:
    g = grounding(
        view("Mug|1", 0.5),
        view("Mug|2", 0.6),
        view("CoffeeMachine|full", 1.0, receptacleObjectIds=("Mug|2",)),
        view("CoffeeMachine|free", 2.0),
        view("Toaster|1", 0.5),
    )
    machines = ObjectRef("m", "CoffeeMachine")
    assert ids(g.candidates(machines, HERE, for_placing="Mug|1")) == ["CoffeeMachine|free"]
    # A receptacle that already holds the object still fits it.
    assert ids(g.candidates(machines, HERE, for_placing="Mug|2")) == ["CoffeeMachine|full", "CoffeeMachine|free"]
    assert g.fits("CoffeeMachine|full", "Mug|2") and not g.fits("CoffeeMachine|full", "Mug|1")
    assert ids(g.candidates(ObjectRef("t", "Toaster"), HERE, for_placing="Mug|1")) == []


def test_the_knob_of_the_burner_in_use() -> None:
    g = grounding(
        view("StoveBurner|a", 1.0),
        view("StoveBurner|b", 1.0, receptacleObjectIds=("Pan|1",)),
        view("Pan|1", 1.0, parent="StoveBurner|b"),
        view("StoveKnob|a", 0.5, controlledObjects=("StoveBurner|a",)),
        view("StoveKnob|b", 0.9, controlledObjects=("StoveBurner|b",)),
    )
    knob = ObjectRef("k", "StoveKnob")
    # Nothing used yet: the knob of the burner holding something, though it is farther.
    assert ids(g.candidates(knob, HERE))[0] == "StoveKnob|b"
    assert g.knob_for("StoveBurner|a") == "StoveKnob|a"
    g.bind(ObjectRef("burner", "StoveBurner"), "StoveBurner|a")
    assert ids(g.candidates(knob, HERE))[0] == "StoveKnob|a"


def test_bound_objects_are_kept_while_they_exist_and_fit() -> None:
    g = grounding(view("Mug|1", 1.0), view("CoffeeMachine|1", 1.0, receptacleObjectIds=("Mug|9",)))
    g.bind(ObjectRef("mug", "Mug"), "Mug|1")
    assert g.bound(ObjectRef("mug", "Mug")) == "Mug|1"
    g.tracker.forget("Mug|1")
    assert g.bound(ObjectRef("mug", "Mug")) is None
    g.bind(ObjectRef("cm", "CoffeeMachine"), "CoffeeMachine|1")
    assert g.bound(ObjectRef("cm", "CoffeeMachine")) == "CoffeeMachine|1"
    assert g.bound(ObjectRef("cm", "CoffeeMachine"), for_placing="Mug|1") is None  # full


def test_free_surface_keeps_room_for_the_task() -> None:
    crowded = tuple(f"Apple|{n}" for n in range(14))  # a counter has 16 places
    g = grounding(view("CounterTop|near", 0.5, receptacleObjectIds=crowded), view("DiningTable|far", 3.0))
    assert g.free_surface("Mug", HERE) == "DiningTable|far"
    assert grounding(view("Fridge|1", 0.5)).free_surface("Mug", HERE) is None


def test_knives_and_sliced_classes() -> None:
    assert grounding().knife_ref() == ObjectRef("__knife", "Knife")
    assert grounding(view("ButterKnife|1", 1.0)).knife_ref() == ObjectRef("__butterknife", "ButterKnife")
    assert is_sliced_class("TomatoSliced") and is_sliced_class("EggCracked") and not is_sliced_class("Tomato")
    assert whole_class("BreadSliced") == "Bread" and whole_class("EggCracked") == "Egg"
    assert whole_version(ObjectRef("s", "AppleSliced")) == ObjectRef("s__whole", "Apple")
    assert whole_version(ObjectRef("a", "Apple")) == ObjectRef("a", "Apple")
    assert sliced_version(ObjectRef("b", "Bread"), "Bread") == ObjectRef("b__slice", "BreadSliced")
