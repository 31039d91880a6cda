"""The closed loop's own goal check (issue 53): the goal conditions a task states, read from its text,
compared with what the environment shows; LLM-Planner re-plans for the unmet ones when asked to
(`goal_check=on`), and not otherwise."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from helper_agent.envs.base import ActionVocabulary, StepOutcome
from helper_agent.graphs.approach import act_approaching
from helper_agent.graphs.base import EpisodeSetup
from helper_agent.graphs.goal_conditions import (
    achieving_steps,
    goal_instructions,
    stated_goals,
    unmet,
    unmet_now,
)
from helper_agent.graphs.registry import BuildRequest, build_agent, check_agent_options
from helper_agent.world.actions import ActionResult

GOALS = """Node goals are:
lamp is ON
-----------------
Edge goals are:
mug is INSIDE to sink
character is HOLDS_RH to towel
mug is INSIDE to sink

Action goals are:
The following action(s) should be included:
LOOKAT or WATCH
LOOKAT|WATCH
TOUCH"""


def test_the_stated_conditions_are_read_once_each_in_order() -> None:
    goals = stated_goals(GOALS)
    assert goals.states == (("lamp", "ON"),)
    assert goals.relations == (("mug", "INSIDE", "sink"), ("character", "HOLDS_RH", "towel"))
    assert goals.actions == (("LOOKAT", "WATCH"), ("TOUCH",))  # EAI states each twice: kept once
    assert goals.objects == ("lamp", "mug", "sink", "character", "towel")
    assert not stated_goals("put the mug in the sink")  # a wish states no condition


def test_unmet_names_what_the_facts_and_the_executed_actions_do_not_show() -> None:
    goals = stated_goals(GOALS)
    facts = {("lamp", "ON"), ("mug", "INSIDE", "sink"), ("character", "HOLDS_LH", "towel")}
    assert unmet(goals, facts, ["WALK", "TOUCH", "WATCH"]) == ["character is HOLDS_RH to towel", "do TOUCH"]
    facts.add(("character", "HOLDS_RH", "towel"))
    assert unmet(goals, facts, ["WATCH", "TOUCH"]) == []
    assert unmet(goals, set(), []) == ["lamp is ON", "mug is INSIDE to sink",
                                        "character is HOLDS_RH to towel", "do LOOKAT or WATCH", "do TOUCH"]
    assert unmet_now(object(), goals, []) is None  # an environment that shows no facts: no check


class Room:
    """A world that acts by name and shows its facts: the lamp is lit only from beside it."""

    def __init__(self) -> None:
        self.steps = self.failures = 0
        self.at, self.lit = "", False
        self.executed: list[tuple[str, str]] = []

    def action_vocabulary(self) -> ActionVocabulary:
        return ActionVocabulary(actions={"GO": 1, "SWITCHON": 1}, objects=("door", "lamp"), world="the room",
                                seen=("door",), approach="GO")

    def scene_facts(self) -> frozenset[tuple[str, ...]]:
        return frozenset({("lamp", "ON" if self.lit else "OFF")})

    def step(self, action: str, object_id: str | None = None) -> StepOutcome:
        self.steps += 1
        ok = action == "GO" or self.at == object_id
        if action == "GO":
            self.at = str(object_id)
        elif ok:
            self.lit = True
        if ok:
            self.executed.append((action, str(object_id)))
        else:
            self.failures += 1
        return StepOutcome(ActionResult(action, object_id, ok, "" if ok else "not close"), lambda: None)  # type: ignore[arg-type,return-value]


class Recording(FakeListChatModel):
    prompts: list[str] = []

    def _call(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> str:
        self.prompts.append("\n".join(str(m.content) for m in messages))
        return super()._call(messages, stop, run_manager, **kwargs)


def _run(options: dict[str, str]) -> tuple[Room, Any, list[str]]:
    chat = Recording(responses=["GO door", "GO lamp, SWITCHON lamp"], prompts=[])
    agent = build_agent("llm-planner", BuildRequest(chat, {"mode": "closed-loop", "k": "0", **options}))
    env = Room()
    result = agent.run(EpisodeSetup(env=env, request="Node goals are:\nlamp is ON", instance_id="r1"))  # type: ignore[arg-type]
    return env, result, chat.prompts


def test_llm_planner_replans_for_the_unmet_stated_goal_when_the_check_is_on() -> None:
    env, result, prompts = _run({"goal_check": "on"})
    assert env.executed == [("GO", "door"), ("GO", "lamp"), ("SWITCHON", "lamp")] and env.lit
    assert result.outcome == "met" and result.details["goal_rounds"] == 1 and result.details["unmet"] == []
    assert result.details["replans"] == 0  # no step failed: the re-plan was the goal check's
    replan = prompts[1]
    assert "Completed plans: GO door\nGoals not met yet: lamp is ON\nVisible objects are door, lamp\n" in replan


def test_without_the_check_the_loop_ends_when_the_plan_has_run() -> None:
    env, result, prompts = _run({})
    assert env.executed == [("GO", "door")] and not env.lit and len(prompts) == 1
    assert result.outcome == "done" and "goal_rounds" not in result.details


def test_the_goal_rounds_bound_the_loop_and_the_switches_are_checked() -> None:
    env, result, prompts = _run({"goal_check": "on", "goal_rounds": "0"})
    assert len(prompts) == 1 and result.outcome == "unmet" and result.details["unmet"] == ["lamp is ON"]
    with pytest.raises(ValueError, match="need mode=closed-loop"):
        check_agent_options("llm-planner", {"mode": "open-loop", "goal_check": "on"})
    with pytest.raises(ValueError, match="goal_check: a switch of mode=closed-loop"):
        check_agent_options("llm-planner", {"goal_check": "on"})


def test_virtualhome_shows_the_facts_a_stated_goal_is_checked_against() -> None:
    pytest.importorskip("virtualhome_eval")
    from helper_agent.envs.virtualhome import VirtualHomeEnv

    env = VirtualHomeEnv("327_2")  # a task of the dev split (after the first 100)
    goals = stated_goals("Node goals are:\ndishwasher is ON\ndishwasher is CLOSED\nEdge goals are:\nplate is INSIDE to dishwasher")
    assert unmet_now(env, goals, []) == ["dishwasher is ON"]
    for action, args in (("WALK", "dishwasher"), ("SWITCHON", "dishwasher")):
        assert env.step(action, args).result.success
    assert unmet_now(env, goals, ["WALK", "SWITCHON"]) == []


def test_helper_corrects_for_the_unmet_stated_goal_when_the_check_is_on() -> None:
    from helper_agent.graphs.action_sequences import render

    answers = [render([("GO", ("door",))]), render([("GO", ("lamp",)), ("SWITCHON", ("lamp",))])]
    for options, lit in (({"goal_check": "on"}, True), ({}, False)):
        chat = Recording(responses=answers, prompts=[])
        agent = build_agent("helper", BuildRequest(chat, {"mode": "closed-loop", "k": "0", **options}))
        env = Room()
        result = agent.run(EpisodeSetup(env=env, request="Node goals are:\nlamp is ON", instance_id="r1"))  # type: ignore[arg-type]
        assert env.lit is lit and len(chat.prompts) == (2 if lit else 1)
        if lit:
            assert result.outcome == "met" and result.details["goal_rounds"] == 1 and result.details["replans"] == 0
            assert "These goals are not satisfied yet:\nlamp is ON\n" in chat.prompts[1]
            assert '"GO": ["door"]' in chat.prompts[1].split("You have executed these actions")[1]


@pytest.mark.parametrize("agent, answer", [("llm-planner", "SWITCHON lamp"),
                                           ("helper", '{\n  "SWITCHON": ["lamp"]\n}')])
def test_the_precondition_check_approaches_the_object_and_tries_the_step_again(agent: str, answer: str) -> None:
    for options, lit in (({"preconditions": "on"}, True), ({"max_replans": "0"}, False)):
        chat = Recording(responses=[answer], prompts=[])
        env = Room()
        build_agent(agent, BuildRequest(chat, {"mode": "closed-loop", "k": "0", "max_replans": "0", **options})).run(
            EpisodeSetup(env=env, request="Node goals are:\nlamp is ON", instance_id="r1"))  # type: ignore[arg-type]
        assert env.lit is lit
        assert env.executed == ([("GO", "lamp"), ("SWITCHON", "lamp")] if lit else [])
        assert env.failures == 1  # the first try failed either way


# ---------------------------------------------------------------------- achieving steps (achievers=on)
EFFECTS = {"SWITCHON": ("{0} is ON",), "SIT": ("character is SITTING", "character is ON to {0}"),
           "LIE": ("character is LYING", "character is ON to {0}"),
           "GRAB": ("character is HOLDS_RH to {0}", "character is HOLDS_LH to {0}"),
           "PUTBACK": ("{0} is ON to {1}",), "WALK": ("character is CLOSE to {0}",)}
ARITIES = {"SWITCHON": 1, "SIT": 1, "LIE": 1, "GRAB": 1, "PUTBACK": 2, "WALK": 1, "TOUCH": 1}
THINGS = {"tv", "sofa", "bed", "plate", "table", "phone"}


def test_each_condition_gets_the_step_whose_effect_it_is() -> None:
    conditions = ["tv is ON", "plate is ON to table", "character is HOLDS_LH to phone", "character is CLOSE to tv"]
    assert achieving_steps(conditions, EFFECTS, ARITIES, THINGS) == {
        "tv is ON": ("SWITCHON", ("tv",)), "plate is ON to table": ("PUTBACK", ("plate", "table")),
        "character is HOLDS_LH to phone": ("GRAB", ("phone",)), "character is CLOSE to tv": ("WALK", ("tv",))}


def test_an_unnamed_object_is_taken_from_the_step_another_condition_gets() -> None:
    sitting = achieving_steps(["character is ON to sofa", "character is SITTING"], EFFECTS, ARITIES, THINGS)
    assert sitting == {"character is ON to sofa": ("SIT", ("sofa",)), "character is SITTING": ("SIT", ("sofa",))}
    lying = achieving_steps(["character is LYING", "character is ON to bed"], EFFECTS, ARITIES, THINGS)
    assert lying == {"character is LYING": ("LIE", ("bed",)), "character is ON to bed": ("LIE", ("bed",))}
    # alone, "on the sofa" takes the first action the environment lists; "sitting" alone names no object
    assert achieving_steps(["character is ON to sofa"], EFFECTS, ARITIES, THINGS) == {"character is ON to sofa": ("SIT", ("sofa",))}
    assert achieving_steps(["character is SITTING"], EFFECTS, ARITIES, THINGS) == {}


def test_a_named_placeholder_is_an_object_the_action_does_not_take() -> None:
    """The embedded world's Place puts what the robot holds (`{held}`) on the one object it takes."""
    effects = {"Place": ("{held} is parentReceptacles to {0}", "{held} is not isPickedUp"), "Pickup": ("{0} is isPickedUp",)}
    arities = {"Place": 1, "Pickup": 1}
    on_sink = "Mug_1 is parentReceptacles to Sink_1"
    assert achieving_steps([on_sink], effects, arities, {"Sink_1"}) == {on_sink: ("Place", ("Sink_1",))}
    assert achieving_steps([on_sink], effects, arities, {"Mug_1"}) == {}  # the sink is not one it may name
    put_down = "Mug_1 is not isPickedUp"  # names no place: only with a placement that does
    assert achieving_steps([put_down], effects, arities, {"Sink_1"}) == {}
    assert achieving_steps([put_down, on_sink], effects, arities, {"Sink_1"}) == {
        put_down: ("Place", ("Sink_1",)), on_sink: ("Place", ("Sink_1",))}


def test_no_step_for_an_action_goal_an_unknown_state_or_an_object_the_agent_may_not_name() -> None:
    conditions = ["do TOUCH", "tv is PLUGGED_IN", "lamp is ON", "plate is ON to shelf"]
    assert achieving_steps(conditions, EFFECTS, ARITIES, THINGS) == {}
    assert achieving_steps(["tv is ON"], {}, ARITIES, THINGS) == {}  # an environment that says no effects


def test_the_replan_names_the_achieving_step_of_each_unmet_condition() -> None:
    class EffectRoom(Room):
        def action_vocabulary(self) -> ActionVocabulary:
            return ActionVocabulary(actions={"GO": 1, "SWITCHON": 1}, objects=("door", "lamp"), world="the room",
                                    seen=("door",), approach="GO", effects={"SWITCHON": ("{0} is ON",)})

    chat = Recording(responses=["GO door", "SWITCHON lamp"], prompts=[])
    agent = build_agent("llm-planner", BuildRequest(chat, {"mode": "closed-loop", "k": "0", "goal_check": "on",
                                                          "achievers": "on", "preconditions": "on"}))
    env = EffectRoom()
    result = agent.run(EpisodeSetup(env=env, request="Node goals are:\nlamp is ON", instance_id="r1"))  # type: ignore[arg-type]
    assert "Goals not met yet: lamp is ON (SWITCHON lamp)\n" in chat.prompts[1]
    assert env.lit and result.outcome == "met"
    with pytest.raises(ValueError, match="needs goal_check=on"):
        check_agent_options("llm-planner", {"mode": "closed-loop", "achievers": "on"})


def test_virtualhome_says_what_its_actions_make_true() -> None:
    pytest.importorskip("virtualhome_eval")
    from helper_agent.envs.virtualhome import VirtualHomeEnv

    vocabulary = VirtualHomeEnv("327_2").action_vocabulary()
    assert set(vocabulary.effects) <= set(vocabulary.actions)  # EAI's actions only: no PLUGIN
    assert "PLUGIN" not in vocabulary.effects and vocabulary.effects["SWITCHON"] == ("{0} is ON",)
    steps = achieving_steps(["dishwasher is ON", "plate is ON to dishwasher"], vocabulary.effects,
                            vocabulary.actions, vocabulary.objects)
    assert steps == {"dishwasher is ON": ("SWITCHON", ("dishwasher",)),
                     "plate is ON to dishwasher": ("PUTBACK", ("plate", "dishwasher"))}
    # the simulator agrees: switching the dishwasher on (from beside it) makes the stated condition true
    env = VirtualHomeEnv("327_2")
    env.step("WALK", "dishwasher")
    assert env.step(*steps["dishwasher is ON"][:1], "|".join(steps["dishwasher is ON"][1])).result.success
    assert ("dishwasher", "ON") in env.scene_facts()


# ------------------------------------------------------------ step-by-step instructions (goal_steps=on)
LAST = ("character is CLOSE to {0}", "character is SITTING", "character is LYING", "character is FACING to {0}")
EFFECTS_WITH_TURN = {**EFFECTS, "TURNTO": ("character is FACING to {0}",)}
ARITIES_WITH_TURN = {**ARITIES, "TURNTO": 1}
WATCH = """Node goals are:
tv is ON
Edge goals are:
character is FACING to tv
character is ON to sofa
character is HOLDS_RH to phone
Action goals are:
The following action(s) should be included:
LOOKAT or WATCH"""


def test_the_instructions_are_the_achieving_steps_with_what_moving_undoes_last_then_the_action_goals() -> None:
    lines = goal_instructions(WATCH, EFFECTS_WITH_TURN, ARITIES_WITH_TURN, THINGS, settled_last=LAST)
    # the switch and the grab first (a WALK may come between them), then sitting, then facing (a
    # WALK would undo it, and none can start from the sofa), then what the task asks to be done
    assert lines == ["SWITCHON tv.", "GRAB phone.", "SIT sofa.", "TURNTO tv.", "Do LOOKAT or WATCH."]
    # in the order stated when the environment says nothing of what moving undoes
    assert goal_instructions(WATCH, EFFECTS_WITH_TURN, ARITIES_WITH_TURN, THINGS)[:3] == ["SWITCHON tv.", "TURNTO tv.", "SIT sofa."]
    assert goal_instructions("put the mug in the sink", EFFECTS, ARITIES, THINGS) == []


def test_keep_leaves_out_what_holds_already_or_what_a_solved_plan_did_not_take() -> None:
    pending = {"character is FACING to tv", "character is ON to sofa"}
    lines = goal_instructions(WATCH, EFFECTS_WITH_TURN, ARITIES_WITH_TURN, THINGS, settled_last=LAST,
                              keep=lambda condition, _step: condition in pending)
    assert lines == ["SIT sofa.", "TURNTO tv.", "Do LOOKAT or WATCH."]
    taken = {("SWITCHON", ("tv",))}
    assert goal_instructions(WATCH, EFFECTS_WITH_TURN, ARITIES_WITH_TURN, THINGS,
                             keep=lambda _condition, step: step in taken) == ["SWITCHON tv.", "Do LOOKAT or WATCH."]


def test_the_first_plan_is_asked_with_the_steps_the_unmet_conditions_need() -> None:
    class EffectRoom(Room):
        def action_vocabulary(self) -> ActionVocabulary:
            return ActionVocabulary(actions={"GO": 1, "SWITCHON": 1}, objects=("door", "lamp"), world="the room",
                                    seen=("door",), approach="GO", effects={"SWITCHON": ("{0} is ON",)})

        def scene_facts(self) -> frozenset[tuple[str, ...]]:
            return super().scene_facts() | {("door", "ON")}

    chat = Recording(responses=["GO lamp, SWITCHON lamp"], prompts=[])
    agent = build_agent("llm-planner", BuildRequest(chat, {"mode": "open-loop", "k": "0", "goal_steps": "on"}))
    agent.run(EpisodeSetup(env=EffectRoom(), request="Node goals are:\nlamp is ON\ndoor is ON", instance_id="r1"))  # type: ignore[arg-type]
    assert "Step-by-step instructions: SWITCHON lamp.\nVisible objects are door, lamp\nNext plans:" in chat.prompts[0]
    off = Recording(responses=["GO lamp"], prompts=[])
    build_agent("llm-planner", BuildRequest(off, {"mode": "open-loop", "k": "0"})).run(
        EpisodeSetup(env=EffectRoom(), request="Node goals are:\nlamp is ON", instance_id="r1"))  # type: ignore[arg-type]
    assert "Step-by-step instructions" not in off.prompts[0]


def test_virtualhome_plans_sit_after_walking_and_face_after_sitting() -> None:
    pytest.importorskip("virtualhome_eval")
    from helper_agent.envs.virtualhome import VirtualHomeEnv

    vocabulary = VirtualHomeEnv("327_2").action_vocabulary()
    assert "character is FACING to {0}" in vocabulary.effects["TURNTO"]
    assert vocabulary.settled_last.index("character is SITTING") < vocabulary.settled_last.index("character is FACING to {0}")


# ------------------------------------------------- the reported precondition check (preconditions=reported)
class Screen:
    """A world that reports what a failed step lacked: looking at the tv needs facing it, facing it
    needs nothing, and walking anywhere turns the robot away."""

    def __init__(self, report: bool = True) -> None:
        self.steps = self.failures = 0
        self.facing = ""
        self.report = report
        self.lacked: list[str] = []
        self.taken: list[tuple[str, str]] = []

    def action_vocabulary(self) -> ActionVocabulary:
        return ActionVocabulary(actions={"WALK": 1, "TURNTO": 1, "LOOKAT": 1, "GRAB": 1}, objects=("tv", "sofa"), approach="WALK",
                                effects={"TURNTO": ("character is FACING to {0}",), "WALK": ("character is CLOSE to {0}",)},
                                settled_last=("character is CLOSE to {0}", "character is FACING to {0}"))

    def missing_conditions(self) -> list[str]:
        return list(self.lacked) if self.report else []

    def last_step_impossible(self) -> bool:
        return bool(self.taken) and self.taken[-1][0] == "GRAB"

    def step(self, action: str, object_id: str | None = None) -> StepOutcome:
        self.steps += 1
        ok = action == "WALK" or action == "TURNTO" or (action == "LOOKAT" and self.facing == object_id)
        self.facing = "" if action == "WALK" else str(object_id) if action == "TURNTO" else self.facing
        self.lacked = [] if ok or action == "GRAB" else [f"character is FACING to {object_id}", "tv is OPEN"]
        self.taken.append((action, str(object_id)))
        self.failures += not ok
        return StepOutcome(ActionResult(action, object_id, ok, "" if ok else "does not face it"), lambda: None)  # type: ignore[arg-type,return-value]


def test_a_reported_lack_is_made_true_by_its_step_and_the_step_is_tried_again() -> None:
    env = Screen()
    taken = act_approaching(env, env.action_vocabulary(), "LOOKAT", ("tv",), reported=True)
    assert taken.outcome.result.success and taken.approached == [("TURNTO", ("tv",))]
    assert env.taken == [("LOOKAT", "tv"), ("TURNTO", "tv"), ("LOOKAT", "tv")]  # "tv is OPEN" has no step: left


def test_without_a_report_the_check_is_the_approach_alone() -> None:
    env = Screen(report=False)
    taken = act_approaching(env, env.action_vocabulary(), "LOOKAT", ("tv",), reported=True)
    assert not taken.outcome.result.success  # walking to the tv does not turn the robot to it
    assert env.taken == [("LOOKAT", "tv"), ("WALK", "tv"), ("LOOKAT", "tv")]
    plain = Screen()
    assert not act_approaching(plain, plain.action_vocabulary(), "LOOKAT", ("tv",)).outcome.result.success
    assert ("TURNTO", "tv") not in plain.taken  # preconditions=on reads no report


def test_virtualhome_reports_what_a_step_lacked_in_the_goal_lines_form() -> None:
    pytest.importorskip("virtualhome_eval")
    from helper_agent.envs.virtualhome import VirtualHomeEnv

    env = VirtualHomeEnv("117_1")  # a dev task (after the first 100)
    assert not env.step("LOOKAT", "television").result.success
    assert env.missing_conditions() == ["character is FACING to television"]
    taken = act_approaching(env, env.action_vocabulary(), "LOOKAT", ("television",), reported=True)
    assert taken.outcome.result.success and env.missing_conditions() == []
    with pytest.raises(ValueError, match="preconditions"):
        check_agent_options("llm-planner", {"mode": "closed-loop", "preconditions": "sometimes"})


def test_a_step_the_object_can_never_take_is_passed_over_and_the_plan_goes_on() -> None:
    chat = Recording(responses=["GRAB tv, TURNTO tv, LOOKAT tv"], prompts=[])
    agent = build_agent("llm-planner", BuildRequest(chat, {"mode": "closed-loop", "k": "0", "preconditions": "reported"}))
    env = Screen()
    result = agent.run(EpisodeSetup(env=env, request="watch the tv", instance_id="s1"))  # type: ignore[arg-type]
    assert env.taken == [("GRAB", "tv"), ("TURNTO", "tv"), ("LOOKAT", "tv")]  # no approach, no retry, no re-plan
    assert result.outcome == "done" and len(chat.prompts) == 1
    assert "GRAB tv: impossible: does not face it" in result.log
    plain = Recording(responses=["GRAB tv, TURNTO tv, LOOKAT tv", "TURNTO tv"], prompts=[])
    build_agent("llm-planner", BuildRequest(plain, {"mode": "closed-loop", "k": "0", "max_replans": "1"})).run(
        EpisodeSetup(env=Screen(), request="watch the tv", instance_id="s1"))  # type: ignore[arg-type]
    assert len(plain.prompts) == 2  # without the reported check the failure is re-planned


NAMES = st.from_regex(r"[a-z][a-z_]{0,11}", fullmatch=True).filter(lambda n: n != "character")


@given(action=st.sampled_from(sorted(EFFECTS)), first=NAMES, second=NAMES)
def test_an_effect_written_out_is_achieved_by_its_own_action_on_its_own_objects(action: str, first: str, second: str) -> None:
    """Whatever the objects are called, a condition an action's effect words with them comes back as
    that action on them (or, where two actions word it alike, one whose effect words it so)."""
    objects = (first, second)[: ARITIES[action]]
    for effect in EFFECTS[action]:
        if "{" not in effect:
            continue
        condition = effect.format(*objects)
        steps = achieving_steps([condition], EFFECTS, ARITIES, set(objects))
        chosen, named = steps[condition]
        assert named == objects and condition in {e.format(*named) for e in EFFECTS[chosen]}
