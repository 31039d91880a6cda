"""The executor and the locators on `ThorEnv`, over the fake AI2-THOR controller of `test_envs_thor`.

Nothing in the executor may depend on the embedded simulator: programs of simple tasks (pick and
place, an object hidden in the closed fridge, placing into a closed cabinet, a swinging fridge door,
the stove knob of a burner, cooking, washing at the sink) run to the end on ThorEnv, and the graph's
way of searching (stop at an unseen object, locate, resume with the bindings) works there too.

The fake controller does not simulate AI2-THOR's contextual effects (a running faucet cleans and
fills what is in the sink, heat cooks): these tests check the actions the executor sends, not those
effects. Slicing is simulated here (`SlicingController`), since the executor needs the slices to
appear as new objects, as they do in AI2-THOR.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from test_envs_thor import APPLE, BOWL, BREAD, FAUCET, FRIDGE, KNIFE, MUG, PAN, TABLE, FakeController

from helper_agent.envs.thor import ThorEnv
from helper_agent.program.compiler import compile_program
from helper_agent.program.subgoals import ObjectRef
from helper_agent.tools.executor import ExecutionResult, Executor, ExecutorConfig
from helper_agent.tools.locator import LLMLocator, RandomLocator, explore

CABINET = "Cabinet|-00.30|+00.40|-01.45"
KNOB = "StoveKnob|+00.75|+00.85|-01.22"
BASIN = "Sink|-00.90|+00.92|-01.50|SinkBasin"


class SlicingController(FakeController):
    """The fake controller, where slicing replaces the whole object by three slices in its place."""

    def _do_SliceObject(self, objectId: str, forceAction: bool = False) -> str:
        error = super()._do_SliceObject(objectId, forceAction)
        if error:
            return error
        whole = self.obj(objectId)
        parents = whole.get("parentReceptacles") or []
        self.md["objects"].remove(whole)
        for pid in parents:
            self.obj(pid)["receptacleObjectIds"].remove(objectId)
        stype = whole["objectType"] + "Sliced"
        for n in range(1, 4):
            piece = copy.deepcopy(whole)
            piece.update(objectId=f"{objectId}|{stype}_{n}", objectType=stype, name=f"{stype}_{n}", sliceable=False)
            self.md["objects"].append(piece)
            for pid in parents:
                self.obj(pid)["receptacleObjectIds"].append(piece["objectId"])
        return ""


@pytest.fixture
def fake() -> FakeController:
    return SlicingController()


@pytest.fixture
def env(fake: FakeController) -> ThorEnv:
    env = ThorEnv(controller=fake)
    env.reset("FloorPlan12")
    return env


def run(env: ThorEnv, program: str, config: ExecutorConfig | None = None) -> ExecutionResult:
    result = Executor(env, config=config).run(compile_program(program).subgoals)
    assert result.steps == env.steps
    return result


def interactions(fake: FakeController) -> list[tuple[str, str]]:
    return [(a["action"], a["objectId"]) for a in fake.sent() if "objectId" in a]


def test_pick_and_place_on_the_table(env: ThorEnv, fake: FakeController) -> None:
    result = run(env, 'mug = InteractionObject("Mug")\ntable = InteractionObject("DiningTable")\nmug.pickup_and_place(table)')
    assert result.status == "done", result.error
    assert interactions(fake) == [("PickupObject", MUG), ("PutObject", TABLE)]
    assert fake.obj(MUG)["parentReceptacles"] == [TABLE] and result.failures == 0


def test_an_object_in_the_closed_fridge_is_found_and_the_door_opened_from_afar(env: ThorEnv, fake: FakeController) -> None:
    result = run(env, 'apple = InteractionObject("Apple")\ntable = InteractionObject("DiningTable")\napple.pickup_and_place(table)')
    assert result.status == "done", result.error
    assert interactions(fake) == [("OpenObject", FRIDGE), ("PickupObject", APPLE), ("PutObject", TABLE)]
    assert any("searching with explore" in note for t in result.trace for note in t.notes)


def test_open_before_placing_into_a_closed_cabinet(env: ThorEnv, fake: FakeController) -> None:
    result = run(env, 'bowl = InteractionObject("Bowl")\ncabinet = InteractionObject("Cabinet")\nbowl.pickup_and_place(cabinet)')
    assert result.status == "done", result.error
    assert interactions(fake) == [("PickupObject", BOWL), ("OpenObject", CABINET), ("PutObject", CABINET)]


def test_knob_of_the_burner(env: ThorEnv, fake: FakeController) -> None:
    result = run(env, 'knob = InteractionObject("StoveKnob")\nknob.toggle_on()\nknob.toggle_off()\nknob.toggle_off()')
    assert result.status == "done", result.error
    assert interactions(fake) == [("ToggleObjectOn", KNOB), ("ToggleObjectOff", KNOB)]  # the last one is skipped


def test_slices_are_made_when_needed(env: ThorEnv, fake: FakeController) -> None:
    result = run(env, 'piece = InteractionObject("BreadSliced")\ntable = InteractionObject("DiningTable")\npiece.pickup_and_place(table)')
    assert result.status == "done", result.error
    assert interactions(fake) == [
        ("PickupObject", KNIFE),
        ("SliceObject", BREAD),
        ("PutObject", TABLE),  # the knife, put down before picking up the slice
        ("PickupObject", f"{BREAD}|BreadSliced_1"),
        ("PutObject", TABLE),
    ]


def test_cooking_a_slice_in_the_pan_on_the_burner(env: ThorEnv, fake: FakeController) -> None:
    result = run(env, 'piece = InteractionObject("AppleSliced")\npiece.cook()')
    assert result.status == "done", result.error
    assert interactions(fake) == [
        ("OpenObject", FRIDGE),  # the apple is in the fridge
        ("PickupObject", KNIFE),
        ("SliceObject", APPLE),
        ("PutObject", TABLE),
        ("PickupObject", f"{APPLE}|AppleSliced_1"),
        ("PutObject", PAN),  # the pan already stands on a burner
        ("ToggleObjectOn", KNOB),
        ("ToggleObjectOff", KNOB),
        ("PickupObject", f"{APPLE}|AppleSliced_1"),
    ]


def test_washing_at_the_sink(env: ThorEnv, fake: FakeController) -> None:
    result = run(env, 'mug = InteractionObject("Mug")\nmug.clean()')
    assert result.status == "done", result.error
    assert interactions(fake) == [
        ("PickupObject", MUG),
        ("PutObject", BASIN),
        ("ToggleObjectOn", FAUCET),
        ("ToggleObjectOff", FAUCET),
        ("PickupObject", MUG),
    ]


class Chat:
    def __init__(self) -> None:
        self.prompts: list[str] = []

    def invoke(self, prompt: str) -> Any:
        self.prompts.append(prompt)
        return "In the Fridge, or a Cabinet."


@pytest.mark.parametrize("kind", ["llm", "random", "explore"])
def test_the_graphs_locate_round_trip(env: ThorEnv, fake: FakeController, kind: str) -> None:
    program = compile_program('apple = InteractionObject("Apple")\ntable = InteractionObject("DiningTable")\napple.pickup_and_place(table)')
    config = ExecutorConfig(search_unseen=False)
    first = Executor(env, config=config).run(program.subgoals)
    assert (first.status, first.missing, first.missing_key) == ("not_found", "Apple", "apple#1")
    chat = Chat()
    locator: Any = {"llm": LLMLocator(chat, dialogue="apple on the table"), "random": RandomLocator(0), "explore": explore}[kind]
    searcher = Executor(env, config=config)
    assert locator(searcher, ObjectRef(first.missing_key, first.missing))
    resumed = Executor(env, config=config, bindings=searcher.bindings).run(program.subgoals, start=first.completed)
    assert resumed.status == "done", resumed.error
    assert fake.obj(APPLE)["parentReceptacles"] == [TABLE]
    if kind == "llm":
        # ThorEnv does not say which room it is: the locator's prompt falls back to "house".
        assert "The robot is in a house" in chat.prompts[0]


def test_step_limit_on_thor(env: ThorEnv) -> None:
    result = run(env, 'apple = InteractionObject("Apple")\napple.pickup()', ExecutorConfig(max_steps=5))
    assert result.status == "step_limit" and env.steps == 5


def test_the_locator_is_told_the_room_when_the_environment_says_it(env: ThorEnv) -> None:
    chat = Chat()
    executor = Executor(env)
    LLMLocator(chat).suggest(executor, ObjectRef("apple#1", "Apple"))
    assert "The robot is in a house" in chat.prompts[-1]
    env.room_type = "Kitchen"  # type: ignore[attr-defined] - ThorEnv does not say it (yet)
    LLMLocator(chat).suggest(executor, ObjectRef("apple#1", "Apple"))
    assert "The robot is in a Kitchen" in chat.prompts[-1]
