"""P-RAG: grammar and parser agree, a scripted model succeeds with the environment's own actions,
switches are checked, the prompt keeps its fixed part first, and the database is read by goal +
scene graph (or goal only)."""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pytest
from episodes import family_episode
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from helper_agent.evals.benchmark import generate_benchmark
from helper_agent.evals.engine.runner import run_episode
from helper_agent.evals.engine.spec import EvalSpec
from helper_agent.graphs.prag.actions import ACTIONS, StepParseError, parse_step, step_cfg, step_grammar
from helper_agent.graphs.prag.agent import config_from_options
from helper_agent.graphs.registry import BuildRequest, build_agent
from helper_agent.program.cfg_match import Matcher
from helper_agent.program.cfg_sample import Sampler

COFFEE_PLAN = [("pickup", "Mug"), ("put", "SinkBasin"), ("toggle_on", "Faucet"), ("toggle_off", "Faucet"),
               ("pickup", "Mug"), ("put", "CoffeeMachine"), ("toggle_on", "CoffeeMachine")]


class ScriptedStep(BaseChatModel):
    """Answers each step with the next action of a plan on the first shown id of the wanted class
    (or searches for the class); records every prompt. Prompt tokens: characters / 4."""

    plan: list[Any] = []
    pos: int = 0
    prompts: list[str] = []

    @property
    def _llm_type(self) -> str:
        return "scripted-step"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        system = str(messages[0].content)
        user = "\n".join(str(m.content) for m in messages[1:])
        self.prompts.append(system + "\n" + user)
        graph = user.split("Scene graph:\n", 1)[1].split("\nHolding:", 1)[0]
        held = user.split("Holding: ", 1)[1].split("\n", 1)[0]
        ids = re.findall(r"^([A-Za-z]+_\d+)", graph, re.M) + ([held] if held != "nothing" else [])
        if self.pos >= len(self.plan):
            text = "Action: done()"
        else:
            action, cls = self.plan[self.pos]
            match = [i for i in ids if i.rsplit("_", 1)[0] == cls]
            if match:
                text = f"Action: {action}({match[0]})"
                self.pos += 1
            else:
                text = f"Action: search({cls})"
        tokens = len(system + user) // 4
        message = AIMessage(content=text, usage_metadata={"input_tokens": tokens, "output_tokens": 6, "total_tokens": tokens + 6})
        return ChatResult(generations=[ChatGeneration(message=message)])


@pytest.fixture(autouse=True)
def fast_embeddings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HELPER_EMBEDDINGS", "hash:1024")


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("bench")
    generate_benchmark(path, seed=0, sizes={"valid_unseen": 3})
    return path


def _run(bench: Path, tmp_path: Path, chat: BaseChatModel, **options: str) -> dict[str, Any]:
    spec = EvalSpec(mode="tfd", data=str(bench), out=str(tmp_path / "run"), planner="prag", feedback=0,
                    agent_options=options)
    return run_episode(spec, str(family_episode(bench, "coffee")), chat)


# ------------------------------------------------------------------------------------ grammar and parser
IDS = ["Mug_1", "Mug_2", "SinkBasin_1", "CoffeeMachine_1"]
CLASSES = ["Mug", "Knife", "CoffeeMachine"]


@pytest.mark.parametrize("ids", [IDS, [], ["Apple_10"]])
def test_llama_cpp_compiles_the_step_grammar(ids: list[str]) -> None:
    llama_cpp = pytest.importorskip("llama_cpp")
    text = step_grammar(ids, CLASSES)
    assert llama_cpp.LlamaGrammar.from_string(text, verbose=False) is not None
    sampler = llama_cpp.llama_sampler_init_grammar(None, text.encode("utf-8"), b"root")
    assert sampler, "llama.cpp rejected the grammar"
    llama_cpp.llama_sampler_free(sampler)
    assert ("id ::=" in text) == bool(ids)


def test_every_sampled_answer_parses_to_what_it_says() -> None:
    sampler = Sampler(step_cfg(IDS, CLASSES), random.Random(3))
    names, args = set(), set()
    for _ in range(500):
        text = sampler.sample()
        answer = parse_step(text, IDS, CLASSES)
        assert text == f"Action: {answer.render()}"
        names.add(answer.action)
        args.add(answer.arg)
    assert names == {a.name for a in ACTIONS}
    assert args == {*IDS, *CLASSES, None}


def test_the_environments_interaction_actions_are_all_in_the_action_space() -> None:
    from helper_agent.world.actions import INTERACTION_ACTIONS

    assert {a.env_action for a in ACTIONS if a.env_action} == set(INTERACTION_ACTIONS)


@pytest.mark.parametrize("text", [
    "Action: pickup(Mug_9)",  # id not shown
    "Action: fly(Mug_1)",  # no such action
    "Action: search(Dragon)",  # no such class
    "pickup(Mug_1)",  # no prefix
    "Action: done(Mug_1)",
    "Action: search(Mug_1)",  # an id is not a class
    "Action: pickup(Mug_1)\nAction: done()",
])
def test_the_parser_and_the_grammar_reject_the_same_bad_answers(text: str) -> None:
    with pytest.raises(StepParseError):
        parse_step(text, IDS, CLASSES)
    assert not Matcher(step_cfg(IDS, CLASSES)).matches(text)


def test_no_id_action_without_shown_ids() -> None:
    assert not Matcher(step_cfg([], CLASSES)).matches("Action: pickup(Mug_1)")
    assert Matcher(step_cfg([], CLASSES)).matches("Action: search(Mug)")


# ------------------------------------------------------------------------------------ switches
def test_options_are_checked() -> None:
    config = config_from_options({"retrieval": "goal", "k": "2", "max_steps": "7", "database": "x"})
    assert (config.retrieval, config.k, config.max_steps) == ("goal", 2, 7)
    assert config_from_options({}).retrieval == "goal+scene"
    with pytest.raises(ValueError, match="no option"):
        config_from_options({"retreival": "goal"})
    with pytest.raises(ValueError, match="choose from"):
        config_from_options({"retrieval": "scene"})
    with pytest.raises(ValueError, match=">= 1"):
        config_from_options({"k": "0"})


def test_the_registry_builds_the_agent(tmp_path: Path) -> None:
    agent = build_agent("prag", BuildRequest(ScriptedStep(), {"retrieval": "goal", "database": str(tmp_path / "db")}))
    assert agent.name == "prag" and agent.config.retrieval == "goal" and not agent.oracle
    assert agent.database is not None and agent.database.count() == 0


# ------------------------------------------------------------------------------------ episodes
def test_a_scripted_model_makes_coffee_with_the_environments_own_actions(bench: Path, tmp_path: Path) -> None:
    chat = ScriptedStep(plan=list(COFFEE_PLAN), prompts=[])
    record = _run(bench, tmp_path, chat)
    assert record["success"] == 1, record["log"]
    assert record["outcome"] == "done"
    actions = [step[0] for step in record["subgoals"]]
    assert actions[-1] == "done()" and "put(SinkBasin_1)" in actions and "toggle_on(Faucet_1)" in actions
    assert all(len(step) == 3 and step[2] for step in record["subgoals"])  # action, observation, scene graph
    assert record["llm_calls"] == len(actions) == len(chat.prompts)
    assert record["prompt_tokens"] > 0 and record["episode_seconds"] > 0
    # The fixed part comes first: every step's prompt starts with the same system text and goal.
    head = chat.prompts[0].split("Past episodes:")[0]
    assert "Actions (ID is an object id" in head and "Instruction:" in head
    assert all(p.startswith(head) for p in chat.prompts)


def test_the_step_cap_ends_the_episode(bench: Path, tmp_path: Path) -> None:
    chat = ScriptedStep(plan=[("open", "Dragon")] * 10, prompts=[])  # search(Dragon): not a class, rejected
    record = _run(bench, tmp_path, chat, max_steps="3")
    assert record["outcome"] == "max_steps" and record["success"] == 0
    assert record["llm_calls"] == 6 and record["parse_rejections"] == 6  # one retry per step, both rejected
    assert [s[0] for s in record["subgoals"]] == ["(none)"] * 3


def test_an_unparsable_answer_gets_one_retry_with_the_reason(bench: Path, tmp_path: Path) -> None:
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    chat = FakeListChatModel(responses=["Action: fly(Mug_1)", "Action: done()"])
    record = _run(bench, tmp_path, chat)
    assert record["llm_calls"] == 2 and record["parse_rejections"] == 1
    assert any("unknown action 'fly'" in line for line in record["log"])
    assert record["subgoals"][-1][0] == "done()"


def test_retrieved_experience_enters_the_prompt_goal_plus_scene_and_goal_only(bench: Path, tmp_path: Path) -> None:
    from helper_agent.memory.experience import Experience, ExperienceMemory, ExperienceStep

    db = tmp_path / "db"
    memory = ExperienceMemory(path=str(db))
    coffee_goal = "make a mug of coffee, the mug is dirty"
    memory.commit_iteration([
        Experience(id="a", goal=coffee_goal, done=True,
                   steps=[ExperienceStep(scene_graph="Mug_1: dirty\nSinkBasin_1", action="pickup(Mug_1)", observation="ok")]),
        Experience(id="b", goal="water the plant", done=False,
                   steps=[ExperienceStep(scene_graph="HousePlant_1", action="search(Cup)", observation="found Cup_1")]),
    ])
    for retrieval in ("goal+scene", "goal"):
        chat = ScriptedStep(plan=[], prompts=[])
        record = _run(bench, tmp_path / retrieval, chat, database=str(db), k="1", retrieval=retrieval)
        assert record["llm_calls"] == 1
        experience = chat.prompts[0].split("Past episodes:\n", 1)[1].split("\n\nScene graph:", 1)[0]
        assert experience.startswith("Episode 1 (task done): make a mug of coffee")  # the coffee episode is closest
        assert "pickup(Mug_1) -> ok" in experience and "water the plant" not in experience
        assert record["retrievals"] == 1


def test_llama_cpp_compiles_the_grammar_of_the_whole_catalog() -> None:
    llama_cpp = pytest.importorskip("llama_cpp")
    from helper_agent.world.catalog import load_catalog

    classes = sorted(load_catalog().types)
    ids = [f"{c}_{n}" for c in classes[:40] for n in (1, 12)]
    text = step_grammar(ids, classes)
    assert llama_cpp.LlamaGrammar.from_string(text, verbose=False) is not None
    assert Matcher(step_cfg(ids, classes)).matches(f"Action: put({ids[-1]})")


def test_walking_to_an_object_in_reach_is_refused_as_a_no_op(bench: Path, tmp_path: Path) -> None:
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    # The look-around shows Mug_1; the search walks to a mug not seen yet (Mug_2), so a walk to it
    # would not move the agent: it is refused before it is tried (the 0.5B otherwise walks to every
    # object in reach in turn, one no-op a step).
    answers = ["Action: search(Mug)", "Action: goto(Mug_2)", "Action: pickup(Mug_2)", "Action: done()"]
    record = _run(bench, tmp_path / "on", FakeListChatModel(responses=answers))
    assert [s[0] for s in record["subgoals"]] == ["search(Mug)", "pickup(Mug_2)", "done()"], record["log"]
    assert "Mug_1" in record["subgoals"][0][2] and record["subgoals"][0][1].startswith("found Mug_2")
    assert record["futile_rejections"] == 1
    assert any("goto(Mug_2): Mug_2 is already in reach" in line for line in record["log"])
    # With the refusal off, the walk is taken and says it did not move.
    off = _run(bench, tmp_path / "off", FakeListChatModel(responses=answers), refuse_futile="off")
    (search, found, _), (goto, there, _), *_ = off["subgoals"]
    assert found.startswith("found Mug_2") and goto == "goto(Mug_2)"
    assert there.startswith("already next to Mug_2")  # the search walked there; no step is spent again


# ------------------------------------------------------------------------------------ futile actions
@pytest.mark.parametrize("futile", [["goto(Mug_1)"], ["search(Knife)"], ["done()"],
                                    ["goto(Mug_1)", "goto(Mug_2)", "open(Mug_1)", "search(Mug)"]])
def test_the_grammar_leaves_out_exactly_the_futile_actions(futile: list[str]) -> None:
    cfg = step_cfg(IDS, CLASSES, exclude=futile)
    sampler = Sampler(cfg, random.Random(5))
    seen = {sampler.sample() for _ in range(1500)}
    everything = {f"Action: {a.name}({x})" for a in ACTIONS if a.arg == "id" for x in IDS}
    everything |= {f"Action: search({c})" for c in CLASSES} | {"Action: done()"}
    left_out = {f"Action: {f}" for f in futile}
    assert not seen & left_out
    assert not any(Matcher(cfg).matches(text) for text in left_out)
    assert all(Matcher(cfg).matches(text) for text in everything - left_out)


@pytest.mark.parametrize("name", [a.name for a in ACTIONS if a.arg == "id"])
def test_every_action_can_be_left_out_of_the_gbnf_grammar(name: str) -> None:
    # An excluded id action gets its own rule of the other ids; its name must be valid GBNF even
    # for actions spelled with '_' (toggle_on), which llama.cpp's grammar parser refuses.
    text = step_grammar(IDS, CLASSES, exclude=[f"{name}({IDS[0]})"])  # raised for toggle_on before
    cfg = step_cfg(IDS, CLASSES, exclude=[f"{name}({IDS[0]})"])
    assert not Matcher(cfg).matches(f"Action: {name}({IDS[0]})")
    assert Matcher(cfg).matches(f"Action: {name}({IDS[1]})")
    llama_cpp = pytest.importorskip("llama_cpp")
    assert llama_cpp.LlamaGrammar.from_string(text, verbose=False) is not None


def test_an_action_that_changed_nothing_from_here_is_refused_later_too(bench: Path, tmp_path: Path) -> None:
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    # The search walks to the mug. Opening a mug fails and changes nothing; asking for it again,
    # two steps later and from the same place, is refused. The affordance filter is off, or
    # opening a mug would not reach the environment at all.
    chat = FakeListChatModel(responses=["Action: search(Mug)", "Action: open(Mug_1)", "Action: close(Mug_1)",
                                        "Action: open(Mug_1)", "Action: pickup(Mug_1)", "Action: done()"])
    record = _run(bench, tmp_path, chat, admissible="off")
    actions = [s[0] for s in record["subgoals"]]
    assert actions == ["search(Mug)", "open(Mug_1)", "close(Mug_1)", "pickup(Mug_1)", "done()"], record["log"]
    assert record["futile_rejections"] == 1 and record["llm_calls"] == 6
    assert any("open(Mug_1) was already done from here and changed nothing" in line for line in record["log"])


def test_the_prompt_names_the_futile_actions_and_the_switch_turns_the_refusal_off(bench: Path, tmp_path: Path) -> None:
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    answers = ["Action: search(Mug)", "Action: goto(Mug_1)", "Action: goto(Mug_1)", "Action: done()"]
    record = _run(bench, tmp_path / "off", FakeListChatModel(responses=answers), refuse_futile="off")
    assert [s[0] for s in record["subgoals"]] == ["search(Mug)", "goto(Mug_1)", "goto(Mug_1)", "done()"]
    assert record["futile_rejections"] == 0
    chat = ScriptedStep(plan=[("open", "Mug"), ("open", "Mug"), ("pickup", "Mug")], prompts=[])
    record = _run(bench, tmp_path / "on", chat, admissible="off")
    assert not any("not allowed now" in p for p in chat.prompts[:2])
    assert any("not allowed now): open(Mug_1)" in p for p in chat.prompts), record["log"]
    with pytest.raises(ValueError, match="choose from"):
        config_from_options({"refuse_futile": "maybe"})


def test_a_repeat_of_an_action_that_changed_something_is_allowed(bench: Path, tmp_path: Path) -> None:
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    chat = FakeListChatModel(responses=["Action: search(Mug)", "Action: pickup(Mug_1)", "Action: pickup(Mug_1)",
                                        "Action: done()", "Action: done()"])
    record = _run(bench, tmp_path, chat, admissible="off")  # on, a pickup with full hands is refused
    actions = [s[0] for s in record["subgoals"]]
    # The first pickup changed what the agent holds; the second one is not refused for repeating it.
    assert actions[:3] == ["search(Mug)", "pickup(Mug_1)", "pickup(Mug_1)"], record["log"]
    assert record["futile_rejections"] == 0


def _first_scene_graph(prompt: str) -> set[str]:
    graph = prompt.split("Scene graph:\n", 1)[1].split("\nHolding:", 1)[0]
    return set(re.findall(r"^([A-Za-z]+)_\d+", graph, re.M))


def test_the_first_step_shows_what_the_agent_saw_turning_once_in_place(bench: Path, tmp_path: Path) -> None:
    # Off: the first prompt shows the view the agent starts with, and no action was taken before it.
    still = ScriptedStep(plan=[], prompts=[])
    record_off = _run(bench, tmp_path / "off", still, look_around="off")
    start_view = _first_scene_graph(still.prompts[0])
    assert record_off["steps"] == 0
    # On: a look 30 degrees down and four left turns come first, and the first scene graph holds
    # the start view and what the turn showed besides; later steps show the current view only.
    turned = ScriptedStep(plan=[("goto", "CounterTop")], prompts=[])
    record_on = _run(bench, tmp_path / "on", turned)
    panorama = _first_scene_graph(turned.prompts[0])
    assert record_on["steps"] >= 4
    assert start_view < panorama, (start_view, panorama)
    assert "(nothing in view)" not in turned.prompts[0]
    with pytest.raises(ValueError, match="choose from"):
        config_from_options({"look_around": "sometimes"})
