"""Semantic checks: calls that cannot make sense for the objects' types are rejected before execution,
with one sentence the planner can act on, and no valid program (seed examples, corrections, the gold
programs of every benchmark family) is rejected."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from helper_agent.evals.benchmark.families import FAMILIES, rooms_for
from helper_agent.memory.corrections import load_seed_corrections
from helper_agent.memory.examples import load_seed_examples
from helper_agent.program import ProgramError, SemanticError, compile_program
from helper_agent.world.generator import generate_scene

SEEDS_PER_FAMILY = 10


@pytest.mark.parametrize(
    ("text", "line", "expected"),
    [
        ('mug = InteractionObject("Mug")\ncoffee_machine = InteractionObject("CoffeeMachine")\ncoffee_machine.pickup()',
         3, "'coffee_machine.pickup()': a CoffeeMachine cannot be picked up; pick up a Mug and place it in the "
            "CoffeeMachine instead"),
        ('maker = InteractionObject("coffee maker")\nmaker.pickup()',  # the check is on the mapped class
         2, "'coffee maker' is read as CoffeeMachine, and a CoffeeMachine cannot be picked up; pick up a Mug"),
        ('x = InteractionObject("Spaceship")\nx.pickup()',  # no class is close: not read as an ArmChair
         1, "'Spaceship': no catalog class is close enough (best ArmChair at 0.38"),
        ('counter = InteractionObject("CounterTop")\nmug = InteractionObject("Mug")\ncounter.pickup_and_place(mug)',
         3, "a CounterTop cannot be picked up; pick up a Mug and place it in the CounterTop instead"),
        ('lamp = InteractionObject("FloorLamp")\nlamp.put_down()', 2, "a FloorLamp cannot be picked up; switch it"),
        ('pot = InteractionObject("Pot")\npot.pickup_and_place(pot)',
         2, "'pot.pickup_and_place(pot)': pot.pickup_and_place() would put the Pot in or on itself; name another "
            "object as the receptacle"),
        ('x = InteractionObject("Mug")\ny = x\nx.place(y)', 3, "x.place() would put the Mug in or on itself"),
        ('cup = InteractionObject("Cup")\ncup.pour(cup)', 2, "cup.pour() would put the Cup into itself"),
        ('mug = InteractionObject("Mug")\nknife = InteractionObject("Knife")\nmug.pickup_and_place(knife)',
         3, "a Knife is not a receptacle: nothing can be placed in or on it; place the Mug in or on a Plate"),
        ('pot = InteractionObject("Pot")\ntoaster = InteractionObject("Toaster")\npot.pickup_and_place(toaster)',
         3, "a Toaster cannot hold a Pot; place it in or on a CounterTop, a DiningTable or a SinkBasin"),
        ('bread = InteractionObject("Bread")\ntoaster = InteractionObject("Toaster")\nbread.pickup_and_place(toaster)',
         3, "a Toaster cannot hold a whole Bread; place a BreadSliced in it instead"),
        ('cup = InteractionObject("Cup")\nmachine = InteractionObject("CoffeeMachine")\ncup.pickup_and_place(machine)',
         3, "a CoffeeMachine cannot hold a Cup"),
        ('m = InteractionObject("CoffeeMachine")\nm.open()', 2, "a CoffeeMachine cannot be opened or closed; only "
                                                              "things such as Fridge, Cabinet, Microwave or Drawer open"),
        ('s = InteractionObject("SinkBasin")\ns.toggle_on()',
         2, "a SinkBasin cannot be switched on or off; switch its Faucet instead: faucet = InteractionObject(\"Faucet\")"),
        ('s = InteractionObject("Sink")\ns.toggle_off()', 2, "switch its Faucet instead"),
        ('p = InteractionObject("Plate")\np.toggle_on()', 2, "a Plate cannot be switched on or off; only appliances"),
        ('k = InteractionObject("Knife")\nk.slice()', 2, "a Knife cannot be sliced; slice food such as Bread, Tomato"),
        ('p = InteractionObject("HousePlant")\np.fill_up()', 2, "a HousePlant cannot be filled with water at the sink; "
                                                              "fill a Mug, Cup, Bowl or Pot"),
        ('w = InteractionObject("WateringCan")\nw.fill_up()', 2, "a WateringCan cannot be filled with water at the sink"),
        ('a = InteractionObject("Apple")\na.empty()', 2, "an Apple holds no liquid to empty"),
        ('c = InteractionObject("CounterTop")\nc.clean()', 2, "a CounterTop cannot be washed in the sink; clean dishes "
                                                             "such as Mug, Cup, Plate or Bowl"),
        ('b = InteractionObject("Bread")\nb.cook()', 2, "a whole Bread cannot be cooked; cook a BreadSliced instead"),
        ('p = InteractionObject("Pot")\np.cook()', 2, "a Pot cannot be cooked; to boil something, place the Pot on a "
                                                     "StoveBurner and switch on the StoveKnob"),
        ('k = InteractionObject("Knife")\nk.cook()', 2, "a Knife cannot be cooked; cook food such as"),
        ('m = InteractionObject("Mug")\nm.toast()', 2, "a Mug cannot be toasted; toast a BreadSliced"),
        ('c = InteractionObject("Cup")\nl = InteractionObject("FloorLamp")\nc.pour(l)',
         3, "nothing can be poured into a FloorLamp"),
        ('c = InteractionObject("CounterTop", attributes=["clean"])\nc.go_to()',
         1, "attributes=[\"clean\"] asks for c.clean(), but a CounterTop cannot be washed in the sink; clean dishes "
            "such as Mug, Cup, Plate or Bowl; leave \"clean\" out"),
        ('for i in range(2):\n    t = InteractionObject("Toaster")\n    t.pickup()', 3, "a Toaster cannot be picked up"),
    ],
)
def test_senseless_calls_are_rejected(text: str, line: int, expected: str) -> None:
    with pytest.raises(SemanticError) as info:
        compile_program(text)
    err = info.value
    assert expected in err.reason
    assert err.line == line
    assert str(err).startswith(f"line {line}")
    assert "\n" not in str(err)


@pytest.mark.parametrize(
    ("text", "line", "expected"),
    [
        ('mug.pickup()\nmug = InteractionObject("Mug")', 1,
         "'mug.pickup()' is not allowed: 'mug' is not defined yet; create it first with mug = InteractionObject(\"...\")"),
        ('cup = InteractionObject("Cup")\ncups.pickup()', 2, "'cups' is not defined yet; create it first with "
                                                          "cups = InteractionObject(\"...\") (did you mean 'cup'?)"),
        ('mug = InteractionObject("Mug")\nmug.place(sink)', 2, "'sink' is not defined yet: create it first with "
                                                              "sink = InteractionObject(\"...\")"),
        ('for i in range(0):\n    mug = InteractionObject("Mug")\nmug.pickup()', 3, "'mug' is not defined yet"),
        ('agent = AgentCorrective()\nmug = InteractionObject("Mug")\nmug.place(agent)', 3,
         "'agent' is not allowed as the receptacle of place(): it must be an object"),
        ('m = InteractionObject(kind)', 1, "'kind' is not defined yet: only a loop variable"),
    ],
)
def test_names_used_before_they_are_defined(text: str, line: int, expected: str) -> None:
    with pytest.raises(SemanticError) as info:
        compile_program(text)
    assert expected in str(info.value)
    assert info.value.line == line


def test_column_points_at_the_call() -> None:
    with pytest.raises(SemanticError) as info:
        compile_program('t = InteractionObject("Toaster")\nfor i in range(2):\n    t.pickup()')
    assert (info.value.line, info.value.col) == (3, 5)
    assert str(info.value).startswith("line 3, col 5: 't.pickup()': a Toaster cannot be picked up")


@pytest.mark.parametrize(
    "text",
    [
        't = InteractionObject("TomatoSliced")\nt.slice()',  # the executor slices the whole tomato
        'b = InteractionObject("Bread")\nb.toast()',  # the executor slices the bread first
        'a = InteractionObject("Apple")\na.clean()',  # rinsing fruit is fine
        'p = InteractionObject("PotatoSliced")\np.cook()',
        'e = InteractionObject("EggCracked")\ne.cook()',
        'p = InteractionObject("Potato")\np.cook()',
        'c = InteractionObject("Cup")\nh = InteractionObject("HousePlant")\nc.fill_up()\nc.pour(h)',
        'c = InteractionObject("Cup")\ns = InteractionObject("SinkBasin")\nc.pour(s)',
        'p = InteractionObject("Pot")\np.fill_up()\nb = InteractionObject("StoveBurner")\np.pickup_and_place(b)',
        'k = InteractionObject("StoveKnob")\nk.toggle_on()\nb = InteractionObject("StoveBurner")\nb.toggle_on()',
        'm = InteractionObject("Mug")\ns = InteractionObject("Sink")\nm.pickup_and_place(s)',  # into its basin
        'b = InteractionObject("BreadSliced", attributes=["sliced", "toasted"])\nb.go_to()',
        'f = InteractionObject("Fridge")\nf.open()\nf.close()',
        'm = InteractionObject("Mug", attributes=["clean", "filled"])\nm.empty()',
    ],
)
def test_sensible_calls_are_accepted(text: str) -> None:
    assert compile_program(text).subgoals


def test_every_api_method_is_decided_on() -> None:
    """A new API method must say what it needs of its object (or that it needs nothing)."""
    from helper_agent.program import api
    from helper_agent.program.classes import default_catalog
    from helper_agent.program.semantics import MOVED, UNCHECKED, checked_methods

    view = default_catalog()
    assert view is not None
    decided = checked_methods(view) | set(MOVED) | set(UNCHECKED)
    assert set(api.OBJECT_METHODS) == decided


class FlaglessCatalog:
    """A catalog whose entries say nothing: no check can be made, so nothing is rejected for it."""

    NAMES = ("CoffeeMachine", "Mug", "Knife")

    def names(self) -> list[str]:
        return list(self.NAMES)

    def __contains__(self, name: object) -> bool:
        return name in self.NAMES

    def get(self, name: str) -> object:
        return object()


@pytest.mark.parametrize("catalog", [FlaglessCatalog(), ["CoffeeMachine", "Mug", "Knife"]])
def test_catalogs_without_flags_skip_affordance_checks(catalog: object) -> None:
    text = 'c = InteractionObject("CoffeeMachine")\nk = InteractionObject("Knife")\nc.pickup_and_place(k)\nk.cook()'
    assert compile_program(text, catalog=catalog).signature()[-1] == "Cook knife#1"
    with pytest.raises(SemanticError, match="in or on itself"):  # needs no catalog
        compile_program('k = InteractionObject("Knife")\nk.place(k)', catalog=catalog)


def test_errors_survive_pickling() -> None:
    import pickle

    with pytest.raises(SemanticError) as info:
        compile_program('c = InteractionObject("CoffeeMachine")\nc.pickup()')
    again = pickle.loads(pickle.dumps(info.value))
    assert type(again) is SemanticError and str(again) == str(info.value) and again.col == info.value.col


# ---------------------------------------------------------------------------------- no false rejections


def _family_programs() -> list[tuple[str, int, str]]:
    out = []
    for family, build in sorted(FAMILIES.items()):
        rooms = rooms_for(family)
        for seed in range(SEEDS_PER_FAMILY * 3):
            types = Counter(o.object_type for o in generate_scene(seed, rooms[seed % len(rooms)]).objects.values())
            instance = build(types, random.Random(seed))
            if instance is not None:
                out.append((family, seed, instance.program))
    return out


def test_gold_programs_of_every_family_compile() -> None:
    programs = _family_programs()
    assert {family for family, _, _ in programs} == set(FAMILIES)
    rejected = []
    for family, seed, program in programs:
        try:
            compile_program(program)
        except ProgramError as exc:
            rejected.append(f"{family} seed {seed}: {exc}")
    assert rejected == []


def test_seed_examples_and_corrections_compile() -> None:
    examples = load_seed_examples()
    corrections = load_seed_corrections()
    assert len(examples) >= 40 and len(corrections) >= 20
    for program in [e.program for e in examples] + [c.program for c in corrections]:
        compile_program(program)
