"""Room templates for the procedural generator: which fixtures a room of each TEACh type has.

A *unit* is a rectangle of floor cells shared by fixtures that stand together (a counter with the
cabinet under it and the drawer in it; a sink with its basin and faucet; a stove with four burners
and four knobs). Wall units stand flush against a wall; centre units stand in the open floor.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Unit:
    """A group of fixtures sharing one footprint of `length` cells along the wall and `depth` cells out."""

    name: str
    members: tuple[str, ...]
    length: int
    depth: int
    probability: float = 1.0
    count: tuple[int, int] = (1, 1)
    placement: str = "wall"  # "wall" or "centre"
    # Toggleables that drive another member of the same unit: (controller index, controlled index).
    controls: tuple[tuple[int, int], ...] = ()
    # Appliances that sit on a counter-like unit rather than having a unit of their own.
    host: bool = False


@dataclass(frozen=True)
class RoomTemplate:
    room_type: str
    width: tuple[int, int]
    depth: tuple[int, int]
    units: tuple[Unit, ...]
    # Appliances placed onto host units (shares its footprint), with probabilities.
    appliances: tuple[tuple[str, float], ...] = ()
    # Small objects that every room of this type has at least once.
    essentials: tuple[str, ...] = ()
    extra_objects: tuple[int, int] = (6, 12)
    dirty_probability: float = 0.4
    hidden_bias: float = 0.3
    floor_fixtures: tuple[str, ...] = field(default=())


KITCHEN = RoomTemplate(
    room_type="Kitchen",
    width=(16, 22),
    depth=(14, 20),
    units=(
        Unit("fridge", ("Fridge",), 3, 3),
        Unit("sink", ("CounterTop", "Sink", "SinkBasin", "Faucet", "Cabinet"), 4, 3, controls=((3, 2),)),
        Unit(
            "stove",
            ("StoveBurner", "StoveBurner", "StoveBurner", "StoveBurner", "StoveKnob", "StoveKnob", "StoveKnob", "StoveKnob", "Cabinet"),
            4,
            3,
            controls=((4, 0), (5, 1), (6, 2), (7, 3)),
        ),
        Unit("counter", ("CounterTop", "Cabinet", "Drawer"), 4, 3, count=(2, 3), host=True),
        Unit("shelf", ("Shelf",), 3, 2, probability=0.4),
        Unit("bin", ("GarbageCan",), 2, 2, probability=0.8),
        Unit("table", ("DiningTable",), 5, 4, probability=0.6, placement="centre"),
    ),
    appliances=(("Microwave", 0.9), ("Toaster", 0.9), ("CoffeeMachine", 0.95)),
    essentials=(
        "Mug", "Bread", "Knife", "Tomato", "Lettuce", "Potato", "Egg", "Plate", "Pot", "Pan",
        "Bowl", "Cup", "Apple", "ButterKnife", "HousePlant",
    ),
    extra_objects=(6, 12),
)

LIVING_ROOM = RoomTemplate(
    room_type="LivingRoom",
    width=(16, 24),
    depth=(14, 22),
    units=(
        Unit("sofa", ("Sofa",), 6, 3),
        Unit("armchair", ("ArmChair",), 3, 3, probability=0.6),
        Unit("tv", ("TVStand", "Television"), 4, 2, controls=()),
        Unit("sidetable", ("SideTable",), 2, 2, count=(1, 2), host=True),
        Unit("shelf", ("Shelf",), 3, 2, probability=0.7),
        Unit("dresser", ("Dresser", "Drawer"), 4, 2, probability=0.5),
        Unit("coffeetable", ("CoffeeTable",), 4, 3, placement="centre"),
        Unit("diningtable", ("DiningTable",), 5, 4, probability=0.4, placement="centre"),
        Unit("lamp", ("FloorLamp",), 1, 1, probability=0.7),
        Unit("lightswitch", ("LightSwitch",), 1, 1),
    ),
    appliances=(("DeskLamp", 0.5),),
    essentials=("RemoteControl", "HousePlant", "Newspaper", "Pillow", "Box", "Watch", "KeyChain", "Vase"),
    extra_objects=(5, 10),
)

BEDROOM = RoomTemplate(
    room_type="Bedroom",
    width=(16, 22),
    depth=(14, 20),
    units=(
        Unit("bed", ("Bed",), 6, 5),
        Unit("desk", ("Desk", "Drawer"), 4, 2),
        Unit("dresser", ("Dresser", "Drawer"), 4, 2, probability=0.8),
        Unit("sidetable", ("SideTable", "Drawer"), 2, 2, host=True),
        Unit("shelf", ("Shelf",), 3, 2, probability=0.6),
        Unit("bin", ("GarbageCan",), 2, 2, probability=0.6),
        Unit("lightswitch", ("LightSwitch",), 1, 1),
    ),
    appliances=(("DeskLamp", 0.9), ("Laptop", 0.7)),
    essentials=("Pillow", "Book", "CellPhone", "AlarmClock", "Pen", "Pencil", "CD", "Mug", "BaseballBat", "BasketBall"),
    extra_objects=(4, 9),
)

BATHROOM = RoomTemplate(
    room_type="Bathroom",
    width=(12, 18),
    depth=(12, 16),
    units=(
        Unit("toilet", ("Toilet",), 2, 3),
        Unit("sink", ("CounterTop", "Sink", "SinkBasin", "Faucet", "Cabinet", "Drawer"), 4, 2, controls=((3, 2),), host=True),
        Unit("bathtub", ("Bathtub", "BathtubBasin"), 6, 3),
        Unit("towel", ("TowelHolder",), 2, 1),
        Unit("handtowel", ("HandTowelHolder",), 1, 1),
        Unit("paper", ("ToiletPaperHanger",), 1, 1),
        Unit("bin", ("GarbageCan",), 2, 2, probability=0.8),
        Unit("shelf", ("Shelf",), 3, 2, probability=0.5),
    ),
    essentials=("SoapBar", "SoapBottle", "Towel", "HandTowel", "ToiletPaper", "Cloth", "SprayBottle", "Candle", "ScrubBrush"),
    extra_objects=(3, 7),
)

TEMPLATES: dict[str, RoomTemplate] = {t.room_type: t for t in (KITCHEN, LIVING_ROOM, BEDROOM, BATHROOM)}
ROOM_TYPES: tuple[str, ...] = tuple(TEMPLATES)
