"""HELPER's personalization suite: the data, its scenes, its scorer and Table 3.

The gold planner (each request's gold adapted program) must score 100% in every category: a
failure means the data or its scene is wrong. A planner that replays the recalled routine unchanged
must succeed on exactly the "original" requests and fail on every modified one.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from pathlib import Path

import pytest

from helper_agent.evals.studies import personalization as P
from helper_agent.evals.studies.personalization import (
    CATEGORIES,
    PersonalizationDataError,
    RequestScore,
    SuiteResult,
    find_seed,
    gold_planner,
    load_suite,
    prepare_request,
    routine_planner,
    run_suite,
    scene_requirements,
    score_program,
    table3,
)
from helper_agent.world.metadata import export_objects

ROUTINE_TASKS = {"sandwich", "breakfast", "salad", "place", "clean"}


@pytest.fixture(scope="module")
def suite() -> P.PersonalizationSuite:
    return load_suite()


@pytest.fixture(scope="module")
def gold_result(suite: P.PersonalizationSuite) -> SuiteResult:
    return run_suite(gold_planner, suite=suite)


@pytest.fixture(scope="module")
def routine_result(suite: P.PersonalizationSuite) -> SuiteResult:
    return run_suite(routine_planner, suite=suite)


@pytest.fixture()
def raw() -> dict:
    return json.loads(P.default_suite_path().read_text(encoding="utf-8"))


# ------------------------------------------------------------------------------------------ data
def test_suite_shape(suite: P.PersonalizationSuite) -> None:
    assert len(suite.routines) == 5
    assert {r.task for r in suite.routines} == ROUTINE_TASKS
    assert len(suite.requests) == 40
    assert len({q.id for q in suite.requests}) == 40
    assert Counter(q.category for q in suite.requests) == {c: 10 for c in CATEGORIES}
    for routine in suite.routines:
        mine = suite.by_routine(routine.name)
        assert len(mine) == 8, routine.name
        assert Counter(q.category for q in mine) == {c: 2 for c in CATEGORIES}, routine.name
        assert routine.name in routine.request
        assert all(q.scene.room_type == routine.room_type for q in mine)


def test_requests_read_like_requests(suite: P.PersonalizationSuite) -> None:
    for q in suite.requests:
        core = q.routine.removeprefix("the ").lower()
        assert core in q.text.lower(), q.id  # the request names the routine it recalls
        assert len(q.changes) == q.n_changes and all(c.strip() for c in q.changes), q.id
        assert "Sliced" not in q.text and "CounterTop" not in q.text, q.id
    for routine in suite.routines:
        texts = [q.text for q in suite.by_routine(routine.name)]
        assert len(set(texts)) == len(texts), routine.name


def test_original_requests_recall_the_routine_unchanged(suite: P.PersonalizationSuite) -> None:
    for q in suite.requests:
        routine = suite.routine(q.routine)
        if q.category == "original":
            assert q.program == routine.program, q.id
            assert q.goal == routine.goal, q.id
        else:
            assert q.program != routine.program, q.id
            assert q.goal != routine.goal, q.id


def test_recorded_seeds_follow_the_scene_rule(suite: P.PersonalizationSuite) -> None:
    for q in suite.requests:
        assert q.scene.seed is not None, q.id
        assert find_seed(q) == q.scene.seed, (
            f"{q.id}: the scene rule now picks another seed; run "
            "`helper eval personalization --write-seeds`"
        )
        assert P.scene_problems(q) == [], q.id


def test_prepared_scene_has_what_the_gold_program_needs(suite: P.PersonalizationSuite) -> None:
    for q in suite.requests:
        state = prepare_request(q)
        assert state.seed == q.scene.seed and state.room_type == q.scene.room_type
        needs = scene_requirements(q)
        counts = Counter(o.object_type for o in state.objects.values())
        assert needs.problems(counts) == [], q.id
        for kind in needs.dirty:  # every dish the goal wants clean starts dirty
            assert all(o.is_dirty for o in state.objects.values() if o.object_type == kind), (q.id, kind)
        objects = export_objects(state)
        for goal in q.goal:
            assert not P.check_task(goal.instantiate(), objects).success, (q.id, goal.describe())


def test_scene_requirements_are_derived_from_program_and_goal(suite: P.PersonalizationSuite) -> None:
    mary = scene_requirements(suite.request("clean-original-1"))
    assert mary.exact == {"Plate": 2, "Cup": 2}
    assert mary.minimum["SinkBasin"] == 1 and set(mary.dirty) == {"Plate", "Cup"}
    one_plate = scene_requirements(suite.request("clean-two-1"))
    assert one_plate.exact == {"Bowl": 2} and one_plate.minimum["Plate"] == 1
    sandwich = scene_requirements(suite.request("sandwich-two-1"))
    assert {"Bread", "Tomato", "Knife", "Toaster", "DiningTable", "Plate"} <= set(sandwich.minimum)
    assert "Lettuce" not in sandwich.minimum  # tomato instead of lettuce
    assert sandwich.dirty == ("Plate",)  # Breakfast's unused coffee does not dirty the mugs
    salad = scene_requirements(suite.request("salad-original-1"))
    assert salad.cook
    breakfast = scene_requirements(suite.request("breakfast-two-2"))
    assert breakfast.minimum["Mug"] == 2 and set(breakfast.dirty) == {"Mug", "Plate", "Bowl"}


# ----------------------------------------------------------------------------------------- gold
def test_gold_planner_scores_100_percent(gold_result: SuiteResult) -> None:
    failed = [
        (s.request_id, s.status, s.error, [g.task_name for g in s.goals if not g.success])
        for s in gold_result.failed()
    ]
    assert failed == []
    assert table3(gold_result) == {"original": 1.0, "one": 1.0, "two": 1.0, "three": 1.0, "overall": 1.0}
    for s in gold_result.scores:
        assert s.goal_conditions_satisfied == s.goal_conditions_total > 0
        assert s.status == "done" and s.error is None and 0 < s.steps < 1000 and s.failures == 0


def test_unmodified_routine_fails_every_modified_request(
    suite: P.PersonalizationSuite, routine_result: SuiteResult
) -> None:
    succeeded = {s.request_id for s in routine_result.scores if s.success}
    assert succeeded == {q.id for q in suite.by_category("original")}
    assert table3(routine_result) == {"original": 1.0, "one": 0.0, "two": 0.0, "three": 0.0, "overall": 0.25}
    by_id = {s.request_id: s for s in routine_result.scores}
    # The unmodified Mary cleaning looks for cups that the "bowls instead of cups" scenes do not have.
    assert by_id["clean-one-1"].status == "not_found"
    # Putting the remote on the sofa leaves the armchair goal unmet, but the newspaper goal is met.
    armchair = by_id["place-one-1"]
    assert [g.success for g in armchair.goals] == [False, True]
    assert 0 < armchair.goal_conditions_satisfied < armchair.goal_conditions_total


def test_planner_gets_request_and_its_routine(suite: P.PersonalizationSuite) -> None:
    seen: list[tuple[str, str]] = []
    progress: list[tuple[int, int, str]] = []

    def planner(req: P.PersonalizationRequest, routine: P.Routine) -> str:
        seen.append((req.id, routine.name))
        return routine.program

    picked = [suite.request("place-original-2"), suite.request("place-one-1")]
    result = run_suite(planner, picked, lambda d, t, s: progress.append((d, t, s.request_id)), suite=suite)
    assert seen == [("place-original-2", "the Maya tidy-up"), ("place-one-1", "the Maya tidy-up")]
    assert progress == [(1, 2, "place-original-2"), (2, 2, "place-one-1")]
    assert [s.success for s in result.scores] == [True, False]
    assert table3(result) == {"original": 1.0, "one": 0.0, "overall": 0.5}


# -------------------------------------------------------------------------------------- scoring
def test_program_error_is_a_recorded_failure(suite: P.PersonalizationSuite) -> None:
    q = suite.request("clean-original-1")
    score = score_program(q, "import os\nos.system('ls')")
    assert not score.success and score.status == "program_error"
    assert "import" in (score.error or "") and score.steps == 0
    # goal conditions are still counted, in the untouched scene
    assert score.goal_conditions_total > 0 and score.goal_conditions_satisfied < score.goal_conditions_total


def test_unknown_object_and_execution_crash_are_recorded_failures(
    suite: P.PersonalizationSuite, monkeypatch: pytest.MonkeyPatch
) -> None:
    q = suite.request("place-original-1")
    missing = score_program(q, 'toaster = InteractionObject("Toaster")\ntoaster.toggle_on()')
    assert not missing.success and missing.status == "not_found" and "Toaster" in (missing.error or "")

    def crash(self, subgoals, start=0):
        raise RuntimeError("simulated crash")

    from helper_agent.tools.executor import Executor

    monkeypatch.setattr(Executor, "run", crash)
    crashed = score_program(q, q.program)
    assert not crashed.success and crashed.status == "error"
    assert crashed.error == "RuntimeError: simulated crash"


def test_partial_program_gets_partial_goal_conditions(suite: P.PersonalizationSuite) -> None:
    q = suite.request("clean-original-2")
    score = score_program(q, 'plate = InteractionObject("Plate", attributes=["clean"])\nplate.clean()')
    assert not score.success and score.status == "done"
    assert 0 < score.goal_conditions_satisfied < score.goal_conditions_total
    assert score.seed == q.scene.seed and score.program.startswith("plate =")


# ------------------------------------------------------------------------------------- table 3
def _score(category: str, success: bool) -> RequestScore:
    return RequestScore(request_id=f"{category}-{success}", routine="r", category=category, success=success)


def test_table3_math() -> None:
    scores = (
        [_score("three", True)]
        + [_score("three", False)] * 3
        + [_score("original", True)] * 2
        + [_score("one", True), _score("one", False)]
        + [_score("two", False)]
    )
    rates = table3(SuiteResult(scores=scores))
    assert list(rates) == ["original", "one", "two", "three", "overall"]
    assert rates == {"original": 1.0, "one": 0.5, "two": 0.0, "three": 0.25, "overall": pytest.approx(4 / 9)}
    assert table3(SuiteResult(scores=[_score("two", True)])) == {"two": 1.0, "overall": 1.0}
    assert table3(SuiteResult()) == {"overall": 0.0}
    assert set(P.TABLE3_LABELS) == {*CATEGORIES, "overall"}


# --------------------------------------------------------------------------------- bad suite files
def _write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "suite.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def _error(tmp_path: Path, data: object) -> str:
    path = _write(tmp_path, data)
    with pytest.raises(PersonalizationDataError) as info:
        load_suite(path)
    message = str(info.value)
    assert message.startswith(str(path)), message
    return message


def test_bad_files_name_file_and_field(tmp_path: Path, raw: dict) -> None:
    d = copy.deepcopy(raw)
    del d["requests"][3]["text"]
    msg = _error(tmp_path, d)
    assert "requests[3] (sandwich-one-2).text" in msg and "required" in msg.lower()

    d = copy.deepcopy(raw)
    d["requests"][2]["goal"][0]["params"] = ["1"]
    msg = _error(tmp_path, d)
    assert "requests[2] (sandwich-one-1).goal[0].params" in msg and "takes 2 parameter(s)" in msg

    d = copy.deepcopy(raw)
    d["requests"][0]["goal"][0]["task_name"] = "Make A Sandwich"
    assert "requests[0] (sandwich-original-1).goal[0].task_name" in _error(tmp_path, d)

    d = copy.deepcopy(raw)
    d["requests"][5]["routine"] = "the Bob sandwich"
    msg = _error(tmp_path, d)
    assert "requests[5] (sandwich-two-2).routine" in msg and "the Bob sandwich" in msg

    d = copy.deepcopy(raw)
    d["requests"][4]["category"] = "three"
    msg = _error(tmp_path, d)
    assert "requests[4] (sandwich-two-1).changes" in msg and "3 change(s)" in msg

    d = copy.deepcopy(raw)
    d["requests"][4]["category"] = "four"
    assert "requests[4] (sandwich-two-1).category" in _error(tmp_path, d)

    d = copy.deepcopy(raw)
    d["requests"][1]["program"] = ["import os"]
    msg = _error(tmp_path, d)
    assert "requests[1] (sandwich-original-2).program" in msg and "does not compile" in msg

    d = copy.deepcopy(raw)
    d["routines"][2]["room_type"] = "Garage"
    assert "routines[2] (the Priya salad).room_type" in _error(tmp_path, d)

    d = copy.deepcopy(raw)
    d["requests"][7]["scene"]["base_seed"] = -1
    assert "requests[7] (sandwich-three-2).scene.base_seed" in _error(tmp_path, d)

    d = copy.deepcopy(raw)
    d["requests"][9]["id"] = d["requests"][8]["id"]
    assert "requests[9] (breakfast-original-1).id" in _error(tmp_path, d)

    d = copy.deepcopy(raw)
    d["requests"][0]["colour"] = "red"
    assert "requests[0] (sandwich-original-1).colour" in _error(tmp_path, d)

    d = copy.deepcopy(raw)
    del d["routines"]
    assert "key 'routines'" in _error(tmp_path, d)

    assert "invalid JSON at line 1" in _error(tmp_path, "{not json")
    missing = tmp_path / "nowhere.json"
    with pytest.raises(PersonalizationDataError, match="nowhere.json: cannot read"):
        load_suite(missing)


def test_seed_is_scanned_when_not_recorded(tmp_path: Path, raw: dict) -> None:
    d = copy.deepcopy(raw)
    for item in d["requests"]:
        item["scene"].pop("seed")
    unrecorded = load_suite(_write(tmp_path, d))
    q = unrecorded.request("clean-one-1")
    assert q.scene.seed is None
    recorded = load_suite().request("clean-one-1")
    assert prepare_request(q).seed == recorded.scene.seed
    assert P.scene_problems(q) == ["no seed recorded"]
