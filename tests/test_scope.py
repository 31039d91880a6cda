"""Programs that do only what was asked (issue 54): every object a program changes is named by the
request (read as the household's classes) or needed by a step the request implies; a program that
changes more goes back to the planner with the reason, and the retrieved examples' other objects
are flagged in the planner's turn.

The rule was chosen on the calibration suite without the LLM: each calibration case's gold program
(`tests/requests_gold.py`) must pass it. The graph tests run the real HELPER graph with a scripted
chat model on generated households (`world.generator`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from requests_gold import calibration_gold

from helper_agent.config import get_settings
from helper_agent.envs.symbolic import SymbolicEnv
from helper_agent.evals.benchmark import generate_benchmark
from helper_agent.evals.engine.harness import clip_dialogue
from helper_agent.evals.studies.requests import scope as bench_scope
from helper_agent.graphs.helper import HelperConfig, HelperContext, build_graph
from helper_agent.graphs.helper.scoping import (
    asked_of,
    completed,
    example_note,
    fit_to_request,
    named_instead,
    scope_of,
    trimmed,
)
from helper_agent.memory.corrections import CorrectionMemory
from helper_agent.memory.embeddings import get_embedder
from helper_agent.memory.examples import ExampleMemory
from helper_agent.memory.routines import RoutineMemory
from helper_agent.program import compile_program
from helper_agent.program import steps as program_steps
from helper_agent.program.edits.apply import carry_all
from helper_agent.teach.instances import load_instance
from helper_agent.understanding.asked import asked
from helper_agent.understanding.in_household import household_classes, in_household
from helper_agent.understanding.scope import changed_classes, request_scope
from helper_agent.world.generator import generate_scene
from helper_agent.world.metadata import export_state

KITCHEN = frozenset({"Mug", "CoffeeMachine", "Lettuce", "Bowl", "Bread", "Toaster", "Knife", "Plate", "SinkBasin",
                     "Faucet", "CounterTop", "DiningTable", "LightSwitch", "FloorLamp"})

COFFEE = ['mug = InteractionObject("Mug")', 'coffee_machine = InteractionObject("CoffeeMachine")',
          "mug.pickup_and_place(coffee_machine)", "coffee_machine.toggle_on()"]
LETTUCE = ['lettuce = InteractionObject("Lettuce")', 'counter = InteractionObject("CounterTop")',
           "lettuce.pickup_and_place(counter)"]


def fence(lines: list[str]) -> str:
    return "```python\n" + "\n".join(lines) + "\n```"


def outside(request: str, lines: list[str], present: frozenset[str] = KITCHEN) -> list[str] | None:
    scope = request_scope(request, present)
    return None if scope is None else scope.outside(changed_classes(compile_program("\n".join(lines)).subgoals))


# ------------------------------------------------------------------------------------------ the rule
def test_a_coffee_request_may_change_a_vessel_and_the_coffee_machine_not_lettuce() -> None:
    assert outside("a coffee would be great right now", COFFEE) == []
    assert outside("a coffee would be great right now", [*COFFEE, *LETTUCE]) == ["Lettuce"]
    toast = ['bread = InteractionObject("BreadSliced")', "bread.toast()"]
    assert outside("a coffee would be great right now", [*COFFEE, *toast]) == ["BreadSliced"]
    assert outside("can I have some toast?", toast + ['knife = InteractionObject("Knife")', "knife.pickup()"]) == []


def test_a_receptacle_only_put_on_is_not_changed_and_opening_is_not_a_change() -> None:
    lines = ['cabinet = InteractionObject("Cabinet")', "cabinet.open()", *COFFEE,
             'table = InteractionObject("DiningTable")', "mug.pickup_and_place(table)"]
    assert changed_classes(compile_program("\n".join(lines)).subgoals) == ["Mug", "CoffeeMachine"]
    assert outside("make me a coffee", lines) == []


def test_steps_bring_their_tools_from_the_table_the_benchmark_scores_with() -> None:
    assert bench_scope.tools_for is program_steps.tools_for  # one table, in the program layer
    scope = request_scope("wash the plate", KITCHEN)
    assert scope is not None and {"Plate", "SinkBasin", "Faucet"} <= scope.allowed
    assert not {"Knife", "Bowl", "Mug"} & scope.allowed
    scope = request_scope("slice the bread", KITCHEN)
    assert scope is not None and {"Bread", "BreadSliced", "Knife", "ButterKnife"} <= scope.allowed
    assert "Toaster" not in scope.allowed


def test_a_cut_is_asked_for_only_by_a_step_that_cuts() -> None:
    """cal-056 ("put the apples in a bowl"): the 0.5B sliced the apples, copying a slicing example."""
    present = KITCHEN | {"Apple"}
    sliced = compile_program('knife = InteractionObject("Knife")\nknife.pickup()\n'
                             'apple = InteractionObject("Apple")\napple.slice()\n').subgoals
    scope = request_scope("put the apples in a bowl", present)
    assert scope is not None and "AppleSliced" not in scope.allowed
    assert scope.unasked_steps(sliced) == ["slice"]
    assert scope.reason([], ["slice"]).startswith("the request does not ask to slice anything")
    for words in ("slice an apple", "put two slices of apple in a bowl", "make me an omelette"):
        cut = request_scope(words, present | {"Egg"})
        assert cut is not None and cut.unasked_steps(sliced) == []
    assert "AppleSliced" in (request_scope("put two slices of apple in a bowl", present) or scope).allowed


def test_a_place_the_request_only_puts_things_in_is_not_moved() -> None:
    """cal-056 ("put the apples in a bowl"): the 0.5B picked the bowl up. A washed plate keeps its moves."""
    present = KITCHEN | {"Apple"}
    scope = request_scope("put the apples in a bowl", present)
    assert scope is not None and scope.places == {"Bowl"}
    moved = compile_program('bowl = InteractionObject("Bowl")\nbowl.pickup()\napple = InteractionObject("Apple")\n'
                            "apple.pickup_and_place(bowl)\n")
    assert scope.unmoved(moved.subgoals) == ["Bowl"]
    cut = trimmed(moved, scope, [], compile_program, (), ["Bowl"])
    assert cut is not None and "bowl.pickup()" not in cut[0].source and "apple.pickup_and_place(bowl)" in cut[0].source
    assert cut[1] == "removed unasked moving the Bowl: 1 step(s) (bowl.pickup())"
    plate = request_scope("slice a tomato and put a slice on a clean plate", present | {"Tomato"})
    washed = compile_program('plate = InteractionObject("Plate")\nplate.clean()\nplate.put_down()\n')
    assert plate is not None and plate.places == {"Plate"} and plate.unmoved(washed.subgoals) == []
    assert (request_scope("wash the plate", present) or scope).places == frozenset()


def test_a_word_is_read_as_the_households_class() -> None:
    living = frozenset({"FloorLamp", "Sofa", "RemoteControl"})
    assert outside("turn on the lamp", ['lamp = InteractionObject("FloorLamp")', "lamp.toggle_on()"], living) == []
    assert outside("turn on the lamp", ['tv = InteractionObject("Television")', "tv.toggle_on()"],
                   living | {"Television"}) == ["Television"]


@pytest.mark.parametrize("request_", ["breakfast please", "clean up the kitchen", "set the table",
                                      "serve breakfast on the counter: a coffee and a plate of toast",
                                      "can you mow the lawn"])
def test_no_rule_where_the_words_do_not_say_what_to_change(request_: str) -> None:
    assert request_scope(request_, KITCHEN) is None


def test_a_recalled_routine_is_not_checked_and_a_taught_name_is_not_part_of_the_request() -> None:
    assert scope_of({"request": "Kim breakfast please", "routine": {"name": "kim breakfast"}}, KITCHEN) is None
    taught = scope_of({"request": "Perform the Mo snack: a slice of apple on a plate"}, KITCHEN | {"Apple"})
    assert taught is not None and "Apple" in taught.allowed and "Lettuce" not in taught.allowed
    fed = scope_of({"request": "make me a coffee", "feedback": "you forgot the toast"}, KITCHEN)
    assert fed is not None and "BreadSliced" in fed.allowed


def test_the_examples_objects_the_request_does_not_ask_for_are_flagged() -> None:
    scope = request_scope("a coffee would be great right now", KITCHEN)
    examples = [{"program": "\n".join([*COFFEE, *LETTUCE])}, {"program": "not python ("}]
    note = example_note(scope, examples)
    assert "Lettuce" in note and "Mug" not in note and "CounterTop" not in note
    assert example_note(scope, [{"program": "\n".join(COFFEE)}]) == ""
    assert example_note(None, examples) == ""


def _calibration_checks() -> list[tuple[str, str, list[str] | None]]:
    """(case id, request text, the gold program's classes outside the scope; None: no rule)."""
    out = []
    for gold in calibration_gold():
        scope, subgoals = scope_of({"request": gold.case.request}, gold.present), gold.compiled.subgoals
        out.append((gold.case.id, gold.case.request, [*scope.outside(changed_classes(subgoals)),
                                                      *scope.unasked_steps(subgoals),
                                                      *scope.unmoved(subgoals)] if scope else None))
    return out


def test_every_calibration_gold_program_passes_and_the_rule_applies_to_most() -> None:
    """No false rejection: a correct program for each calibration case changes nothing the rule calls
    unasked. The rule is not vacuous: it applies to at least 70 of the 83 requests that act."""
    checks = _calibration_checks()
    rejected = [(cid, request, out) for cid, request, out in checks if out]
    assert rejected == []
    assert sum(out is not None for _, _, out in checks) >= 70, len(checks)


# ------------------------------------------------------------------------------------------ the graph
class ScriptedChat(FakeListChatModel):
    """Programs in order; records the messages of each call."""

    calls: list[Any] = []

    def _call(self, messages: Any, *args: Any, **kwargs: Any) -> str:
        if self.i >= len(self.responses):
            raise AssertionError("the chat model was called more often than scripted")
        self.calls.append(messages)
        return super()._call(messages, *args, **kwargs)


def household(room: str, needs: set[str], lacks: Iterable[str] = ()) -> dict[str, Any]:
    """The first generated household of `room` (seeds 0..79) that holds every class of `needs` and none of `lacks`."""
    for seed in range(80):
        state = generate_scene(seed, room)
        kinds = {o.object_type for o in state.objects.values()}
        if needs <= kinds and kinds.isdisjoint(lacks):
            return export_state(state)
    raise AssertionError(f"no generated {room} with {needs}")


def run(tmp_path: Path, request: str, world: dict[str, Any], programs: list[str],
        **config: Any) -> tuple[dict[str, Any], ScriptedChat, SymbolicEnv]:
    embedder = get_embedder("hash")
    chat = ScriptedChat(responses=programs, calls=[])
    context = HelperContext(chat_model=chat, config=HelperConfig(feedback_rounds=0, locator="random", **config),
                            examples=ExampleMemory(path=tmp_path, embedder=embedder),
                            corrections=CorrectionMemory(path=tmp_path, embedder=embedder),
                            routines=RoutineMemory(path=tmp_path, embedder=embedder))
    env = SymbolicEnv()
    env.reset(world)
    context.env = env
    out = build_graph().invoke({"request": request, "user": None}, {"configurable": {"thread_id": "t"}}, context=context)
    return out, chat, env


def test_a_program_adding_lettuce_to_a_coffee_runs_without_the_lettuce_and_says_so(tmp_path: Path) -> None:
    """The planner is not asked again (the 0.5B wrote the same extra objects on every retry): the
    lettuce's steps are removed from the tree, the coffee runs, the log names what went."""
    world = household("Kitchen", {"Mug", "CoffeeMachine", "Lettuce", "CounterTop"})
    fresh = SymbolicEnv()
    fresh.reset(world)
    lettuce_before = {o["objectId"]: o.get("parentReceptacles") for o in fresh.objects_metadata()
                      if o["objectType"] == "Lettuce"}
    out, chat, env = run(tmp_path, "a coffee would be great right now", world, [fence([*COFFEE, *LETTUCE])])
    assert len(chat.calls) == 1 and not any("rejected" in line for line in out["log"])
    note = next(line for line in out["log"] if line.startswith("validate:"))
    assert "removed unasked Lettuce: 1 step(s) (lettuce.pickup_and_place(counter))" in note
    assert "Lettuce" not in out["program"] and "CounterTop" not in out["program"]
    assert out["execution"]["status"] == "done"
    objects = env.objects_metadata()
    assert any(o["objectType"] == "Mug" and o.get("simbotIsFilledWithCoffee") for o in objects)
    assert {o["objectId"]: o.get("parentReceptacles") for o in objects if o["objectType"] == "Lettuce"} == lettuce_before


def test_a_program_with_nothing_asked_left_goes_back_with_the_reason_and_the_retry_runs(tmp_path: Path) -> None:
    world = household("Kitchen", {"Mug", "CoffeeMachine", "Lettuce", "CounterTop"})
    out, chat, env = run(tmp_path, "a coffee would be great right now", world, [fence(LETTUCE), fence(COFFEE)])
    rejected = [line for line in out["log"] if line.startswith("validate: rejected")]
    assert rejected == ["validate: rejected: the request does not mention Lettuce, and no step it asks for needs "
                        "it; leave it out and change only what the request asks for"]
    retry = "\n".join(str(m.content) for m in chat.calls[1])
    assert "does not mention Lettuce" in retry
    assert "Lettuce" not in out["program"] and out["execution"]["status"] == "done"
    assert any(o["objectType"] == "Mug" and o.get("simbotIsFilledWithCoffee") for o in env.objects_metadata())


def test_on_the_last_attempt_a_program_doing_only_the_unasked_does_not_run(tmp_path: Path) -> None:
    """cal-051: the pillows came back as a phone, a remote and a bat three times; none is moved."""
    world = household("Kitchen", {"Mug", "CoffeeMachine", "Lettuce", "CounterTop"})
    fresh = SymbolicEnv()
    fresh.reset(world)
    out, chat, env = run(tmp_path, "a coffee would be great right now", world, [fence(LETTUCE)], max_plan_attempts=1)
    assert len(chat.calls) == 1 and out["outcome"] == "invalid_program" and not out["subgoals"]
    assert any("nothing the request asks for is left" in line for line in out["log"])
    assert env.objects_metadata() == fresh.objects_metadata()


def test_on_the_last_attempt_a_placement_is_written_from_the_words_instead(tmp_path: Path) -> None:
    """cal-051 again: the phone the planner moved does not move; the words say what to do (every
    pillow there is onto the bed), and the edit language writes that program."""
    world = next(export_state(state) for seed in range(80) if (state := generate_scene(seed, "Bedroom"))
                 and sum(o.object_type == "Pillow" for o in state.objects.values()) > 1
                 and {"Bed", "CellPhone"} <= {o.object_type for o in state.objects.values()})
    phone = ['bed = InteractionObject("Bed")', 'cell_phone = InteractionObject("CellPhone")',
             "cell_phone.pickup_and_place(bed)"]
    fresh = SymbolicEnv()
    fresh.reset(world)
    pillows = sum(o["objectType"] == "Pillow" for o in fresh.objects_metadata())
    out, chat, env = run(tmp_path, "move the pillows onto the bed", world, [fence(phone)], max_plan_attempts=1)
    assert len(chat.calls) == 1 and "CellPhone" not in out["program"]
    note = next(line for line in out["log"] if line.startswith("validate:"))
    assert "written from the request's words instead" in note and f"{pillows} Pillow on/in the Bed" in note
    assert out["execution"]["status"] == "done"
    meta = env.objects_metadata()
    assert all(any(p.startswith("Bed") for p in o.get("parentReceptacles") or [])
               for o in meta if o["objectType"] == "Pillow")
    before = {o["objectId"]: o.get("parentReceptacles") for o in fresh.objects_metadata() if o["objectType"] == "CellPhone"}
    assert {o["objectId"]: o.get("parentReceptacles") for o in meta if o["objectType"] == "CellPhone"} == before


def test_a_class_written_for_the_one_the_request_names_of_the_same_sort_is_the_named_one(tmp_path: Path) -> None:
    """cal-036: "can you wash up the cup?" came back as a washed Mug on every attempt."""
    world = household("Kitchen", {"Mug", "Cup", "SinkBasin", "Faucet"})
    washed_mug = ['mug = InteractionObject("Mug", attributes=["clean"])', "mug.clean()", "mug.put_down()"]
    out, chat, _ = run(tmp_path, "can you wash up the cup?", world, [fence(washed_mug)])
    assert len(chat.calls) == 1 and '"Cup"' in out["program"] and '"Mug"' not in out["program"]
    assert any("Mug is the request's Cup" in line for line in out["log"] if line.startswith("validate:"))
    present = frozenset({"Mug", "Cup", "Bowl", "Knife", "Apple", "SinkBasin", "Faucet"})
    knife = compile_program('knife = InteractionObject("Knife")\nknife.pickup()\n')
    assert named_instead(knife, request_scope("put the apples in a bowl", present), present) == {}  # no sort shared
    pots = present | {"Pot", "Egg"}  # a Knife and a Pot are both Cookware, but not used alike (cal-058)
    assert named_instead(knife, request_scope("the eggs should go in the pot", pots), pots) == {}
    lamp = compile_program('lamp = InteractionObject("DeskLamp")\nlamp.toggle_on()\n')
    living = frozenset({"FloorLamp", "Sofa"})
    assert named_instead(lamp, request_scope("turn on the lamp", living), living) == {"DeskLamp": "FloorLamp"}


def test_a_copied_plate_of_toast_goes_from_a_coffee_with_its_attribute_and_the_coffee_stays() -> None:
    """cal-001's first attempt (the 0.5B, the calibration run on main): a coffee with a washed plate
    and a bread slice on it, copied from a breakfast example. What the trim leaves is the coffee."""
    present = KITCHEN | {"BreadSliced"}
    scope = request_scope("could you make me a coffee?", present)
    assert scope is not None
    compiled = compile_program("\n".join([
        'mug = InteractionObject("Mug", attributes=["clean"])', "mug.clean()", *COFFEE[1:],
        'plate = InteractionObject("Plate", attributes=["clean"])', "plate.clean()", "plate.pickup()",
        "plate.put_down()", 'bread_slice = InteractionObject("BreadSliced")', "bread_slice.pickup_and_place(plate)",
        "plate.pickup()", "plate.put_down()"]))
    outside = scope.outside(changed_classes(compiled.subgoals))
    assert outside == ["Plate", "BreadSliced"]
    cut = trimmed(compiled, scope, outside, compile_program)
    assert cut is not None
    again, note = cut
    assert changed_classes(again.subgoals) == ["Mug", "CoffeeMachine"]
    assert "Plate" not in again.source and "BreadSliced" not in again.source
    assert note.startswith("removed unasked Plate, BreadSliced: 7 step(s) (plate attributes")


def test_a_request_naming_a_lamp_in_a_floor_lamp_household_passes(tmp_path: Path) -> None:
    world = household("LivingRoom", {"FloorLamp", "RemoteControl", "Sofa"}, {"DeskLamp", "Lamp"})
    lines = ['lamp = InteractionObject("Lamp")', "lamp.toggle_on()", 'remote = InteractionObject("RemoteControl")',
             'sofa = InteractionObject("Sofa")', "remote.pickup_and_place(sofa)"]
    out, chat, env = run(tmp_path, "turn on the lamp and put the remote on the sofa", world, [fence(lines)])
    assert len(chat.calls) == 1 and not any("rejected" in line for line in out["log"])
    assert out["execution"]["status"] == "done" and '"FloorLamp"' in out["program"]
    assert any(o["objectType"] == "FloorLamp" and o["isToggled"] for o in env.objects_metadata())


# ------------------------------------------------------------------------------- what was asked
PANTRY = frozenset({"Tomato", "Plate", "Bowl", "Apple", "Bread", "Knife", "SinkBasin", "Faucet", "Toaster", "Potato",
                    "RemoteControl", "Sofa"})


@pytest.mark.parametrize(("request_", "placements", "steps"), [
    ("slice a tomato and put a slice on a clean plate", [("TomatoSliced", "Plate", 1)], [("slice", "Tomato"), ("clean", "Plate")]),
    ("put two slices of apple in a bowl", [("AppleSliced", "Bowl", 2)], [("slice", "Apple"), ("clean", "Bowl")]),  # food: a clean dish
    ("a slice of toast on a plate, please", [("BreadSliced", "Plate", 1)], [("toast", "BreadSliced"),
                                                                             ("clean", "Plate")]),
    ("I want a cooked potato slice on a clean plate", [("PotatoSliced", "Plate", 1)], [("cook", "PotatoSliced"),
                                                                                         ("clean", "Plate")]),
    ("put the remote on the sofa", [("RemoteControl", "Sofa", 1)], []),
    ("put the apples in a bowl", [], []),  # how many is the household's
    # "at" is where a step happens, not a placement; what is washed ends up clean (cal-037)
    ("wash the mug and two bowls at the sink", [], [("clean", "Mug"), ("clean", "Bowl")]),
    ("wash two plates in the sink", [], [("clean", "Plate")]),  # the sink is the washing's tool: where it is done
    ("could you make me a coffee?", [], []),
    # "a <dish> of <food>" is the food on a new dish (cal-067); a liquid is no thing to place
    ("serve breakfast on the counter: a coffee and a plate of toast", [("BreadSliced", "Plate", 1)],
     [("toast", "BreadSliced"), ("clean", "Plate")]),
    ("a plate of two tomato slices", [("TomatoSliced", "Plate", 2)], [("clean", "Plate")]),
    ("a mug of coffee, please", [], []),
    # a salad or sandwich is the named foods' slices on a plate, a sandwich's on two toasted bread slices (cal-063/065)
    ("make a salad with lettuce and tomato", [("LettuceSliced", "Plate", 1), ("TomatoSliced", "Plate", 1)],
     [("clean", "Plate")]),
    ("a toasted tomato sandwich on a plate please", [("BreadSliced", "Plate", 2), ("TomatoSliced", "Plate", 1)],
     [("toast", "BreadSliced"), ("clean", "Plate")]),
    ("make a sandwich", [], []),  # no food named: what goes in it is the household's
    # a switch with its particle right after the verb or at the clause's end (cal-060)
    ("switch the TV on", [], [("toggle_on", "Television")]),
    ("turn off the TV and put the remote on the sofa", [("RemoteControl", "Sofa", 1)], [("toggle_off", "Television")]),
    ("it's dark in here, put the light on", [], []),  # the light is a switch or a lamp: the planner's reading
])
def test_what_a_request_asks_a_program_to_end_with(request_: str, placements: list[tuple[str, str, int]],
                                                   steps: list[tuple[str, str]]) -> None:
    wanted = asked(request_, PANTRY)
    assert [(p.placed, p.where, p.count) for p in wanted.placements] == placements
    assert list(wanted.steps) == steps


def test_no_calibration_gold_program_gets_an_addition() -> None:
    """What the words ask is read so that a correct program for each calibration case lacks none of
    it (the rule was chosen on that suite), with the household's counts (a definite plural placed
    is every one there is)."""
    added = []
    for gold in calibration_gold():
        wanted = asked_of({"request": gold.case.request}, gold.present, gold.counts)
        if wanted and (done := completed(gold.compiled, wanted)):
            added.append((gold.case.id, done[1]))
    assert added == []


def test_a_first_plan_gets_the_placement_and_the_toasting_it_left_out() -> None:
    """cal-014 and cal-010's first plans (the 0.5B, the calibration run on main)."""
    sliced = compile_program('tomato = InteractionObject("Tomato")\ntomato.slice()\n'
                             'plate = InteractionObject("Plate", attributes=["clean"])\nplate.clean()\n')
    done = completed(sliced, asked("slice a tomato and put a slice on a clean plate", PANTRY))
    assert done is not None
    assert done[0].splitlines()[-2:] == ['tomato_slice = InteractionObject("TomatoSliced")',
                                         "tomato_slice.pickup_and_place(plate)"]
    carried = compile_program('bread_slice = InteractionObject("BreadSliced")\nbread_slice.pickup()\n'
                              'plate = InteractionObject("Plate")\nbread_slice.pickup_and_place(plate)\n')
    done = completed(carried, asked("a slice of toast on a plate, please", PANTRY))
    assert done is not None and done[0].splitlines()[:2] == ['bread_slice = InteractionObject("BreadSliced")',
                                                             "bread_slice.toast()"]
    assert done[1] == ["added toast to the BreadSliced, as the request asks", "added clean to the Plate, as the "
                       "request asks"]
    whole = compile_program('bread_slice = InteractionObject("BreadSliced")\nbread_slice.toast()\n'
                            'plate = InteractionObject("Plate")\nplate.clean()\nbread_slice.pickup_and_place(plate)\n')
    assert completed(whole, asked("a slice of toast on a plate, please", PANTRY)) is None


def test_a_thing_asked_cut_is_sliced_after_its_other_steps() -> None:
    """cal-045's first plan ("cut a potato into slices", the 0.5B): `potato.cook()` and no cut. The
    slice goes after the potato's other steps (a slice before the cooking would leave nothing to
    cook); a plan that cuts the potato or uses its pieces gets nothing."""
    cooked = compile_program('potato = InteractionObject("Potato")\npotato.cook()\n')
    done = completed(cooked, asked("cut a potato into slices", PANTRY | {"Potato"}))
    assert done == ('potato = InteractionObject("Potato")\npotato.cook()\npotato.slice()\n',
                    ["added slice to the Potato, as the request asks"])
    cut = compile_program('potato = InteractionObject("Potato")\npotato.slice()\n')
    assert completed(cut, asked("cut a potato into slices", PANTRY | {"Potato"})) is None
    pieces = compile_program('potato_slice = InteractionObject("PotatoSliced")\npotato_slice.pickup()\n')
    assert completed(pieces, asked("chop a potato", PANTRY | {"Potato"})) is None


BREAKFAST = ['mug = InteractionObject("Mug")', 'coffee_machine = InteractionObject("CoffeeMachine")',
             "mug.pickup_and_place(coffee_machine)", "coffee_machine.toggle_on()",
             'bread_slice = InteractionObject("BreadSliced")', "bread_slice.toast()",
             'plate = InteractionObject("Plate")', "bread_slice.pickup_and_place(plate)"]


def test_them_both_on_the_table_carries_what_the_plan_serves_there() -> None:
    """cal-068 ("make me coffee and toast and put them both on the dining table"): the plan left the
    mug in the coffee machine and the toast on its plate. The mug and the plate (with its toast) are
    carried to the table; a plan that puts them there already gets nothing."""
    words = "make me coffee and toast and put them both on the dining table"
    wanted = asked(words, PANTRY | {"Mug", "CoffeeMachine", "DiningTable"})
    assert wanted.everything_to == "DiningTable" and wanted.placements == ()
    done = completed(compile_program("\n".join(BREAKFAST)), wanted)
    assert done is not None
    assert done[0].splitlines()[-3:] == ['dining_table = InteractionObject("DiningTable")',
                                         "mug.pickup_and_place(dining_table)", "plate.pickup_and_place(dining_table)"]
    assert done[1] == ["carried what it serves to the DiningTable, as the request asks"]
    there = compile_program(done[0])
    assert completed(there, wanted) is None
    # where a thing already goes is not "everything": "put the mug in the cabinet" names its object
    assert asked("wash the mug and put the mug in the cabinet", PANTRY | {"Mug", "Cabinet"}).everything_to == ""


def test_a_switch_the_words_ask_for_is_added_to_a_plan_without_it() -> None:
    """cal-060: "switch the TV on" came back as walks; the switch is added to the plan's television,
    or as a new one when the plan has none. A plan that switches it gets nothing, and "the lamp" in a
    room with two kinds of lamp is left to the planner."""
    walks = compile_program('tv_stand = InteractionObject("TVStand")\ntv_stand.go_to()\n'
                            'television = InteractionObject("Television")\ntelevision.go_to()\n')
    done = completed(walks, asked("switch the TV on", PANTRY | {"Television", "TVStand"}))
    assert done is not None and "television.toggle_on()" in done[0]
    assert done[1] == ["added toggle_on of the Television, as the request asks"]
    remote = compile_program('remote = InteractionObject("RemoteControl")\nsofa = InteractionObject("Sofa")\n'
                             "remote.pickup_and_place(sofa)\n")
    done = completed(remote, asked("turn on the lamp and put the remote on the sofa", PANTRY | {"FloorLamp"}))
    assert done is not None and done[0].endswith('floor_lamp = InteractionObject("FloorLamp")\nfloor_lamp.toggle_on()\n')
    assert completed(compile_program(done[0]), asked("turn on the lamp", PANTRY | {"FloorLamp"})) is None
    assert asked("turn on the lamp", PANTRY | {"FloorLamp", "DeskLamp"}).steps == ()


def test_carrying_everything_leaves_a_loop_alone() -> None:
    looped = 'for i in range(2):\n    apple = InteractionObject("Apple")\n    apple.pickup_and_place(InteractionObject("Bowl"))\n'
    assert carry_all(looped, "DiningTable") is None


def test_the_graph_adds_what_a_first_plan_left_out_but_not_to_a_replan(tmp_path: Path) -> None:
    world = household("Kitchen", {"Tomato", "Plate", "Knife", "SinkBasin", "Faucet"})
    lines = ['tomato = InteractionObject("Tomato")', "tomato.slice()"]
    out, _, env = run(tmp_path, "slice a tomato and put a slice on a plate", world, [fence(lines)])
    assert any("added 1 TomatoSliced on/in the Plate" in line for line in out["log"] if line.startswith("validate:"))
    assert out["execution"]["status"] == "done"
    objects = {o["objectId"]: o for o in env.objects_metadata()}
    assert any(o["objectType"] == "TomatoSliced" and any(objects.get(p, {}).get("objectType") == "Plate"
                                                         for p in o.get("parentReceptacles") or [])
               for o in objects.values())
    assert asked_of({"request": "slice a tomato and put a slice on a plate", "feedback": "no"}, KITCHEN) is None


# ------------------------------------------------------ words a TEACh dialogue (or a person) uses that ask for nothing
def test_words_that_say_where_a_thing_is_ask_for_no_placement() -> None:
    """A location said in passing is not a placement: TEACh's sample coffee dialogue ("the mug on the
    counter needs a wash first") had a second mug added to put on the counter, and the built-in
    benchmark's "I saw a plate in a cabinet" a plate put in the cabinet; a verb of placing, or a
    piece wanted new, still asks for one."""
    assert asked("Please make me a coffee. The mug on the counter needs a wash first.", KITCHEN).placements == ()
    seen = asked("<Commander> make a plate of toast <Commander> I saw a plate in a cabinet", KITCHEN).placements
    assert [(p.placed, p.where) for p in seen] == [("BreadSliced", "Plate")]  # the toast on its plate; no cabinet
    assert asked("<Commander> toast a slice <Commander> you'll find the plate on the counter", KITCHEN).placements == ()
    [put] = asked("put the remote on the sofa", PANTRY).placements
    assert (put.placed, put.where) == ("RemoteControl", "Sofa")
    [toast] = asked("a slice of toast on a plate, please", PANTRY).placements
    assert (toast.placed, toast.where) == ("BreadSliced", "Plate")
    # the verb must be in the same sentence: "put" of the first turn does not reach the second's plate
    assert asked("<Commander> put it away <Commander> there is a plate on the counter", KITCHEN).placements == ()


def test_a_cooked_egg_and_a_piece_of_potato_ask_for_their_cut() -> None:
    """The built-in benchmark's gold programs for "a cooked egg" (an EggCracked cooked: TEACh's
    Omelette) and "a hot piece of potato" (a PotatoSliced) were rejected as unasked."""
    egg = request_scope("I'm in the mood for a cooked egg", PANTRY | {"Egg", "Microwave"})
    assert egg is not None and "EggCracked" in egg.allowed
    piece = request_scope("I'm craving a hot piece of potato", PANTRY)
    assert piece is not None and "PotatoSliced" in piece.allowed
    sliced = compile_program('potato = InteractionObject("Potato")\npotato.slice()\n')
    assert piece.unasked_steps(sliced.subgoals) == []
    # moving things asks for no cut, and cooking a potato (eight slices) does not cut it
    eggs = request_scope("the eggs should go in the pot", PANTRY | {"Egg", "Pot"})
    assert eggs is not None and "EggCracked" not in eggs.allowed
    potato = request_scope("cook the potato", PANTRY)
    assert potato is not None and "PotatoSliced" not in potato.allowed


def test_the_vessel_a_step_carries_is_not_a_mere_place() -> None:
    """"make a coffee in the mug": the mug goes to the coffee machine (its move was trimmed, and with it
    the coffee, when the mug was read as a place things only go in)."""
    scope = request_scope("make a coffee in the mug and put a slice of toast on a plate", KITCHEN)
    assert scope is not None and "Mug" not in scope.places and "Plate" in scope.places
    assert scope.unmoved(compile_program("\n".join(COFFEE)).subgoals) == []


def test_a_dish_of_ingredients_with_no_food_named_leaves_them_to_the_planner() -> None:
    assert request_scope("make a sandwich", KITCHEN) is None
    assert request_scope("<Commander> hey <Commander> make a salad", KITCHEN) is None
    salad = request_scope("make a salad with lettuce and tomato", KITCHEN | {"Tomato"})
    assert salad is not None and "LettuceSliced" in salad.allowed and "Bread" not in salad.allowed


def test_a_plan_that_toasts_in_the_toaster_gets_its_own_slice_placed_and_no_second_toasting() -> None:
    """The Kim breakfast's toast was toasted in the toaster and left there: the placement the words ask
    for puts *that* slice on the plate (`put_made`), not a second, untoasted one, and no toasting is
    added to a plan that toasts."""
    toaster = compile_program('bread_slice = InteractionObject("BreadSliced")\ntoaster = InteractionObject("Toaster")\n'
                              "bread_slice.pickup_and_place(toaster)\ntoaster.toggle_on()\ntoaster.toggle_off()\n")
    done = completed(toaster, asked("put a slice of toast on a plate", PANTRY))
    assert done is not None
    program, notes = done
    assert program.count('InteractionObject("BreadSliced")') == 1 and "bread_slice.pickup_and_place(plate)" in program
    assert "bread_slice.toast()" not in program
    assert notes == ["added 1 BreadSliced on/in the Plate, as the request asks", "added clean to the Plate, as the request asks"]


def test_the_cooking_asked_for_is_the_planners_reading_of_which_thing() -> None:
    """"a salad of lettuce and a cooked potato slice" (rep-032's words): a plan cooking the potato slice
    gets no cooking of the lettuce."""
    salad = compile_program('plate = InteractionObject("Plate")\nplate.clean()\n'
                            'lettuce_slice = InteractionObject("LettuceSliced")\nlettuce_slice.pickup_and_place(plate)\n'
                            'potato_slice = InteractionObject("PotatoSliced")\npotato_slice.cook()\n'
                            "potato_slice.pickup_and_place(plate)\n")
    assert completed(salad, asked("a salad of lettuce and a cooked potato slice, please", PANTRY | {"Lettuce"})) is None


def test_the_built_in_benchmarks_gold_programs_are_run_as_written(tmp_path: Path) -> None:
    """A TEACh dialogue is a request too: each gold program of the built-in benchmark's TfD instances
    passes `fit_to_request` unchanged (nothing trimmed, added or rejected). Merged first, issue 54's
    scope trimmed or rejected gold programs ("a cooked egg", "a hot piece of potato") and added what
    a commander only said was somewhere ("I saw a plate in a cabinet"): SR of the gold-answering
    graph fell from 100 to 94.44 (tests/test_evals_runner.py)."""
    generate_benchmark(tmp_path, seed=5, sizes={"train": 40, "valid_unseen": 40})
    changed = []
    for path in sorted(tmp_path.glob("tfd_instances/*/*.json")):
        loaded = load_instance(path)
        env = SymbolicEnv()
        loaded.start(env)
        present = household_classes(env.objects_metadata())
        request, _ = clip_dialogue(loaded.dialogue, get_settings().max_dialogue_chars)
        compiled, _ = in_household(compile_program(loaded.gold_program), present)
        fitted = fit_to_request(compiled, {"request": request}, present,
                                lambda text, present=present: in_household(compile_program(text), present)[0], last=False)
        if fitted.compiled is None or fitted.compiled.source != compiled.source:
            changed.append((path.name, fitted.reason or fitted.notes))
    assert changed == []
