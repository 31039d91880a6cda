"""A request that asks a thing of the household for what it cannot take is refused with the reason
(`understanding/feasibility.py`), and no doable request is: every wording of the built-in
benchmark in households prepared for it, every held-out paraphrase of the packaged examples, and
every doable case of both `helper eval requests` suites in its own household."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from helper_agent.envs.symbolic import SymbolicEnv
from helper_agent.evals.benchmark.dialogue import request_sentences
from helper_agent.evals.benchmark.episodes import prepared_scenes
from helper_agent.evals.benchmark.families import FAMILIES
from helper_agent.evals.studies.requests.cases import load_suite
from helper_agent.evals.studies.requests.households import prepare
from helper_agent.memory.examples import load_seed_examples
from helper_agent.understanding.feasibility import infeasible

EXAMPLES = Path(__file__).resolve().parents[1] / "helper_agent" / "prompts" / "examples"
KITCHEN = {"Mug", "Bowl", "Plate", "Bread", "Tomato", "Knife", "Toaster", "Fridge", "Microwave", "DiningTable",
           "HousePlant", "SinkBasin", "Faucet", "StoveBurner", "StoveKnob", "Pan", "Pot", "CoffeeMachine",
           "CounterTop", "Cabinet", "Kettle", "Potato", "Egg", "Apple", "Lettuce", "LightSwitch"}
LIVING = {"Pillow", "Vase", "Sofa", "ArmChair", "Television", "RemoteControl", "FloorLamp", "CoffeeTable", "Laptop"}


@pytest.mark.parametrize(("request_", "present", "sentence"), [
    ("slice the mug", KITCHEN, "I can't slice the mug: a mug can't be sliced."),
    ("put the pillow in the vase", LIVING, "I can't put the pillow in the vase: a vase can't hold anything."),
    ("put the dining table in the fridge", KITCHEN,
     "I can't put the dining table in the fridge: a dining table can't be picked up."),
    ("put the houseplant in the microwave", KITCHEN,
     "I can't put the houseplant in the microwave: a house plant can't be picked up."),
    ("Could you chop up the bowl, please?", KITCHEN, "I can't chop up the bowl: a bowl can't be sliced."),
    ("fill the plate with water", KITCHEN, "I can't fill the plate with water: a plate can't be filled."),
    ("put the laptop on the television", LIVING, "I can't put the laptop on the television: a television can't hold anything."),
    ("switch on the sofa", LIVING, "I can't switch on the sofa: a sofa can't be switched on or off."),
    ("put the kettle in the toaster", KITCHEN, "I can't put the kettle in the toaster: a kettle doesn't go in a toaster."),
])
def test_a_thing_asked_what_it_cannot_take_is_refused_with_the_reason(request_, present, sentence) -> None:
    found = infeasible(request_, present)
    assert found is not None
    assert found.sentence(request_) == sentence


@pytest.mark.parametrize("request_", [
    "slice the bread and put it on the plate", "wash the mug", "turn on the lamp", "switch the TV on",
    "make toast", "toast a slice of bread", "put the bread in the toaster", "fill the mug with water",
    "slice the apple and put two slices in the bowl", "put the washed mug in the cabinet",
    "coffee plus toast served on a washed plate", "put the kettle on", "cook a potato", "turn off the tap",
    "switch on the stove", "open the fridge", "put the remote on the sofa", "water the plant",
])
def test_what_the_household_can_do_is_not_refused(request_) -> None:
    assert infeasible(request_, KITCHEN | LIVING) is None


def test_a_thing_the_household_lacks_is_left_to_the_absent_check() -> None:
    """"slice the mug" where there is no mug is `absent.py`'s to refuse (there is none), not this one's."""
    assert infeasible("slice the mug", {"Bread", "Knife"}) is None


def test_a_kind_stands_for_its_class() -> None:
    """"the lamp" in a room whose lamp is a FloorLamp: switching it is fine, slicing it is not."""
    assert infeasible("turn on the lamp", {"FloorLamp"}) is None
    found = infeasible("slice the lamp", {"FloorLamp"})
    assert found is not None and found.cls == "FloorLamp"


def test_no_request_of_the_built_in_benchmark_is_infeasible_in_its_household() -> None:
    checked, refused = 0, []
    for family in sorted(FAMILIES):
        for scene in prepared_scenes(family, 2):
            types = {o.object_type for o in scene.state.objects.values()}
            for phrasing in ("seen", "unseen"):
                for sentence in sorted(request_sentences(scene.instance, phrasing)):
                    checked += 1
                    if infeasible(sentence, types) is not None:
                        refused.append((family, sentence, infeasible(sentence, types).reason))
    assert checked > 500
    assert refused == []


def test_no_held_out_paraphrase_is_infeasible_where_its_things_are() -> None:
    programs = {e.id: e.program for e in load_seed_examples()}
    rows = [json.loads(line) for line in (EXAMPLES / "paraphrases_heldout.jsonl").read_text().splitlines() if line.strip()]
    refused = []
    for row in rows:
        classes = set(re.findall(r'InteractionObject\("(\w+)"', programs[row["example_id"]])) | KITCHEN
        if infeasible(row["query"], classes) is not None:
            refused.append(row["query"])
    assert len(rows) >= 40 and refused == []


def test_the_calibration_suites_cases_are_read_as_their_kind() -> None:
    """Every doable case is feasible in its household; every case of things there are, asked what
    they cannot take, is not. The calibration suite only: the reported suite is only reported."""
    wrong = []
    for case in load_suite("calibration").cases:
        env = SymbolicEnv()
        env.reset(prepare(case.household, [g.instantiate() for g in case.goal]))
        types = {str(o["objectType"]) for o in env.objects_metadata()}
        found = infeasible(case.request, types)
        if (found is not None) != bool(case.present):
            wrong.append((case.id, case.request, found))
    assert wrong == []
