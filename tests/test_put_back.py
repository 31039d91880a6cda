"""A correction that says a thing should not have moved puts it back where the household's record
says it was when the request began (`missing.put_back`, state `places_at_start`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_eval_requests import Chat, fence

from helper_agent.envs.symbolic import SymbolicEnv
from helper_agent.graphs.helper import HelperConfig, HelperContext, build_graph
from helper_agent.memory.corrections import CorrectionMemory
from helper_agent.memory.embeddings import get_embedder
from helper_agent.memory.examples import ExampleMemory
from helper_agent.memory.routines import RoutineMemory
from helper_agent.program.edits.part import Missing
from helper_agent.understanding.missing import places_of, put_back, read_missing


@pytest.mark.parametrize(("feedback", "back"), [
    ("no, you shouldn't have moved the plate", ["Plate"]),
    ("I didn't ask you to move the bowl", ["Bowl"]),
    ("put the cup back where it was", ["Cup"]),
    ("don't move the mug", ["Mug"]),
])
def test_a_move_the_person_did_not_want_is_read_as_put_back(feedback: str, back: list[str]) -> None:
    reading = read_missing(feedback)
    assert reading.back == back and reading.missing == [] and reading.complete


def test_a_move_not_made_is_still_a_missing_placement() -> None:
    reading = read_missing("no, you didn't put the tomato slice on the plate and you shouldn't have moved the bowl")
    assert [m.describe() for m in reading.missing] == ["place TomatoSliced in Plate"] and reading.back == ["Bowl"]


def _bowl(parent: str, held: bool = False) -> dict:
    return {"objectId": "Bowl|1", "objectType": "Bowl", "pickupable": True, "isPickedUp": held,
            "parentReceptacles": [] if held else [parent]}


def test_put_back_returns_what_moved_to_the_kind_of_place_it_was() -> None:
    objects = [_bowl("Fridge|1"), {"objectId": "CounterTop|1", "objectType": "CounterTop"},
               {"objectId": "Fridge|1", "objectType": "Fridge"}]
    start = places_of([_bowl("CounterTop|1")])
    assert start == {"Bowl|1": "CounterTop|1"}
    assert put_back(["Bowl"], objects, start) == [Missing("place", "Bowl", place="CounterTop")]
    # Nothing moved, or nothing known about it: the part cannot stand for the correction.
    assert put_back(["Bowl"], [_bowl("CounterTop|1"), *objects[1:]], start) is None
    assert put_back(["Bowl"], objects, {}) is None


@pytest.mark.parametrize("keep", [True, False])
def test_the_graph_puts_the_bowl_back_when_told_it_should_not_have_moved(tmp_path: Path, keep: bool) -> None:
    """In a chat (snapshots kept) the record of where things were is in the state; an evaluation
    keeps the household out of the state, so there the correction goes to the planner."""
    env = SymbolicEnv()
    env.reset(0, room_type="Kitchen")
    bowl = next(o for o in env.objects_metadata() if o["objectType"] == "Bowl")
    where = bowl["parentReceptacles"][0].split("|")[0]
    chat = Chat(responses=[fence('bowl = InteractionObject("Bowl")', 'fridge = InteractionObject("Fridge")',
                                 "bowl.pickup_and_place(fridge)")], readings=["satisfied"])
    answers = ["no, you shouldn't have moved the bowl"]
    embedder = get_embedder("hash")
    context = HelperContext(env=env, chat_model=chat, feedback=lambda: answers.pop(0) if answers else "",  # "": satisfied
                            keep_snapshots=keep,
                            config=HelperConfig(feedback_rounds=2, locator="random"),
                            examples=ExampleMemory(path=tmp_path, embedder=embedder),
                            corrections=CorrectionMemory(path=tmp_path, embedder=embedder),
                            routines=RoutineMemory(path=tmp_path, embedder=embedder))
    out = build_graph().invoke({"request": "could you do the washing up?", "user": None},
                               {"configurable": {"thread_id": "t"}}, context=context)
    line = f"replan: the missing part, read from the feedback: place Bowl in {where}"
    if not keep:
        assert out["places_at_start"] == {} and line not in out["log"]
        return
    assert line in out["log"]
    assert out["outcome"] == "success", "\n".join(out["log"])
    now = next(o for o in env.objects_metadata() if o["objectId"] == bowl["objectId"])
    assert now["parentReceptacles"][0].split("|")[0] == where
