"""Game / EDH / TfD files: lossless round trips, malformed-file messages, dataset layout, and
scoring the fixture episode end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helper_agent.teach import (
    ACTIONS,
    DriverAction,
    EdhInstance,
    TeachDataset,
    TeachFormatError,
    action_by_id,
    action_by_name,
    check_task,
    default_definitions,
    feedback_from_progress,
    read_edh_instance,
    read_game,
    read_tfd_instance,
    score_edh_episode,
    score_tfd_episode,
    tfd_check_task,
    write_record,
)
from helper_agent.teach.actions import action_idx
from helper_agent.teach.formats import load_json, parse_record

DATA = Path(__file__).parent / "data" / "teach"
DATASET = DATA / "dataset"
GAME_ID = "3f9c2d71be04a5e6_7c21"
GAME = DATASET / "games" / "valid_seen" / f"{GAME_ID}.game.json"
EDH = DATASET / "edh_instances" / "valid_seen" / f"{GAME_ID}.edh0.json"
TFD = DATASET / "tfd_instances" / "valid_seen" / f"{GAME_ID}.tfd.json"


@pytest.mark.parametrize(
    ("path", "reader"), [(GAME, read_game), (EDH, read_edh_instance), (TFD, read_tfd_instance)]
)
def test_round_trip_is_lossless(path, reader, tmp_path):
    raw = json.loads(path.read_text())
    record = reader(path)
    assert record.to_dict() == raw
    out = write_record(record, tmp_path / "sub" / path.name)
    again = json.loads(out.read_text())
    assert again == raw
    # JSON types survive too (ints stay ints, floats stay floats)
    assert json.dumps(again, sort_keys=True) == json.dumps(raw, sort_keys=True)


def test_game_fields_and_unknown_keys():
    game = read_game(GAME)
    assert game.game_id == GAME_ID
    assert game.task.task_id == 102 and game.task.task_name == "Coffee"
    ep = game.episode
    assert (ep.world, ep.world_type, ep.commander_embodied) == ("FloorPlan12", "Kitchen", "False")
    text = ep.interactions[2]
    assert text.agent_id == 0 and text.action_id == 100 and text.utterance.startswith("please make me")
    assert text.model_extra["da_metadata"]["das"][0] == "Instruction"
    pickup = ep.interactions[5]
    assert (pickup.oid, pickup.x, pickup.y) == ("Mug|+01.45|+00.91|-01.62", 0.52, 0.61)
    assert isinstance(ep.initial_state.time_start, int)
    assert ep.initial_state.objects[0]["name"] == "CounterTop_1a2b3c"
    merged = ep.final_state.objects_with_custom_metadata()
    mug = next(o for o in merged if o["objectType"] == "Mug")
    assert mug["simbotIsFilledWithCoffee"] is True and "Drinkware" in mug["simbotObjectClass"]
    assert "simbotIsFilledWithCoffee" not in ep.final_state.objects[1]  # source not modified


def test_edh_fields():
    edh = read_edh_instance(EDH)
    assert edh.instance_id == f"{GAME_ID}.edh0" and edh.pred_start_idx == 11
    assert edh.dialog()[0] == ("Driver", "Hello, what can I do?")
    assert edh.dialog(cleaned=False)[0] == ("Driver", "hello, what can I do?")
    assert [a.action_name for a in edh.driver_actions_future] == ["Pickup", "Turn Left", "Place", "ToggleOn"]
    assert edh.reference_path_length == 4
    assert edh.interactions[edh.pred_start_idx].time_start == edh.driver_actions_future[0].time_start
    assert "dialog_history_with_das" in edh.model_extra


def test_tfd_instance_id_from_file_name_is_not_written(tmp_path):
    tfd = read_tfd_instance(TFD)
    assert tfd.instance_id == f"{GAME_ID}.tfd"
    assert "instance_id" not in tfd.to_dict()
    assert tfd.reference_path_length == 11


def test_malformed_files_name_file_and_key():
    with pytest.raises(TeachFormatError) as err:
        read_edh_instance(DATA / "malformed" / "missing_action_name.edh0.json")
    assert str(err.value) == (
        f"{DATA / 'malformed' / 'missing_action_name.edh0.json'}: "
        "key 'driver_action_history[3].action_name': field required"
    )
    assert err.value.key == "driver_action_history[3].action_name"

    with pytest.raises(
        TeachFormatError,
        match=r"bad_time\.game\.json: key 'tasks\[0\]\.episodes\[0\]\.interactions"
        r"\[4\]\.time_start': expected a number",
    ):
        read_game(DATA / "malformed" / "bad_time.game.json")

    with pytest.raises(TeachFormatError, match=r"truncated\.tfd\.json: invalid JSON: .*line \d+, column \d+"):
        read_tfd_instance(DATA / "malformed" / "truncated.tfd.json")


def test_parse_errors_for_types_and_shapes():
    with pytest.raises(TeachFormatError, match=r"x\.edh0\.json: expected a JSON object, got list"):
        parse_record(EdhInstance, [], "x.edh0.json")
    base = json.loads(EDH.read_text())
    base["dialog_history"][1] = ["Commander"]
    with pytest.raises(
        TeachFormatError, match=r"key 'dialog_history\[1\]': list should have at least 2 items"
    ):
        parse_record(EdhInstance, base, "y.json")
    base = json.loads(EDH.read_text())
    base["driver_action_history"][0]["action_id"] = "2"
    with pytest.raises(
        TeachFormatError, match=r"key 'driver_action_history\[0\]\.action_id': input should be"
    ):
        parse_record(EdhInstance, base, "z.json")
    game = json.loads(GAME.read_text())
    del game["tasks"][0]["episodes"][0]["final_state"]["objects"][2]["objectId"]
    with pytest.raises(
        TeachFormatError, match=r"final_state\.objects\[2\]': object has no string 'objectId'"
    ):
        parse_record(type(read_game(GAME)), game, "g.json")


def test_records_built_in_code_write_teach_keys(tmp_path):
    fwd = action_by_name("Forward")
    inst = EdhInstance(
        game_id="g",
        instance_id="g.edh0",
        dialog_history=[["Commander", "make coffee"]],
        driver_action_history=[
            DriverAction(
                action_id=fwd.action_id,
                action_idx=fwd.action_idx,
                obj_interaction_action=0,
                action_name=fwd.action_name,
                time_start=1.5,
            )
        ],
        expected_init_goal_conditions_total=3,
        expected_init_goal_conditions_satisfied=1,
    )
    back = read_edh_instance(write_record(inst, tmp_path / "g.edh0.json"))
    assert back.to_dict() == {
        "game_id": "g",
        "instance_id": "g.edh0",
        "dialog_history": [["Commander", "make coffee"]],
        "driver_action_history": [
            {
                "action_id": 2,
                "action_idx": 2,
                "obj_interaction_action": 0,
                "action_name": "Forward",
                "time_start": 1.5,
            }
        ],
        "expected_init_goal_conditions_total": 3,
        "expected_init_goal_conditions_satisfied": 1,
    }


def test_dataset_layout():
    ds = TeachDataset(DATASET)
    assert ds.splits("games") == ["valid_seen"] and ds.splits("edh_instances") == ["valid_seen"]
    assert [p.name for p in ds.edh_paths("valid_seen")] == [f"{GAME_ID}.edh0.json"]
    assert [p.name for p in ds.tfd_paths("valid_seen")] == [f"{GAME_ID}.tfd.json"]
    edh = next(ds.edh_instances("valid_seen"))
    assert ds.game_for(edh, "valid_seen").game_id == GAME_ID
    assert ds.image_dir("valid_seen", GAME_ID) == DATASET / "images" / "valid_seen" / GAME_ID
    assert list(ds.games("test_unseen")) == []
    with pytest.raises(FileNotFoundError):
        TeachDataset(DATA / "nope")


def test_fixture_episode_scores_like_teach():
    game = read_game(GAME)
    task = tfd_check_task(game)
    init = game.episode.initial_state.objects_with_custom_metadata()
    final = game.episode.final_state.objects_with_custom_metadata()
    start = check_task(task, init)
    assert (start.success, start.goal_conditions_total, start.goal_conditions_satisfied) == (False, 3, 1)
    assert feedback_from_progress(start) == (
        "You failed to complete the subtask: Make a mug of coffee. For the mug: The mug needs to be rinsed clean "
        "with water first. The mug needs to be filled with coffee from the coffee machine."
    )
    metrics, progress = score_tfd_episode(read_tfd_instance(TFD), task, init, final, traj_len=22)
    assert progress.success
    assert (metrics.instance_id, metrics.task_name, metrics.gt_path_len) == (f"{GAME_ID}.tfd", "Coffee", 11)
    assert (metrics.completed_goal_conditions, metrics.total_goal_conditions) == (2, 2)
    assert metrics.success_spl == 0.5 and metrics.path_len_weighted_success_spl == 5.5

    edh = read_edh_instance(EDH)
    metrics, progress = score_edh_episode(edh, final, traj_len=8)
    assert (progress.goal_conditions_total, progress.goal_conditions_satisfied) == (4, 4)
    assert metrics.goal_condition_success == 1.0 and metrics.success_spl == 0.5
    metrics, progress = score_edh_episode(edh, init, traj_len=3)
    assert not progress.success and metrics.goal_condition_success == 0.0


def test_action_table_facts():
    assert action_by_name("Forward").action_id == 2
    assert action_by_name("Turn Left").action_id == 4
    assert action_by_name("Pickup").action_id == 200 and action_idx(200) == 15
    assert action_by_id(100).action_name == "Text" and action_idx(100) == 33
    assert action_by_id(300).action_name == "Navigation" and action_idx(300) == 14
    assert sorted(a.action_idx for a in ACTIONS) == list(range(36))
    defs = default_definitions()
    assert [a["agent_name"] for a in defs["agents"]] == ["Commander", "Driver"]
    assert defs["actions"][2] == {
        "action_id": 2,
        "action_name": "Forward",
        "action_type": "Motion",
        "pose_delta": [0.25, 0, 0, 0, 0, 0],
    }
    with pytest.raises(KeyError):
        action_by_name("Jump")


# ------------------------------------------------------------------------- bad game files, by case
INITIAL = "tasks[0].episodes[0].initial_state"


def _objects(game: dict) -> list[dict]:
    return game["tasks"][0]["episodes"][0]["initial_state"]["objects"]


def _set(index: int, **fields: object):
    def change(game: dict) -> None:
        _objects(game)[index].update(fields)

    return change


def _duplicate(game: dict) -> None:
    _objects(game)[1]["objectId"] = _objects(game)[0]["objectId"]


def _many(game: dict) -> None:
    first = _objects(game)[0]
    _objects(game).extend({**first, "objectId": f"Mug|{i}", "objectType": "Mug", "receptacleObjectIds": None} for i in range(20_000))


def _custom(**fields: object):
    def change(game: dict) -> None:
        game["tasks"][0]["episodes"][0]["initial_state"]["custom_object_metadata"]["Mug|+01.45|+00.91|-01.62"].update(fields)

    return change


def _agent(**fields: object):
    def change(game: dict) -> None:
        game["tasks"][0]["episodes"][0]["initial_state"]["agents"][1].update(fields)

    return change


def _grid(**fields: object):
    def change(game: dict) -> None:
        game["helper_agent"] = {"grid": {"width": 8, "depth": 8, "origin": {"x": -2, "z": -3}, "blocked": [], **fields}}

    return change


# (change to the fixture game, key path, problem): the reader names the file, key path and problem.
BAD_GAMES = [
    (_duplicate, f"{INITIAL}.objects[1].objectId", "duplicate objectId 'CounterTop|+01.18|+00.95|-01.55' (first at objects[0])"),
    (_set(3, objectType="Spaceship"), f"{INITIAL}.objects[3].objectType", "unknown object type 'Spaceship'"),
    (_set(2, position="1, 2, 3"), f"{INITIAL}.objects[2].position", "input should be a valid dictionary"),
    (_set(2, position={"x": float("nan"), "y": 0, "z": 0}), f"{INITIAL}.objects[2].position.x", "input should be a finite number"),
    (_set(2, position={"x": 1e5, "y": 0, "z": 0}), f"{INITIAL}.objects[2].position.x", "input should be less than or equal to 1000"),
    (_set(2, isOpen="no"), f"{INITIAL}.objects[2].isOpen", "expected true or false (or 0/1), got str 'no'"),
    (_set(0, objectId=7), f"{INITIAL}.objects[0]", "object has no string 'objectId'"),
    (_set(1, parentReceptacles=["Nope|1|2|3"]), f"{INITIAL}.objects[1].parentReceptacles", "names unknown object 'Nope|1|2|3'"),
    (_many, f"{INITIAL}.objects", "20006 objects; the limit is 2000 per scene (HELPER_MAX_SCENE_OBJECTS)"),
    (_custom(simbotIsCooked="yes"), f"{INITIAL}.custom_object_metadata.Mug|+01.45|+00.91|-01.62.simbotIsCooked", "expected true or false (or 0/1), got str 'yes'"),
    (_agent(position="here"), f"{INITIAL}.agents[1].position", "input should be a valid dictionary"),
    (_agent(position={"x": 1, "y": 0.9, "z": float("inf")}), f"{INITIAL}.agents[1].position.z", "input should be a finite number"),
    (_grid(width=10**6, depth=10**6), "helper_agent.grid", "the scene spans 1000000 x 1000000 cells of 0.25 m; the limit is 250000 cells (HELPER_MAX_GRID_CELLS)"),
    (_grid(blocked=[[99, 99]]), "helper_agent.grid.blocked[0]", "cell [99, 99] is outside the 8 x 8 grid"),
    (lambda g: g["tasks"][0]["episodes"][0]["interactions"][0].update(time_start=float("inf")), "tasks[0].episodes[0].interactions[0].time_start", "expected a finite number, got inf"),
]


@pytest.mark.parametrize(("change", "key", "problem"), BAD_GAMES)
def test_bad_games_name_the_file_and_key_path(tmp_path, change, key, problem):
    game = json.loads(GAME.read_text())
    change(game)
    path = tmp_path / f"{GAME_ID}.game.json"
    path.write_text(json.dumps(game))
    with pytest.raises(TeachFormatError) as err:
        read_game(path)
    assert err.value.key == key
    assert err.value.problem.startswith(problem)
    assert str(err.value).startswith(f"{path}: key '{key}': {problem}")


@pytest.mark.parametrize(
    ("write", "problem"),
    [
        (lambda p: p.mkdir(), "is a directory, not a JSON file"),
        (lambda p: p.write_bytes(bytes(range(256)) * 4), "not UTF-8 text (byte 0x80 at offset 128); is it a binary file?"),
        (lambda p: p.write_bytes(GAME.read_text().replace("Kitchen", "K\u00fcche").encode("latin-1")), "not UTF-8 text"),
        (lambda p: p.write_bytes(b""), "invalid JSON: Expecting value (line 1, column 1)"),
        (lambda p: p.write_bytes(b"[" * 100_000), "JSON nested too deeply"),
        (lambda p: None, "no such file"),
    ],
)
def test_unreadable_game_files_are_one_teach_error(tmp_path, write, problem):
    path = tmp_path / f"{GAME_ID}.game.json"
    write(path)
    with pytest.raises(TeachFormatError) as err:
        read_game(path)
    assert str(err.value).startswith(f"{path}: {problem}")


def test_input_size_limit_is_checked_before_parsing(tmp_path):
    with pytest.raises(TeachFormatError, match=r"the limit is 100 bytes for one input file \(HELPER_MAX_INPUT_BYTES\)"):
        load_json(GAME, max_bytes=100)
