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


# ------------------------------------------------------------------------------ bad layout files
def _good_layout(folder: Path, number: int = 7) -> None:
    xs, zs = np.meshgrid(np.arange(0, 1.5, 0.25), np.arange(0, 1.5, 0.25))
    np.save(folder / f"FloorPlan{number}-layout.npy", np.stack([xs.ravel(), zs.ravel()], axis=1))
    (folder / f"FloorPlan{number}-objects.json").write_text(json.dumps(["Fridge", "CounterTop", "Mug"]))
    (folder / f"FloorPlan{number}-openable.json").write_text(json.dumps({"Fridge|-00.25|+00.00|+00.50": [0, 0.5, 90, 0]}))


def _npz(path: Path) -> None:
    with open(path, "wb") as fh:
        np.savez(fh, a=np.zeros((3, 2)))


def _pickled(path: Path) -> None:
    np.save(path, np.array([{"x": 1}], dtype=object), allow_pickle=True)


LAYOUT = "FloorPlan7-layout.npy"
# (what to write over the layout, the message after "<layout path>: ")
BAD_LAYOUTS = [
    (lambda p: p.mkdir(), "is a directory, not a .npy file"),
    (lambda p: np.save(p, np.array([["a", "b"], ["c", "d"]])), "expected numbers (x, z in metres), got dtype <U1"),
    (lambda p: np.save(p, np.array([[0.0, 0.0], [np.inf, 0.25]])), "row 1: x = inf is not a finite number"),
    (lambda p: np.save(p, np.array([[0.0, 0.0], [0.25, np.nan]])), "row 1: z = nan is not a finite number"),
    (lambda p: np.save(p, np.array([[0.0, 0.0], [0.25, 0.0], [0.0, 1e5]])), "row 2: z = 100000 is farther than 1000 m from the origin"),
    (lambda p: np.save(p, np.array([[0.0, 0.0], [900.0, 900.0]])), "the reachable positions span 3603 x 3603 cells of 0.25 m; the limit is 250000 cells (HELPER_MAX_GRID_CELLS)"),
    (lambda p: np.save(p, np.zeros(3)), "expected an (N, 2) array of reachable x, z positions, got shape (3,)"),
    (lambda p: np.save(p, np.zeros((0, 2))), "expected an (N, 2) array of reachable x, z positions, got shape (0, 2)"),
    (lambda p: np.save(p, np.zeros((3, 2), dtype=complex)), "expected numbers (x, z in metres), got dtype complex128"),
    (lambda p: np.save(p, np.ones((3, 2), dtype=bool)), "expected numbers (x, z in metres), got dtype bool"),
    (lambda p: p.write_text("0.0, 0.0\n0.25, 0.0\n"), "not a numeric .npy array"),
    (lambda p: p.write_bytes(b""), "not a numeric .npy array"),
    (lambda p: p.write_bytes(bytes(range(256))), "not a numeric .npy array"),
    (_pickled, "not a numeric .npy array (Object arrays cannot be loaded when allow_pickle=False)"),
    (_npz, "expected one array, found an archive of several"),
]


@pytest.mark.parametrize(("write", "message"), BAD_LAYOUTS)
def test_bad_layouts_name_the_file_and_row(tmp_path: Path, write, message: str) -> None:
    _good_layout(tmp_path)
    (tmp_path / LAYOUT).unlink()
    write(tmp_path / LAYOUT)
    with pytest.raises(StateFormatError) as err:
        load_alfred_floorplan(tmp_path, 7)
    assert str(err.value).startswith(f"{tmp_path / LAYOUT}: {message}")
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("FloorPlan7-objects.json", b"\xff\xfe", "not UTF-8 text"),
        ("FloorPlan7-objects.json", b'["Mug", 3]', "expected a list of object type names"),
        ("FloorPlan7-openable.json", b"[]", "expected an object mapping ids to poses"),
        ("FloorPlan7-openable.json", b'{"Cabinet|+1.2.3|+0.5|+1.0": []}', "key 'Cabinet|+1.2.3|+0.5|+1.0': the position in the id is not x|y|z numbers"),
        ("FloorPlan7-openable.json", None, "is a directory, not a JSON file"),
    ],
)
def test_bad_object_files_name_the_file(tmp_path: Path, name: str, content: bytes | None, message: str) -> None:
    _good_layout(tmp_path)
    (tmp_path / name).unlink()
    if content is None:
        (tmp_path / name).mkdir()
    else:
        (tmp_path / name).write_bytes(content)
    with pytest.raises(StateFormatError) as err:
        load_alfred_floorplan(tmp_path, 7)
    assert str(err.value).startswith(f"{tmp_path / name}: {message}")


def test_a_small_good_layout_builds_and_the_folder_must_exist(tmp_path: Path) -> None:
    _good_layout(tmp_path)
    state = load_alfred_floorplan(tmp_path, 7)
    assert state.check_invariants() == [] and "Fridge|-00.25|+00.00|+00.50" in state.objects
    assert int((~state.blocked).sum()) == 36
    with pytest.raises(StateFormatError, match="no such directory of ALFRED layout files"):
        load_alfred_floorplan(tmp_path / "absent", 7)
    with pytest.raises(StateFormatError, match=r"the limit is 10 cells \(HELPER_MAX_GRID_CELLS\)"):
        load_alfred_floorplan(tmp_path, 7, max_grid_cells=10)
