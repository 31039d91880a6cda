"""Rooms built from real AI2-THOR floor plans in ALFRED's layout format (skipped without the data)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from helper_agent.envs.symbolic import SymbolicEnv
from helper_agent.tools.navigation import Target, plan_to_target
from helper_agent.world.alfred import available_floorplans, load_alfred_floorplan, room_type_of
from helper_agent.world.errors import StateFormatError
from helper_agent.world.metadata import export_state, load_state

REFERENCE = Path(os.environ.get("HELPER_REFERENCE_DIR", Path(__file__).resolve().parents[2] / "shared" / "reference"))
LAYOUTS = REFERENCE / "alfred_layouts"
needs_layouts = pytest.mark.skipif(not LAYOUTS.is_dir(), reason="ALFRED layouts not available")


@needs_layouts
def test_every_floorplan_builds_consistently() -> None:
    plans = available_floorplans(LAYOUTS)
    assert len(plans) == 120
    for number in plans:
        state = load_alfred_floorplan(LAYOUTS, number)
        assert state.check_invariants() == [], number
        reachable = np.load(LAYOUTS / f"FloorPlan{number}-layout.npy")
        assert int((~state.blocked).sum()) == len(reachable), number
        openable = json.loads((LAYOUTS / f"FloorPlan{number}-openable.json").read_text())
        kept = [oid for oid in openable if oid.split("|")[0] in {o.object_type for o in state.objects.values()}]
        assert all(oid in state.objects for oid in kept), number
        assert state.room_type == room_type_of(number)


@needs_layouts
@pytest.mark.parametrize("number", [1, 10, 201, 301, 401])
def test_floorplan_objects_are_reachable_and_round_trip(number: int) -> None:
    state = load_alfred_floorplan(LAYOUTS, number)
    env = SymbolicEnv()
    env.reset(state)
    grid = env.navigation_grid()
    pose = env.state.agent
    unreachable = []
    for oid, obj in env.state.objects.items():
        target = Target(*obj.position, footprint=env.sim.footprint_of(oid))
        if plan_to_target(grid, pose.cell, pose.rotation, pose.horizon, target) is None:
            unreachable.append(oid)
    assert not unreachable
    exported = export_state(state)
    assert export_state(load_state(exported)) == exported


def test_missing_or_malformed_layout_files(tmp_path: Path) -> None:
    with pytest.raises(StateFormatError, match="FloorPlan7-layout.npy: no such file"):
        load_alfred_floorplan(tmp_path, 7)
    np.save(tmp_path / "FloorPlan7-layout.npy", np.zeros((3, 2)))
    (tmp_path / "FloorPlan7-objects.json").write_text('{"not": "a list"}')
    (tmp_path / "FloorPlan7-openable.json").write_text("{}")
    with pytest.raises(StateFormatError, match="FloorPlan7-objects.json: expected a list"):
        load_alfred_floorplan(tmp_path, 7)
