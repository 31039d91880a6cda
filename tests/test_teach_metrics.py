"""Episode and aggregate metrics against hand-computed values."""

from __future__ import annotations

import pytest

from helper_agent.teach import (
    EpisodeMetrics,
    aggregate_by_task,
    aggregate_metrics,
    evaluate_episode,
    failed_episode,
    trajectory_scores,
)


def _episodes() -> list[EpisodeMetrics]:
    a = evaluate_episode(
        instance_id="a",
        game_id="g1",
        task_name="Coffee",
        success=True,
        gt_path_len=10,
        traj_len=20,
        init_gc_total=4,
        init_gc_satisfied=0,
        final_gc_total=4,
        final_gc_satisfied=4,
        predicted_stop=True,
    )
    b = evaluate_episode(
        instance_id="b",
        game_id="g2",
        task_name="Coffee",
        success=False,
        gt_path_len=30,
        traj_len=15,
        init_gc_total=6,
        init_gc_satisfied=2,
        final_gc_total=6,
        final_gc_satisfied=5,
    )
    c = failed_episode("c", "g3", task_name="Toast")
    d = evaluate_episode(
        instance_id="d",
        game_id="g4",
        task_name="Toast",
        success=False,
        gt_path_len=8,
        traj_len=1000,
        init_gc_total=2,
        init_gc_satisfied=0,
        final_gc_total=3,
        final_gc_satisfied=0,
        num_api_fails=30,
    )
    return [a, b, c, d]


def test_episode_scores():
    a, b, c, d = _episodes()
    # a: all 4 conditions achieved; path weight 10/20
    assert (a.completed_goal_conditions, a.total_goal_conditions, a.goal_condition_success) == (4, 4, 1.0)
    assert (a.success_spl, a.path_len_weighted_success_spl) == (0.5, 5.0)
    assert (a.goal_condition_spl, a.path_len_weighted_goal_condition_spl) == (0.5, 5.0)
    # b: 4 to achieve, 1 left -> 0.75; shorter than the reference -> weight 1
    assert (b.completed_goal_conditions, b.total_goal_conditions, b.goal_condition_success) == (3, 4, 0.75)
    assert (b.success_spl, b.goal_condition_spl, b.path_len_weighted_goal_condition_spl) == (0.0, 0.75, 22.5)
    assert (c.error, c.success, c.total_goal_conditions) == (1, 0, 0)
    # d: more conditions unmet at the end than at the start -> negative GC
    assert (d.completed_goal_conditions, d.total_goal_conditions, d.goal_condition_success) == (-1, 2, -0.5)
    assert d.path_len_weighted_goal_condition_spl == pytest.approx(-0.5 * 8 / 1000 * 8)


def test_aggregate_matches_hand_computation():
    agg = aggregate_metrics(_episodes())
    # c errored: it is not an agent's failure, so it is left out of SR (1 of 3) and only counted as an error
    assert (agg.num_successes, agg.num_evals, agg.success_rate) == (1, 3, pytest.approx(1 / 3))
    assert (agg.completed_goal_conditions, agg.total_goal_conditions) == (6, 10)
    assert agg.goal_condition_success_rate == pytest.approx(0.6)
    assert agg.path_length_weighted_success_rate == pytest.approx(5 / 48)
    assert agg.path_length_weighted_goal_condition_success_rate == pytest.approx((5 + 22.5 - 0.032) / 48)
    assert (agg.num_predicted_stops, agg.num_fails_by_api_limit) == (1, 1)
    assert (agg.num_fails_by_traj_len_limit, agg.num_fails_by_error) == (1, 1)
    teach = agg.to_teach_dict()
    assert teach["success"] == {"num_successes": 1, "num_evals": 3, "success_rate": pytest.approx(1 / 3)}
    assert teach["goal_condition_success"]["completed_goal_conditions"] == 6


def test_aggregate_by_task():
    by_task = aggregate_by_task(_episodes())
    assert list(by_task) == ["Coffee", "Toast"]
    coffee, toast = by_task["Coffee"], by_task["Toast"]
    assert (coffee.success_rate, coffee.goal_condition_success_rate) == (0.5, 0.875)
    assert coffee.path_length_weighted_success_rate == pytest.approx(5 / 40)
    assert coffee.path_length_weighted_goal_condition_success_rate == pytest.approx(27.5 / 40)
    assert (toast.success_rate, toast.goal_condition_success_rate) == (0.0, -0.5)
    assert (toast.num_evals, toast.num_fails_by_error) == (1, 1)
    assert toast.path_length_weighted_goal_condition_success_rate == pytest.approx(-0.004)


def test_errored_episodes_never_reach_gc_however_many():
    """Half the episodes errored: GC is the scored half's, not 100.00 from their 0-of-0 conditions."""
    a, b, c, d = _episodes()
    errors = [failed_episode(f"e{n}", "g", task_name="Toast") for n in range(4)]
    agg = aggregate_metrics([b, d, *errors])
    assert (agg.num_evals, agg.num_fails_by_error, agg.success_rate) == (2, 4, 0.0)
    assert (agg.completed_goal_conditions, agg.total_goal_conditions) == (2, 6)
    assert aggregate_metrics(errors).goal_condition_success_rate == 0.0


def test_limits_are_configurable_and_mapping_input_accepted():
    eps = {e.instance_id: e for e in _episodes()}
    agg = aggregate_metrics(eps, max_api_fails=31, max_traj_steps=20)
    # a (20 steps) and d (1000) reach a 20-step limit; nobody reaches 31 failures
    assert (agg.num_fails_by_traj_len_limit, agg.num_fails_by_api_limit) == (2, 0)


def test_initial_satisfied_is_clipped_and_nothing_to_do_counts_as_full_gc():
    s = trajectory_scores(
        False, 5, 5, init_gc_total=3, init_gc_satisfied=7, final_gc_total=3, final_gc_satisfied=3
    )
    assert (s["total_goal_conditions"], s["goal_condition_success"]) == (0, 1.0)
    s = trajectory_scores(True, 0, 0, 2, 0, 2, 2)
    assert s["success_spl"] == 1.0 and s["path_len_weighted_success_spl"] == 0.0


def test_empty_aggregate_is_zero():
    agg = aggregate_metrics([])
    assert (agg.num_evals, agg.success_rate, agg.goal_condition_success_rate) == (0, 0.0, 0.0)


def test_episode_record_keeps_extra_keys():
    e = evaluate_episode(
        instance_id="x",
        game_id="g",
        success=True,
        gt_path_len=1,
        traj_len=1,
        init_gc_total=1,
        init_gc_satisfied=0,
        final_gc_total=1,
        final_gc_satisfied=1,
        llm_calls=3,
    )
    assert e.model_dump()["llm_calls"] == 3
    assert EpisodeMetrics.model_validate(e.model_dump()) == e
