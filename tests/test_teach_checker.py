"""Checker verdicts and goal-condition counts on hand-built metadata (values computed by hand
from TEACh's counting rules)."""

from __future__ import annotations

from typing import Any

import pytest

from helper_agent.teach import check_task, default_registry, task_from_state_changes
from helper_agent.teach.checker import Scene, condition_status, parent_receptacles, type_matches
from helper_agent.teach.goal_state import make_object

CLASSES = {
    "Mug": ["Tableware", "Drinkware"],
    "Cup": ["Tableware", "Drinkware"],
    "Plate": ["Tableware", "Dishware"],
    "Bowl": ["Tableware", "Dishware"],
    "DiningTable": ["Furniture", "Tables"],
    "CoffeeTable": ["Furniture", "Tables"],
    "Sofa": ["Furniture"],
    "CounterTop": ["Furniture"],
}


def obj(oid: str, **props: Any) -> dict[str, Any]:
    """An object whose type is the part of ``oid`` before the first ``|``."""
    otype = props.pop("objectType", oid.split("|")[0])
    return make_object(otype, oid, classes=CLASSES.get(otype, []), **props)


def task(name: str, *params: str):
    return default_registry().instantiate(name, list(params))


def counts(progress) -> tuple[bool, int, int]:
    return progress.success, progress.goal_conditions_total, progress.goal_conditions_satisfied


# ----------------------------------------------------------------------------------------------- coffee


def test_coffee_dirty_empty_mug_has_one_of_three_conditions():
    p = check_task(task("Coffee"), [obj("Mug|1", isDirty=True)])
    assert counts(p) == (False, 3, 1)
    [sg] = p.subgoals
    assert [(s.success, s.object_id) for s in sg.steps] == [(False, "Mug|1"), (False, "Mug|1")]
    assert sg.unmet_descriptions() == [
        "The mug needs to be rinsed clean with water first.",
        "The mug needs to be filled with coffee from the coffee machine.",
    ]
    assert sorted(k.property_name for k in sg.problem_keys["Mug|1"]) == [
        "isDirty",
        "simbotIsFilledWithCoffee",
    ]


def test_coffee_clean_full_mug_succeeds():
    p = check_task(task("Coffee"), [obj("Mug|1", isDirty=False, simbotIsFilledWithCoffee=True)])
    assert counts(p) == (True, 3, 3)
    assert p.satisfied_objects == ["Mug|1"]


def test_coffee_best_candidate_then_distance():
    mugs = [
        obj("Mug|near", isDirty=True, simbotIsFilledWithCoffee=True),
        obj("Mug|far", isDirty=False, simbotIsFilledWithCoffee=False),
        obj("Mug|worst", isDirty=True),
    ]
    p = check_task(task("Coffee"), mugs)
    # equal scores (2 of 3): metadata order decides; only the best candidate is counted
    assert counts(p) == (False, 3, 2)
    assert p.candidate_objects == ["Mug|near", "Mug|far", "Mug|worst"]
    assert [s.object_id for s in p.subgoals[0].unmet_steps] == ["Mug|near"]
    dist = {"Mug|near": 3.0, "Mug|far": 1.0, "Mug|worst": 0.5}
    p = check_task(task("Coffee"), mugs, distance_to_agent=lambda o: dist[o["objectId"]])
    assert p.candidate_objects == ["Mug|far", "Mug|near", "Mug|worst"]
    assert [s.object_id for s in p.subgoals[0].unmet_steps] == ["Mug|far"]


# ------------------------------------------------------------------------------------------ water plant


def test_water_plant():
    assert counts(check_task(task("Water Plant"), [obj("HousePlant|1")])) == (False, 2, 1)
    assert counts(check_task(task("Water Plant"), [obj("HousePlant|1", isFilledWithLiquid=True)])) == (
        True,
        2,
        2,
    )
    # no plant at all: nothing is a candidate
    assert counts(check_task(task("Water Plant"), [obj("Mug|1")])) == (False, 2, 0)


# ------------------------------------------------------------------------------------------------ toast


def test_toast_from_whole_bread_untoasted_slice_and_toast():
    p = check_task(task("Toast"), [obj("Bread|1")])
    # the unsliced loaf is the candidate (Sliced rule) but meets neither condition
    assert counts(p) == (False, 2, 0)
    assert [s.desc for s in p.subgoals[0].unmet_steps] == [
        "The bread needs to be cut into slices with a knife.",
        "The bread slice needs to be toasted.",
    ]
    assert counts(check_task(task("Toast"), [obj("Bread|1|BreadSliced_1", objectType="BreadSliced")])) == (
        False,
        2,
        1,
    )
    toast = obj("Bread|1|BreadSliced_1", objectType="BreadSliced", isCooked=True)
    assert counts(check_task(task("Toast"), [toast])) == (True, 2, 2)


def test_boil_potato():
    assert counts(check_task(task("Boil X", "Potato"), [obj("Potato|1", isCooked=True)])) == (False, 2, 1)
    assert counts(check_task(task("Boil X", "Potato"), [obj("Potato|1", simbotIsBoiled=True)])) == (
        True,
        2,
        2,
    )


# --------------------------------------------------------------------------------------------- sandwich


def _sandwich_scene(second_toasted: bool) -> list[dict[str, Any]]:
    on_plate = ["Plate|1", "CounterTop|1"]
    return [
        obj("CounterTop|1", receptacle=True),
        obj("Plate|1", receptacle=True, parentReceptacles=["CounterTop|1"]),
        obj("Bread|1|BreadSliced_1", objectType="BreadSliced", isCooked=True, parentReceptacles=on_plate),
        obj(
            "Bread|1|BreadSliced_2",
            objectType="BreadSliced",
            isCooked=second_toasted,
            parentReceptacles=on_plate,
        ),
        obj("Lettuce|1|LettuceSliced_1", objectType="LettuceSliced", parentReceptacles=on_plate),
        obj("Tomato|1|TomatoSliced_1", objectType="TomatoSliced", parentReceptacles=on_plate),
        obj("Knife|1"),
        obj("Sink|1", receptacle=True),
    ]


def test_sandwich_with_one_untoasted_slice():
    p = check_task(task("Sandwich", "1", "1"), _sandwich_scene(second_toasted=False))
    # toast x2: 4 conditions, 1 toast + 1 half-done slice = 3; lettuce 2/2; tomato 2/2; plate 4/4;
    # relation: 2 + 1 + 1 heads on the plate, only one toast counts = 3 of 4
    assert counts(p) == (False, 16, 14)
    by_key = {sg.key: sg for sg in p.subgoals}
    assert (by_key["toast"].goal_conditions_total, by_key["toast"].goal_conditions_satisfied) == (4, 3)
    assert by_key["toast"].description == "2 x Toast a slice of bread."
    assert [s.object_id for s in by_key["toast"].steps] == ["Bread|1|BreadSliced_2"]
    rel = by_key["relation[0]"]
    assert (rel.success, rel.goal_conditions_total, rel.goal_conditions_satisfied) == (False, 4, 3)
    assert p.satisfied_objects == ["Plate|1"]


def test_sandwich_complete():
    assert counts(check_task(task("Sandwich", "1", "1"), _sandwich_scene(second_toasted=True))) == (
        True,
        16,
        16,
    )


def test_sandwich_parts_on_two_plates_fail_the_same_plate_relation():
    scene = _sandwich_scene(second_toasted=True)
    scene.append(obj("Plate|2", receptacle=True))
    scene[5]["parentReceptacles"] = ["Plate|2"]  # tomato slice on the other plate
    p = check_task(task("Sandwich", "1", "1"), scene)
    assert p.success is False
    rel = p.subgoals[-1]
    assert (rel.goal_conditions_total, rel.goal_conditions_satisfied) == (4, 3)
    assert [s.object_id for s in rel.unmet_steps] == ["Tomato|1|TomatoSliced_1"]
    # plate component: two clean plates (2 conds each, but one instance needed) + sink
    assert counts(p) == (False, 16, 15)


# ------------------------------------------------------------------------------------------ clean all X


def test_clean_all_drinkware_partial_and_complete():
    scene = [
        obj("Mug|1", isDirty=True),
        obj("Cup|1", isDirty=False),
        obj("Mug|2", isDirty=False),
        obj("Plate|1", isDirty=True),  # not Drinkware: ignored
        obj("Sink|1", receptacle=True),
    ]
    p = check_task(task("Clean All X", "Drinkware"), scene)
    # 3 drinkware x 2 conditions = 6, dirty mug meets 1 -> 5; sink 2/2
    assert counts(p) == (False, 8, 7)
    assert [s.object_id for s in p.subgoals[0].unmet_steps] == ["Mug|1"]
    scene[0]["isDirty"] = False
    assert counts(check_task(task("Clean All X", "Drinkware"), scene)) == (True, 8, 8)


def test_clean_all_with_nothing_to_clean_counts_only_the_sink():
    p = check_task(task("Clean All X", "Drinkware"), [obj("Sink|1", receptacle=True)])
    assert counts(p) == (True, 2, 2)


# ---------------------------------------------------------------------------------------- put all X on Y


def _newspaper_scene(second_on: str) -> list[dict[str, Any]]:
    return [
        obj("Newspaper|1", parentReceptacles=["DiningTable|1"]),
        obj("Newspaper|2", parentReceptacles=[second_on]),
        obj("Newspaper|3", parentReceptacles=["CoffeeTable|1"]),
        obj("DiningTable|1", receptacle=True),
        obj("CoffeeTable|1", receptacle=True),
        obj("Sofa|1", receptacle=True),
    ]


def test_put_all_on_any_table_partial_credit():
    t = task("Put All X On Y", "Newspaper", "on", "Tables")
    p = check_task(t, _newspaper_scene("Sofa|1"))
    # the "all newspapers" component succeeds with no step to report: not counted;
    # target table 2/2; relation: one condition per newspaper (3), two on a table
    assert counts(p) == (False, 5, 4)
    assert [sg.key for sg in p.subgoals] == ["target", "relation[0]"]
    assert [s.object_id for s in p.subgoals[1].unmet_steps] == ["Newspaper|2"]
    assert p.subgoals[1].unmet_descriptions() == ["Each Newspaper needs to be on a Tables."]
    assert counts(check_task(t, _newspaper_scene("CoffeeTable|1"))) == (True, 5, 5)


def test_put_all_in_one_table_needs_a_single_table():
    t = task("Put All X In One Y", "Newspaper", "on", "Tables")
    p = check_task(t, _newspaper_scene("DiningTable|1"))
    # best table holds 2 of 3 newspapers
    assert counts(p) == (False, 5, 4)
    assert [s.object_id for s in p.subgoals[1].unmet_steps] == ["Newspaper|3"]
    scene = _newspaper_scene("DiningTable|1")
    scene[2]["parentReceptacles"] = ["DiningTable|1"]
    assert counts(check_task(t, scene)) == (True, 5, 5)


# ---------------------------------------------------------------------------------------------- N slices


def _apple_scene(sliced: bool) -> list[dict[str, Any]]:
    scene = [
        obj("Bowl|1", receptacle=True),
        obj("CounterTop|1", receptacle=True),
        obj("Knife|1"),
        obj("Sink|1", receptacle=True),
    ]
    if sliced:
        scene += [
            obj(
                "Apple|1|AppleSliced_1",
                objectType="AppleSliced",
                parentReceptacles=["Bowl|1", "CounterTop|1"],
            ),
            obj("Apple|1|AppleSliced_2", objectType="AppleSliced", parentReceptacles=["CounterTop|1"]),
        ]
    else:
        scene.append(obj("Apple|1", parentReceptacles=["CounterTop|1"]))
    return scene


def test_two_apple_slices_in_a_bowl_one_missing():
    t = task("N Slices Of X In Y", "2", "Apple", "in", "Bowl")
    p = check_task(t, _apple_scene(sliced=True))
    # slices x2: 2/2 + knife 1/1; bowl 4/4; relation needs 2 slices in the bowl, 1 is
    assert counts(p) == (False, 9, 8)
    assert [s.object_id for s in p.subgoals[-1].unmet_steps] == ["Apple|1|AppleSliced_2"]
    assert p.subgoals[-1].unmet_descriptions() == ["The Apple slice needs to be in the clean Bowl."]


def test_two_apple_slices_from_a_whole_apple():
    t = task("N Slices Of X In Y", "2", "Apple", "in", "Bowl")
    p = check_task(t, _apple_scene(sliced=False))
    # the whole apple stands for the slices (one instance sought): 0 of 2; knife 1; bowl 4; relation 0 of 2
    assert counts(p) == (False, 9, 5)
    slices = p.subgoals[0]
    assert (slices.goal_conditions_total, slices.goal_conditions_satisfied) == (3, 1)
    assert [(s.object_id, s.desc) for s in slices.unmet_steps] == [
        ("Apple|1", "The Apple needs to be cut into slices with a knife.")
    ]


def test_two_apple_slices_done():
    scene = _apple_scene(sliced=True)
    scene[-1]["parentReceptacles"] = ["Bowl|1", "CounterTop|1"]
    t = task("N Slices Of X In Y", "2", "Apple", "in", "Bowl")
    assert counts(check_task(t, scene)) == (True, 9, 9)


# ---------------------------------------------------------------------------------------- semantics bits


def test_sink_and_sinkbasin_are_the_same_type():
    assert type_matches({"objectType": "SinkBasin"}, "Sink")
    assert type_matches({"objectType": "Sink"}, "SinkBasin")
    assert type_matches({"objectType": "BathtubBasin"}, "Bathtub")
    assert not type_matches({"objectType": "Sink"}, "Bathtub")
    scene = [obj("Plate|1"), obj("Sink|1|SinkBasin", objectType="SinkBasin", receptacle=True)]
    assert counts(check_task(task("Clean X", "Plate"), scene)) == (True, 4, 4)


def test_class_condition_reads_simbot_object_class_not_type():
    plate = obj("Plate|1")
    plate["simbotObjectClass"] = ["Tableware"]  # type missing from its classes: not a "Plate" by class
    p = check_task(task("Clean X", "Plate"), [plate, obj("Sink|1", receptacle=True)])
    assert counts(p) == (False, 4, 2)
    assert p.candidate_objects == []


def test_parent_receptacles_follow_last_parent_chain_only_without_metadata_list():
    bowl = obj("Bowl|1", receptacle=True, parentReceptacles=["Plate|1", "CounterTop|1"])
    toast = obj("Bread|1|BreadSliced_1", objectType="BreadSliced", isCooked=True)
    toast["parentReceptacles"] = None
    toast["simbotLastParentReceptacle"] = "Bowl|1"
    scene = [
        obj("Plate|1", receptacle=True),
        obj("CounterTop|1"),
        bowl,
        toast,
        obj("Sink|1", receptacle=True),
    ]
    assert parent_receptacles(toast, scene) == ["Bowl|1", "Plate|1", "CounterTop|1"]
    # the toast in a bowl on the plate counts as on the plate
    assert check_task(task("Plate Of Toast"), scene).success
    # when the simulator gives parentReceptacles, it is trusted as is
    toast["parentReceptacles"] = ["Bowl|1"]
    assert not check_task(task("Plate Of Toast"), scene).success


def test_parent_chain_cycle_terminates():
    a = obj("Box|1", simbotLastParentReceptacle="Box|2")
    b = obj("Box|2", simbotLastParentReceptacle="Box|1")
    a["parentReceptacles"] = b["parentReceptacles"] = None
    assert parent_receptacles(a, [a, b]) == ["Box|2"]


def test_condition_status_rules():
    scene = Scene([obj("CounterTop|1"), obj("Mug|1", simbotLastParentReceptacle="CounterTop|1", isDirty=1)])
    mug = scene.objects[1]
    status = condition_status(
        mug,
        {
            "objectType": "Mug",
            "isDirty": 1,  # 1/0 mean truthy/falsy
            "simbotObjectClass": "Drinkware",  # list membership
            "simbotLastParentReceptacle": "CounterTop",  # matched by type of the parent
            "isBroken": 1,
            "missingProperty": 0,  # absent property: never satisfied
        },
        scene,
    )
    assert status == {
        "objectType": True,
        "isDirty": True,
        "simbotObjectClass": True,
        "simbotLastParentReceptacle": True,
        "isBroken": False,
        "missingProperty": False,
    }


def test_toggle_all_lamps_parameter_becomes_integer():
    t = task("Toggle X All Y", "on", "1", "Lamps")
    comp = next(iter(t.components.values()))
    assert comp.conditions["isToggled"] == 1
    scene = [obj("FloorLamp|1", isToggled=True), obj("DeskLamp|1", isToggled=False)]
    scene[0]["simbotObjectClass"] = ["FloorLamp", "Lights", "Lamps"]
    scene[1]["simbotObjectClass"] = ["DeskLamp", "Lights", "Lamps"]
    assert counts(check_task(t, scene)) == (False, 4, 3)


def test_instance_shareable_component_needs_one_instance():
    # Workspace: 2 writing utensils asked for, but the shareable component counts one instance;
    # the relation asks for both on one table.
    t = task("Workspace", "2", "0", "0")
    scene = [
        obj("DiningTable|1", receptacle=True),
        obj("Pen|1", parentReceptacles=["DiningTable|1"]),
        obj("LightSwitch|1", isToggled=True),
    ]
    scene[1]["simbotObjectClass"] = ["Pen", "SmallHandheldObjects", "WritingUtensils"]
    p = check_task(t, scene)
    writing = next(sg for sg in p.subgoals if sg.key == "writing")
    assert (writing.goal_conditions_total, writing.goal_conditions_satisfied) == (1, 1)
    rel = p.subgoals[-1]
    assert (rel.goal_conditions_total, rel.goal_conditions_satisfied, rel.success) == (2, 1, False)


# ------------------------------------------------------------------------------------------------- EDH


def test_task_from_state_changes_counts_and_overrides():
    changes = {
        "agents": {},
        "objects": {
            "Mug|+1.00|+0.90|-1.00": {
                "isFilledWithLiquid": True,
                "simbotIsFilledWithCoffee": True,
                "isDirty": False,
            },
            "Potato|+0.50|+0.90|-1.00": {"isCooked": True, "simbotIsCooked": True, "simbotIsBoiled": True},
            "Potato|+0.60|+0.90|-1.00": {"simbotIsBoiled": True},
            "Tomato|+0.1|+0.9|+0.2|TomatoSliced_1": {"simbotLastParentReceptacle": "Plate|+0.00|+0.90|+0.00"},
        },
    }
    t = task_from_state_changes(changes)
    comps = {
        (c.conditions["objectType"], *[k for k in c.conditions if k != "objectType"]): c
        for c in t.components.values()
    }
    assert set(comps) == {
        ("Mug", "isDirty"),
        ("Mug", "simbotIsFilledWithCoffee"),
        ("Potato", "simbotIsBoiled"),
        ("TomatoSliced", "simbotLastParentReceptacle"),
    }
    assert comps[("Potato", "simbotIsBoiled")].determiner == "2"
    assert (
        comps[("TomatoSliced", "simbotLastParentReceptacle")].conditions["simbotLastParentReceptacle"]
        == "Plate"
    )
    scene = [
        obj("Mug|+1.00|+0.90|-1.00", objectType="Mug", isDirty=False, simbotIsFilledWithCoffee=True),
        obj("Potato|+0.50|+0.90|-1.00", objectType="Potato", simbotIsBoiled=True),
        obj("Potato|+0.60|+0.90|-1.00", objectType="Potato"),
        obj("Plate|+0.00|+0.90|+0.00", objectType="Plate"),
        obj(
            "Tomato|+0.1|+0.9|+0.2|TomatoSliced_1",
            objectType="TomatoSliced",
            simbotLastParentReceptacle="Plate|+0.00|+0.90|+0.00",
        ),
    ]
    # mug: 2 components x 2 conditions; potatoes: 2 instances x 2 conditions, one boiled (2) and one
    # candidate with its type right (1); tomato: 2
    assert counts(check_task(t, scene)) == (False, 10, 9)
    scene[2]["simbotIsBoiled"] = True
    assert counts(check_task(t, scene)) == (True, 10, 10)


def test_to_teach_dict_shape():
    p = check_task(task("Coffee"), [obj("Mug|1", isDirty=True)])
    d = p.to_teach_dict()
    assert set(d) == {
        "description",
        "success",
        "satisfied_objects",
        "candidate_objects",
        "subgoals",
        "goal_conditions_total",
        "goal_conditions_satisfied",
    }
    assert d["subgoals"][0]["steps"][0] == {
        "success": False,
        "objectId": "Mug|1",
        "objectType": "Mug",
        "desc": "The mug needs to be rinsed clean with water first.",
    }


@pytest.mark.parametrize("n", [1, 2])
def test_num_instances_scales_components(n):
    mugs = [obj(f"Mug|{i}", simbotIsFilledWithCoffee=True) for i in range(2)]
    assert counts(check_task(task("Coffee"), mugs, num_instances_needed=n)) == (True, 3 * n, 3 * n)
