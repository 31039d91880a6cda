"""Appliance effects: what faucets, burners, microwaves, toasters and coffee machines do while on.

Effects are continuous: after every successful interaction, every switched-on appliance acts on what
it holds. So a bread slice put into a toaster that is already on gets toasted, and a mug put under a
running faucet gets rinsed and filled, which is how TEACh's custom state behaves in practice.
"""

from __future__ import annotations

from helper_agent.world.catalog import Catalog
from helper_agent.world.state import WorldObject, WorldState

DRAIN_TYPES = frozenset({"SinkBasin", "Sink", "BathtubBasin", "Bathtub", "Toilet"})
WATER = "water"
COFFEE = "coffee"


def fill(obj: WorldObject, liquid: str) -> bool:
    """Fill a container with a liquid; True when its state changed."""
    if obj.is_filled_with_liquid and obj.fill_liquid == liquid:
        return False
    obj.is_filled_with_liquid = True
    obj.fill_liquid = liquid
    obj.simbot_is_filled_with_coffee = liquid == COFFEE
    return True


def empty(obj: WorldObject) -> None:
    obj.is_filled_with_liquid = False
    obj.fill_liquid = None
    obj.simbot_is_filled_with_coffee = False


def _cook(obj: WorldObject, catalog: Catalog, in_water: bool) -> bool:
    if not catalog.get(obj.object_type).cookable:
        return False
    changed = False
    if not obj.is_cooked or not obj.simbot_is_cooked:
        obj.is_cooked = True
        obj.simbot_is_cooked = True
        changed = True
    if in_water and not obj.simbot_is_boiled:
        obj.simbot_is_boiled = True
        changed = True
    return changed


def _heat_contents(state: WorldState, holder: WorldObject, catalog: Catalog) -> list[str]:
    """Cook what a heat source holds, one level into pans, pots and bowls (boiling in water)."""
    changed: list[str] = []
    for oid in holder.contents:
        item = state.objects[oid]
        if _cook(item, catalog, in_water=False):
            changed.append(oid)
        in_water = item.is_filled_with_liquid and item.fill_liquid == WATER
        for inner_id in item.contents:
            if _cook(state.objects[inner_id], catalog, in_water=in_water):
                changed.append(inner_id)
    return changed


def _rinse(state: WorldState, basin: WorldObject, catalog: Catalog) -> list[str]:
    """Running water cleans and fills everything in the basin (and on plates in it)."""
    changed: list[str] = []
    for oid in state.descendants(basin.object_id):
        item = state.objects[oid]
        info = catalog.get(item.object_type)
        if info.dirtyable and item.is_dirty:
            item.is_dirty = False
            changed.append(oid)
        if info.can_fill_with_liquid and not item.is_filled_with_liquid and fill(item, WATER):
            changed.append(oid)
    return changed


def _brew(state: WorldState, machine: WorldObject, catalog: Catalog) -> list[str]:
    changed: list[str] = []
    for oid in machine.contents:
        item = state.objects[oid]
        if catalog.get(item.object_type).can_fill_with_liquid and fill(item, COFFEE):
            changed.append(oid)
    return changed


def apply(state: WorldState, catalog: Catalog) -> list[str]:
    """Apply every switched-on appliance's effect once; returns the ids whose state changed."""
    changed: list[str] = []
    for obj in list(state.objects.values()):
        if not obj.is_toggled:
            continue
        kind = obj.object_type
        if kind == "Faucet" or kind == "ShowerHead":
            for basin_id in obj.controlled_ids:
                basin = state.objects.get(basin_id)
                if basin is not None:
                    changed.extend(_rinse(state, basin, catalog))
        elif kind in ("StoveBurner", "Microwave"):
            changed.extend(_heat_contents(state, obj, catalog))
        elif kind == "Toaster":
            for oid in obj.contents:
                if _cook(state.objects[oid], catalog, in_water=False):
                    changed.append(oid)
        elif kind == "CoffeeMachine":
            changed.extend(_brew(state, obj, catalog))
    return changed
