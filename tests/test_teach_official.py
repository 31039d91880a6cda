"""Against TEACh's official files in $HELPER_REFERENCE_DIR/teach (skipped when absent): they load, ours
cover them with the same ids, each is satisfied by a constructed goal state, and our definitions
give the same verdicts and counts as the official ones on perturbed states."""

from __future__ import annotations

import copy
import json
import random

import pytest
from reference_data import reference_path

from helper_agent.teach import check_task, default_registry, load_task_definitions
from helper_agent.teach.actions import ACTIONS
from helper_agent.teach.goal_state import build_goal_state

REFERENCE = reference_path("teach")
pytestmark = pytest.mark.skipif(
    not (REFERENCE / "task_definitions").is_dir(), reason="TEACh reference files not available"
)

PARAMS = {
    "Clean X": ["Plate"],
    "Sliced X": ["Tomato"],
    "Cooked Slice Of X": ["Potato"],
    "N Cooked Slices Of X In Y": ["2", "Potato", "on", "Plate"],
    "N Slices Of X In Y": ["3", "Apple", "in", "Bowl"],
    "Put All X On Y": ["Newspaper", "on", "Tables"],
    "Put All X In One Y": ["Pencil", "in", "Drawer"],
    "Boil X": ["Potato"],
    "Clean All X": ["Drinkware"],
    "Toggle X All Y": ["on", "1", "Lamps"],
    "Breakfast": ["1", "2", "1", "Plate", "1", "Bowl", "1", "1", "1", "1", "1", "1", "1", "DiningTable"],
    "Sandwich": ["1", "2"],
    "Salad": ["1", "1", "2"],
    "Workspace": ["2", "1", "1"],
}
FLIPPABLE = (
    "isDirty",
    "isCooked",
    "simbotIsCooked",
    "simbotIsBoiled",
    "simbotIsFilledWithCoffee",
    "isToggled",
    "isOpen",
    "receptacle",
    "isFilledWithLiquid",
)


@pytest.fixture(scope="module")
def official():
    return load_task_definitions(REFERENCE / "task_definitions")


def test_all_official_files_load(official):
    assert len(official) == 25
    for d in official:
        official.instantiate(d.task_name, PARAMS.get(d.task_name, []))


def test_ours_cover_every_official_task(official):
    ours = default_registry()
    assert set(official.names()) <= set(ours.names())
    for d in official:
        mine = ours.get(d.task_name)
        assert (mine.task_id, mine.task_nparams) == (d.task_id, d.task_nparams)


def test_our_texts_are_our_own(official):
    def texts(reg):
        out = set()
        for d in reg:
            out.add(d.desc)
            for c in d.components.values():
                out |= set(c.get("condition_failure_descs", {}).values())
            out |= {r["failure_desc"] for r in d.relations}
        return out

    assert texts(default_registry()) & texts(official) == set()


@pytest.mark.parametrize("which", ["official", "ours"])
def test_each_definition_is_satisfied_by_a_constructed_state(official, which):
    reg = official if which == "official" else default_registry()
    for d in reg:
        task = reg.instantiate(d.task_name, PARAMS.get(d.task_name, []))
        objects = build_goal_state(task)
        progress = check_task(task, objects)
        assert progress.success, d.task_name
        assert progress.goal_conditions_total > 0, d.task_name
        # TEACh counts every matching head of an "a"-tail relation, so satisfied may exceed total
        assert progress.goal_conditions_satisfied >= progress.goal_conditions_total, d.task_name


def _perturb(objs, rng):
    objs = copy.deepcopy(objs)
    ids = [o["objectId"] for o in objs]
    for o in objs:
        for p in FLIPPABLE:
            if rng.random() < 0.15:
                o[p] = not o[p]
        if rng.random() < 0.15:
            o["parentReceptacles"] = None
        if rng.random() < 0.1:
            o["parentReceptacles"] = rng.sample(ids, k=min(2, len(ids)))
        if rng.random() < 0.1 and o["objectType"].endswith("Sliced"):
            o["objectType"] = o["objectType"].removesuffix("Sliced")
    objs += [dict(copy.deepcopy(o), objectId=o["objectId"] + "|copy") for o in objs if rng.random() < 0.2]
    rng.shuffle(objs)
    return objs


def test_ours_and_official_agree_on_perturbed_states(official):
    rng = random.Random(7)
    ours = default_registry()
    for d in official:
        params = PARAMS.get(d.task_name, [])
        theirs_task, our_task = (
            official.instantiate(d.task_name, params),
            ours.instantiate(d.task_name, params),
        )
        base = build_goal_state(theirs_task)
        for _ in range(40):
            objs = _perturb(base, rng)
            a, b = check_task(theirs_task, objs), check_task(our_task, objs)
            assert (a.success, a.goal_conditions_total, a.goal_conditions_satisfied) == (
                b.success,
                b.goal_conditions_total,
                b.goal_conditions_satisfied,
            ), d.task_name


def test_action_table_matches_teach_definitions():
    data = json.loads((REFERENCE / "default_definitions.json").read_text())["definitions"]
    assert {(a["action_id"], a["action_name"], a["action_type"]) for a in data["actions"]} == {
        (a.action_id, a.action_name, a.action_type) for a in ACTIONS
    }
    idx = json.loads((REFERENCE / "ai2thor_resources" / "action_to_action_idx.json").read_text())
    assert {int(k): v for k, v in idx.items()} == {a.action_id: a.action_idx for a in ACTIONS}
