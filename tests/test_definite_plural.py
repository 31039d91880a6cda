"""A definite plural placed is every one the household has ("put the newspapers on the coffee
table"): a first plan that places fewer gets the rest added (`understanding/asked.py`,
`scoping.completed`), chosen on the requests calibration suite (cal-050, 052, 054: one placed)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from test_scope import run

from helper_agent.envs.symbolic import SymbolicEnv
from helper_agent.understanding.asked import Placement, asked
from helper_agent.world.generator import generate_scene
from helper_agent.world.metadata import export_state

COUNTS = {"Newspaper": 3, "KeyChain": 2, "Mug": 3, "CoffeeTable": 1, "SideTable": 1, "DiningTable": 1, "Bowl": 1,
          "Apple": 2, "SinkBasin": 1}


def test_a_definite_plural_is_every_one_the_household_has() -> None:
    present = set(COUNTS)
    assert asked("put the newspapers on the coffee table", present, COUNTS).placements == \
        (Placement("Newspaper", "CoffeeTable", 3),)
    assert asked("put my keys on the side table", present, COUNTS).placements == (Placement("KeyChain", "SideTable", 2),)
    assert asked("put all mugs on the dining table", present, COUNTS).placements == (Placement("Mug", "DiningTable", 3),)
    counts = {**COUNTS, "RemoteControl": 2, "Sofa": 1}
    assert asked("put the remote controls on the sofa", set(counts), counts).placements == \
        (Placement("RemoteControl", "Sofa", 2),)


def test_a_plural_the_words_do_not_make_all_of_them_is_left_alone() -> None:
    present = set(COUNTS)
    assert asked("put apples in a bowl", present, COUNTS).placements == ()  # no determiner
    assert asked("put the dirty mugs in the sink", present, COUNTS).placements == ()  # some of them
    assert asked("put the newspapers on the coffee table", present).placements == ()  # no counts
    assert asked("put two apples in the bowl", present, COUNTS).placements == (Placement("Apple", "Bowl", 2),)


def _newspapers_in_sight() -> dict:
    for seed in range(120):
        world = export_state(generate_scene(seed, "LivingRoom"))
        env = SymbolicEnv()
        env.reset(world)
        objects = env.objects_metadata()
        types = Counter(o["objectType"] for o in objects)
        papers = [o for o in objects if o["objectType"] == "Newspaper"]
        hidden = any(p.split("|")[0] in ("Cabinet", "Drawer", "Box", "Safe") for o in papers
                     for p in o.get("parentReceptacles") or [])
        if len(papers) >= 2 and types["CoffeeTable"] == 1 and not hidden:
            return world
    raise AssertionError("no generated living room with two newspapers in the open")


def test_the_graph_puts_every_newspaper_when_the_plan_puts_one(tmp_path: Path) -> None:
    world = _newspapers_in_sight()
    one = ("```python\ntable = InteractionObject(\"CoffeeTable\")\npaper = InteractionObject(\"Newspaper\")\n"
           "paper.pickup_and_place(table)\n```")
    out, _, env = run(tmp_path, "put the newspapers on the coffee table", world, [one])
    papers = [o for o in env.objects_metadata() if o["objectType"] == "Newspaper"]
    assert any(f"added {len(papers) - 1} Newspaper on/in the CoffeeTable" in line for line in out["log"])
    assert out["execution"]["status"] == "done"
    assert all(any(p.startswith("CoffeeTable") for p in o.get("parentReceptacles") or []) for o in papers)
