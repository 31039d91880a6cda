"""HELPER's sequence writer and LLM-Planner's named-action plans know no benchmark: on any environment
that names its actions (`envs/base.NamesActions`) they build their grammar, parser and prompt from
its vocabulary, act through it, and take their switches from the registry. Here a four-line world
that is not VirtualHome, with a scripted chat model."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from helper_agent.envs.base import ActionVocabulary, StepOutcome
from helper_agent.evals.studies.eai.runner import EaiRunSpec, check_spec
from helper_agent.graphs.action_sequences import parse_steps, render
from helper_agent.graphs.base import EpisodeSetup
from helper_agent.graphs.registry import ActionExample, BuildRequest, build_agent, check_agent_options
from helper_agent.world.actions import ActionResult


class Recording(FakeListChatModel):
    def _call(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> str:
        PROMPTS.append("\n".join(str(m.content) for m in messages))
        return super()._call(messages, stop, run_manager, **kwargs)


PROMPTS: list[str] = []


class Kitchen:
    """A world that acts by name: the mug is taken only at the shelf, taking it again is redundant
    (its effect already holds), putting needs something in hand; the lamp is never seen."""

    def __init__(self) -> None:
        self.steps = self.failures = 0
        self.at, self.held, self.redundant = "", "", False
        self.executed: list[tuple[str, str]] = []

    def action_vocabulary(self) -> ActionVocabulary:
        return ActionVocabulary(actions={"GO": 1, "TAKE": 1, "PUT": 2, "WAIT": 0}, objects=("shelf", "mug", "sink", "lamp"),
                                meanings={"GO": "Walk to something"}, world="the kitchen",
                                seen=("shelf",) if not self.at else ("shelf", "mug", "sink"))

    def last_step_redundant(self) -> bool:
        return self.redundant

    def step(self, action: str, object_id: str | None = None) -> StepOutcome:
        self.steps += 1
        self.redundant = action == "TAKE" and self.held == object_id
        ok = action in ("GO", "WAIT") or (action == "TAKE" and self.at == "shelf" and not self.redundant) \
            or (action == "PUT" and bool(self.held))
        if action == "GO":
            self.at = str(object_id)
        if ok and action == "TAKE":
            self.held = str(object_id)
        if ok:
            self.executed.append((action, object_id or ""))
        else:
            self.failures += 1
        result = ActionResult(action, object_id, ok, "" if ok else f"{action} {object_id}: not here <x> (3)")
        return StepOutcome(result, lambda: None)  # type: ignore[arg-type,return-value]


def _lend(instance_id: str, request: str, k: int) -> list[ActionExample]:
    return [ActionExample("ex1", "put the cup in the sink", (("GO", ("shelf",)), ("TAKE", ("mug",))), ("shelf", "mug"))][:k]


def _setup(env: Kitchen, prompt: str = "") -> EpisodeSetup:
    return EpisodeSetup(env=env, request="the mug goes in the sink", prompt=prompt, instance_id="t1")  # type: ignore[arg-type]


def test_helper_writes_and_corrects_a_sequence_from_the_worlds_vocabulary() -> None:
    PROMPTS.clear()
    wrong = render([("TAKE", ("mug",)), ("PUT", ("mug", "sink"))])  # not at the shelf yet: fails
    rest = render([("GO", ("shelf",)), ("TAKE", ("mug",)), ("TAKE", ("mug",)), ("PUT", ("mug", "sink"))])
    agent = build_agent("helper", BuildRequest(Recording(responses=[wrong, rest]), {"mode": "closed-loop", "k": "1"},
                                               examples=_lend))
    env = Kitchen()
    result = agent.run(_setup(env))
    assert env.executed == [("GO", "shelf"), ("TAKE", "mug"), ("PUT", "mug|sink")]  # the repeated TAKE passed over
    assert result.details["replans"] == 1 and result.details["examples"] == ["ex1"]
    assert result.details["failures"] == ["TAKE ['mug']: TAKE mug: not here <x> (3)"]
    assert parse_steps(result.program) == [("TAKE", ("mug",)), ("PUT", ("mug", "sink"))]  # the first answer
    first, correction = PROMPTS
    assert "You control a household robot in the kitchen." in first and "Example 1:\nput the cup in the sink" in first
    assert "Objects: shelf, mug, sink, lamp" in first and "the mug goes in the sink" in first  # no benchmark prompt: its own
    assert "The next action TAKE ['mug'] failed" in correction


def test_helper_refuses_an_answer_outside_the_vocabulary_once_then_keeps_the_last() -> None:
    agent = build_agent("helper", BuildRequest(FakeListChatModel(responses=['{"FLY": ["moon"]}', '{"GO": ["moon"]}']),
                                               {"mode": "open-loop", "k": "0"}))
    result = agent.run(_setup(Kitchen(), prompt="Task.\nInput:\nthe mug"))
    assert result.details["attempts"] == 2 and result.program == '{"GO": ["moon"]}'
    assert result.details["problems"] == ["'moon' is not one of the relevant objects"]


def test_llm_planner_replans_over_the_names_the_world_says_were_seen() -> None:
    PROMPTS.clear()
    agent = build_agent("llm-planner", BuildRequest(Recording(responses=["GO shelf, PUT mug sink", "TAKE mug, PUT mug sink"]),
                                                    {"mode": "closed-loop", "k": "1", "max_replans": "1"}, examples=_lend))
    env = Kitchen()
    result = agent.run(_setup(env))
    assert env.executed == [("GO", "shelf"), ("TAKE", "mug"), ("PUT", "mug|sink")]
    assert result.outcome == "done" and result.details["replans"] == 1 and result.details["decisions"] == 2
    assert result.details["failures"] == ["PUT ['mug', 'sink']: failed: PUT mug|sink: not here <x> (3)"]
    plan, replan = PROMPTS
    assert "- with one object: GO (walk to something); TAKE" in plan and "Visible objects are lamp, mug, shelf, sink" in plan
    assert "Completed plans: GO shelf" in replan and "Visible objects are mug, shelf, sink\n" in replan
    assert "Task description: put the cup in the sink\nVisible objects are mug, shelf\nNext plans:\nGO shelf, TAKE mug" in plan


def test_the_switches_are_the_methods_own_and_refused_clearly() -> None:
    check_agent_options("helper", {"mode": "closed-loop", "k": "0", "max_steps": "9", "max_replans": "0"})
    check_agent_options("llm-planner", {"mode": "open-loop", "k": "0", "max_replans": "0"})
    with pytest.raises(ValueError, match="choose from program, open-loop, closed-loop"):
        check_agent_options("helper", {"mode": "half"})
    with pytest.raises(ValueError, match="max_steps: a switch of mode=open-loop"):
        check_agent_options("helper", {"max_steps": "9"})
    with pytest.raises(ValueError, match="pool: a switch of mode=subgoals"):
        check_agent_options("llm-planner", {"mode": "closed-loop", "pool": "x.json"})
    with pytest.raises(ValueError, match="on EAI these are the run's --mode, --k"):
        check_spec(EaiRunSpec(agent="helper", agent_options={"k": "5"}))
    with pytest.raises(ValueError, match="has no option"):
        check_spec(EaiRunSpec(agent="llm-planner", agent_options={"colour": "red"}))
