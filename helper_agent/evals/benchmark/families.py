"""TEACh task families for the built-in benchmark: parameters, gold programs, and what a scene needs.

Each family maps a scene (the object types it has, with counts) to a feasible TEACh task instance:
the TEACh task name and parameters (checked by `teach`), a gold program in HELPER's API (run by the
executor to get the reference trajectory), the slots the dialogue writer phrases, and the set-up the
scene needs (e.g. the dishes to wash start dirty). Families that a scene cannot support return None.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from helper_agent.world.catalog import load_catalog

SERVING_SPOTS = ("DiningTable", "CounterTop")
DIRTY_DISHES = ("Plate", "Mug", "Bowl", "Cup", "Pan", "Pot")
SLICEABLE_FOOD = ("Tomato", "Lettuce", "Potato", "Apple", "Bread")


@dataclass(frozen=True)
class FamilyInstance:
    """A concrete task for one scene."""

    family: str
    task_name: str
    params: tuple[str, ...]
    program: str
    slots: dict[str, str] = field(default_factory=dict)
    make_dirty: tuple[str, ...] = ()  # object types whose every instance starts dirty
    rooms: tuple[str, ...] = ("Kitchen",)


Builder = Callable[[Counter[str], random.Random], FamilyInstance | None]


def _has(types: Counter[str], *needed: str) -> bool:
    return all(types[t] > 0 for t in needed)


def _var(name: str) -> str:
    out = "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")
    return out.replace("_sliced", "_slice")


def _cook_ok(types: Counter[str]) -> bool:
    return _has(types, "Microwave") or _has(types, "Pan", "StoveBurner", "StoveKnob")


def _clean_plate_lines(var: str = "plate", kind: str = "Plate") -> list[str]:
    return [
        f'{var} = InteractionObject("{kind}", attributes=["clean"])',
        f"{var}.clean()",
        f"{var}.put_down()",
    ]


def _plate_of_toast_lines() -> list[str]:
    """Toast a bread slice and serve it on a plate washed first (Plate Of Toast, and breakfast's toast)."""
    return [
        'bread_slice = InteractionObject("BreadSliced")',
        "bread_slice.toast()",
        *_clean_plate_lines(),
        "bread_slice.pickup_and_place(plate)",
    ]


# --------------------------------------------------------------------------- families
def toast(types: Counter[str], rng: random.Random) -> FamilyInstance | None:
    if not _has(types, "Bread", "Knife", "Toaster"):
        return None
    program = ['bread_slice = InteractionObject("BreadSliced")', "bread_slice.toast()"]
    return FamilyInstance("toast", "Toast", (), "\n".join(program))


def coffee(types: Counter[str], rng: random.Random) -> FamilyInstance | None:
    if not _has(types, "Mug", "CoffeeMachine", "SinkBasin"):
        return None
    program = [
        'mug = InteractionObject("Mug", attributes=["clean"])',
        "mug.clean()",
        'coffee_machine = InteractionObject("CoffeeMachine")',
        "mug.pickup_and_place(coffee_machine)",
        "coffee_machine.toggle_on()",
    ]
    return FamilyInstance("coffee", "Coffee", (), "\n".join(program), make_dirty=("Mug",))


def clean_x(types: Counter[str], rng: random.Random) -> FamilyInstance | None:
    options = [t for t in DIRTY_DISHES if types[t] > 0]
    if not options or not _has(types, "SinkBasin"):
        return None
    kind = rng.choice(options)
    var = _var(kind)
    program = [f'{var} = InteractionObject("{kind}", attributes=["clean"])', f"{var}.clean()"]
    return FamilyInstance("clean_x", "Clean X", (kind,), "\n".join(program), {"object": kind}, make_dirty=(kind,))


def clean_all_x(types: Counter[str], rng: random.Random) -> FamilyInstance | None:
    options = [t for t in DIRTY_DISHES if 2 <= types[t] <= 3]
    if not options or not _has(types, "SinkBasin"):
        return None
    kind = rng.choice(options)
    var = _var(kind)
    program = [
        f"for i in range({types[kind]}):",
        f'    {var} = InteractionObject("{kind}", attributes=["clean"])',
        f"    {var}.clean()",
        f"    {var}.put_down()",
    ]
    return FamilyInstance(
        "clean_all_x", "Clean All X", (kind,), "\n".join(program), {"object": kind}, make_dirty=(kind,)
    )


def sliced_x(types: Counter[str], rng: random.Random) -> FamilyInstance | None:
    options = [t for t in SLICEABLE_FOOD if types[t] > 0]
    if not options or not _has(types, "Knife"):
        return None
    kind = rng.choice(options)
    var = _var(kind)
    program = [f'{var} = InteractionObject("{kind}")', f"{var}.slice()"]
    return FamilyInstance("sliced_x", "Sliced X", (kind,), "\n".join(program), {"object": kind})


def cooked_slice(types: Counter[str], rng: random.Random) -> FamilyInstance | None:
    if not _has(types, "Potato", "Knife") or not _cook_ok(types):
        return None
    program = ['potato_slice = InteractionObject("PotatoSliced")', "potato_slice.cook()"]
    return FamilyInstance("cooked_slice", "Cooked Slice Of X", ("Potato",), "\n".join(program), {"object": "Potato"})


def plate_of_toast(types: Counter[str], rng: random.Random) -> FamilyInstance | None:
    if not _has(types, "Bread", "Knife", "Toaster", "Plate", "SinkBasin"):
        return None
    program = _plate_of_toast_lines()
    return FamilyInstance("plate_of_toast", "Plate Of Toast", (), "\n".join(program), make_dirty=("Plate",))


def n_slices_in_y(types: Counter[str], rng: random.Random) -> FamilyInstance | None:
    food = [t for t in ("Tomato", "Lettuce", "Apple", "Potato") if types[t] > 0]
    dishes = [t for t in ("Plate", "Bowl") if types[t] > 0]
    if not food or not dishes or not _has(types, "Knife", "SinkBasin"):
        return None
    kind, dish, n = rng.choice(food), rng.choice(dishes), rng.choice((1, 2))
    prep = "on" if dish == "Plate" else "in"
    slice_var = _var(kind) + "_slice"
    dish_var = _var(dish)
    program = [
        *_clean_plate_lines(dish_var, dish),
        f"for i in range({n}):",
        f'    {slice_var} = InteractionObject("{kind}Sliced")',
        f"    {slice_var}.pickup_and_place({dish_var})",
    ]
    return FamilyInstance(
        "n_slices_in_y",
        "N Slices Of X In Y",
        (str(n), kind, prep, dish),
        "\n".join(program),
        {"count": str(n), "object": kind, "receptacle": dish, "preposition": prep},
        make_dirty=(dish,),
    )


def n_cooked_slices_in_y(types: Counter[str], rng: random.Random) -> FamilyInstance | None:
    if not _has(types, "Potato", "Knife", "Plate", "SinkBasin") or not _cook_ok(types):
        return None
    n = rng.choice((1, 2))
    program = [
        *_clean_plate_lines(),
        f"for i in range({n}):",
        '    potato_slice = InteractionObject("PotatoSliced")',
        "    potato_slice.cook()",
        "    potato_slice.place(plate)",
    ]
    return FamilyInstance(
        "n_cooked_slices_in_y",
        "N Cooked Slices Of X In Y",
        (str(n), "Potato", "on", "Plate"),
        "\n".join(program),
        {"count": str(n), "object": "Potato", "receptacle": "Plate", "preposition": "on"},
        make_dirty=("Plate",),
    )


def boil_x(types: Counter[str], rng: random.Random) -> FamilyInstance | None:
    if not _has(types, "Potato", "Pot", "StoveBurner", "StoveKnob", "SinkBasin"):
        return None
    program = [
        'pot = InteractionObject("Pot")',
        "pot.fill_up()",
        'stove_burner = InteractionObject("StoveBurner")',
        "pot.place(stove_burner)",
        'potato = InteractionObject("Potato")',
        "potato.pickup_and_place(pot)",
        'stove_knob = InteractionObject("StoveKnob")',
        "stove_knob.toggle_on()",
        "stove_knob.toggle_off()",
    ]
    return FamilyInstance("boil_x", "Boil X", ("Potato",), "\n".join(program), {"object": "Potato"})


def omelette(types: Counter[str], rng: random.Random) -> FamilyInstance | None:
    if not _has(types, "Egg", "Knife") or not _cook_ok(types):
        return None
    program = ['egg = InteractionObject("EggCracked")', "egg.cook()"]
    return FamilyInstance("omelette", "Omelette", (), "\n".join(program))


def water_plant(types: Counter[str], rng: random.Random) -> FamilyInstance | None:
    containers = [t for t in ("Cup", "Mug", "Bowl", "Pot") if types[t] > 0]
    if not containers or not _has(types, "HousePlant", "SinkBasin"):
        return None
    kind = rng.choice(containers)
    var = _var(kind)
    program = [
        f'{var} = InteractionObject("{kind}")',
        f"{var}.fill_up()",
        'house_plant = InteractionObject("HousePlant")',
        f"{var}.pour(house_plant)",
    ]
    return FamilyInstance("water_plant", "Water Plant", (), "\n".join(program), {"container": kind})


def _put_all(
    types: Counter[str],
    rng: random.Random,
    receptacles: tuple[str, ...],
    max_count: int,
    one_receptacle: bool,
) -> FamilyInstance | None:
    """Move every instance of a type onto (or into one) receptacle of another type."""
    catalog = load_catalog()
    pairs = [
        (x, y)
        for x in sorted(types)
        if catalog.get(x).pickupable and 1 <= types[x] <= max_count and catalog.base_type(x) == x
        for y in receptacles
        if types[y] > 0
        and y != x
        and catalog.accepts(y, x)
        and (not one_receptacle or catalog.get(y).capacity >= types[x])
    ]
    if not pairs:
        return None
    x, y = rng.choice(pairs)
    x_var, y_var = _var(x), _var(y)
    program = [
        f'{y_var} = InteractionObject("{y}")',
        f"for i in range({types[x]}):",
        f'    {x_var} = InteractionObject("{x}")',
        f"    {x_var}.pickup_and_place({y_var})",
    ]
    family, task_name, prep = (
        ("put_all_x_in_one_y", "Put All X In One Y", "in") if one_receptacle else ("put_all_x_on_y", "Put All X On Y", "on")
    )
    return FamilyInstance(
        family,
        task_name,
        (x, prep, y),
        "\n".join(program),
        {"object": x, "receptacle": y, "preposition": prep},
        rooms=("Kitchen", "LivingRoom", "Bedroom"),
    )


def put_all_x_on_y(types: Counter[str], rng: random.Random) -> FamilyInstance | None:
    surfaces = ("DiningTable", "CounterTop", "Sofa", "CoffeeTable", "SideTable", "Desk", "Bed", "Shelf")
    return _put_all(types, rng, surfaces, max_count=3, one_receptacle=False)


def put_all_x_in_one_y(types: Counter[str], rng: random.Random) -> FamilyInstance | None:
    return _put_all(types, rng, ("Box", "Bowl", "Plate", "Pot", "Drawer", "Cabinet"), max_count=2, one_receptacle=True)


def toggle_all(types: Counter[str], rng: random.Random) -> FamilyInstance | None:
    options = [t for t in ("FloorLamp", "DeskLamp", "Television") if 1 <= types[t] <= 3]
    if not options:
        return None
    kind = rng.choice(options)
    var = _var(kind)
    program = [f"for i in range({types[kind]}):", f'    {var} = InteractionObject("{kind}")', f"    {var}.toggle_on()"]
    return FamilyInstance(
        "toggle_all", "Toggle X All Y", ("on", "1", kind), "\n".join(program), {"object": kind, "state": "on"},
        rooms=("LivingRoom", "Bedroom"),
    )


def _sandwich_lines(lettuce: int, tomato: int, plate: str = "plate") -> list[str]:
    lines = _clean_plate_lines(plate)
    lines += [
        "for i in range(2):",
        '    bread_slice = InteractionObject("BreadSliced")',
        "    bread_slice.toast()",
        f"    bread_slice.pickup_and_place({plate})",
    ]
    for kind, n in (("Lettuce", lettuce), ("Tomato", tomato)):
        if n:
            var = _var(kind) + "_slice"
            lines += [
                f"for i in range({n}):",
                f'    {var} = InteractionObject("{kind}Sliced")',
                f"    {var}.pickup_and_place({plate})",
            ]
    return lines


def sandwich(types: Counter[str], rng: random.Random) -> FamilyInstance | None:
    if not _has(types, "Bread", "Knife", "Toaster", "Plate", "Lettuce", "Tomato", "SinkBasin"):
        return None
    lettuce, tomato = rng.choice(((1, 1), (1, 0), (0, 1)))
    return FamilyInstance(
        "sandwich", "Sandwich", (str(lettuce), str(tomato)), "\n".join(_sandwich_lines(lettuce, tomato)),
        {"lettuce": str(lettuce), "tomato": str(tomato)}, make_dirty=("Plate",),
    )


def salad(types: Counter[str], rng: random.Random) -> FamilyInstance | None:
    if not _has(types, "Lettuce", "Tomato", "Potato", "Knife", "Plate", "SinkBasin") or not _cook_ok(types):
        return None
    lettuce, tomato, potato = rng.choice(((1, 1, 1), (1, 1, 0), (1, 0, 1), (2, 1, 0)))
    lines = _clean_plate_lines()
    for kind, n in (("Lettuce", lettuce), ("Tomato", tomato)):
        if n:
            var = _var(kind) + "_slice"
            lines += [
                f"for i in range({n}):",
                f'    {var} = InteractionObject("{kind}Sliced")',
                f"    {var}.pickup_and_place(plate)",
            ]
    if potato:
        lines += [
            f"for i in range({potato}):",
            '    potato_slice = InteractionObject("PotatoSliced")',
            "    potato_slice.cook()",
            "    potato_slice.place(plate)",
        ]
    return FamilyInstance(
        "salad", "Salad", (str(lettuce), str(tomato), str(potato)), "\n".join(lines),
        {"lettuce": str(lettuce), "tomato": str(tomato), "potato": str(potato)}, make_dirty=("Plate",),
    )


def breakfast(types: Counter[str], rng: random.Random) -> FamilyInstance | None:
    """Coffee plus one dish (toast on a plate, or a sandwich), served on a table or counter."""
    if not _has(types, "Mug", "CoffeeMachine", "Bread", "Knife", "Toaster", "Plate", "SinkBasin"):
        return None
    spots = [s for s in SERVING_SPOTS if types[s] > 0]
    spot = rng.choice(spots)
    spot_var = _var(spot)
    with_sandwich = _has(types, "Lettuce", "Tomato") and rng.random() < 0.4
    params = ["1", "0" if with_sandwich else "1", "0", "Plate", "0", "Plate", "1" if with_sandwich else "0",
              "1" if with_sandwich else "0", "0", "0", "0", "0", "0", spot]
    lines = [
        'mug = InteractionObject("Mug", attributes=["clean"])',
        "mug.clean()",
        'coffee_machine = InteractionObject("CoffeeMachine")',
        "mug.pickup_and_place(coffee_machine)",
        "coffee_machine.toggle_on()",
        f'{spot_var} = InteractionObject("{spot}")',
        f"mug.pickup_and_place({spot_var})",
    ]
    if with_sandwich:
        lines += _sandwich_lines(1, 0)
    else:
        lines += _plate_of_toast_lines()
    lines.append(f"plate.pickup_and_place({spot_var})")
    return FamilyInstance(
        "breakfast", "Breakfast", tuple(params), "\n".join(lines),
        {"dish": "sandwich" if with_sandwich else "toast", "receptacle": spot},
        make_dirty=("Plate", "Mug"),
    )


FAMILIES: dict[str, Builder] = {
    "coffee": coffee,
    "water_plant": water_plant,
    "toast": toast,
    "plate_of_toast": plate_of_toast,
    "n_slices_in_y": n_slices_in_y,
    "cooked_slice": cooked_slice,
    "n_cooked_slices_in_y": n_cooked_slices_in_y,
    "boil_x": boil_x,
    "omelette": omelette,
    "clean_x": clean_x,
    "clean_all_x": clean_all_x,
    "sliced_x": sliced_x,
    "put_all_x_on_y": put_all_x_on_y,
    "put_all_x_in_one_y": put_all_x_in_one_y,
    "toggle_all": toggle_all,
    "sandwich": sandwich,
    "salad": salad,
    "breakfast": breakfast,
}
FAMILY_ROOMS: dict[str, tuple[str, ...]] = {
    "put_all_x_on_y": ("Kitchen", "LivingRoom", "Bedroom"),
    "put_all_x_in_one_y": ("Kitchen", "LivingRoom", "Bedroom"),
    "toggle_all": ("LivingRoom", "Bedroom"),
}


def rooms_for(family: str) -> tuple[str, ...]:
    return FAMILY_ROOMS.get(family, ("Kitchen",))
