"""What the environment declares, used by every method through `graphs/declarations.py` (issue 62):
the switches, the subgoals a step-wise method chooses among, and the switches' effect on real
VirtualHome episodes (P-RAG and EmbodiedRAG on the registry path, HELPER's sequence writer), each
with a scripted model that records what it was asked."""

from __future__ import annotations

from typing import Any

import pytest

from helper_agent.envs.base import ActionVocabulary
from helper_agent.graphs.declarations import Aids, aids_from_options, refuse_declared_aids, subgoal_steps
from helper_agent.graphs.named_steps import Subgoals, choice_rules, forced_choice, parse_choice

EFFECTS = {"SWITCHON": ("{0} is ON",), "GRAB": ("character is HOLDS_RH to {0}",), "WALK": ("character is INSIDE to {0}",),
           "TURNTO": ("character is FACING to {0}",)}
VOCABULARY = ActionVocabulary(actions={"SWITCHON": 1, "GRAB": 1, "WALK": 1, "TURNTO": 1, "LOOKAT": 1, "STANDUP": 0},
                              objects=("tv", "remote", "living_room"), effects=EFFECTS,
                              settled_last=("character is FACING to {0}",))
REQUEST = """Node goals are:
tv is ON
Edge goals are:
character is FACING to tv
character is HOLDS_RH to remote
Action goals are:
The following action(s) should be included:
LOOKAT
"""


def test_the_switches_read_from_options_and_a_bad_value_is_named():
    assert aids_from_options({}) == Aids()
    aids = aids_from_options({"goal_steps": "on", "preconditions": "reported", "subgoals": "on"})
    assert aids == Aids(goal_steps=True, preconditions="reported", subgoals=True) and aids.reported
    assert aids.labels() == ["goal_steps=on", "preconditions=reported", "subgoals=on"]
    assert aids_from_options({"subgoals": "on"}, allowed=("goal_steps",)) == Aids()  # not this method's switch
    with pytest.raises(ValueError, match="preconditions"):
        aids_from_options({"preconditions": "always"})


def test_subgoals_are_the_open_conditions_steps_with_what_moving_undoes_last():
    open_now = ["character is FACING to tv", "tv is ON", "character is HOLDS_RH to remote", "do LOOKAT"]
    steps = subgoal_steps(REQUEST, VOCABULARY, open_now)
    # stated order (tv ON, HOLDS remote), FACING last (moving about undoes it), then the action goal on
    # each object the stated conditions name
    assert steps == [("SWITCHON", ("tv",)), ("GRAB", ("remote",)), ("TURNTO", ("tv",)), ("LOOKAT", ("tv",)),
                     ("LOOKAT", ("remote",))]
    assert subgoal_steps(REQUEST, VOCABULARY, ["tv is ON"]) == [("SWITCHON", ("tv",))]
    assert subgoal_steps(REQUEST, VOCABULARY, []) == []
    assert subgoal_steps(REQUEST, VOCABULARY, None) == []  # nothing could be checked
    assert subgoal_steps("Turn on the TV.", VOCABULARY, ["tv is ON"]) == []  # no stated goal


def test_the_choice_grammar_offers_only_the_open_subgoals_and_never_done():
    steps = [("SWITCHON", ("tv",)), ("GRAB", ("remote",))]
    grammar = choice_rules(steps).to_gbnf()
    assert '"SWITCHON(tv)"' in grammar and '"GRAB(remote)"' in grammar and "done()" not in grammar
    assert "Thought: " in choice_rules(steps, thought=True).to_gbnf()
    assert parse_choice("Action: GRAB(remote)", steps, VOCABULARY).step == ("GRAB", ("remote",))
    with pytest.raises(ValueError, match="not one of the subgoals open now; choose one of SWITCHON"):
        parse_choice("Action: TURNTO(tv)", steps, VOCABULARY)
    with pytest.raises(ValueError, match="done"):
        parse_choice("Action: done()", steps, VOCABULARY)


def test_nothing_to_choose_is_not_asked():
    assert forced_choice(None) is None
    assert forced_choice(Subgoals(["tv is ON", "x"], [("SWITCHON", ("tv",)), ("GRAB", ("remote",))])) is None
    assert forced_choice(Subgoals(["tv is ON"], [("SWITCHON", ("tv",))]))["action"] == "SWITCHON(tv)"
    done = forced_choice(Subgoals([], []))
    assert done["action"] == "done()" and "every goal met" in done["thought"]
    stuck = forced_choice(Subgoals(["tv is ON"], []))  # open, but every step for it was tried from here
    assert stuck["action"] == "done()" and "tv is ON" in stuck["thought"]


def test_the_embedded_worlds_loops_refuse_the_switches_they_do_not_read_by_name():
    refuse_declared_aids(Aids(), object())
    refuse_declared_aids(Aids(subgoals=True), object())  # the request's open parts serve it (test_request_parts.py)
    with pytest.raises(ValueError, match="preconditions=reported: this method reads them where it acts by names"):
        refuse_declared_aids(Aids(preconditions="reported", subgoals=True), object())


# ------------------------------------------------------------------ real VirtualHome episodes
virtualhome = pytest.importorskip("virtualhome_eval", reason="EAI's VirtualHome is an optional integration")


@pytest.fixture
def hashed_memories(monkeypatch, tmp_path):
    from helper_agent.config import get_settings

    monkeypatch.setenv("HELPER_EMBEDDINGS", "hash:256")
    monkeypatch.setenv("HELPER_MEMORY_DIR", str(tmp_path / "memory"))
    get_settings.cache_clear()
    yield tmp_path
    get_settings.cache_clear()


def _run(agent: str, task: str, answers: list[str], options: dict[str, str], out) -> tuple[dict[str, Any], list[str]]:
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from helper_agent.evals.studies.eai.runner import EaiRunSpec, run_tasks
    from helper_agent.evals.studies.eai.tasks import select_tasks

    prompts: list[str] = []

    class Recording(FakeListChatModel):
        def _call(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> str:
            prompts.append("\n".join(str(m.content) for m in messages))
            return super()._call(messages, stop, run_manager, **kwargs)

    spec = EaiRunSpec(agent=agent, mode="closed-loop", agent_options=options)
    record = run_tasks(spec, Recording(responses=answers or ["unused"]), out, tasks=select_tasks(ids=[task]))[0]
    return record, prompts


def test_prag_with_subgoals_takes_a_lone_subgoal_without_asking_and_ends_by_its_own_check(hashed_memories):
    """11_1 states one condition (floor_lamp is ON): its one subgoal is taken with the walk it needs,
    and the agent ends when its check finds nothing open; the model is never asked."""
    record, prompts = _run("prag", "11_1", [], {"subgoals": "on"}, hashed_memories / "run")
    assert prompts == []
    assert [s["action"] for s in record["trajectory"]] == ["SWITCHON(floor_lamp)", "done()"]
    assert record["trajectory"][0]["observation"].startswith("WALK(floor_lamp) first")
    assert record["trajectory"][0]["observation"].endswith("ok")
    assert record["outcome"] == "done"
    # without the switch the paper's agent asks the model for every step
    record, prompts = _run("prag", "11_1", ["Action: done()"], {}, hashed_memories / "plain")
    assert len(prompts) == 1 and "Subgoals you can take now" not in prompts[0]


def test_prag_with_subgoals_asks_among_the_open_ones_and_sends_back_another(hashed_memories):
    """7_1 (computer ON, FACING it, mouse held, in the office, LOOKAT): the prompt lists what is unmet
    and the subgoals; an answer naming something else comes back with the reason."""
    answers = ["Action: WALK(mouse)", "Action: GRAB(mouse)"] + ["Action: SWITCHON(computer)"] * 8
    record, prompts = _run("prag", "7_1", answers, {"subgoals": "on", "max_steps": "3"}, hashed_memories / "run")
    assert "Goals not met yet: computer is ON; character is FACING to computer" in prompts[0]
    assert "Subgoals you can take now" in prompts[0] and "SWITCHON(computer)" in prompts[0]
    assert "WALK(mouse) is not one of the subgoals open now" in prompts[1]
    assert record["trajectory"][0]["action"] == "GRAB(mouse)"
    unmet_after = next(line for line in prompts[2].splitlines() if line.startswith("Goals not met yet"))
    assert "computer is ON" in unmet_after and "HOLDS_RH to mouse" not in unmet_after  # the grab held


def test_embodiedrag_with_subgoals_chooses_in_its_react_step(hashed_memories):
    answers = ["- computer: state",
               "Thought: the mouse first\nAction: GRAB(mouse)"] + ["Thought: on\nAction: SWITCHON(computer)"] * 8
    record, prompts = _run("embodiedrag", "7_1", answers, {"subgoals": "on", "max_steps": "2"},
                           hashed_memories / "run")
    step_prompts = [p for p in prompts if "Subgoals you can take now" in p]
    assert step_prompts and "GRAB(mouse)" in step_prompts[0]
    assert [s["action"] for s in record["trajectory"]][:2] == ["GRAB(mouse)", "SWITCHON(computer)"]


def test_helper_goal_steps_put_the_achieving_steps_before_the_output_line(hashed_memories):
    answers = ['{"SWITCHON": ["floor_lamp"]}'] * 4
    _, prompts = _run("helper", "11_1", answers, {"goal_steps": "on", "preconditions": "reported"},
                      hashed_memories / "run")
    assert "Step-by-step instructions: SWITCHON floor_lamp.\n\nOutput:" in prompts[0]
    _, plain = _run("helper", "11_1", answers, {}, hashed_memories / "plain")
    assert "Step-by-step instructions" not in plain[0]


def test_helper_with_subgoals_writes_over_the_open_subgoals_and_takes_each_with_what_it_lacks(hashed_memories):
    answers = ['{"WALK": ["floor_lamp"]}', '{"SWITCHON": ["floor_lamp"]}'] + ['{"SWITCHON": ["floor_lamp"]}'] * 4
    record, prompts = _run("helper", "11_1", answers, {"subgoals": "on", "goal_check": "on"},
                           hashed_memories / "run")
    assert "Subgoals open now (write only these, each once, in the order to do them): SWITCHON floor_lamp." in prompts[0]
    assert "WALK ['floor_lamp'] is not one of the subgoals open now" in prompts[1]  # sent back with the reason
    executed = [(a, tuple(o)) for a, o in record["steps"]]
    assert executed == [("WALK", ("floor_lamp",)), ("SWITCHON", ("floor_lamp",))]  # the walk it lacked, then it
    assert len(prompts) == 2  # the goal check found nothing open: no correction asked


def test_helper_subgoals_need_the_closed_loop():
    from helper_agent.graphs.helper.agent import sequence_config

    assert sequence_config({"mode": "closed-loop", "subgoals": "on"}).aids.subgoals
    with pytest.raises(ValueError, match="subgoals=on need mode=closed-loop"):
        sequence_config({"mode": "open-loop", "subgoals": "on"})


def test_llm_planner_with_subgoals_plans_over_the_open_subgoals(hashed_memories):
    record, prompts = _run("llm-planner", "7_1", ["WALK mouse", "GRAB mouse, SWITCHON computer"] + ["TURNTO computer"] * 6,
                           {"subgoals": "on", "goal_check": "on"}, hashed_memories / "run")
    query = prompts[0].rsplit("Task description:", 1)[1]
    assert "Step-by-step instructions: SWITCHON computer. GRAB mouse." in query
    assert "WALK mouse is not one of the subgoals open now" in prompts[1]
    executed = [(a, tuple(o)) for a, o in record["steps"]]
    assert executed.index(("WALK", ("mouse",))) < executed.index(("GRAB", ("mouse",)))  # the approach it lacked
    assert ("SWITCHON", ("computer",)) in executed
