"""`helper eval requests`: the suites, the scripted person, the claims, the scope of a request, the
figures, and whole cases through `helper chat`'s runtime (graph, SQLite checkpointer, interrupt)
with LangChain's fake chat model scripted per test. The households are the embedded world's."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from requests_gold import program
from typer.testing import CliRunner

import helper_agent.llm as llm
from helper_agent.chat_runtime import ChatAgent, ChatRuntime, chat_config
from helper_agent.cli import app
from helper_agent.envs.symbolic import SymbolicEnv
from helper_agent.evals.engine.agents import ProgramAgent
from helper_agent.evals.studies.requests import (
    SuiteFileError,
    load_suite,
    metrics,
    run_case,
    run_suite,
    score_case,
)
from helper_agent.evals.studies.requests.cases import Goal, Household, RequestCase, suite_path
from helper_agent.evals.studies.requests.claims import is_false_claim, read_claim
from helper_agent.evals.studies.requests.households import household_problems, prepare
from helper_agent.evals.studies.requests.person import ScriptedPerson, check_goal, goal_classes
from helper_agent.evals.studies.requests.scope import allowed_classes, changes, unasked
from helper_agent.graphs.base import AgentResult, EpisodeSetup
from helper_agent.world.metadata import export_objects

READER = "A household robot finished a task"
LOCATOR = "You help a household robot find an object"


class Chat(FakeListChatModel):
    """Programs for planning calls in order; the reading of each feedback answer from `readings`;
    the locator always gets a list of likely places."""

    readings: list[str] = []
    read: int = 0

    def _call(self, messages: Any, *args: Any, **kwargs: Any) -> str:
        first = str(messages[0].content)
        if first.startswith(READER):
            self.read += 1
            return self.readings[min(self.read, len(self.readings)) - 1] if self.readings else "satisfied"
        if any(LOCATOR in str(m.content) for m in messages):
            return "Cabinet, Drawer, Fridge, CounterTop, DiningTable"
        if self.i >= len(self.responses):
            raise AssertionError("the chat model was asked for more programs than scripted")
        return super()._call(messages, *args, **kwargs)


def fence(*lines: str) -> str:
    return "```python\n" + "\n".join(lines) + "\n```"


WASH_PLATE = fence('plate = InteractionObject("Plate", attributes=["clean"])', "plate.clean()", "plate.put_down()")
WASH_MUG = fence('mug = InteractionObject("Mug", attributes=["clean"])', "mug.clean()", "mug.put_down()")
# A mug carried to the fridge: a change whatever state the mug starts in (washing a mug that is
# already clean is done without acting, tools/satisfied.py, and changes nothing).
MOVE_MUG = fence('mug = InteractionObject("Mug")', 'fridge = InteractionObject("Fridge")', "mug.pickup_and_place(fridge)")


def case(**fields: Any) -> RequestCase:
    base: dict[str, Any] = {"id": "t-1", "kind": "plain", "family": "clean_x", "request": "wash the plate",
                            "household": {"seed": 3, "room": "Kitchen"}, "goal": [{"task": "Clean X", "params": ["Plate"]}],
                            "may_change": ["Plate"]}
    return RequestCase.model_validate({**base, **fields})


def write_suite(path: Path, cases: list[dict[str, Any]], header: dict[str, Any] | None = None) -> Path:
    lines = [json.dumps(header or {"suite": "test", "about": "a test suite"})] + [json.dumps(c) for c in cases]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# ------------------------------------------------------------------------------------------ suites
@pytest.fixture(scope="module")
def suites() -> dict[str, Any]:
    return {name: load_suite(name) for name in ("calibration", "reported")}


def test_packaged_suites_have_the_sizes_and_kinds_the_issue_asks(suites: dict[str, Any]) -> None:
    for name, minimum in (("calibration", 80), ("reported", 40)):
        cases = suites[name].cases
        kinds = [c.kind for c in cases]
        assert len(cases) >= minimum, name
        absent = [c for c in cases if c.kind == "impossible" and c.absent]
        cannot = [c for c in cases if c.kind == "impossible" and c.present]
        assert 0.08 <= len(absent) / len(cases) <= 0.14, name  # things there are none of (issue 54)
        assert len(cannot) >= 4, name  # things there are, asked what they cannot take (issue 63)
        assert {"everyday_words"} <= {c.family for c in cases}, name  # words not in the catalog (issue 63)
        assert 0.10 <= kinds.count("teach") / len(cases) <= 0.15, name
        assert len({c.family for c in cases}) >= 15, name  # the embedded world's task families
    assert "ONLY REPORTED" in suites["reported"].header.about
    assert "every rule" in suites["calibration"].header.about


def test_every_case_fits_its_household(suites: dict[str, Any]) -> None:
    for suite in suites.values():
        for c in suite.cases:
            assert household_problems(c) == [], c.id


def test_the_suites_share_no_wording_and_no_goal_in_a_household(suites: dict[str, Any]) -> None:
    def words(text: str) -> str:
        return " ".join(re.findall(r"[a-z']+", text.lower()))

    def pairs(s: Any) -> set[tuple[Any, ...]]:
        return {(tuple(g.describe() for g in c.goal), h.seed, h.room) for c in s.cases for h in c.households()}

    cal, rep = suites["calibration"], suites["reported"]
    said = {words(t) for c in cal.cases for t in (c.request, c.recall) if t}
    for c in rep.cases:
        for text in (c.request, c.recall):
            assert text is None or words(text) not in said, c.id
    assert not pairs(cal) & pairs(rep)
    # Nor near the same words: no reported sentence shares 60 % of its words with a calibration one.
    bags = [set(words(t).split()) for c in cal.cases for t in (c.request, c.recall) if t]
    for c in rep.cases:
        for text in filter(None, (c.request, c.recall)):
            mine = set(words(text).split())
            assert max(len(mine & bag) / len(mine | bag) for bag in bags) < 0.6, (c.id, text)
    for suite in (cal, rep):  # varied phrasing: no two requests of a suite say the same words
        texts = [words(c.request) for c in suite.cases]
        assert len(set(texts)) == len(texts)


@pytest.mark.parametrize(("line", "expected"), [
    ('{"id": "x-1", "kind": "plain"', "line 2: not JSON"),
    ('{"id": "x-1", "kind": "plain", "family": "f", "request": "wash it", "household": {"seed": 1, "room": "Kitchen"}, '
     '"goal": [{"task": "Clean X", "params": []}], "may_change": ["Plate"]}', "line 2 (case x-1): field 'goal[0]': task 'Clean X' takes 1 parameter(s)"),
    ('{"id": "x-1", "kind": "plain", "family": "f", "request": "wash it", "household": {"seed": 1, "room": "Garage"}, '
     '"goal": [{"task": "Clean X", "params": ["Plate"]}], "may_change": ["Plate"]}', "field 'household.room': unknown room 'Garage'"),
    ('{"id": "x-1", "kind": "plain", "family": "f", "request": "wash it", "household": {"seed": 1, "room": "Kitchen"}, '
     '"goal": [{"task": "Wash X", "params": ["Plate"]}], "may_change": ["Plate"]}', "unknown TEACh task 'Wash X'"),
    ('{"id": "x-1", "kind": "impossible", "family": "f", "request": "mow the lawn", "household": {"seed": 1, "room": "Kitchen"}, '
     '"goal": [{"task": "Clean X", "params": ["Plate"]}], "why": "no lawn", "absent": ["Lawn"]}', "an impossible case has no goal"),
    ('{"id": "x-1", "kind": "plain", "family": "f", "request": "wash it", "household": {"seed": 1, "room": "Kitchen"}, '
     '"goal": [{"task": "Clean X", "params": ["Plate"]}]}', "needs a goal and the classes it may change"),
    ('[1, 2]', "line 2: expected a JSON object"),
])
def test_a_bad_suite_line_is_named_by_file_line_and_field(tmp_path: Path, line: str, expected: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"suite": "t", "about": "a"}) + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(SuiteFileError) as caught:
        load_suite(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert expected in str(caught.value)


def test_a_suite_needs_its_header_and_unique_ids(tmp_path: Path) -> None:
    one = case().model_dump()
    path = tmp_path / "noheader.jsonl"
    path.write_text(json.dumps(one) + "\n", encoding="utf-8")
    with pytest.raises(SuiteFileError, match=r"line 1: field 'suite': the first line must be the suite's header"):
        load_suite(path)
    with pytest.raises(SuiteFileError, match=r"line 3 \(case t-1\): field 'id': duplicate id \(first on line 2\)"):
        load_suite(write_suite(tmp_path / "dup.jsonl", [one, one]))
    with pytest.raises(SuiteFileError, match="cannot read the suite file"):
        load_suite(tmp_path / "missing.jsonl")
    assert suite_path("reported").name == "reported.jsonl"


# ------------------------------------------------------------------------------------------ the person
def test_the_person_says_what_is_missing_in_plain_words() -> None:
    slices = case(goal=[{"task": "N Slices Of X In Y", "params": ["1", "Tomato", "on", "Plate"]}],
                  may_change=["Tomato", "TomatoSliced", "Plate"])
    goal = [g.instantiate() for g in slices.goal]
    seen = check_goal(goal, export_objects(prepare(slices.household, goal)))
    assert not seen.satisfied
    assert seen.unmet == ["you didn't slice the tomato", "the plate isn't clean",
                          "you didn't put the tomato slice on the plate"]
    coffee = [case(goal=[{"task": "Coffee"}], may_change=["Mug"]).goal[0].instantiate()]
    env = SymbolicEnv()
    env.reset(prepare(case().household, coffee))
    person = ScriptedPerson(env, coffee)
    assert person.answer() == "no, the mug isn't clean and there's no coffee in the mug"
    lamp = [case(goal=[{"task": "Toggle X All Y", "params": ["on", "1", "FloorLamp"]}]).goal[0].instantiate()]
    env.reset(prepare(case(household={"seed": 3, "room": "LivingRoom"}).household, lamp))
    assert ScriptedPerson(env, lamp).answer() == "no, you didn't turn on the floor lamp"
    assert ScriptedPerson(env, [], why="we have no cat").answer() == "no, we have no cat"


def test_the_person_says_yes_when_the_checker_is_satisfied() -> None:
    goal = [case().goal[0].instantiate()]
    state = prepare(case().household, goal)
    for obj in state.objects.values():
        obj.is_dirty = False
    env = SymbolicEnv()
    env.reset(state)
    person = ScriptedPerson(env, goal)
    assert person.answer() == "yes" and person.rounds[0]["satisfied"] is True


# ------------------------------------------------------------------------------------------ claims, scope
@pytest.mark.parametrize(("reply", "claim"), [
    ("success (routine 'the kim breakfast' v1 for kim stored)", "stored"),
    ("success", "done"),
    ("done", "done"),
    ("not done: the execution did not finish (stopped at plate.clean(); could not find a Plate); nothing stored", "none"),
    ("stopped: step limit", "none"),
    ("I can't mow the lawn: there is no lawn in this household.", "refused"),
    ("There is no cat here, so I did nothing.", "refused"),
    ("no valid program", "none"),
    ("refused: the household has no LawnMower", "refused"),
    ("I can't do that.", "none"),  # no reason given
    ("I can't slice the mug: a mug can't be sliced.", "refused"),  # the reason after a colon
    ("I can't do that:", "none"),  # a colon with nothing after it is no reason
    ("not done: I couldn't work out how to do that (no valid program); could you say it another way?", "none"),
    ("not done: the program ran to its end, but you said \u201cno, we can't, there is no cat\u201d and no feedback "
     "round is left to replan it; nothing stored", "none"),
    ("stopped: this request's LLM time is spent", "none"),
])
def test_a_replys_claim_is_read_in_one_place(reply: str, claim: str) -> None:
    assert read_claim(reply) == claim


def test_a_false_claim_is_done_or_stored_when_the_checker_disagrees() -> None:
    assert is_false_claim("done", False) and is_false_claim("stored", False)
    assert not is_false_claim("done", True) and not is_false_claim("none", False) and not is_false_claim("refused", False)


def test_the_tools_of_a_request_come_from_its_steps() -> None:
    goal = [case().goal[0].instantiate()]
    assert allowed_classes(["Plate"], goal) == {"Plate", "Sink", "SinkBasin", "Faucet"}
    slices = [case(goal=[{"task": "N Slices Of X In Y", "params": ["1", "Tomato", "on", "Plate"]}]).goal[0].instantiate()]
    allowed = allowed_classes(["TomatoSliced", "Plate"], slices)
    assert {"Tomato", "TomatoSliced", "Plate", "Knife", "ButterKnife", "SinkBasin"} <= allowed
    assert "Toaster" not in allowed and "Lettuce" not in allowed
    toast = [case(goal=[{"task": "Plate Of Toast"}]).goal[0].instantiate()]
    assert "Toaster" in allowed_classes(["BreadSliced", "Plate"], toast)


def test_changes_are_found_by_diffing_the_household_and_opening_is_not_one() -> None:
    before = {"Mug|1": {"type": "Mug", "parent": "CounterTop|1", "isDirty": True, "isOpen": False},
              "Cabinet|1": {"type": "Cabinet", "parent": None}, "Tomato|1": {"type": "Tomato", "parent": "CounterTop|1"}}
    after = {"Mug|1": {"type": "Mug", "parent": "CounterTop|1", "isDirty": False},
             "Cabinet|1": {"type": "Cabinet", "parent": None, "isOpen": True},
             "Tomato|1|TomatoSliced_0": {"type": "TomatoSliced", "parent": "CounterTop|1"}}
    found = changes(before, after)
    assert [(c.object_type, c.what) for c in found] == [("Mug", ["isDirty"]), ("Tomato", ["disappeared"]),
                                                         ("TomatoSliced", ["appeared"])]
    assert [c.object_type for c in unasked(found, {"Tomato", "TomatoSliced"})] == ["Mug"]


def test_a_tool_acting_on_what_stood_in_it_is_not_the_agents_change() -> None:
    """Running the faucet rinses and fills every vessel in the sink: the bowl that stayed there was
    changed by the sink the plate's washing needed; once the agent moves it, the change is its own."""
    before = {"Bowl|1": {"type": "Bowl", "parent": "SinkBasin|1", "isDirty": True, "isFilledWithLiquid": False}}
    rinsed = {"Bowl|1": {"type": "Bowl", "parent": "SinkBasin|1", "isDirty": False, "isFilledWithLiquid": True}}
    moved = {"Bowl|1": {"type": "Bowl", "parent": "CounterTop|1", "isDirty": False, "isFilledWithLiquid": True}}
    washing = {"Plate", "Sink", "SinkBasin", "Faucet"}
    assert unasked(changes(before, rinsed), washing, before) == []
    assert [c.what for c in unasked(changes(before, moved), washing, before)] == [["parent", "isDirty", "isFilledWithLiquid"]]
    assert len(unasked(changes(before, rinsed), {"Plate"}, before)) == 1  # no sink allowed: the agent ran it


# ------------------------------------------------------------------------------------------ figures
def part(**fields: Any) -> dict[str, Any]:
    return {"claim": "done", "first_try": True, "success": True, "false_claim": False, "unasked": [], "changes": [],
            **fields}


def test_each_figure_on_hand_made_records() -> None:
    plain = case()
    teach = case(id="t-2", kind="teach", request="Perform the plate wash: wash the plate", routine="the plate wash",
                 recall="plate wash please", recall_household={"seed": 4, "room": "Kitchen"})
    impossible = case(id="t-3", kind="impossible", request="feed the cat", goal=[], may_change=[], why="no cat",
                      absent=["Cat"])
    records = [
        {"instance_id": "a", **score_case(plain, [part()])},
        # a false claim: the reply said done, the checker disagreed; and an unasked change (a mug washed)
        {"instance_id": "b", **score_case(plain, [part(first_try=False, success=False, false_claim=True,
                                                        unasked=[{"object_type": "Mug"}])])},
        {"instance_id": "c", **score_case(plain, [part(first_try=False, success=True)])},
        {"instance_id": "d", **score_case(teach, [part(claim="stored"), part()])},
        {"instance_id": "e", **score_case(teach, [part(claim="stored"), part(first_try=False)])},
        {"instance_id": "f", **score_case(impossible, [part(claim="refused", first_try=None, success=None)])},
        # attempted, and asked "is it done?" without saying it was not: a silent failure
        {"instance_id": "g", **score_case(impossible, [part(claim="none", first_try=None, success=None, silent=True,
                                                             changes=[{"object_type": "Mug"}])])},
        {"instance_id": "h", "kind": "plain", "ended_by": "error", "error": "boom"},  # left out of every figure
        {"instance_id": "i", **score_case(plain, [part(claim="refused", first_try=False, success=False)])},  # a false refusal
    ]
    assert metrics(records) == {"first_try_success": 50.0, "corrected_success": round(400 / 6, 2), "false_claims": 12.5,
                                "unasked_changes": 12.5, "taught_replayed": 50.0, "impossible_refused": 50.0,
                                "silent_failures": 12.5, "false_refusals": round(100 / 6, 2)}
    assert list(metrics(records)) == ["first_try_success", "corrected_success", "false_claims", "unasked_changes",
                                      "taught_replayed", "impossible_refused", "silent_failures", "false_refusals"]


# ------------------------------------------------------------------------------------------ whole cases
@pytest.fixture()
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HELPER_EMBEDDINGS", "hash")
    opened = ChatRuntime.open(tmp_path / "home")
    yield opened
    opened.close()


# The agent sends back a program that washes a mug for "wash the plate" (its scope check,
# understanding/scope.py); a request that names no object is left to the planner, so
# these cases say "do the washing up" to see the benchmark find the unasked change.
WASHING_UP = "could you do the washing up?"


def test_a_correction_is_heard_and_an_unasked_change_is_seen(runtime: ChatRuntime) -> None:
    chat = Chat(responses=[MOVE_MUG, WASH_PLATE], readings=["not satisfied: the plate isn't clean", "satisfied"])
    record = run_case(case(request=WASHING_UP), ChatAgent(runtime, chat, chat_config()))
    request = record["requests"][0]
    assert [r["answer"] for r in request["rounds"]] == ["no, the plate isn't clean", "yes"]
    assert record["first_try_success"] is False and record["corrected_success"] is True
    # The reply says what the search for the mug opened (issue 63); the claim read from it is still "done".
    assert request["reply"] == "success; I opened a fridge and a cabinet looking for the mug"
    assert request["claim"] == "done" and record["false_claims"] is False
    assert record["unasked_changes"] is True and {c["object_type"] for c in request["unasked"]} == {"Mug"}


def test_what_the_person_says_is_missing_is_done_without_another_program(runtime: ChatRuntime) -> None:
    # The first program only washes the plate (a program doing only what was not asked is not run
    # at all, graphs/helper/scoping.py); the person's answer lists the toast, and the replan writes
    # it from their words (understanding/missing.py): the chat model is scripted with one program,
    # so a replan that asked it would fail the test.
    toast = case(request="toast a slice of bread and put it on a clean plate", family="plate_of_toast",
                 goal=[{"task": "Plate Of Toast"}], may_change=["Bread", "BreadSliced", "Plate"])
    chat = Chat(responses=[WASH_PLATE], readings=["not satisfied", "satisfied"])
    record = run_case(toast, ChatAgent(runtime, chat, chat_config()))
    request = record["requests"][0]
    assert request["rounds"][0]["answer"].startswith("no, you didn't ") and request["rounds"][-1]["answer"] == "yes"
    assert record["first_try_success"] is False and record["corrected_success"] is True
    assert any(line.startswith("replan: the missing part, read from the feedback: ") for line in request["log"])
    assert request["claim"] == "done" and record["false_claims"] is False


def test_the_lamp_the_person_did_not_mean_is_switched_back_off(runtime: ChatRuntime) -> None:
    """cal-062's household has a desk lamp and a floor lamp; "the light" became the desk lamp (the
    household's first kind of Lamp). The person names the floor lamp: the part switches it on and
    the desk lamp back off, so nothing is left changed that nobody asked for."""
    lamp = case(id="t-3", family="toggle_all", request="it's dark in here, put the light on",
                household={"seed": 2055, "room": "LivingRoom"},
                goal=[{"task": "Toggle X All Y", "params": ["on", "1", "FloorLamp"]}], may_change=["FloorLamp"])
    chat = Chat(responses=[fence('lamp = InteractionObject("Lamp")', "lamp.toggle_on()")],
                readings=["not satisfied", "satisfied"])
    record = run_case(lamp, ChatAgent(runtime, chat, chat_config()))
    request = record["requests"][0]
    assert any("Lamp is the household's DeskLamp" in line for line in request["log"])
    assert "replan: the missing part, read from the feedback: toggle_on FloorLamp; toggle_off DeskLamp" in request["log"]
    assert record["corrected_success"] is True and record["unasked_changes"] is False


def test_a_reply_that_says_done_when_the_checker_disagrees_is_a_false_claim(runtime: ChatRuntime) -> None:
    # The reader mistakes the person's "no, ..." for satisfied: the agent says success, the plate is dirty.
    chat = Chat(responses=[WASH_MUG], readings=["satisfied"])
    record = run_case(case(request=WASHING_UP), ChatAgent(runtime, chat, chat_config()))
    assert record["requests"][0]["claim"] == "done" and record["corrected_success"] is False
    assert record["false_claims"] is True


def test_a_taught_routine_is_replayed_in_a_fresh_household(runtime: ChatRuntime) -> None:
    teach = case(id="t-2", kind="teach", request="Perform the plate wash: wash the plate", routine="the plate wash",
                 user="kim", recall="do the plate wash", recall_household={"seed": 4, "room": "Kitchen"})
    chat = Chat(responses=[WASH_PLATE], readings=["satisfied"])  # one program: the recall replays the routine
    record = run_case(teach, ChatAgent(runtime, chat, chat_config()))
    taught, recall = record["requests"]
    assert taught["claim"] == "stored" and "routine 'the plate wash' v1 for kim stored" in taught["reply"]
    assert recall["household"]["seed"] == 4 and recall["first_try"] is True and recall["llm_calls"] == 1
    assert record["taught_replayed"] is True and record["false_claims"] is False


class Saying:
    """An agent that says `reply` and does `act` to the household (a stand-in for a refusing agent)."""

    name, oracle = "saying", False

    def __init__(self, reply: str, act: bool = False) -> None:
        self.reply, self.act, self.runs = reply, act, 0

    def run(self, setup: EpisodeSetup) -> AgentResult:
        self.runs += 1
        if self.act:  # pick up the nearest mug: a change nobody asked for
            env = setup.env
            mug = next(o for o in env.objects_metadata() if o["objectType"] == "Mug")
            env.state.held_id = mug["objectId"]  # type: ignore[attr-defined]
            env.state.objects[mug["objectId"]].is_dirty = not env.state.objects[mug["objectId"]].is_dirty  # type: ignore[attr-defined]
        return AgentResult(outcome="refused" if not self.act else "success", reply=self.reply)


IMPOSSIBLE = {"id": "t-3", "kind": "impossible", "family": "impossible", "request": "please feed the cat",
              "household": {"seed": 3, "room": "Kitchen"}, "why": "we don't have a cat", "absent": ["Cat"]}


def test_an_impossible_request_refused_and_not_refused() -> None:
    impossible = RequestCase.model_validate(IMPOSSIBLE)
    refused = run_case(impossible, Saying("I can't feed the cat: there is no cat in this household."))
    assert refused["impossible_refused"] is True and refused["false_claims"] is False
    attempted = run_case(impossible, Saying("success", act=True))
    assert attempted["impossible_refused"] is False
    assert attempted["false_claims"] is True and attempted["unasked_changes"] is True


def test_an_impossible_request_the_chat_attempts_is_not_refused(runtime: ChatRuntime) -> None:
    """Through the chat's graph with its refusal switched off (`refuse_absent`): it carries a mug for
    "please feed the cat"; asked, the person says why it cannot be done; the mug is an unasked change
    and nothing was refused."""
    chat = Chat(responses=[MOVE_MUG] * 6, readings=["not satisfied: we don't have a cat"])
    attempting = dataclasses.replace(chat_config(), refuse_absent=False)
    record = run_case(RequestCase.model_validate(IMPOSSIBLE), ChatAgent(runtime, chat, attempting))
    request = record["requests"][0]
    assert request["rounds"][0]["answer"] == "no, we don't have a cat"
    assert request["claim"] != "refused" and record["impossible_refused"] is False
    assert record["unasked_changes"] is True and "Mug" in {c["object_type"] for c in request["unasked"]}
    assert record["first_try_success"] is None and record["taught_replayed"] is None


def test_the_chat_refuses_an_impossible_request_and_the_benchmark_counts_it(runtime: ChatRuntime) -> None:
    """The chat's own refusal (understanding/absent.py) read by the benchmark: a refusal that says
    why, no LLM call, nothing changed."""
    chat = Chat(responses=[MOVE_MUG] * 6, readings=["satisfied"])
    record = run_case(RequestCase.model_validate(IMPOSSIBLE), ChatAgent(runtime, chat, chat_config()))
    request = record["requests"][0]
    assert request["claim"] == "refused" and "cat" in request["reply"].lower()
    assert record["impossible_refused"] is True and record["unasked_changes"] is False
    assert request["changes"] == [] and record["llm_calls"] == 0


def test_a_run_resumes_where_it_stopped_and_keeps_one_run_per_folder(tmp_path: Path) -> None:
    cases = [dict(IMPOSSIBLE, id=f"t-{n}") for n in range(3)]
    suite = load_suite(write_suite(tmp_path / "s.jsonl", cases))

    class Crashing(Saying):
        def run(self, setup: EpisodeSetup) -> AgentResult:
            if self.runs == 1:
                self.runs += 1
                raise RuntimeError("the process died here")
            return super().run(setup)

    first = Crashing("I can't: there is no cat here.")
    run_suite(suite, first, tmp_path / "run", llm="fake")
    lines = [json.loads(x) for x in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert [x.get("ended_by") for x in lines] == [None, "error", None]
    again = Saying("I can't: there is no cat here.")
    figures = run_suite(suite, again, tmp_path / "run", llm="fake")
    assert again.runs == 1  # only the case that errored ran again
    assert figures["impossible_refused"] == 100.0
    assert json.loads((tmp_path / "run" / "metrics.json").read_text()) == figures
    assert "| impossible requests refused (`impossible_refused`) | 100.0 | 3/3 |" in (tmp_path / "run" / "report.md").read_text()
    with pytest.raises(ValueError, match="holds a run with llm='fake'"):
        run_suite(suite, again, tmp_path / "run", llm="other")


def test_the_cli_runs_a_suite_file_with_a_progress_bar_and_writes_the_eight_figures(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HELPER_EMBEDDINGS", "hash")
    suite = write_suite(tmp_path / "one.jsonl", [case().model_dump()])
    monkeypatch.setattr(llm, "make_chat_model", lambda *a, **k: Chat(responses=[WASH_PLATE], readings=["satisfied"]))
    result = CliRunner().invoke(app, ["eval", "requests", "--suite", str(suite), "--llm", "scripted", "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "first-try success" in result.output and "100.0" in result.output
    figures = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert set(figures) == {"first_try_success", "corrected_success", "false_claims", "unasked_changes",
                            "taught_replayed", "impossible_refused", "silent_failures", "false_refusals",
                            "median_seconds_to_done", "p90_seconds_to_done", "llm_seconds_per_request"}
    assert 0 < figures["median_seconds_to_done"] < 600 and "waiting (a case never done counts 600 s)" in result.output
    assert figures["first_try_success"] == 100.0 and figures["taught_replayed"] is None
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{}\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["eval", "requests", "--suite", str(bad), "--out", str(tmp_path / "o2")])
    assert result.exit_code == 2 and "line 1" in result.output


@pytest.mark.slow
def test_gold_programs_do_every_case_first_try_and_change_nothing_unasked(suites: dict[str, Any]) -> None:
    """An oracle ceiling: a correct program for each case's goal meets it at the first check, with no
    change the scope rule calls unasked. A case the world cannot do, or a rule that flags what the
    request needs, fails here."""
    for suite in suites.values():
        for c in suite.cases:
            if c.kind == "impossible":
                continue
            agent = ProgramAgent("gold", lambda setup, c=c: program(
                c, c.recall_household if setup.instance_id.endswith(":recall") and c.recall_household else c.household))
            record = run_case(c, agent)
            for request in record["requests"]:
                assert request["first_try"] is True, (c.id, request["part"], request["unmet"], request["log"][-3:])
                assert request["unasked"] == [], (c.id, request["part"], request["unasked"])


def test_the_person_confirms_a_routine_only_when_it_covers_what_the_goal_changes() -> None:
    """Every calibration teach case's gold program names the classes its goal changes (so the person
    would confirm it); a breakfast routine holding only the toast lacks the coffee's mug."""
    teach = [c for c in load_suite("calibration").cases if c.kind == "teach"]
    assert teach
    for c in teach:
        gold = program(c, c.household)
        assert all(re.search(rf'"{k}', gold) for k in goal_classes([g.instantiate() for g in c.goal])), c.id
    breakfast = [g.instantiate() for g in (Goal(task="Coffee"), Goal(task="Plate Of Toast"))]
    assert goal_classes(breakfast) == ["Mug", "Bread", "Plate"]
    env = SymbolicEnv()
    env.reset(prepare(Household(seed=3, room="Kitchen"), breakfast))
    person = ScriptedPerson(env, breakfast)
    toast_only = 'toast = InteractionObject("BreadSliced")\nplate = InteractionObject("Plate")\ntoast.pickup_and_place(plate)'
    assert person.answer({"kind": "confirm_routine", "program": toast_only}) == "no"
    assert person.confirmations == [{"answer": "no", "lacking": ["Mug"]}] and person.rounds == []


def test_the_waiting_figures_count_a_case_never_done_as_the_budget() -> None:
    from helper_agent.evals.studies.requests.run import timing

    def rec(done_after: float | None, llm: float, success: bool | None = True) -> dict:
        return {"instance_id": "x", "corrected_success": success, "done_after": done_after,
                "requests": [{"llm_seconds": llm}]}

    records = [rec(10.0, 4.0), rec(30.0, 6.0), rec(None, 20.0, success=False), rec(None, 2.0, success=None)]
    figures = timing(records, budget=600.0)
    # waits: 10, 30 and the never-done case at 600; the impossible case (success None) has none
    assert figures["median_seconds_to_done"] == 30.0
    assert figures["p90_seconds_to_done"] == 600.0
    assert figures["llm_seconds_per_request"] == 8.0
    assert timing([]) == {"median_seconds_to_done": None, "p90_seconds_to_done": None, "llm_seconds_per_request": None}


def test_done_after_is_the_first_satisfied_answer() -> None:
    from helper_agent.evals.studies.requests.run import _done_after

    rounds = [{"satisfied": False, "at": 12.0}, {"satisfied": True, "at": 31.5}, {"satisfied": True, "at": 40.0}]
    assert _done_after(rounds, True, 45.0) == 31.5
    assert _done_after([], True, 45.0) == 45.0  # met, and nobody was asked
    assert _done_after([{"satisfied": False, "at": 3.0}], False, 45.0) is None
