"""Task definitions: packaged files, loader errors, parameter substitution, sub-task resolution."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helper_agent.teach import (
    SubtaskComponent,
    TaskDefinitionError,
    default_registry,
    load_task_definitions,
)
from helper_agent.teach.tasks import _sub_dict, substitute_params

FAMILIES = {
    101: "Toast",
    102: "Coffee",
    103: "Clean X",
    104: "Sliced X",
    105: "Cooked Slice Of X",
    106: "Plate Of Toast",
    107: "N Cooked Slices Of X In Y",
    108: "N Slices Of X In Y",
    109: "Omelette",
    110: "Put All X On Y",
    111: "Put All X In One Y",
    112: "Boil X",
    113: "Poach Egg",
    114: "Water Plant",
    115: "Clean All X",
    116: "Toggle X All Y",
    201: "Tutorial",
    301: "Breakfast",
    302: "Sandwich",
    303: "Salad",
    304: "Candles",
    305: "Workspace",
    401: "Basic Kitchen Tasks",
    403: "Basic Bathroom Tasks",
    405: "Custom Properties Kitchen Tasks",
}


def test_packaged_definitions_cover_every_family_with_teach_ids():
    reg = default_registry()
    assert len(reg) == 25
    assert {d.task_id: d.task_name for d in reg} == FAMILIES
    assert reg.get(302).task_name == "Sandwich"
    assert reg.get("Sandwich").task_nparams == 2
    with pytest.raises(KeyError):
        reg.get("Laundry")


def test_substitution_replaces_high_indices_first():
    params = [str(i) + "x" for i in range(14)]
    assert substitute_params("#1 and #13 and #10", params) == "1x and 13x and 10x"


def test_substitution_in_dicts_converts_digit_strings_except_determiner():
    out = _sub_dict(
        {"#0": {"determiner": "#1", "conditions": {"isToggled": "#1", "objectType": "#0"}}, "keep": "#2"},
        ["Lamp", "1", "on"],
    )
    assert out == {
        "keep": "on",
        "Lamp": {"determiner": "1", "conditions": {"isToggled": 1, "objectType": "Lamp"}},
    }
    # substituted keys move after the unchanged ones, as in TEACh
    assert list(out) == ["keep", "Lamp"]


def test_instantiate_breakfast_resolves_nested_subtasks_and_params():
    params = ["1", "2", "1", "Plate", "1", "Bowl", "1", "2", "3", "1", "1", "1", "2", "DiningTable"]
    t = default_registry().instantiate("Breakfast", params)
    assert t.task_params == params
    potatoes = t.components["potatoes"]
    assert isinstance(potatoes, SubtaskComponent)
    assert potatoes.task.task_name == "N Cooked Slices Of X In Y"
    assert potatoes.task.task_params == ["2", "Potato", "on", "Plate"]
    assert potatoes.task.desc == "Cook 2 slice(s) of Potato and put them on a Plate."
    sandwich = t.components["sandwich"].task
    assert sandwich.task_params == ["2", "3"]
    assert sandwich.components["lettuce"].determiner == "2"
    assert sandwich.relations[0].head_determiner_list == ["2", "2", "3"]
    assert t.components["serving_spot"].conditions == {"objectType": "DiningTable", "receptacle": 1}
    assert t.relations[0].failure_desc == "Every breakfast item needs to be on the DiningTable."
    names = [x.task_name for x in t.iter_tasks()]
    assert names.count("Clean X") == 5 and names[0] == "Breakfast"


def test_instantiate_checks_parameter_count():
    with pytest.raises(TaskDefinitionError, match="takes 1 parameter"):
        default_registry().instantiate("Clean X", [])


def test_task_to_dict_round_trips_through_json():
    t = default_registry().instantiate("Plate Of Toast")
    d = json.loads(json.dumps(t.to_dict()))
    assert d["components"]["plate"]["task"]["components"]["target"]["conditions"] == {
        "simbotObjectClass": "Plate",
        "isDirty": 0,
    }
    assert d["relations"][0]["tail_determiner_list"] == ["the"]


def _write(tmp: Path, name: str, data: dict) -> None:
    (tmp / name).write_text(json.dumps(data))


def _atomic(**over):
    base = {
        "determiner": "a",
        "primary_condition": "objectType",
        "instance_shareable": False,
        "conditions": {"objectType": "Mug"},
        "condition_failure_descs": {},
    }
    base.update(over)
    return base


def _task(tid, name, components, relations=(), nparams=0):
    return {
        "task_id": tid,
        "task_name": name,
        "task_nparams": nparams,
        "task_anchor_object": None,
        "desc": "d",
        "components": components,
        "relations": list(relations),
    }


def test_loader_errors(tmp_path):
    _write(tmp_path, "a.json", {"task_id": 1, "task_name": "A"})
    with pytest.raises(TaskDefinitionError, match=r"a\.json: missing key 'task_nparams'"):
        load_task_definitions(tmp_path)

    _write(tmp_path, "a.json", _task(1, "A", {"x": {"determiner": "a", "primary_condition": "objectType"}}))
    with pytest.raises(TaskDefinitionError, match=r"components\.x.*missing key"):
        load_task_definitions(tmp_path)

    _write(
        tmp_path, "a.json", _task(1, "A", {"x": {"determiner": "a", "task_name": "Nope", "task_params": []}})
    )
    with pytest.raises(TaskDefinitionError, match="cannot resolve sub-task 'Nope'"):
        load_task_definitions(tmp_path)

    _write(tmp_path, "a.json", _task(1, "A", {"x": {"determiner": "a", "task_name": "B", "task_params": []}}))
    _write(tmp_path, "b.json", _task(2, "B", {"y": {"determiner": "a", "task_name": "A", "task_params": []}}))
    with pytest.raises(TaskDefinitionError, match="circular"):
        load_task_definitions(tmp_path)

    _write(tmp_path, "a.json", _task(1, "A", {"x": _atomic()}))
    _write(tmp_path, "b.json", _task(1, "B", {"x": _atomic()}))
    with pytest.raises(TaskDefinitionError, match="duplicate task_id 1"):
        load_task_definitions(tmp_path)

    _write(tmp_path, "b.json", _task(2, "B", {"x": _atomic()}, [{"property": "parentReceptacles"}]))
    with pytest.raises(TaskDefinitionError, match=r"relations\[0\].*missing key"):
        load_task_definitions(tmp_path)

    (tmp_path / "b.json").write_text("{not json")
    with pytest.raises(TaskDefinitionError, match="invalid JSON"):
        load_task_definitions(tmp_path)


def test_loader_resolves_custom_directory(tmp_path):
    _write(tmp_path, "a.json", _task(1, "A", {"mug": _atomic(determiner="#0")}, nparams=1))
    _write(
        tmp_path,
        "b.json",
        _task(2, "B", {"two": {"determiner": "a", "task_name": "A", "task_params": ["2"]}}),
    )
    reg = load_task_definitions(tmp_path)
    t = reg.instantiate("B")
    assert t.components["two"].task.components["mug"].determiner == "2"
    with pytest.raises(TaskDefinitionError, match="invalid determiner"):
        reg.instantiate("A", ["lots"])
