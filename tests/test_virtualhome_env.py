"""VirtualHomeEnv over EAI's evolving-graph simulator: acting step by step and whole sequences."""

from __future__ import annotations

import pytest

pytest.importorskip("virtualhome_eval")

from helper_agent.envs.base import Environment  # noqa: E402
from helper_agent.envs.virtualhome import VirtualHomeEnv, task_goals  # noqa: E402
from helper_agent.evals.studies.eai.tasks import gold_steps  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore")


def test_env_follows_the_protocol_and_reaches_the_goal_step_by_step():
    env = VirtualHomeEnv("11_1")  # "Turn on light": WALK, FIND, TOUCH, SWITCHON the floor lamp
    assert isinstance(env, Environment)
    assert env.success() is False
    assert "floor_lamp" in env.object_ids
    for action, args in gold_steps("11_1"):
        outcome = env.step(action, "|".join(args))
        assert outcome.result.success, outcome.result.error
    assert env.success() is True
    assert env.executed[-1] == f"[SWITCHON] <floor_lamp> ({env.object_ids['floor_lamp']})"
    lamp = next(v for v in env.observe().visible if v.object_type == "floor_lamp")
    assert "ON" in lamp.state["states"] and lamp.interactable


def test_failed_action_reports_eai_error_type_and_leaves_the_state():
    env = VirtualHomeEnv("11_1")
    outcome = env.step("SWITCHON", "floor_lamp")  # not near the lamp yet
    assert not outcome.result.success
    assert env.last_error_type == "missing_step"
    assert outcome.observation.last_success is False and "close" in outcome.observation.last_error
    assert env.failures == 1 and env.executed == []
    assert env.step("SWITCHON", "no_such_thing").result.success is False
    env.reset()
    assert env.steps == 0 and env.failures == 0 and not env.success()


def test_whole_sequence_run_stops_at_a_blocking_failure():
    env = VirtualHomeEnv("478_1")  # sit on the toilet
    lines = [env.line(a, *args) for a, args in gold_steps("478_1")]
    results = env.run(list(reversed(lines)))
    assert [r.success for r in results] == [False]
    env.reset()
    assert all(r.success for r in env.run(lines)) and env.success()


def test_task_goals_are_eais():
    goals = task_goals("1027_2")
    assert goals.actions == ["SLEEP"] and len(goals.edges) == 1
