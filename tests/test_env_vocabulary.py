"""Environments say which actions they take by name (`envs/base.ActionVocabulary`): VirtualHome's are
EAI's actions and the task's objects, the embedded world's are TEACh's actions and the ids in view.
A method builds its grammar and its parser from it, so it names no benchmark's list of its own."""

from __future__ import annotations

import pytest

from helper_agent.envs.base import ActionVocabulary, NamesActions
from helper_agent.envs.symbolic import SymbolicEnv
from helper_agent.world.actions import ACTIONS


def test_the_vocabulary_says_why_an_action_is_outside_it() -> None:
    vocabulary = ActionVocabulary(actions={"WALK": 1, "PUTIN": 2, "SLEEP": 0}, objects=("cup", "sink"))
    assert vocabulary.problem("WALK", ("cup",)) is None and vocabulary.problem("SLEEP", ()) is None
    assert vocabulary.problem("FLY", ("cup",)) == "FLY is not an allowed action"
    assert vocabulary.problem("PUTIN", ("cup",)) == "PUTIN takes 2 object(s), not 1"
    assert vocabulary.problem("WALK", ("moon",)) == "moon is not an object here"


def test_the_embedded_world_offers_teachs_actions_on_the_ids_in_view() -> None:
    env = SymbolicEnv()
    env.reset(3)
    vocabulary = env.action_vocabulary()
    assert isinstance(env, NamesActions)
    assert set(vocabulary.actions) == set(ACTIONS)
    assert vocabulary.actions["Forward"] == 0 and vocabulary.actions["Stop"] == 0 and vocabulary.actions["Pickup"] == 1
    assert vocabulary.objects == tuple(v.object_id for v in env.observe().visible) and vocabulary.objects
    env.step("Turn Left")
    assert env.action_vocabulary().objects == tuple(v.object_id for v in env.observe().visible)


def test_virtualhome_offers_eais_actions_on_the_tasks_objects() -> None:
    pytest.importorskip("virtualhome_eval")
    from virtualhome_eval.simulation.evolving_graph.eval_utils import valid_actions

    from helper_agent.envs.virtualhome import VirtualHomeEnv
    from helper_agent.evals.studies.eai.tasks import select_tasks

    task = select_tasks(ids=["11_1"])[0]
    env = VirtualHomeEnv(task.identifier)
    vocabulary = env.action_vocabulary()
    assert isinstance(env, NamesActions)
    assert dict(vocabulary.actions) == {name: int(n) for name, (_, n) in valid_actions.items()}
    assert vocabulary.objects == task.arguments and "character" not in vocabulary.objects
    assert vocabulary.meanings["WALK"] == "Move towards something"  # the prompt's list, word for word
    assert vocabulary.problem("SWITCHON", ("floor_lamp",)) is None
