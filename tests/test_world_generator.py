"""The procedural generator: deterministic, plausible, reachable rooms."""

from __future__ import annotations

from collections import Counter

import pytest

from helper_agent.envs.symbolic import SymbolicEnv
from helper_agent.tools.navigation import Target, plan_to_target
from helper_agent.world.catalog import load_catalog
from helper_agent.world.generator import generate_scene
from helper_agent.world.metadata import export_state

ROOMS = ("Kitchen", "LivingRoom", "Bedroom", "Bathroom")


@pytest.mark.parametrize("room", ROOMS)
def test_same_seed_same_scene(room: str) -> None:
    assert export_state(generate_scene(11, room)) == export_state(generate_scene(11, room))
    assert export_state(generate_scene(11, room)) != export_state(generate_scene(12, room))


def test_kitchens_have_the_expected_fixtures() -> None:
    counts: Counter[str] = Counter()
    for seed in range(40):
        types = {o.object_type for o in generate_scene(seed, "Kitchen").objects.values()}
        for required in ("Fridge", "SinkBasin", "Faucet", "StoveBurner", "StoveKnob", "CounterTop", "Cabinet", "Drawer"):
            assert required in types, f"seed {seed} has no {required}"
        counts.update(t for t in ("Microwave", "Toaster", "CoffeeMachine") if t in types)
    for appliance in ("Microwave", "Toaster", "CoffeeMachine"):
        assert counts[appliance] >= 30, f"{appliance} in only {counts[appliance]} of 40 kitchens"


def test_objects_start_in_plausible_receptacles_some_hidden() -> None:
    catalog = load_catalog()
    hidden = total = 0
    for seed in range(30):
        state = generate_scene(seed, "Kitchen")
        for oid, obj in state.objects.items():
            if obj.cells:
                continue
            parent = state.objects[obj.parent_id]
            total += 1
            if catalog.get(obj.object_type).pickupable:
                assert catalog.accepts(parent.object_type, obj.object_type), (oid, parent.object_type)
            if catalog.get(parent.object_type).openable:
                hidden += 1
    assert 0.05 < hidden / total < 0.6


@pytest.mark.parametrize("room", ROOMS)
def test_every_object_is_reachable(room: str) -> None:
    for seed in range(8):
        env = SymbolicEnv()
        env.reset(seed, room_type=room)
        grid = env.navigation_grid()
        pose = env.state.agent
        for oid, obj in env.state.objects.items():
            target = Target(*obj.position, footprint=env.sim.footprint_of(oid))
            plan = plan_to_target(grid, pose.cell, pose.rotation, pose.horizon, target)
            assert plan is not None, f"{oid} unreachable in {room} seed {seed}"


def test_walking_there_makes_the_object_visible() -> None:
    env = SymbolicEnv()
    for seed in range(5):
        env.reset(seed, room_type="Kitchen")
        for oid in [o for o in env.state.objects if env.state.objects[o].cells][:8]:
            grid = env.navigation_grid()
            pose = env.state.agent
            target = Target(*env.state.objects[oid].position, footprint=env.sim.footprint_of(oid))
            for action in plan_to_target(grid, pose.cell, pose.rotation, pose.horizon, target) or []:
                assert env.step(action).result.success
            assert env.sim.is_visible(oid), f"{oid} not visible after walking to it (seed {seed})"
