"""The object catalog: AI2-THOR affordances, TEACh classes, receptacle relations, validation, errors.

Tests against the public reference data (TEACh's custom object classes, ALFRED's object facts and floor
plans) read the folder ``HELPER_REFERENCE_DIR`` names and skip without it; nothing from there is in the repository.
"""

from __future__ import annotations

import dataclasses
import glob
import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from reference_data import reference_path

from helper_agent.world.catalog import (
    ROOM_TYPES,
    Catalog,
    CatalogError,
    ObjectType,
    UnknownObjectType,
    load_catalog,
)

SLICED = {
    "Apple": "AppleSliced",
    "Bread": "BreadSliced",
    "Lettuce": "LettuceSliced",
    "Potato": "PotatoSliced",
    "Tomato": "TomatoSliced",
    "Egg": "EggCracked",
}


def _reference_json(relative: str) -> Any:
    path = reference_path(relative)
    if not path.is_file():
        pytest.skip(f"reference data not available: {path}")
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


@pytest.fixture()
def raw() -> dict[str, Any]:
    """A fresh, mutable copy of the packaged catalog data."""
    text = (
        resources.files("helper_agent.world").joinpath("data/object_catalog.json").read_text(encoding="utf-8")
    )
    return json.loads(text)


# --------------------------------------------------------------------------- loading


def test_packaged_catalog_loads_and_is_cached(catalog: Catalog) -> None:
    assert load_catalog() is catalog
    assert catalog.version == 1
    assert 120 <= len(catalog) <= 140
    assert len(catalog.names()) == len(catalog)
    assert catalog.names() == sorted(catalog.names())
    assert isinstance(catalog.get("Mug"), ObjectType)


def test_load_from_explicit_path_reads_afresh(tmp_path: Path, raw: dict[str, Any]) -> None:
    raw["types"]["Mug"]["capacity"] = 3
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    mine = load_catalog(path)
    assert mine.get("Mug").capacity == 3
    assert load_catalog().get("Mug").capacity == 1
    assert mine.source == str(path)


def test_catalog_is_read_only(catalog: Catalog) -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        catalog.get("Mug").pickupable = False  # type: ignore[misc]
    with pytest.raises(TypeError):
        catalog.types["Mug"] = catalog.get("Cup")  # type: ignore[index]
    assert isinstance(catalog.get("Mug").spawn_in, tuple)
    assert isinstance(catalog.get("Mug").simbot_classes, tuple)


# --------------------------------------------------------------------------- AI2-THOR facts


def test_mug_entry(catalog: Catalog) -> None:
    mug = catalog.get("Mug")
    assert (mug.pickupable, mug.receptacle, mug.openable, mug.toggleable) == (True, True, False, False)
    assert (mug.dirtyable, mug.can_fill_with_liquid, mug.breakable, mug.moveable) == (True, True, True, False)
    assert mug.sliceable is False and mug.sliced_type is None and mug.slice_count == 0
    assert mug.simbot_classes[0] == "Mug"
    assert {"Tableware", "Drinkware"} <= set(mug.simbot_classes)
    assert "Kitchen" in mug.rooms
    assert mug.capacity == 1
    assert mug.blocks_floor is False
    assert 0.05 <= mug.height <= 0.2


def test_sliceable_types_and_their_pieces(catalog: Catalog) -> None:
    assert sorted(n for n in catalog.names() if catalog.get(n).sliceable) == sorted(SLICED)
    for whole, piece in SLICED.items():
        info = catalog.get(whole)
        assert info.sliced_type == piece
        assert catalog.get(piece).pickupable
        assert not catalog.get(piece).sliceable
        assert catalog.base_type(piece) == whole
        assert catalog.base_type(whole) == whole
    assert catalog.get("Egg").slice_count == 1
    for whole in ("Apple", "Bread", "Lettuce", "Potato", "Tomato"):
        assert 6 <= catalog.get(whole).slice_count <= 10, whole
    assert catalog.base_type("Mug") == "Mug"


def test_cookable(catalog: Catalog) -> None:
    for name in ("Potato", "Egg", "BreadSliced", "PotatoSliced", "EggCracked"):
        assert catalog.get(name).cookable, name
    for piece in SLICED.values():
        assert catalog.get(piece).cookable, piece
    for name in ("Bread", "Tomato", "Lettuce", "Apple", "Mug", "Plate"):
        assert not catalog.get(name).cookable, name


def test_toggleable_heat_and_cold(catalog: Catalog) -> None:
    for name in (
        "Faucet", "StoveKnob", "StoveBurner", "Microwave", "Toaster", "CoffeeMachine", "DeskLamp",
        "FloorLamp", "LightSwitch", "Television", "Laptop", "ShowerHead",
    ):  # fmt: skip
        assert catalog.get(name).toggleable, name
    assert not catalog.get("Fridge").toggleable
    heat = sorted(n for n in catalog.names() if catalog.get(n).is_heat_source)
    assert heat == ["Microwave", "StoveBurner", "Toaster"]
    assert [n for n in catalog.names() if catalog.get(n).is_cold_source] == ["Fridge"]


def test_openable(catalog: Catalog) -> None:
    for name in ("Cabinet", "Drawer", "Fridge", "Microwave", "Safe", "Box", "Laptop", "Book", "Toilet"):
        assert catalog.get(name).openable, name
    for name in ("CounterTop", "Shelf", "SinkBasin", "Mug", "Toaster", "StoveBurner"):
        assert not catalog.get(name).openable, name


def test_dirtyable_and_fillable(catalog: Catalog) -> None:
    dirtyable = sorted(n for n in catalog.names() if catalog.get(n).dirtyable)
    assert dirtyable == ["Bed", "Bowl", "Cloth", "Cup", "Mirror", "Mug", "Pan", "Plate", "Pot"]
    for name in ("Mug", "Cup", "Bowl", "Pot", "Kettle", "WateringCan", "WineBottle", "Bottle", "HousePlant"):
        assert catalog.get(name).can_fill_with_liquid, name
    for name in ("Plate", "Pan", "SinkBasin", "Fork"):
        assert not catalog.get(name).can_fill_with_liquid, name


def test_used_up_and_breakable(catalog: Catalog) -> None:
    used_up = {n for n in catalog.names() if catalog.get(n).can_be_used_up and not catalog.get(n).legacy}
    assert used_up == {"PaperTowelRoll", "SoapBottle", "TissueBox", "ToiletPaper"}
    for name in ("Mug", "Plate", "Egg", "Window", "Vase", "Laptop"):
        assert catalog.get(name).breakable, name
    assert not catalog.get("Pot").breakable


def test_pickupable_and_moveable_are_disjoint(catalog: Catalog) -> None:
    for name in catalog.names():
        info = catalog.get(name)
        assert not (info.pickupable and info.moveable), name
    assert catalog.get("Sofa").moveable and not catalog.get("Sofa").pickupable


def test_sink_and_bathtub_pairs(catalog: Catalog) -> None:
    for fixture, basin in (("Sink", "SinkBasin"), ("Bathtub", "BathtubBasin")):
        assert fixture in catalog and basin in catalog
        assert catalog.get(fixture).placement_target == basin
        assert catalog.types_in_class(fixture) == sorted([fixture, basin])
        assert catalog.types_in_class(basin) == sorted([fixture, basin])
        assert catalog.accepted_by(fixture) == []
    assert catalog.accepts("SinkBasin", "Plate")
    assert not catalog.accepts("Sink", "Plate")
    assert catalog.accepts("BathtubBasin", "SoapBar")
    assert not catalog.accepts("Bathtub", "SoapBar")


# --------------------------------------------------------------------------- relations


def test_specific_receptacle_relations(catalog: Catalog) -> None:
    assert catalog.accepted_by("CoffeeMachine") == ["Mug"]
    assert catalog.accepted_by("Toaster") == ["BreadSliced"]
    assert catalog.accepted_by("StoveBurner") == ["Kettle", "Pan", "Pot"]
    assert catalog.accepts("Fridge", "Tomato")
    assert catalog.accepts("Microwave", "PotatoSliced")
    assert catalog.accepts("Pot", "Potato")
    assert catalog.accepts("Plate", "TomatoSliced")
    assert catalog.accepts("TowelHolder", "Towel")
    assert not catalog.accepts("Toaster", "Potato")
    assert not catalog.accepts("Mug", "Plate")
    assert not catalog.accepts("Knife", "Apple")  # not a receptacle at all
    assert not catalog.accepts("CounterTop", "Fridge")  # not pickupable
    mug_homes = catalog.receptacles_for("Mug")
    assert {"CoffeeMachine", "SinkBasin", "CounterTop", "Cabinet", "Microwave", "Fridge"} <= set(mug_homes)
    assert mug_homes == sorted(mug_homes)


def test_controls(catalog: Catalog) -> None:
    assert catalog.controlled_type("StoveKnob") == "StoveBurner"
    assert catalog.controlled_type("Faucet") == "SinkBasin"
    assert catalog.controlled_type("ShowerHead") == "BathtubBasin"
    assert catalog.controlled_type("LightSwitch") is None
    assert catalog.controlled_type("Toaster") is None


def test_classes(catalog: Catalog) -> None:
    assert catalog.types_in_class("Drinkware") == ["Bottle", "Cup", "Mug"]
    assert catalog.types_in_class("Dishware") == ["Bowl", "Plate"]
    assert catalog.types_in_class("Tables") == ["CoffeeTable", "Desk", "DiningTable", "Shelf", "SideTable"]
    assert catalog.types_in_class("Mug") == ["Mug"]
    assert catalog.types_in_class("NoSuchClass") == []
    assert set(catalog.types_in_class("Food")) >= set(SLICED) | set(SLICED.values())
    assert "Tableware" in catalog.classes()


# --------------------------------------------------------------------------- structural invariants


def test_every_referenced_type_exists(catalog: Catalog, raw: dict[str, Any]) -> None:
    types = raw["types"]
    for receptacle, objs in raw["receptacle_accepts"].items():
        assert receptacle in types
        assert all(o in types for o in objs), receptacle
    for toggle, target in raw["controls"].items():
        assert toggle in types and (target is None or target in types)
    for name, entry in types.items():
        assert all(r in types for r in entry["spawn_in"]), name
        assert entry["sliced_type"] is None or entry["sliced_type"] in types
        assert entry["placement_target"] is None or entry["placement_target"] in types
        assert set(entry["rooms"]) <= set(ROOM_TYPES)
    assert sorted(types) == catalog.names()


def test_accepts_keys_are_receptacles_and_members_pickupable(catalog: Catalog, raw: dict[str, Any]) -> None:
    for receptacle, objs in raw["receptacle_accepts"].items():
        assert catalog.get(receptacle).receptacle, receptacle
        for obj in objs:
            assert catalog.get(obj).pickupable, (receptacle, obj)
    for name in catalog.names():
        info = catalog.get(name)
        if info.receptacle and catalog.accepted_by(name):
            assert info.capacity >= 1, name
        if not info.receptacle:
            assert info.capacity == 0 and info.surface_height is None and not catalog.accepted_by(name), name


def test_controls_are_toggleable(catalog: Catalog, raw: dict[str, Any]) -> None:
    for toggle in raw["controls"]:
        assert catalog.get(toggle).toggleable, toggle


def test_sliced_types_have_sliceable_bases(catalog: Catalog) -> None:
    pieces = [n for n in catalog.names() if n.endswith(("Sliced", "Cracked"))]
    assert sorted(pieces) == sorted(SLICED.values())
    for piece in pieces:
        base = catalog.base_type(piece)
        assert base != piece and catalog.get(base).sliceable and catalog.get(base).sliced_type == piece


def test_spawn_in_entries_accept_the_type(catalog: Catalog) -> None:
    for name in catalog.names():
        for host in catalog.get(name).spawn_in:
            assert catalog.accepts(host, name), (name, host)


def test_every_generated_pickupable_has_somewhere_to_start(catalog: Catalog) -> None:
    """Pickupable whole objects that rooms can contain need a plausible start (the generator relies on it)."""
    for name in catalog.names():
        info = catalog.get(name)
        if info.pickupable and info.rooms and catalog.base_type(name) == name:
            assert info.spawn_in, name
        if info.legacy:
            assert info.rooms == (), name  # legacy types are never generated


def test_fixtures_have_floor_and_surface_facts(catalog: Catalog) -> None:
    for name in (
        "Fridge",
        "CounterTop",
        "Bed",
        "Sofa",
        "DiningTable",
        "Cabinet",
        "Sink",
        "Toilet",
        "Bathtub",
    ):
        assert catalog.get(name).blocks_floor, name
    for name in ("Mug", "Microwave", "Toaster", "CoffeeMachine", "Faucet", "Television", "Painting"):
        assert not catalog.get(name).blocks_floor, name
    assert catalog.get("CounterTop").surface_height == pytest.approx(0.9)
    assert catalog.get("StoveBurner").surface_height == pytest.approx(0.95)
    assert catalog.get("Cabinet").surface_height == pytest.approx(0.4)
    assert catalog.get("CounterTop").capacity == 16
    assert catalog.get("CoffeeMachine").capacity == 1
    assert catalog.get("Toaster").capacity == 2
    for name in catalog.names():
        info = catalog.get(name)
        assert info.height > 0, name
        if info.receptacle and not info.pickupable:
            assert info.surface_height is not None, name


def test_room_templates_only_name_catalog_types(catalog: Catalog) -> None:
    """The generator's fixtures, appliances and essentials must be catalog types."""
    rooms = pytest.importorskip("helper_agent.world.rooms")
    for template in rooms.TEMPLATES.values():
        names = [m for unit in template.units for m in unit.members]
        names += [a for a, _ in template.appliances] + list(template.essentials)
        for name in names:
            assert name in catalog, (template.room_type, name)


# --------------------------------------------------------------------------- validation errors


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda d: d["types"]["Mug"].__setitem__("capacity", "two"), "types.Mug.capacity"),
        (lambda d: d["types"]["Mug"].__setitem__("pickupable", "yes"), "types.Mug.pickupable"),
        (lambda d: d["types"]["Mug"].pop("receptacle"), "types.Mug.receptacle"),
        (lambda d: d["types"]["Mug"].__setitem__("pickupabel", True), "types.Mug.pickupabel"),
        (lambda d: d["types"]["Mug"].__setitem__("rooms", ["Garage"]), "types.Mug.rooms"),
        (lambda d: d["types"]["Mug"].__setitem__("height", -1.0), "types.Mug.height"),
        (
            lambda d: d["types"]["Tomato"].__setitem__("sliced_type", "TomatoSlice"),
            "types.Tomato.sliced_type",
        ),
        (lambda d: d["types"]["Tomato"].__setitem__("slice_count", 0), "types.Tomato.slice_count"),
        (lambda d: d["types"]["Mug"].__setitem__("spawn_in", ["Toaster"]), "types.Mug.spawn_in"),
        (
            lambda d: d["types"]["Mug"].__setitem__("simbot_classes", ["Drinkware"]),
            "types.Mug.simbot_classes",
        ),
        (lambda d: d["types"]["Sofa"].__setitem__("pickupable", True), "types.Sofa.moveable"),
        (lambda d: d["receptacle_accepts"]["Toaster"].append("Tomatoe"), "receptacle_accepts.Toaster"),
        (lambda d: d["receptacle_accepts"].__setitem__("Knife", ["Apple"]), "receptacle_accepts.Knife"),
        (lambda d: d["controls"].__setitem__("Fridge", "Light"), "controls.Fridge"),
        (lambda d: d.__setitem__("version", 99), "version"),
        (lambda d: d.pop("types"), "types"),
    ],
)
def test_malformed_data_names_source_type_and_field(raw: dict[str, Any], mutate: Any, expected: str) -> None:
    mutate(raw)
    with pytest.raises(ValueError) as info:
        Catalog(raw, source="my_catalog.json")
    message = str(info.value)
    assert isinstance(info.value, CatalogError)
    assert "my_catalog.json" in message
    assert expected in message


def test_unknown_names_in_relations_get_suggestions(raw: dict[str, Any]) -> None:
    raw["receptacle_accepts"]["Toaster"].append("Tomatoe")
    with pytest.raises(CatalogError, match=r"did you mean 'Tomato'"):
        Catalog(raw)


def test_non_object_and_non_json_inputs(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="expected a JSON object"):
        Catalog([], source="list.json")  # type: ignore[arg-type]
    bad = tmp_path / "broken.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(CatalogError, match=r"broken\.json.*not JSON"):
        load_catalog(bad)


# --------------------------------------------------------------------------- unknown types


def test_unknown_type_suggests_close_names(catalog: Catalog) -> None:
    with pytest.raises(UnknownObjectType) as info:
        catalog.get("Tomatoe")
    assert isinstance(info.value, KeyError)
    assert info.value.name == "Tomatoe"
    assert info.value.suggestions[0] == "Tomato"
    assert str(info.value).startswith("unknown object type 'Tomatoe'; did you mean 'Tomato'")


def test_unknown_type_is_case_insensitive_in_suggestions(catalog: Catalog) -> None:
    with pytest.raises(UnknownObjectType, match=r"did you mean 'SinkBasin'\?"):
        catalog.get("sinkbasin")
    with pytest.raises(UnknownObjectType) as info:
        catalog.get("Spaceship")
    assert info.value.suggestions == []
    assert str(info.value) == "unknown object type 'Spaceship'"


def test_lookups_reject_unknown_types(catalog: Catalog) -> None:
    assert "Mugg" not in catalog
    assert 3 not in catalog
    for call in (
        lambda: catalog.accepts("CoffeeMachine", "Mugg"),
        lambda: catalog.accepts("CofeeMachine", "Mug"),
        lambda: catalog.receptacles_for("Mugg"),
        lambda: catalog.controlled_type("StoveKnobb"),
        lambda: catalog.base_type("TomatoSlice"),
    ):
        with pytest.raises(UnknownObjectType):
            call()


# --------------------------------------------------------------------------- reference cross-checks


def test_every_teach_type_exists_with_teach_classes(catalog: Catalog) -> None:
    classes = _reference_json("teach/ai2thor_resources/custom_object_classes.json")
    pairs = {"Sink": "SinkBasin", "SinkBasin": "Sink", "Bathtub": "BathtubBasin", "BathtubBasin": "Bathtub"}
    missing = [t for t in classes if t not in catalog]
    assert missing == []
    mismatched = {}
    for name, expected in classes.items():
        ours = set(catalog.get(name).simbot_classes) - ({name, pairs.get(name, "")} - set(expected))
        if ours != set(expected):
            mismatched[name] = (sorted(ours), sorted(expected))
    assert mismatched == {}
    print(f"\nTEACh custom object classes: {len(classes)} types, all present, classes identical")


def test_every_alfred_object_and_receptacle_exists(catalog: Catalog) -> None:
    facts = _reference_json("alfred_layouts/alfred_object_facts.json")
    names = set(facts["OBJECTS"]) | set(facts["RECEPTACLES"]) | set(facts["NON_RECEPTACLES"])
    names |= set(facts["OBJ_PARENTS"]) | set(facts["VAL_RECEPTACLE_OBJECTS"])
    assert sorted(n for n in names if n not in catalog) == []
    for child, parent in facts["OBJ_PARENTS"].items():
        assert catalog.base_type(child) == parent, child
    for name in facts["OPENABLE_CLASS_LIST"]:
        assert catalog.get(name).openable, name
    for name in facts["MOVABLE_RECEPTACLES"]:
        assert catalog.get(name).pickupable and catalog.get(name).receptacle, name
    assert sorted(n for n in catalog.names() if catalog.get(n).sliceable) == sorted(
        facts["VAL_ACTION_OBJECTS"]["Sliceable"]
    )
    for name in facts["VAL_ACTION_OBJECTS"]["Toggleable"]:
        assert catalog.get(name).toggleable, name


def test_every_type_in_the_alfred_floor_plans_exists(catalog: Catalog) -> None:
    root = reference_path("alfred_layouts")
    files = sorted(glob.glob(str(root / "FloorPlan*-objects.json")))
    if not files:
        pytest.skip(f"reference floor plans not available: {root}")
    seen: set[str] = set()
    for path in files:
        seen |= set(json.loads(Path(path).read_text(encoding="utf-8")))
    assert sorted(t for t in seen if t not in catalog) == []


def test_accepts_agrees_with_alfred(catalog: Catalog) -> None:
    """Agreement with ALFRED's VAL_RECEPTACLE_OBJECTS over every (receptacle, object) pair it covers.

    ALFRED's lists are a task-generation whitelist; AI2-THOR itself lets any object that fits sit on a
    surface, so we accept a little more (e.g. food on a desk): recall must be near total, precision high.
    """
    facts = _reference_json("alfred_layouts/alfred_object_facts.json")
    theirs: dict[str, list[str]] = facts["VAL_RECEPTACLE_OBJECTS"]
    objects = sorted({o for objs in theirs.values() for o in objs})
    agree = total = true_pos = false_pos = false_neg = 0
    for receptacle, accepted in theirs.items():
        for obj in objects:
            ours, ref = catalog.accepts(receptacle, obj), obj in accepted
            total += 1
            agree += ours == ref
            true_pos += ours and ref
            false_pos += ours and not ref
            false_neg += ref and not ours
    agreement = agree / total
    recall = true_pos / (true_pos + false_neg)
    precision = true_pos / (true_pos + false_pos)
    print(
        f"\nALFRED VAL_RECEPTACLE_OBJECTS: {len(theirs)} receptacles x {len(objects)} objects = {total} pairs; "
        f"agreement {agreement:.3f}, recall {recall:.3f}, precision {precision:.3f}"
    )
    assert agreement >= 0.95
    assert recall >= 0.98
    assert precision >= 0.85
