"""LLM-Planner on the embedded world: grounded re-planning, the prompt, plans, the pool, and the runner."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from episodes import family_episode
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from helper_agent.envs.symbolic import SymbolicEnv
from helper_agent.evals.benchmark import generate_benchmark
from helper_agent.evals.engine.methods import training_episodes
from helper_agent.evals.engine.runner import run_eval
from helper_agent.evals.engine.spec import EvalSpec
from helper_agent.graphs.base import EpisodeSetup
from helper_agent.graphs.llm_planner import LLMPlannerConfig
from helper_agent.graphs.llm_planner.agent import (
    LLMPlannerAgent,
    config_from,
    plan_examples,
    pool_memory,
    stratified,
    vocabulary_for,
)
from helper_agent.graphs.llm_planner.plans import (
    ALFRED_ACTIONS,
    PlanVocabulary,
    plan_from_actions,
)
from helper_agent.graphs.llm_planner.prompts import PlanQuery, planner_messages
from helper_agent.graphs.registry import BuildRequest
from helper_agent.memory.embeddings import HashEmbedder
from helper_agent.memory.fewshot import FewShotMemory, PlanExample
from helper_agent.memory.store import VectorStore
from helper_agent.teach import check_task
from helper_agent.teach.instances import load_instance
from helper_agent.world.catalog import load_catalog


class ScriptedChat(BaseChatModel):
    """Answers with `reply(messages)`; records every call's messages and keyword arguments."""

    reply: Any
    calls: list[dict[str, Any]] = []

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        self.calls.append({"messages": messages, "kwargs": kwargs})
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=self.reply(messages)))])


@pytest.fixture(autouse=True)
def fast_embeddings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HELPER_EMBEDDINGS", "hash")


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bench")
    generate_benchmark(out, seed=3, sizes={"train": 17, "valid_unseen": 2})
    return out


def _pool() -> FewShotMemory:
    memory = FewShotMemory(store=VectorStore.ephemeral(), embedder=HashEmbedder(64))
    memory.add([PlanExample(id="slice", instruction="slice the potato with a knife",
                            plan=[["Navigation", "Knife"], ["PickupObject", "Knife"], ["Navigation", "Potato"],
                                  ["SliceObject", "Potato"]], task_type="sliced_x")])
    return memory


def test_a_plan_naming_an_absent_object_fails_and_the_replanner_sees_what_was_observed(
        bench: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Algorithm 1: the first plan names a class absent from the room; its search fails, the
    re-planning prompt lists the completed subgoals and the objects seen, its grammar allows only
    those objects, and the continuation it returns completes the task."""
    from helper_agent.graphs.llm_planner import nodes

    monkeypatch.setattr(nodes, "grammar_decoding", lambda chat, grammar, **kw: {"grammar": grammar})
    loaded = load_instance(family_episode(bench, "sliced_x", "train"), "tfd")
    env = SymbolicEnv()
    loaded.start(env)
    present = {o["objectType"] for o in env.objects_metadata()}
    absent = next(name for name in load_catalog().names() if name not in present and name.isalpha())
    target = loaded.task.task_params[0]  # what the task asks to slice (the scripted model knows it)
    assert target in present
    knife = "Knife" if "Knife" in present else "ButterKnife"

    def reply(messages: list[BaseMessage]) -> str:
        last = str(messages[-1].content)
        if "Completed plans:" not in last:
            return f"Navigation {knife.lower()}, PickupObject {knife.lower()}, Navigation {absent.lower()}, SliceObject {absent.lower()}\n"
        visible = re.search(r"Visible objects are (.*)", last).group(1).split(", ")  # type: ignore[union-attr]
        assert target.lower() in visible and absent.lower() not in visible
        return f"Navigation {target.lower()}, SliceObject {target.lower()}\n"

    chat = ScriptedChat(reply=reply, calls=[])
    config = LLMPlannerConfig(k=1, replan_steps=0)
    agent = LLMPlannerAgent(chat, _pool(), PlanVocabulary.build(ALFRED_ACTIONS, load_catalog().names()), config)
    result = agent.run(EpisodeSetup(env=env, request=loaded.dialogue))

    assert len(chat.calls) == 2 and result.usage["replans"] == 1.0 and result.usage["llm_calls"] == 2
    first, second = (c["messages"][-1].content for c in chat.calls)
    assert "Completed plans" not in first and first.endswith("Next plans:")
    assert f"Completed plans: Navigation {knife.lower()}, PickupObject {knife.lower()}" in second
    # the first grammar offers the whole catalog, the re-plan's only the objects observed
    first_grammar, second_grammar = (c["kwargs"]["grammar"] for c in chat.calls)
    assert f'"{absent.lower()}"' in first_grammar and f'"{absent.lower()}"' not in second_grammar
    assert f'"{target.lower()}"' in second_grammar
    assert [t[:2] for t in result.trace] == [
        [f"Navigation {knife}", "done"], [f"PickupObject {knife}", "done"], [f"Navigation {absent}", "not_found"],
        [f"Navigation {target}", "done"], [f"SliceObject {target}", "done"]]
    assert result.outcome == "done"
    assert check_task(loaded.task, env.objects_metadata()).success


def test_static_setting_stops_at_the_first_failure(bench: Path) -> None:
    loaded = load_instance(family_episode(bench, "sliced_x", "train"), "tfd")
    env = SymbolicEnv()
    loaded.start(env)
    chat = ScriptedChat(reply=lambda m: "SliceObject potato\n", calls=[])  # no knife in hand: Slice fails
    agent = LLMPlannerAgent(chat, _pool(), PlanVocabulary.build(ALFRED_ACTIONS, load_catalog().names()),
                            LLMPlannerConfig(k=1, replan=False))
    result = agent.run(EpisodeSetup(env=env, request=loaded.dialogue))
    assert len(chat.calls) == 1 and result.usage["replans"] == 0.0
    assert result.outcome in ("failed", "not_found") and len(result.trace) == 1
    assert not check_task(loaded.task, env.objects_metadata()).success


def test_put_without_anything_in_hand_fails_without_acting(bench: Path) -> None:
    loaded = load_instance(family_episode(bench, "sliced_x", "train"), "tfd")
    env = SymbolicEnv()
    loaded.start(env)
    def reply(messages: list[BaseMessage]) -> str:
        seen = re.search(r"Visible objects are (\w+)", str(messages[-1].content))
        return f"PutObject {seen.group(1) if seen else 'countertop'}\n"

    chat = ScriptedChat(reply=reply, calls=[])
    agent = LLMPlannerAgent(chat, _pool(), PlanVocabulary.build(ALFRED_ACTIONS, load_catalog().names()),
                            LLMPlannerConfig(k=1, max_replans=2))
    result = agent.run(EpisodeSetup(env=env, request="put it down"))
    assert result.usage["replans"] == 2.0 and len(chat.calls) == 3 and env.steps == 0
    assert "nothing is in hand" in (result.error or "")


def test_prompt_layout() -> None:
    example = PlanQuery(task="Put a cold apple on the table.", steps=["Go to the fridge.", "Open it."],
                        plan=[("Navigation", "Fridge"), ("OpenObject", "Fridge")])
    query = PlanQuery(task="Chill a tomato.", steps=["Find the tomato."], completed=[("Navigation", "Tomato")],
                      visible=["Tomato", "Fridge", "CounterTop"])
    messages = planner_messages(["Navigation", "OpenObject"], [example], query)
    assert [m.type for m in messages] == ["system", "human", "ai", "human"]
    assert messages[0].content.endswith("Allowed actions: Navigation, OpenObject")
    assert messages[1].content == ("Task description: Put a cold apple on the table.\n"
                                   "Step-by-step instructions: Go to the fridge. Open it.\nNext plans:")
    assert messages[2].content == "Navigation fridge, OpenObject fridge"
    assert messages[3].content == ("Task description: Chill a tomato.\nStep-by-step instructions: Find the tomato.\n"
                                   "Completed plans: Navigation tomato\n"
                                   "Visible objects are countertop, fridge, tomato\nNext plans:")
    retry = planner_messages(["Navigation"], [], PlanQuery(task="x"), error="'Go' is not an allowed action", previous="Go x")
    assert retry[-2].content == "Go x" and "'Go' is not an allowed action" in retry[-1].content


def test_plans_from_reference_actions() -> None:
    actions = [("Turn Left", None, True), ("Open", "Cabinet|1|2|3", True), ("Close", "Cabinet|1|2|3", True),
               ("Forward", None, True), ("Pickup", "Knife|1|1|1", True), ("Forward", None, True),
               ("Slice", "Bread|2|2|2", True), ("Pickup", "Bread|2|2|2|BreadSliced_1", False),
               ("Pickup", "Bread|2|2|2|BreadSliced_0", True), ("Forward", None, True),
               ("Open", "Fridge|3|3|3", True), ("Place", "Fridge|3|3|3", True), ("Close", "Fridge|3|3|3", True)]
    assert plan_from_actions(actions, {}) == [
        ("Navigation", "Knife"), ("PickupObject", "Knife"), ("Navigation", "Bread"), ("SliceObject", "Bread"),
        ("PickupObject", "BreadSliced"), ("Navigation", "Fridge"), ("OpenObject", "Fridge"), ("PutObject", "Fridge"),
        ("CloseObject", "Fridge")]


def test_train_pool_is_stratified_and_from_train_only(bench: Path) -> None:
    examples = plan_examples(training_episodes(str(bench), "train"))
    assert len(examples) == 17 and all(e.id.startswith("train:") for e in examples)
    chosen = stratified(examples, 10, seed=0)
    assert len({e.task_type for e in chosen}) == 10  # 17 episodes over >= 10 families: one each
    assert all(e.plan[0][0] == "Navigation" for e in examples)


def test_options_are_checked() -> None:
    assert config_from({"replan": "off", "k": "5", "retriever": "random"}).replan is False
    with pytest.raises(ValueError, match="retriever"):
        config_from({"retriever": "bm25"})


def test_eval_tfd_runs_end_to_end_with_a_scripted_model(bench: Path, tmp_path: Path) -> None:
    """`helper eval tfd --agent llm-planner --limit 2` through the runner, with a scripted model."""
    chat = ScriptedChat(reply=lambda m: "Navigation countertop, PickupObject apple\n", calls=[])
    spec = EvalSpec(mode="tfd", data=str(bench), split="valid_unseen", out=str(tmp_path / "run"), limit=2,
                    planner="llm-planner", agent_options={"k": "3", "max_replans": "1"})
    metrics = run_eval(spec, chat_model=chat)
    assert metrics["episodes"] == 2
    records = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").open()]
    assert all(r["agent"] == "llm-planner" and r["planner"] == "llm-planner" for r in records)
    assert all(r.get("ended_by") != "error" for r in records), records[0].get("error_message")
    assert all(r["llm_calls"] >= 1 and "replans" in r for r in records)
    # the prompt's examples come from the train split, and k of them
    human = [m for m in chat.calls[0]["messages"] if m.type == "human"]
    assert len(human) == 4
    pool_ids = {e.id for e in plan_examples(training_episodes(str(bench)))}
    assert pool_ids and all(i.startswith("train:") for i in pool_ids)
    assert "k=3" in metrics["label"]


def test_pool_from_a_users_knn_file(bench: Path, tmp_path: Path) -> None:
    path = tmp_path / "knn.json"
    path.write_text(json.dumps([{"task": f"pick_and_place_simple-Apple-None-Fridge-1/t{i}", "task_instr": f"Put apple {i} in the fridge.",
                                 "gold_traj": [["('Navigation','Apple')"], ["('PickupObject','Apple')"]]} for i in range(3)]))
    request = BuildRequest(ScriptedChat(reply=lambda m: "", calls=[]), data=str(bench), memory_dir=str(tmp_path / "run" / "memory"))
    memory = pool_memory(request, str(path), 100)
    assert memory.count() == 3
    vocabulary = vocabulary_for(memory)
    assert vocabulary.actions == ALFRED_ACTIONS and "apple" in vocabulary.objects


def test_examples_are_dropped_farthest_first_to_fit_the_window() -> None:
    from helper_agent.graphs.llm_planner.prompts import fit_examples

    examples = [PlanQuery(task=f"example {i} " + "x" * 400, plan=[("Navigation", "Fridge")]) for i in range(9)]
    query = PlanQuery(task="chill a tomato")
    full = sum(len(str(m.content)) for m in planner_messages(["Navigation"], examples, query))
    kept = fit_examples(["Navigation"], examples, query, max_chars=full - 1)
    assert [e.task for e in kept] == [e.task for e in examples[:8]]
    assert fit_examples(["Navigation"], examples, query, max_chars=full) == examples
    assert fit_examples(["Navigation"], examples, query, max_chars=10) == []


@pytest.mark.parametrize("family", ["clean_all_x", "boil_x", "coffee", "toggle_all"])
def test_the_controller_completes_plans_converted_from_reference_actions(bench: Path, family: str) -> None:
    """The low-level controller, with HELPER's extras off, completes the plan a train episode's
    reference actions convert to (what the pool shows the LLM), re-planning off."""
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from helper_agent.graphs.llm_planner.plans import format_plan

    loaded = load_instance(family_episode(bench, family, "train"), "tfd")
    plan = plan_from_actions([(a.action_name, a.oid, True) for a in loaded.instance.driver_actions_future], {})
    env = SymbolicEnv()
    loaded.start(env)
    vocabulary = PlanVocabulary.build(ALFRED_ACTIONS + ("PourObject",), load_catalog().names())
    agent = LLMPlannerAgent(FakeListChatModel(responses=[format_plan(plan)]), _pool(), vocabulary,
                            LLMPlannerConfig(k=1, replan=False))
    result = agent.run(EpisodeSetup(env=env, request=loaded.dialogue))
    assert result.outcome == "done" and len(result.trace) == len(plan)
    assert check_task(loaded.task, env.objects_metadata()).success
