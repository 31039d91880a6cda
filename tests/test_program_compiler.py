"""The compiler: HELPER's rewrite rules, class mapping, and the good-program corpus."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest

from helper_agent.program import (
    CatalogView,
    LexicalClassMapper,
    ProgramError,
    SemanticError,
    SubgoalKind,
    compile_program,
    parse_program,
    render_program,
)
from helper_agent.program import api as program_api

GOOD = Path(__file__).parent / "data" / "programs" / "good"
GOOD_FILES = sorted(GOOD.glob("*.txt"))


@dataclass(frozen=True)
class _Info:
    openable: bool


class StubCatalog:
    """A small stand-in for helper_agent.world.catalog.Catalog (names, get().openable, base_type)."""

    TYPES: ClassVar[dict[str, bool]] = {
        "Mug": False, "Cup": False, "CoffeeMachine": False, "SinkBasin": False, "Fridge": True,
        "Cabinet": True, "Microwave": True, "CounterTop": False, "DiningTable": False, "Knife": False,
        "Bread": False, "BreadSliced": False, "Toaster": False, "Plate": False, "Tomato": False,
        "TomatoSliced": False, "StoveBurner": False, "Pot": False, "Potato": False, "HousePlant": False,
    }

    def names(self) -> list[str]:
        return sorted(self.TYPES)

    def __contains__(self, name: object) -> bool:
        return name in self.TYPES

    def get(self, name: str) -> _Info:
        return _Info(self.TYPES[name])

    def base_type(self, name: str) -> str:
        return name.removesuffix("Sliced") if name.endswith("Sliced") else name


STUB = StubCatalog()


def sig(text: str, **kwargs) -> list[str]:
    kwargs.setdefault("catalog", STUB)
    return compile_program(text, **kwargs).signature()


# ---------------------------------------------------------------------------------- exact sequences


def test_coffee_exact() -> None:
    text = (GOOD / "coffee.txt").read_text()
    compiled = compile_program(text, catalog=STUB)
    assert compiled.signature() == [
        "Clean mug#1",
        "Navigate mug#1",
        "Pickup mug#1",
        "Navigate coffeemachine#1",
        "Place mug#1 -> coffeemachine#1",
        "ToggleOn coffeemachine#1",
    ]
    clean, nav, pick, nav2, place, on = compiled.subgoals
    assert clean.kind is SubgoalKind.CLEAN and clean.note == "attribute 'clean'" and clean.line == 2
    assert [s.line for s in (nav, pick, nav2, place)] == [4, 4, 4, 4] and on.line == 5
    assert place.target is clean.target and place.receptacle is on.target
    assert place.target.attributes == ("clean",)


def test_water_plant_exact() -> None:
    assert sig((GOOD / "water_plant.txt").read_text()) == [
        "FillUp cup#1",
        "Navigate cup#1",
        "Pickup cup#1",
        "Navigate houseplant#1",
        "Pour cup#1 -> houseplant#1",
    ]


def test_toast_exact() -> None:
    assert sig((GOOD / "toast.txt").read_text()) == [
        "Navigate knife#1",
        "Pickup knife#1",
        "Navigate bread#1",
        "Slice bread#1",
        "PutDown knife#1",
        "Navigate breadsliced#1",
        "Pickup breadsliced#1",
        "Navigate toaster#1",
        "Place breadsliced#1 -> toaster#1",
        "ToggleOn toaster#1",
        "ToggleOff toaster#1",
    ]


def test_slices_on_plate_exact() -> None:
    assert sig((GOOD / "slices_on_plate.txt").read_text()) == [
        "Navigate knife#1",
        "Pickup knife#1",
        "Navigate tomato#1",
        "Slice tomato#1",
        "PutDown knife#1",
        "Navigate tomatosliced#1",
        "Pickup tomatosliced#1",
        "Navigate plate#1",
        "Place tomatosliced#1 -> plate#1",
        "Navigate tomatosliced#2",
        "Pickup tomatosliced#2",
        "Navigate plate#1",
        "Place tomatosliced#2 -> plate#1",
    ]


def test_boil_exact() -> None:
    assert sig((GOOD / "boil.txt").read_text()) == [
        "FillUp pot#1",
        "Navigate pot#1",
        "Pickup pot#1",
        "Navigate stoveburner#1",
        "Place pot#1 -> stoveburner#1",
        "Navigate potato#1",
        "Pickup potato#1",
        "Navigate pot#1",
        "Place potato#1 -> pot#1",
        "Navigate stoveburner#1",
        "ToggleOn stoveburner#1",
    ]


@pytest.mark.parametrize("path", GOOD_FILES, ids=[p.stem for p in GOOD_FILES])
def test_good_corpus_matches_golden(path: Path) -> None:
    """Every TEACh task family compiles (with the packaged catalog) to its reviewed sequence."""
    compiled = compile_program(path.read_text(encoding="utf-8"))
    expected = path.with_suffix(".expected").read_text(encoding="utf-8").split("\n")
    assert compiled.signature() == [line for line in expected if line]


def test_good_corpus_covers_task_families() -> None:
    stems = {p.stem for p in GOOD_FILES}
    families = {
        "coffee", "water_plant", "toast", "plate_of_toast", "slices_on_plate", "cooked_slices", "boil",
        "clean_x", "clean_all_x", "put_all_x_in_y", "sandwich", "salad", "breakfast",
    }
    assert families <= stems


# ---------------------------------------------------------------------------------- rewrite rules


def test_go_to_is_navigate_and_duplicates_are_removed() -> None:
    text = 'm = InteractionObject("Mug")\nm.go_to()\nm.go_to()\nm.pickup()\nm.go_to()'
    assert sig(text) == ["Navigate mug#1", "Pickup mug#1"]


def test_navigate_only_when_not_already_there() -> None:
    text = (
        'f = InteractionObject("Fridge")\nf.open()\nf.close()\n'
        'c = InteractionObject("CoffeeMachine")\nc.toggle_on()\nc.toggle_off()\nf.open()'
    )
    assert sig(text) == [
        "Navigate fridge#1", "Open fridge#1", "Close fridge#1",
        "Navigate coffeemachine#1", "ToggleOn coffeemachine#1", "ToggleOff coffeemachine#1",
        "Navigate fridge#1", "Open fridge#1",
    ]


def test_consecutive_identical_subgoals_are_collapsed() -> None:
    text = 'c = InteractionObject("CoffeeMachine")\nc.toggle_on()\nc.toggle_on()\nc.toggle_off()\nc.toggle_on()'
    assert sig(text) == ["Navigate coffeemachine#1", "ToggleOn coffeemachine#1",
                         "ToggleOff coffeemachine#1", "ToggleOn coffeemachine#1"]


def test_pickup_of_held_object_is_dropped() -> None:
    compiled = compile_program('m = InteractionObject("Mug")\nm.pickup()\nm.pickup()', catalog=STUB)
    assert compiled.signature() == ["Navigate mug#1", "Pickup mug#1"]
    assert any("already holding" in n for n in compiled.notes)


def test_pickup_and_place_expands() -> None:
    assert sig('m = InteractionObject("Mug")\ns = InteractionObject("SinkBasin")\nm.pickup_and_place(s)') == [
        "Navigate mug#1", "Pickup mug#1", "Navigate sinkbasin#1", "Place mug#1 -> sinkbasin#1",
    ]


def test_place_without_pickup_gets_one() -> None:
    compiled = compile_program(
        'm = InteractionObject("Mug")\ns = InteractionObject("SinkBasin")\nm.place(s)', catalog=STUB
    )
    assert compiled.signature() == [
        "Navigate mug#1", "Pickup mug#1", "Navigate sinkbasin#1", "Place mug#1 -> sinkbasin#1",
    ]
    nav, pick, nav2, place = compiled.subgoals
    assert (nav.line, pick.line, nav2.line, place.line) == (0, 0, 3, 3)
    assert pick.note == "inserted: pick up mug#1 before placing it"


def test_place_after_pickup_gets_no_extra_pickup() -> None:
    text = 'm = InteractionObject("Mug")\ns = InteractionObject("SinkBasin")\nm.pickup()\nm.place(s)\nm.place(s)'
    assert sig(text) == [
        "Navigate mug#1", "Pickup mug#1", "Navigate sinkbasin#1", "Place mug#1 -> sinkbasin#1",
        # the second place: the mug is no longer held, so it is picked up again (already there)
        "Navigate mug#1", "Pickup mug#1", "Navigate sinkbasin#1", "Place mug#1 -> sinkbasin#1",
    ]


def test_pour_without_pickup_gets_one() -> None:
    text = 'c = InteractionObject("Cup")\np = InteractionObject("HousePlant")\nc.pickup()\nc.pour(p)\nc.pour(p)'
    assert sig(text) == ["Navigate cup#1", "Pickup cup#1", "Navigate houseplant#1", "Pour cup#1 -> houseplant#1"]


def test_put_down_of_object_not_held_is_dropped() -> None:
    text = (
        'k = InteractionObject("Knife")\nm = InteractionObject("Mug")\n'
        "k.pickup()\nm.put_down()\nk.put_down()\nk.put_down()"
    )
    compiled = compile_program(text, catalog=STUB)
    assert compiled.signature() == ["Navigate knife#1", "Pickup knife#1", "PutDown knife#1"]
    assert sum("put_down() of" in n for n in compiled.notes) == 2


def test_put_down_at_start_is_kept() -> None:
    # a corrective program may start with something in hand
    assert sig('k = InteractionObject("Knife")\nk.put_down()') == ["PutDown knife#1"]


def test_open_close_only_for_openable_classes() -> None:
    text = 'f = InteractionObject("Fridge")\nf.open()\nm = InteractionObject("Mug")\nm.open()\nm.close()'
    with pytest.raises(SemanticError) as info:
        compile_program(text, catalog=STUB)
    assert str(info.value) == (
        "line 4: 'm.open()': a Mug cannot be opened or closed; only things such as Fridge, Cabinet or "
        "Microwave open"
    )


def test_openable_fallback_for_catalogs_without_flags() -> None:
    text = 'm = InteractionObject("Mug")\nm.open()\nf = InteractionObject("Fridge")\nf.open()'
    assert sig(text, catalog=["Mug", "Fridge"]) == ["Navigate fridge#1", "Open fridge#1"]


def test_macros_need_no_navigate_and_reset_position() -> None:
    text = 'm = InteractionObject("Mug")\nm.go_to()\nm.clean()\nm.go_to()\nm.fill_up()\nm.empty()'
    assert sig(text) == ["Navigate mug#1", "Clean mug#1", "Navigate mug#1", "FillUp mug#1", "Empty mug#1"]


def test_macro_leaves_hands_unknown_so_place_picks_up() -> None:
    text = 'b = InteractionObject("BreadSliced")\nb.toast()\np = InteractionObject("Plate")\nb.place(p)'
    assert sig(text) == ["Toast breadsliced#1", "Navigate breadsliced#1", "Pickup breadsliced#1",
                         "Navigate plate#1", "Place breadsliced#1 -> plate#1"]


def test_agent_moves_are_kept_and_not_collapsed() -> None:
    text = "move_back()\nmove_back()\nagent = AgentCorrective()\nagent.do_nothing()\n" \
           'm = InteractionObject("Mug")\nm.go_to()\nmove_closer()\nm.pickup()'
    compiled = compile_program(text, catalog=STUB)
    assert compiled.signature() == [
        "MoveBack", "MoveBack", "DoNothing", "Navigate mug#1", "MoveCloser", "Navigate mug#1", "Pickup mug#1",
    ]
    assert compiled.subgoals[0].target is None


# ---------------------------------------------------------------------------------- attributes


@pytest.mark.parametrize(
    ("attribute", "expected"),
    [
        ("clean", ["Clean mug#1"]),
        ("cooked", ["Cook mug#1"]),
        ("toasted", ["Toast mug#1"]),
        ("filled", ["FillUp mug#1"]),
        ("sliced", ["Navigate mug#1", "Slice mug#1"]),
    ],
)
def test_attribute_becomes_macro_before_first_use(attribute: str, expected: list[str]) -> None:
    text = f'm = InteractionObject("Mug", attributes=["{attribute}"])\nm.pickup()'
    assert sig(text)[: len(expected)] == expected
    assert sig(text)[-1] == "Pickup mug#1"


def test_attributes_in_canonical_order() -> None:
    text = 'p = InteractionObject("Potato", attributes=["cooked", "sliced"])\np.go_to()'
    assert sig(text) == ["Navigate potato#1", "Slice potato#1", "Cook potato#1", "Navigate potato#1"]


def test_attribute_emitted_at_first_use_not_at_construction() -> None:
    # the slice is toasted only after the bread has been sliced
    text = (
        'toast = InteractionObject("BreadSliced", attributes=["toasted"])\n'
        'bread = InteractionObject("Bread")\nbread.slice()\n'
        'plate = InteractionObject("Plate")\ntoast.pickup_and_place(plate)'
    )
    assert sig(text) == [
        "Navigate bread#1", "Slice bread#1", "Toast breadsliced#1",
        "Navigate breadsliced#1", "Pickup breadsliced#1", "Navigate plate#1", "Place breadsliced#1 -> plate#1",
    ]


def test_attribute_of_receptacle_emitted_before_the_statement() -> None:
    text = 'm = InteractionObject("Mug")\np = InteractionObject("Plate", attributes=["clean"])\nm.pickup()\nm.place(p)'
    assert sig(text) == ["Navigate mug#1", "Pickup mug#1", "Clean plate#1", "Navigate mug#1", "Pickup mug#1",
                         "Navigate plate#1", "Place mug#1 -> plate#1"]


def test_attribute_of_unused_object_emitted_at_construction() -> None:
    text = (
        'tomato = InteractionObject("Tomato", attributes=["sliced"])\n'
        's = InteractionObject("TomatoSliced")\np = InteractionObject("Plate")\ns.pickup_and_place(p)'
    )
    assert sig(text)[:2] == ["Navigate tomato#1", "Slice tomato#1"]


def test_explicit_method_replaces_attribute() -> None:
    text = 'm = InteractionObject("Mug", attributes=["clean"])\nm.pickup()\nm.clean()'
    compiled = compile_program(text, catalog=STUB)
    assert compiled.signature() == ["Navigate mug#1", "Pickup mug#1", "Clean mug#1"]
    assert any("left to the program's own clean() on line 3" in n for n in compiled.notes)


def test_sliced_attribute_of_a_piece_is_dropped() -> None:
    compiled = compile_program('b = InteractionObject("BreadSliced", attributes=["sliced", "toasted"])\nb.go_to()',
                               catalog=STUB)
    assert compiled.signature() == ["Toast breadsliced#1", "Navigate breadsliced#1"]
    assert any("already a piece" in n for n in compiled.notes)


# ---------------------------------------------------------------------------------- classes


def test_unknown_class_mapped_by_default_lexical_mapper() -> None:
    text = 'm = InteractionObject("coffee mug")\nf = InteractionObject("refrigerator")\nf.open()\nm.pickup()'
    compiled = compile_program(text, catalog=STUB)
    assert compiled.signature() == ["Navigate fridge#1", "Open fridge#1", "Navigate mug#1", "Pickup mug#1"]
    nav_fridge, _, nav_mug, pickup = compiled.subgoals
    assert "object class 'refrigerator' mapped to Fridge" in nav_fridge.note
    assert "object class 'coffee mug' mapped to Mug" in nav_mug.note
    assert pickup.note == ""
    assert nav_mug.target is not None and nav_mug.target.requested_class == "coffee mug"


def test_injected_mapper_is_used_only_for_unknown_classes() -> None:
    seen: list[str] = []

    def mapper(name: str) -> tuple[str, float]:
        seen.append(name)
        return "Cup", 0.71

    compiled = compile_program('a = InteractionObject("Chalice")\nb = InteractionObject("Mug")\na.place(b)',
                               catalog=STUB, class_mapper=mapper)
    assert seen == ["Chalice"]
    assert compiled.signature()[0] == "Navigate cup#1"
    assert "mapped to Cup (score 0.71)" in compiled.subgoals[0].note


def test_mapper_answer_outside_catalog_is_a_program_error() -> None:
    with pytest.raises(ProgramError, match="unknown object class 'Chalice'") as info:
        compile_program('a = InteractionObject("Chalice")\na.go_to()', catalog=STUB,
                        class_mapper=lambda name: ("Grail", 0.5))
    assert info.value.line == 1


def test_landmark_kept_and_mapped() -> None:
    compiled = compile_program('m = InteractionObject("Mug", landmark="counter")\nm.go_to()', catalog=STUB)
    ref = compiled.subgoals[0].target
    assert ref is not None and ref.landmark == "CounterTop"
    assert "landmark 'counter' mapped to CounterTop" in compiled.subgoals[0].note
    assert compile_program('m = InteractionObject("Mug", landmark="SinkBasin")\nm.go_to()',
                           catalog=STUB).objects[0].landmark == "SinkBasin"


def test_instance_keys_are_unique_per_construction() -> None:
    text = 'for i in range(3):\n    p = InteractionObject("Plate")\n    p.go_to()\nq = InteractionObject("plates")\nq.go_to()'
    compiled = compile_program(text, catalog=STUB)
    assert [o.instance_key for o in compiled.objects] == ["plate#1", "plate#2", "plate#3", "plate#4"]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Mug", "Mug"), ("mug", "Mug"), ("coffee_machine", "CoffeeMachine"), ("coffee mug", "Mug"),
        ("fridge", "Fridge"), ("Refrigerator", "Fridge"), ("sink", "SinkBasin"), ("stove", "StoveBurner"),
        ("table", "DiningTable"), ("knife", "Knife"), ("bread slice", "BreadSliced"),
        ("tomatoes", "Tomato"), ("knives", "Knife"), ("dirty mug", "Mug"), ("TomatoSlice", "TomatoSliced"),
        ("Coffe Machine", "CoffeeMachine"), ("kitchen counter", "CounterTop"),
    ],
)
def test_lexical_mapper(name: str, expected: str) -> None:
    from helper_agent.world.catalog import load_catalog

    mapped, score = LexicalClassMapper(load_catalog().names())(name)
    assert mapped == expected
    assert 0.0 <= score <= 1.0


def test_lexical_mapper_is_deterministic_and_total() -> None:
    mapper = LexicalClassMapper(["Mug", "Cup", "Plate"])
    assert mapper("spaceship") == mapper("spaceship")
    assert mapper("spaceship")[0] in {"Mug", "Cup", "Plate"}
    assert mapper("")[0] in {"Mug", "Cup", "Plate"}
    assert mapper("Mug") == ("Mug", 1.0)


def test_catalog_view_accepts_names() -> None:
    view = CatalogView(["Mug", "Fridge"])
    assert "Mug" in view and "Cup" not in view
    assert view.openable("Fridge") and not view.openable("Mug")
    assert view.is_piece("BreadSliced") and not view.is_piece("Bread")


# ---------------------------------------------------------------------------------- output


def test_empty_output_is_an_error() -> None:
    with pytest.raises(SemanticError, match="does nothing"):
        compile_program('m = InteractionObject("Mug")\nm.open()', catalog=["Mug"])
    with pytest.raises(SemanticError, match="does nothing"):
        compile_program('m = InteractionObject("Mug")\n# and nothing else', catalog=STUB)


def test_subgoal_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(program_api, "MAX_SUBGOALS", 5)
    with pytest.raises(ProgramError, match="more than 5 subgoals"):
        compile_program('for i in range(3):\n    m = InteractionObject("Mug")\n    m.pickup()', catalog=STUB)


def test_compile_accepts_parsed_program_and_keeps_source() -> None:
    text = "Here:\n```python\nm = InteractionObject('Mug')\nm.pickup()\n```"
    parsed = parse_program(text)
    compiled = compile_program(parsed, catalog=STUB)
    assert compiled.parsed is parsed
    assert compiled.source == parsed.source
    assert "took the code from the fenced block" in compiled.notes


def test_describe_is_stable_and_printable() -> None:
    text = (GOOD / "coffee.txt").read_text()
    a = compile_program(text, catalog=STUB).describe()
    b = compile_program(text, catalog=STUB).describe()
    assert a == b
    lines = a.split("\n")
    assert lines[0] == "1. Clean(clean Mug)  [attribute 'clean'] <mug#1>  (line 2)"
    assert lines[4] == "5. Place(clean Mug -> CoffeeMachine) <mug#1 -> coffeemachine#1>  (line 4)"
    assert all(s.describe() in line for s, line in zip(compile_program(text, catalog=STUB).subgoals, lines,
                                                       strict=True))


def test_default_catalog_is_the_packaged_one() -> None:
    compiled = compile_program('m = InteractionObject("sink")\nm.go_to()\ns = InteractionObject("Sink")\ns.go_to()')
    assert compiled.signature() == ["Navigate sinkbasin#1", "Navigate sink#1"]


# ---------------------------------------------------------------------------------- rendering


@pytest.mark.parametrize("path", GOOD_FILES, ids=[p.stem for p in GOOD_FILES])
def test_render_round_trips(path: Path) -> None:
    compiled = compile_program(path.read_text(encoding="utf-8"))
    text = render_program(compiled.subgoals)
    again = compile_program(text)
    assert again.signature() == compiled.signature()
    assert [s.target for s in again.subgoals if s.target] != []


def test_render_failed_subgoal() -> None:
    compiled = compile_program('m = InteractionObject("Mug", landmark="CounterTop")\nm.pickup()', catalog=STUB)
    assert render_program(compiled.subgoals[-1:]) == (
        'mug_1 = InteractionObject(\'Mug\', landmark=\'CounterTop\')\nmug_1.pickup()\n'
    )
    assert render_program([]) == ""
