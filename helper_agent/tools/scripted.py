"""Hand-written episodes: a tiny driver that walks to objects by id and issues TEACh actions.

Used by `helper world demo` and by the world's tests to reach TEACh goals with scripted action
sequences (no planner, no tracker: object ids are looked up in the ground-truth state). Every action
goes through the environment and counts as a step.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from helper_agent.envs.symbolic import SymbolicEnv
from helper_agent.tools.navigation import Target, plan_to_target
from helper_agent.world.actions import ActionResult
from helper_agent.world.state import occupancy


class ScriptError(RuntimeError):
    """A scripted step failed; the message carries the simulator's error."""


@dataclass
class ScriptedDriver:
    env: SymbolicEnv
    log: list[ActionResult] = field(default_factory=list)

    def find(self, object_type: str, *, where: str | None = None, exclude: tuple[str, ...] = ()) -> str:
        """The id of an object of a type (optionally inside/on an object of type `where`)."""
        state = self.env.state
        for oid, obj in state.objects.items():
            if obj.object_type != object_type or oid in exclude:
                continue
            if where is not None:
                parents = [state.objects[p].object_type for p in state.ancestors(oid)]
                if where not in parents:
                    continue
            return oid
        raise ScriptError(f"no {object_type}{' in ' + where if where else ''} in {state.scene_name}")

    def act(self, action: str, object_id: str | None = None) -> ActionResult:
        outcome = self.env.step(action, object_id)
        self.log.append(outcome.result)
        if not outcome.result.success:
            raise ScriptError(f"{action} {object_id or ''}: {outcome.result.error}")
        return outcome.result

    def walk_to(self, object_id: str, *, gap: int | None = None) -> None:
        """Walk to a pose from which `object_id` is visible and within reach.

        `gap` is the distance in cells to keep from the footprint; by default two cells for things
        in or at a fridge (its door swings towards the agent), one otherwise.
        """
        sim = self.env.sim
        state = self.env.state
        obj = state.objects[object_id]
        if gap is None:
            gap = 2 if state.objects[sim_root(state, object_id)].object_type == "Fridge" else 1
        target = Target(*obj.position, footprint=sim.footprint_of(object_id), min_gap_cells=gap)
        pose = state.agent
        actions = plan_to_target(self.env.navigation_grid(), pose.cell, pose.rotation, pose.horizon, target)
        if actions is None:
            raise ScriptError(f"cannot reach {object_id}")
        for action in actions:
            self.act(action)

    def interact(self, action: str, object_id: str) -> ActionResult:
        """Walk to the object if it is not in reach, then act on it."""
        if not self.env.sim.is_visible(object_id):
            self.walk_to(object_id)
        return self.act(action, object_id)


def sim_root(state, object_id: str) -> str:  # noqa: ANN001 - WorldState, kept light for scripts
    """The outermost receptacle an object is in (itself when loose)."""
    chain = state.ancestors(object_id)
    return chain[-1] if chain else object_id


# --------------------------------------------------------------------------- building blocks
def reveal(driver: ScriptedDriver, object_id: str) -> None:
    """Open every closed receptacle that hides the object, outermost first."""
    state = driver.env.state
    catalog = driver.env.catalog
    for parent in reversed(state.ancestors(object_id)):
        obj = state.objects[parent]
        if catalog.get(obj.object_type).openable and not obj.is_open:
            driver.walk_to(parent)
            driver.act("Open", parent)


def pick_up(driver: ScriptedDriver, object_id: str) -> None:
    reveal(driver, object_id)
    driver.interact("Pickup", object_id)


def put(driver: ScriptedDriver, receptacle_id: str) -> None:
    """Place what is held into/onto a receptacle, opening it first when it is closed."""
    state = driver.env.state
    rec = state.objects[receptacle_id]
    if driver.env.catalog.get(rec.object_type).openable and not rec.is_open:
        driver.walk_to(receptacle_id)
        driver.act("Open", receptacle_id)
    driver.interact("Place", receptacle_id)


def free_spot(driver: ScriptedDriver, receptacle_type: str) -> str:
    """A receptacle of the type with room left for one more object."""
    state = driver.env.state
    catalog = driver.env.catalog
    for oid, obj in state.objects.items():
        if obj.object_type == receptacle_type and occupancy(obj.contents) < catalog.get(receptacle_type).capacity:
            return oid
    raise ScriptError(f"no {receptacle_type} with free space")


def put_down(driver: ScriptedDriver) -> None:
    held = driver.env.state.held_id
    if held is not None:
        put(driver, free_spot(driver, "CounterTop"))


def faucet_for(driver: ScriptedDriver, basin_id: str) -> str:
    for oid, obj in driver.env.state.objects.items():
        if basin_id in obj.controlled_ids and obj.object_type == "Faucet":
            return oid
    raise ScriptError(f"no faucet runs into {basin_id}")


def rinse_held(driver: ScriptedDriver) -> None:
    """Clean (and fill with water) the held object: into the sink, faucet on and off, pick it up."""
    held = driver.env.state.held_id
    if held is None:
        raise ScriptError("nothing held to rinse")
    basin = free_spot(driver, "SinkBasin")
    put(driver, basin)
    faucet = faucet_for(driver, basin)
    driver.interact("ToggleOn", faucet)
    driver.interact("ToggleOff", faucet)
    driver.interact("Pickup", held)


def slice_with_knife(driver: ScriptedDriver, object_type: str) -> str:
    """Slice an object of the type with a knife, put the knife down; returns the sliced object's old id."""
    knife = driver.find("Knife")
    pick_up(driver, knife)
    target = driver.find(object_type)
    reveal(driver, target)
    driver.interact("Slice", target)
    put_down(driver)
    return target


# --------------------------------------------------------------------------- TEACh goals
def make_coffee(driver: ScriptedDriver) -> None:
    mug = driver.find("Mug")
    pick_up(driver, mug)
    if driver.env.state.objects[mug].is_dirty:
        rinse_held(driver)
    machine = driver.find("CoffeeMachine")
    put(driver, machine)
    driver.interact("ToggleOn", machine)


def water_plant(driver: ScriptedDriver) -> None:
    container = driver.find("Cup")
    pick_up(driver, container)
    rinse_held(driver)
    driver.interact("Pour", driver.find("HousePlant"))


def toast_bread(driver: ScriptedDriver) -> None:
    slice_with_knife(driver, "Bread")
    piece = driver.find("BreadSliced")
    pick_up(driver, piece)
    toaster = driver.find("Toaster")
    put(driver, toaster)
    driver.interact("ToggleOn", toaster)
    driver.interact("ToggleOff", toaster)


def boil_potato(driver: ScriptedDriver) -> None:
    pot = driver.find("Pot")
    pick_up(driver, pot)
    rinse_held(driver)  # fills the pot with water
    burner = free_spot(driver, "StoveBurner")
    put(driver, burner)
    potato = driver.find("Potato")
    pick_up(driver, potato)
    put(driver, pot)
    knob = next(oid for oid, o in driver.env.state.objects.items() if burner in o.controlled_ids)
    driver.interact("ToggleOn", knob)
    driver.interact("ToggleOff", knob)


def clean_plate(driver: ScriptedDriver) -> None:
    plate = driver.find("Plate")
    pick_up(driver, plate)
    rinse_held(driver)
    put_down(driver)


def slice_tomato(driver: ScriptedDriver) -> None:
    slice_with_knife(driver, "Tomato")


SCRIPTS = {
    "coffee": make_coffee,
    "water_plant": water_plant,
    "toast": toast_bread,
    "boil_potato": boil_potato,
    "clean_plate": clean_plate,
    "slice_tomato": slice_tomato,
}
