"""The step-wise agents offer only admissible actions: on objects whose type affords them, with
the hands they need, and no walk to an object already in reach.

P-RAG and EmbodiedRAG share `object_actions.step_refusals`: from the object types' AI2-THOR flags
and what the agent holds it lists the id actions the environment could only refuse
(`toggle_on(Shelf_1)`, a pickup with full hands), which the step grammar leaves out and the parser
refuses with a reason, so a model without a grammar is asked again. An action the environment
could accept must never be left out.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from helper_agent.evals.benchmark import generate_benchmark
from helper_agent.evals.engine.runner import run_episode
from helper_agent.evals.engine.spec import EvalSpec
from helper_agent.graphs.embodiedrag import actions as react_actions
from helper_agent.graphs.object_actions import affords, unafforded_actions
from helper_agent.graphs.prag import actions as step_actions
from helper_agent.program.cfg_match import Matcher
from helper_agent.program.cfg_sample import Sampler
from helper_agent.world.catalog import load_catalog

CATALOG = load_catalog()
TYPES = sorted(CATALOG.types)


@pytest.fixture(autouse=True)
def fast_embeddings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HELPER_EMBEDDINGS", "hash:1024")


# ------------------------------------------------------------------------------------ the table
@pytest.mark.parametrize(("object_type", "need", "expected"), [
    ("Shelf", "toggleable", False), ("DeskLamp", "toggleable", True), ("Faucet", "toggleable", True),
    ("DiningTable", "pickupable", False), ("Mug", "pickupable", True), ("Mug", "openable", False),
    ("Fridge", "openable", True), ("Microwave", "openable", True), ("CounterTop", "receptacle", True),
    ("Apple", "receptacle", False), ("Bread", "sliceable", True), ("Knife", "sliceable", False),
    ("SinkBasin", "pour_target", True), ("Mug", "pour_target", True), ("Plate", "pour_target", False),
])
def test_what_each_type_affords_follows_ai2thor(object_type: str, need: Any, expected: bool) -> None:
    assert affords(CATALOG, object_type, need) is expected


def test_a_type_the_catalog_does_not_know_affords_everything() -> None:
    assert affords(CATALOG, "Spaceship", "toggleable") and affords(CATALOG, "Spaceship", "pickupable")
    assert unafforded_actions(step_actions.ACTIONS, {"Spaceship_1": "Spaceship"}, CATALOG) == {}


def test_the_reason_names_the_object_and_what_its_type_cannot_do() -> None:
    out = unafforded_actions(step_actions.ACTIONS, {"Shelf_1": "Shelf", "Mug_1": "Mug"}, CATALOG)
    assert out["toggle_on(Shelf_1)"] == "toggle_on(Shelf_1): a Shelf cannot be switched on or off; choose another action"
    assert "pickup(Mug_1)" not in out and "open(Mug_1)" in out and "goto(Shelf_1)" not in out


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(TYPES), min_size=1, max_size=6, unique=True),
       st.sampled_from([step_actions, react_actions]))
def test_the_grammar_derives_an_id_action_exactly_when_the_type_affords_it(types: list[str], module: Any) -> None:
    shown = {f"{t}_1": t for t in types}
    unafforded = unafforded_actions(module.ACTIONS, shown, CATALOG)
    classes = ["Mug", "Knife"]
    if module is step_actions:
        cfg = module.step_cfg(list(shown), classes, exclude=list(unafforded))
        prefix = "Action: "
    else:
        cfg = module.react_cfg(list(shown), classes, exclude=list(unafforded))
        prefix = "Thought: x\nAction: "
    matcher = Matcher(cfg)
    for a in module.ACTIONS:
        if a.arg != "id":
            continue
        for oid, t in shown.items():
            allowed = a.needs is None or affords(CATALOG, t, a.needs)
            assert matcher.matches(f"{prefix}{a.name}({oid})") is allowed, (a.name, t)
            assert (f"{a.name}({oid})" in unafforded) is (not allowed)
    assert matcher.matches(f"{prefix}done()") and matcher.matches(f"{prefix}search(Knife)")


def test_actions_with_the_same_ids_share_one_rule_and_llama_cpp_compiles_it() -> None:
    shown = {f"{t}_1": t for t in TYPES}
    unafforded = unafforded_actions(react_actions.ACTIONS, shown, CATALOG)
    text = react_actions.react_grammar(list(shown), TYPES, list(unafforded))
    # open/close, toggle_on/toggle_off and pickup with the macros that pick up first share their ids.
    assert text.count('"toggle_on" | "toggle_off"') == 1 and text.count('"open" | "close"') == 1
    assert len([line for line in text.splitlines() if line.startswith("ids-")]) == 6
    llama_cpp = pytest.importorskip("llama_cpp")
    assert llama_cpp.LlamaGrammar.from_string(text, verbose=False) is not None


def test_every_sampled_answer_is_an_afforded_action() -> None:
    shown = {"Mug_1": "Mug", "Shelf_1": "Shelf", "Fridge_1": "Fridge", "DeskLamp_1": "DeskLamp"}
    unafforded = unafforded_actions(step_actions.ACTIONS, shown, CATALOG)
    sampler = Sampler(step_actions.step_cfg(list(shown), ["Mug"], list(unafforded)), random.Random(11))
    seen = {sampler.sample().removeprefix("Action: ") for _ in range(800)}
    assert not seen & set(unafforded)
    assert {"pickup(Mug_1)", "open(Fridge_1)", "toggle_on(DeskLamp_1)", "put(Shelf_1)", "pour(Mug_1)"} <= seen


# ------------------------------------------------------------------------------------ in an episode
@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("bench")
    generate_benchmark(path, seed=0, sizes={"valid_unseen": 3})
    return path


def _coffee(bench: Path) -> str:
    for path in sorted((bench / "tfd_instances" / "valid_unseen").glob("*.json")):
        if json.loads(path.read_text())["helper_agent"]["family"] == "coffee":
            return str(path)
    raise AssertionError("no coffee episode")


def _run(bench: Path, out: Path, agent: str, answers: list[str], **options: str) -> dict[str, Any]:
    spec = EvalSpec(mode="tfd", data=str(bench), out=str(out), planner=agent, feedback=0, agent_options=options)
    return run_episode(spec, _coffee(bench), FakeListChatModel(responses=answers))


def test_prag_refuses_an_unafforded_answer_with_the_reason_and_acts_on_the_next(bench: Path, tmp_path: Path) -> None:
    answers = ["Action: search(Mug)", "Action: open(Mug_1)", "Action: pickup(Mug_1)", "Action: done()"]
    record = _run(bench, tmp_path / "on", "prag", answers)
    assert [s[0] for s in record["subgoals"]] == ["search(Mug)", "pickup(Mug_1)", "done()"], record["log"]
    assert record["parse_rejections"] == 1 and record["llm_calls"] == 4
    assert any("open(Mug_1): a Mug cannot be opened or closed" in line for line in record["log"])
    # Off: the environment is asked to open the mug, and refuses.
    off = _run(bench, tmp_path / "off", "prag", answers, admissible="off")
    assert [s[0] for s in off["subgoals"]] == ["search(Mug)", "open(Mug_1)", "pickup(Mug_1)", "done()"], off["log"]
    assert off["parse_rejections"] == 0
    assert any("open(Mug_1) -> failed" in line and "not openable" in line for line in off["log"]), off["log"]


def test_embodiedrag_refuses_an_unafforded_answer_with_the_reason(bench: Path, tmp_path: Path) -> None:
    answers = ["- mug", "Thought: find a mug\nAction: search(Mug)", "Thought: on\nAction: toggle_on(Mug_1)",
               "Thought: take it\nAction: pickup(Mug_1)", "Thought: finished\nAction: done()"]
    record = _run(bench, tmp_path / "on", "embodiedrag", answers)
    steps = [line for line in record["log"] if line.startswith("step ")]
    assert any("toggle_on(Mug_1): a Mug cannot be switched on or off" in line for line in steps), record["log"]
    assert not any(line.startswith("step 2: toggle_on") for line in steps)
    assert any(line.startswith("step 2: pickup(Mug_1)") for line in steps), steps


def test_a_step_refuses_walks_to_objects_in_reach_and_the_switches_turn_each_kind_off() -> None:
    from helper_agent.graphs.object_actions import step_refusals

    shown = {"Mug_1": "Mug", "Shelf_1": "Shelf"}
    history = [{"action": "pickup(Shelf_1)", "before": "here", "changed": False}]
    refusals = step_refusals(step_actions.ACTIONS, history, "here", shown, CATALOG, lambda i: i == "Mug_1",
                             None, None, refuse_futile=True, admissible=True)
    assert refusals.tried == ["pickup(Shelf_1)"]
    assert set(refusals.futile) == {"pickup(Shelf_1)", "goto(Mug_1)"}
    assert refusals.futile["goto(Mug_1)"].startswith("goto(Mug_1): Mug_1 is already in reach")
    assert "toggle_on(Shelf_1)" in refusals.inadmissible and "goto(Shelf_1)" not in refusals.excluded
    assert set(refusals.excluded) == set(refusals.futile) | set(refusals.inadmissible)
    none = step_refusals(step_actions.ACTIONS, history, "here", shown, CATALOG, lambda i: True,
                         "Mug_1", "Mug", refuse_futile=False, admissible=False)
    assert none.excluded == [] and none.tried == []
    # Elsewhere (another fingerprint) the failed pickup may work: only the walk stays refused.
    there = step_refusals(step_actions.ACTIONS, history, "there", shown, CATALOG, lambda i: i == "Mug_1",
                          None, None, refuse_futile=True, admissible=False)
    assert list(there.futile) == ["goto(Mug_1)"]


@pytest.mark.parametrize(("held", "held_type", "refused", "allowed"), [
    (None, None, {"put(Shelf_1)", "pour(Mug_1)", "slice(Bread_1)"}, {"pickup(Mug_1)"}),
    ("Mug_1", "Mug", {"pickup(Bread_1)", "pickup(Mug_1)", "slice(Bread_1)", "put(Mug_1)", "pour(Mug_1)"},
     {"put(Shelf_1)", "pour(Bread_1)"}),
    ("Knife_1", "Knife", {"pickup(Bread_1)"}, {"slice(Bread_1)", "put(Shelf_1)"}),
])
def test_prag_actions_need_the_hands_the_environment_checks_first(held: str | None, held_type: str | None,
                                                                  refused: set[str], allowed: set[str]) -> None:
    from helper_agent.graphs.object_actions import hand_refusals

    ids = ["Mug_1", "Shelf_1", "Bread_1"]
    out = hand_refusals(step_actions.ACTIONS, ids, held, held_type)
    assert refused <= set(out) and not allowed & set(out)
    assert not any(a.startswith(("goto(", "open(", "toggle_on(")) for a in out)


def test_embodiedrag_pickup_stays_open_with_full_hands_its_executor_puts_down_first() -> None:
    from helper_agent.graphs.object_actions import hand_refusals

    out = hand_refusals(react_actions.ACTIONS, ["Mug_1", "Bread_1"], "Knife_1", "Knife")
    assert "pickup(Mug_1)" not in out and "slice(Bread_1)" not in out and "clean(Mug_1)" not in out
    empty = hand_refusals(react_actions.ACTIONS, ["Mug_1", "Sink_1"], None, None)
    assert set(empty) == {"place(Mug_1)", "place(Sink_1)", "pour(Mug_1)", "pour(Sink_1)", "put_down()"}


def test_embodiedrag_never_picks_up_or_puts_into_what_it_holds_nor_puts_down_empty_hands() -> None:
    from helper_agent.graphs.object_actions import hand_refusals

    holding = hand_refusals(react_actions.ACTIONS, ["Mug_1", "Sink_1"], "Mug_1", "Mug")
    assert set(holding) == {"pickup(Mug_1)", "place(Mug_1)", "pour(Mug_1)"}
    assert holding["pickup(Mug_1)"] == "pickup(Mug_1): you are holding Mug_1; name another object"
    assert "put_down()" in hand_refusals(react_actions.ACTIONS, ["Mug_1"], None, None)
    # Nor does the grammar derive them.
    matcher = Matcher(react_actions.react_cfg(["Mug_1", "Sink_1"], ["Knife"], list(holding) + ["put_down()"]))
    assert not matcher.matches("Thought: t\nAction: pickup(Mug_1)")
    assert not matcher.matches("Thought: t\nAction: put_down()")
    assert matcher.matches("Thought: t\nAction: place(Sink_1)") and matcher.matches("Thought: t\nAction: done()")


@pytest.mark.parametrize("module", [step_actions, react_actions], ids=["prag", "embodiedrag"])
@pytest.mark.parametrize(("attributes", "refused", "allowed"), [
    ({"open": True, "on": True}, {"open(Fridge_1)", "toggle_on(Fridge_1)"}, {"close(Fridge_1)", "toggle_off(Fridge_1)"}),
    ({"open": False, "on": False}, {"close(Fridge_1)", "toggle_off(Fridge_1)"}, {"open(Fridge_1)", "toggle_on(Fridge_1)"}),
    ({}, {"close(Fridge_1)", "toggle_off(Fridge_1)"}, {"open(Fridge_1)", "toggle_on(Fridge_1)"}),  # as seen: closed, off
    (None, set(), {"open(Fridge_1)", "close(Fridge_1)", "toggle_on(Fridge_1)", "toggle_off(Fridge_1)"}),  # never seen
])
def test_an_action_is_offered_only_when_the_object_is_not_already_in_the_state_it_makes(
        module: Any, attributes: dict[str, bool] | None, refused: set[str], allowed: set[str]) -> None:
    from helper_agent.graphs.object_actions import state_refusals

    out = state_refusals(module.ACTIONS, ["Fridge_1"], lambda _id: attributes)
    assert set(out) == refused and not allowed & set(out)
    if attributes and attributes.get("open"):
        assert out["open(Fridge_1)"] == "open(Fridge_1): Fridge_1 is already open; choose another action"


def test_prag_refuses_a_pickup_with_full_hands_and_the_environment_is_not_asked(bench: Path, tmp_path: Path) -> None:
    answers = ["Action: search(Mug)", "Action: pickup(Mug_1)", "Action: search(Bread)", "Action: pickup(Bread_1)",
               "Action: done()"]
    record = _run(bench, tmp_path, "prag", answers)
    assert [s[0] for s in record["subgoals"]] == ["search(Mug)", "pickup(Mug_1)", "search(Bread)", "done()"], record["log"]
    assert any("pickup(Bread_1): your hands are full (you hold Mug_1)" in line for line in record["log"])


def test_prag_refuses_switching_on_what_is_on_and_the_environment_is_not_asked(bench: Path, tmp_path: Path) -> None:
    answers = ["Action: search(CoffeeMachine)", "Action: toggle_on(CoffeeMachine_1)",
               "Action: toggle_on(CoffeeMachine_1)", "Action: done()"]
    record = _run(bench, tmp_path / "on", "prag", answers)
    assert [s[0] for s in record["subgoals"]] == ["search(CoffeeMachine)", "toggle_on(CoffeeMachine_1)", "done()"], \
        record["log"]
    assert any("toggle_on(CoffeeMachine_1): CoffeeMachine_1 is already on" in line for line in record["log"])
    off = _run(bench, tmp_path / "off", "prag", answers, admissible="off")
    assert [s[0] for s in off["subgoals"]].count("toggle_on(CoffeeMachine_1)") == 2, off["log"]


def test_an_environment_error_names_objects_by_the_ids_the_prompt_shows() -> None:
    from helper_agent.graphs.object_actions import ShortIds

    ids = ShortIds()
    ids.alias_of("Cup|+1.12|+0.90|+0.25", "Cup")
    ids.alias_of("Cup|+1.12|+0.90|+0.2", "Cup")  # a prefix of the first
    text = "Agent's hand is already holding Cup|+1.12|+0.90|+0.25, not Cup|+1.12|+0.90|+0.2"
    assert ids.aliased(text) == "Agent's hand is already holding Cup_1, not Cup_2"
    assert ids.aliased("nothing to rename") == "nothing to rename"
