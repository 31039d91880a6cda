"""LLM-Planner's HLP evaluation: parser and grammar, retrieval (kNN vs random, leave-one-out), metrics."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from reference_data import reference_path

from helper_agent.evals.studies.hlp import HLPOptions, Retriever, query_of, run_hlp, summarise, vocabulary_of
from helper_agent.graphs.llm_planner.plans import (
    ALFRED_ACTIONS,
    PlanParseError,
    PlanVocabulary,
    exact_match,
    format_plan,
    in_order_precision,
    in_order_recall,
    lcs_length,
    parse_plan,
    plan_cfg,
    plan_grammar,
)
from helper_agent.graphs.llm_planner.prompts import planner_messages
from helper_agent.memory.embeddings import HashEmbedder
from helper_agent.memory.fewshot import FewShotMemory, PlanExample, load_knn_set
from helper_agent.memory.store import VectorStore
from helper_agent.world.catalog import load_catalog

KNN_SET = reference_path("llm_planner/knn_set.json")
needs_knn_set = pytest.mark.skipif(not KNN_SET.exists(), reason="$HELPER_REFERENCE_DIR/llm_planner/knn_set.json absent")


class ScriptedChat(BaseChatModel):
    reply: Any
    calls: list[list[BaseMessage]] = []

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        self.calls.append(messages)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=self.reply(messages)))])


def _sample(vocabulary: PlanVocabulary, rng: random.Random) -> str:
    """A random string of the grammar's language (same structure as `plan_grammar`)."""
    steps = [f"{rng.choice(vocabulary.actions)} {rng.choice(sorted(vocabulary.objects))}" for _ in range(rng.randint(1, 12))]
    return ", ".join(steps) + "\n"


def test_parser_accepts_the_grammar_language_and_rejects_the_rest() -> None:
    vocabulary = PlanVocabulary.build(ALFRED_ACTIONS, load_catalog().names())
    rng = random.Random(0)
    for _ in range(200):
        text = _sample(vocabulary, rng)
        plan = parse_plan(text, vocabulary)
        assert format_plan(plan) == text.strip()
        assert all(o in load_catalog().names() for _, o in plan)
    assert parse_plan("Next plans: navigation Fridge, PutObject diningtable.", vocabulary) == [
        ("Navigation", "Fridge"), ("PutObject", "DiningTable")]
    for bad, reason in (("Navigation unicorn", "not an object"), ("Fly fridge", "not an allowed action"),
                        ("", "empty"), ("Navigation", "not 'Action object'")):
        with pytest.raises(PlanParseError, match=reason):
            parse_plan(bad, vocabulary)


def test_grammar_parses_with_llama_cpp() -> None:
    llama_cpp = pytest.importorskip("llama_cpp")
    vocabulary = PlanVocabulary.build(ALFRED_ACTIONS + ("PourObject",), load_catalog().names())
    text = plan_grammar(vocabulary)
    assert text.startswith('root ::= step (", " step){0,39}\n')
    assert '"diningtable"' in text and '"PourObject"' in text
    assert llama_cpp.LlamaGrammar.from_string(text, verbose=False) is not None
    small = plan_grammar(vocabulary.restricted(["Apple", "Fridge"]))
    assert 'object ::= "apple" | "fridge"' in small
    assert llama_cpp.LlamaGrammar.from_string(small, verbose=False) is not None


def test_grammar_derives_the_examples_answers_and_ends_where_they_end() -> None:
    """A constrained model must be able to write what the examples' answer turns show, and to stop
    where they stop: the grammar once demanded a trailing newline no example had, and the 0.5B
    model, never choosing it, ran every plan on to the step cap."""
    from helper_agent.program.cfg_match import Matcher

    pool = _pool()
    vocabulary = vocabulary_of(pool)
    matcher = Matcher(plan_cfg(vocabulary))
    shots = [query_of(e, "goal", False) for e in pool[1:]]
    answers = [str(m.content) for m in planner_messages(list(vocabulary.actions), shots, query_of(pool[0], "goal", False))
               if isinstance(m, AIMessage)]
    assert len(answers) == len(pool) - 1
    for answer in answers:
        assert matcher.matches(answer), answer
        assert not matcher.matches(answer + "\n") and not matcher.matches(answer + ", ")
    capped = Matcher(plan_cfg(vocabulary, max_steps=3))
    assert capped.matches("Navigation apple, PickupObject apple, Navigation fridge")
    assert not capped.matches("Navigation apple, PickupObject apple, Navigation fridge, PutObject fridge")


def test_plan_similarity_values() -> None:
    gold = [("Navigation", "Fridge"), ("OpenObject", "Fridge"), ("PickupObject", "Apple"), ("CloseObject", "Fridge")]
    assert exact_match([(a.lower(), o.upper()) for a, o in gold], gold)
    assert lcs_length(gold[:2] + gold[3:], gold) == 3
    assert in_order_recall(gold[:2] + gold[3:], gold) == 0.75
    assert in_order_recall(list(reversed(gold)), gold) == 0.25
    assert in_order_recall([], gold) == 0.0 and not exact_match(gold + gold[:1], gold)
    assert in_order_precision(gold + gold, gold) == 0.5 and in_order_precision(gold[:2], gold) == 1.0
    assert in_order_precision([], gold) == 0.0 and in_order_precision([], []) == 1.0
    records = [{"mode": "goal", "task_type": "a", "exact": True, "in_order": 1.0, "in_order_precision": 1.0,
                "predicted": "Navigation fridge, OpenObject fridge", "gold": "Navigation fridge, OpenObject fridge"},
               {"mode": "goal", "task_type": "a", "exact": False, "in_order": 0.5, "error": "x",
                "predicted": "Navigation fridge, Navigation fridge, Navigation fridge, OpenObject fridge",
                "gold": "Navigation fridge, OpenObject fridge"},  # written before precision was recorded
               {"mode": "goal", "task_type": "b", "exact": False, "in_order": 0.0, "in_order_precision": 0.0,
                "predicted": "", "gold": "PickupObject apple"}]
    figures = summarise(records)["goal"]
    assert figures["overall"] == {"examples": 3, "HLP_accuracy": 33.33, "in_order": 50.0, "in_order_precision": 50.0,
                                  "predicted_steps": 2.0, "gold_steps": 1.67, "unparsed": 1}
    assert figures["by_task_type"]["a"]["HLP_accuracy"] == 50.0 and figures["by_task_type"]["b"]["in_order"] == 0.0


def _pool() -> list[PlanExample]:
    pool = []
    for i, (thing, place) in enumerate([("apple", "Fridge"), ("apple", "Fridge"), ("book", "Desk"), ("pen", "Desk"),
                                        ("mug", "CoffeeMachine"), ("knife", "CounterTop")]):
        pool.append(PlanExample(id=f"t{i}", instruction=f"put the {thing} in the {place.lower()}" + (" now" if i == 1 else ""),
                                plan=[["Navigation", thing.capitalize()], ["PickupObject", thing.capitalize()],
                                      ["Navigation", place], ["PutObject", thing.capitalize(), place]],
                                step_instructions=[f"Find the {thing}.", f"Put it in the {place.lower()}."],
                                task_type="pick_and_place_simple" if i % 2 else "pick_two_obj_and_place"))
    return pool


def test_knn_and_random_retrieval_leave_the_example_out() -> None:
    pool = _pool()
    memory = FewShotMemory(store=VectorStore.ephemeral(), embedder=HashEmbedder(256))
    memory.add(pool)
    knn = Retriever(pool, memory, "knn")
    rand = Retriever(pool, None, "random", seed=1)
    for example in pool:
        for retriever in (knn, rand):
            shots = retriever(example, 3)
            assert len(shots) == 3 and example.id not in {s.id for s in shots}
    assert knn(pool[0], 1)[0].id == "t1"  # its near-duplicate
    assert [s.id for s in rand(pool[0], 5)] == [s.id for s in rand(pool[0], 5)]  # seeded
    assert {s.id for s in rand(pool[0], 5)} == {"t1", "t2", "t3", "t4", "t5"}
    with pytest.raises(ValueError):
        Retriever(pool, memory, "bm25")


def test_loocv_run_scores_resumes_and_uses_step_instructions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HELPER_EMBEDDINGS", "hash")
    pool = _pool()
    gold = {e.instruction: format_plan(e.hlp()) for e in pool}

    def reply(messages: list[BaseMessage]) -> str:
        task = re.search(r"Task description: (.*)", str(messages[-1].content)).group(1)  # type: ignore[union-attr]
        # right for the apples, one subgoal short for the others
        return gold[task] if "apple" in task else gold[task].rsplit(", ", 1)[0]

    chat = ScriptedChat(reply=reply, calls=[])
    options = HLPOptions(k=2, retriever="knn", modes=["goal", "goal+step"])
    metrics = run_hlp(pool, chat, tmp_path / "run", options)
    assert len(chat.calls) == 12
    assert metrics["goal"]["overall"] == {"examples": 6, "HLP_accuracy": 33.33, "in_order": 83.33, "in_order_precision": 100.0,
                                          "predicted_steps": 3.33, "gold_steps": 4.0, "unparsed": 0}
    assert metrics["goal+step"]["overall"]["HLP_accuracy"] == 33.33 and metrics["paper_HLP_accuracy"] == 40.59
    goal_prompt = [c for c in chat.calls if "Step-by-step" not in str(c[-1].content)]
    assert len(goal_prompt) == 6
    # the example itself never appears among its in-context examples
    for line in (tmp_path / "run" / "results.jsonl").open():
        record = json.loads(line)
        assert record["id"] not in record["examples"] and len(record["examples"]) == 2
    again = run_hlp(pool, chat, tmp_path / "run", options)
    assert len(chat.calls) == 12 and again["goal"] == metrics["goal"]
    assert json.loads((tmp_path / "run" / "metrics.json").read_text())["goal"] == metrics["goal"]
    with pytest.raises(ValueError, match="another retriever"):
        run_hlp(pool, chat, tmp_path / "run", HLPOptions(k=2, retriever="random"))


def test_an_unparsable_answer_gets_one_retry_with_the_reason(tmp_path: Path) -> None:
    pool = _pool()
    answers = iter(["Fly apple", "Navigation apple, PickupObject apple, Navigation fridge, PutObject fridge"] * 10)
    chat = ScriptedChat(reply=lambda m: next(answers), calls=[])
    metrics = run_hlp(pool, chat, tmp_path / "run", HLPOptions(k=2, retriever="random", limit=1))
    assert len(chat.calls) == 2 and "'Fly' is not an allowed action" in str(chat.calls[1][-1].content)
    assert metrics["goal"]["overall"]["HLP_accuracy"] == 100.0


@needs_knn_set
def test_knn_set_vocabulary_grammar_and_gold_plans() -> None:
    llama_cpp = pytest.importorskip("llama_cpp")
    pool = load_knn_set(KNN_SET)
    vocabulary = vocabulary_of(pool)
    assert set(vocabulary.actions) == set(ALFRED_ACTIONS)
    assert llama_cpp.LlamaGrammar.from_string(plan_grammar(vocabulary), verbose=False) is not None
    for example in pool:  # every gold plan is in the grammar's language and parses back to itself
        assert exact_match(parse_plan(format_plan(example.hlp()) + "\n", vocabulary), example.hlp())
    assert max(len(e.hlp()) for e in pool) <= 40
