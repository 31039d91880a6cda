"""Chat sessions a person can live with: budgets per request, facts per request, /reset and /new.

The household, graph, checkpointer and memories are real; the chat model is LangChain's fake chat
model (a test double), scripted per test.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from test_chat_cli import COFFEE, chat, fenced
from test_graph_helper import ScriptedChat, fence, kitchen

from helper_agent.envs.symbolic import SymbolicEnv
from helper_agent.graphs.helper import HelperConfig, HelperContext, build_graph
from helper_agent.graphs.helper.facts import request_facts
from helper_agent.memory.corrections import CorrectionMemory
from helper_agent.memory.embeddings import get_embedder
from helper_agent.memory.examples import ExampleMemory
from helper_agent.memory.routines import RoutineMemory

TO_SINK = 'apple = InteractionObject("Apple")\nsink = InteractionObject("SinkBasin")\napple.pickup_and_place(sink)'
TO_FRIDGE = 'apple = InteractionObject("Apple")\nfridge = InteractionObject("Fridge")\napple.pickup_and_place(fridge)'
WASH = 'plate = InteractionObject("Plate", attributes=["clean"])\nplate.clean()\nplate.put_down()'


@pytest.fixture()
def memories(tmp_path: Path) -> dict:
    embedder, path = get_embedder("hash"), tmp_path / "memory"
    return {"examples": ExampleMemory(path=path, embedder=embedder),
            "corrections": CorrectionMemory(path=path, embedder=embedder),
            "routines": RoutineMemory(path=path, embedder=embedder)}


def ask_and_answer(graph, request: str, answer: str, config: dict, context: HelperContext) -> dict:
    """One chat request: run it and, when it asks whether the task is done (and then whether to
    store the routine it taught), answer `answer`."""
    out = graph.invoke({"request": request, "user": "mary"}, config, context=context)
    while "__interrupt__" in out:
        out = graph.invoke(Command(resume=answer), config, context=context)
    return out


def test_twelve_requests_in_one_household_each_get_their_own_step_budget(memories: dict) -> None:
    env = SymbolicEnv()
    env.reset(kitchen())
    programs = [fence(TO_SINK), "satisfied", fence(TO_FRIDGE), "satisfied"] * 6  # a plan, the reading of "yes"
    context = HelperContext(env=env, chat_model=ScriptedChat(responses=programs), keep_snapshots=True,
                            config=HelperConfig(max_steps=60), **memories)
    graph, config = build_graph(InMemorySaver()), {"configurable": {"thread_id": "mary"}}
    outcomes, used = [], []
    for n in range(12):
        before = env.steps
        out = ask_and_answer(graph, f"put the apple away, please ({n})", "yes", config, context)
        outcomes.append(out["outcome"])
        used.append(env.steps - before)
        assert request_facts(out, env.steps).steps == used[-1]
    assert outcomes == ["success"] * 12
    assert env.steps == sum(used) > 3 * 60  # the household ran three times past one request's budget
    assert max(used) < 60


def test_a_recall_after_a_stored_routine_does_not_say_stored(memories: dict) -> None:
    """The reported sequence: teach, "yes" (stored v1), then the exact recall and "yes" (nothing stored)."""
    env = SymbolicEnv()
    env.reset(kitchen())
    context = HelperContext(env=env, chat_model=ScriptedChat(responses=[fence(WASH), "satisfied", "satisfied"]), keep_snapshots=True, **memories)
    graph, config = build_graph(InMemorySaver()), {"configurable": {"thread_id": "mary"}}
    taught = ask_and_answer(graph, "Perform the Mary cleaning: wash a plate", "yes", config, context)
    assert request_facts(taught).reply() == "success (routine 'the mary cleaning' v1 for mary stored)"
    recalled = ask_and_answer(graph, "Do the Mary cleaning", "yes", config, context)  # exact recall: no plan
    facts = request_facts(recalled)
    assert recalled["outcome"] == "success" and recalled["stored"] is None
    assert facts.reply() == "success" and facts.recalled == "the mary cleaning"
    assert facts.llm_calls == 1  # only the reading of "yes": the routine was reused without a plan
    assert facts.log[0].startswith("retrieve:") and "memorize: nothing to store" in facts.log
    assert not any("memorize: routine" in line for line in facts.log)


def test_chat_says_stored_only_for_the_request_that_stored(tmp_path: Path) -> None:
    result = chat(tmp_path, [fenced(COFFEE), "Cabinet", "Cabinet", "Cabinet"],
                  "Perform the mary coffee: make me a coffee\nyes\nyes\nDo the mary coffee\nyes\n/quit\n")
    assert result.returncode == 0, result.stderr[-3000:]
    # what will be remembered is shown, and stored on the second "yes"
    assert "I'll remember the mary coffee as: coffee in the mug. Store it?" in result.stdout
    verdicts = [line.split(" (")[0] if "stored" in line else line.split(" [")[0] for line in result.stdout.splitlines()
                if line.startswith(("success", "not done", "stopped", "no valid"))]
    stored = [line for line in result.stdout.splitlines() if line.startswith("success")]
    assert len(stored) == 2, result.stdout[-3000:]
    assert "routine 'the mary coffee' v1 for mary stored" in stored[0]
    assert "stored" not in stored[1], verdicts


def test_a_forced_step_limit_ends_one_request_not_the_household_and_reset_starts_anew(tmp_path: Path) -> None:
    script = "make me a coffee\nmake me a coffee\n/state\n/reset\n/state\n/quit\n"
    first = chat(tmp_path, [fenced(COFFEE), "Cabinet"] * 3, script, extra=["--max-steps", "5"])
    assert first.returncode == 0, first.stderr[-3000:]
    out = first.stdout
    # Both requests planned and acted: the second was not refused because the first used its budget.
    assert out.count("plan: attempt 1") == 2, out[-3000:]
    assert out.count("stopped: step limit") == 2
    assert "budgets per request: 5 steps" in out
    assert "; 10 steps, " in out  # /state before /reset: the household's count
    assert "a new household (scene 3, Kitchen); your routines are kept" in out
    assert "; 0 steps, 0 failed actions in this household so far" in out
    # A restart finds the reset household, not the one before.
    second = chat(tmp_path, [fenced(COFFEE)], "/state\n/quit\n")
    assert "; 0 steps, 0 failed actions in this household so far" in second.stdout, second.stdout[-2000:]


def test_new_starts_a_session_in_the_same_household_and_a_restart_continues_it(tmp_path: Path) -> None:
    first = chat(tmp_path, [fenced(COFFEE), "Cabinet", "Cabinet"], "make me a coffee\nyes\n/new\n/quit\n")
    assert first.returncode == 0, first.stderr[-3000:]
    session = next(line for line in first.stdout.splitlines() if line.startswith("a new session "))
    thread = session.split()[3]
    steps = next(line for line in first.stdout.splitlines() if line.startswith("success") or line.startswith("not done"))
    second = chat(tmp_path, [fenced(COFFEE)], "/state\n/quit\n")
    assert f"session {thread}" in second.stdout
    connection = sqlite3.connect(str(tmp_path / "home" / "checkpoints.sqlite"))
    threads = {row[0] for row in connection.execute("select distinct thread_id from checkpoints")}
    assert {"household:mary", thread} <= threads, (threads, steps)
    assert "; 0 steps, 0 failed actions" not in second.stdout  # the household kept its history


def test_an_llm_that_fails_ends_the_request_not_the_chat_and_is_not_resumed(tmp_path: Path) -> None:
    first = chat(tmp_path, ["!unavailable", fenced(COFFEE), "Cabinet"], "make me a coffee\nmake me a coffee\nyes\n/quit\n")
    assert first.returncode == 0, first.stderr[-3000:]
    out = first.stdout
    assert "LLMUnavailable: the model server did not answer after 3 attempts" in out
    assert "stopped: the LLM did not answer (the model server" in out  # the request's verdict
    assert "success" in out  # the next request ran
    second = chat(tmp_path, [fenced(COFFEE)], "/quit\n")
    assert "resuming the request that was interrupted" not in second.stdout
