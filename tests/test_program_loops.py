"""A loop that makes a new object each round runs no more rounds than the household has such
objects (`program/edits/loops.py`), in the HELPER graph's compile step (`nodes._compiled_here`).

cal-038 of the requests calibration suite: "wash all the pots" as `range(3)` with two pots searched
300 steps for a third, and the corrections of that search moved a cup out of the sink."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from test_scope import run

from helper_agent.envs.symbolic import SymbolicEnv
from helper_agent.program.edits.loops import fit_loops
from helper_agent.world.generator import generate_scene
from helper_agent.world.metadata import export_state

WASH = [
    "for i in range({n}):",
    '    pot = InteractionObject("Pot")',
    "    pot.clean()",
]


def program(n: int) -> str:
    return "\n".join(WASH).format(n=n) + "\n"


def test_a_loop_is_cut_to_the_households_count_and_says_so() -> None:
    source, notes = fit_loops(program(3), {"Pot": 2})
    assert "range(2)" in source and "range(3)" not in source
    assert notes == ["the household has 2 Pot: 2 rounds, not 3"]


def test_a_loop_within_the_count_or_of_a_class_not_there_is_left_as_written() -> None:
    assert fit_loops(program(2), {"Pot": 2}) == (program(2), [])
    assert fit_loops(program(3), {"Pot": 5}) == (program(3), [])
    # Slices appear only when something is sliced: none in the household yet is no count.
    slices = 'for i in range(2):\n    s = InteractionObject("TomatoSliced")\n    s.pickup()\n'
    assert fit_loops(slices, {"Tomato": 1}) == (slices, [])
    # A loop whose first statement makes nothing is the planner's to count.
    other = 'pot = InteractionObject("Pot")\nfor i in range(3):\n    pot.clean()\n'
    assert fit_loops(other, {"Pot": 1}) == (other, [])


def _pots_in_sight() -> dict:
    """A generated kitchen whose pots stand in the open (the scripted run has no locator model)."""
    for seed in range(80):
        world = export_state(generate_scene(seed, "Kitchen"))
        env = SymbolicEnv()
        env.reset(world)
        types = Counter(o["objectType"] for o in env.objects_metadata())
        pots = [o for o in env.objects_metadata() if o["objectType"] == "Pot"]
        if pots and types["SinkBasin"] and all(not any(p.split("|")[0] in ("Cabinet", "Drawer", "Fridge", "Microwave")
                                                       for p in o.get("parentReceptacles") or []) for o in pots):
            return world
    raise AssertionError("no generated kitchen with pots in the open")


def test_the_graph_washes_every_pot_there_is_and_searches_for_no_more(tmp_path: Path) -> None:
    world = _pots_in_sight()
    env = SymbolicEnv()
    env.reset(world)
    pots = Counter(o["objectType"] for o in env.objects_metadata())["Pot"]
    out, _, env = run(tmp_path, "wash all the pots", world, [f"```python\n{program(pots + 2)}```"])
    assert f"range({pots})" in out["program"]
    assert any(f"the household has {pots} Pot" in line for line in out["log"])
    assert out["execution"]["status"] == "done"
    assert all(not o.get("isDirty") for o in env.objects_metadata() if o["objectType"] == "Pot")
