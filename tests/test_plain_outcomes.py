"""What a person is told around the feedback question: what was not done and why, which round is
the last, and an end that says what happened (the program finished, or did not).

The graph, checkpointer, household and memories are real; the chat model is LangChain's fake chat
model (a test double), scripted per test.
"""

from __future__ import annotations

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from test_chat_sessions import TO_FRIDGE, TO_SINK, memories  # noqa: F401 - the fixture
from test_graph_helper import ScriptedChat, fence, kitchen

from helper_agent.chat_runtime import pending_question
from helper_agent.envs.symbolic import SymbolicEnv
from helper_agent.graphs.helper import HelperConfig, HelperContext, build_graph
from helper_agent.graphs.helper.facts import question_lines, request_facts, unfinished_sentence
from helper_agent.program.subgoals import ObjectRef
from helper_agent.tools.errors import ObjectNotFound


def test_a_failed_execution_is_said_before_the_question() -> None:
    execution = {"status": "not_found", "failed_subgoal": "Navigate(FloorLamp)", "error": "could not find FloorLamp",
                 "missing": "FloorLamp"}
    assert unfinished_sentence(execution) == ("I did not finish the task: Navigate(FloorLamp) and the steps after it "
                                               "were not done, because I could not find a FloorLamp.")
    assert unfinished_sentence({"status": "done"}) == ""
    stopped = {"status": "failed", "failed_subgoal": "ToggleOn(Microwave)", "failure": "the microwave is open"}
    assert unfinished_sentence(stopped).endswith("because the microwave is open.")
    lines = question_lines({"question": "Is the task completed?", "execution": execution, "last": True})
    assert lines[0].startswith("I did not finish the task") and lines[1] == (
        "Is the task completed? (The last round: I will not replan after this answer.)")
    assert question_lines({"question": "Is the task completed?", "execution": {"status": "done"}}) == [
        "Is the task completed?"]


def test_a_search_for_a_whole_apple_among_slices_says_so() -> None:
    ref = ObjectRef("apple", "Apple")
    assert str(ObjectNotFound(ref, 8)) == "could not find a whole Apple (8 Apple slices seen, but this step needs an uncut one)"
    assert str(ObjectNotFound(ref)) == "could not find Apple"
    execution = {"status": "not_found", "failed_subgoal": "Slice(Apple)", "missing": "Apple", "error": str(ObjectNotFound(ref, 8))}
    assert "because I could not find a whole Apple (8 Apple slices seen" in unfinished_sentence(execution)


def test_the_last_round_is_named_and_the_end_says_the_program_finished(memories: dict) -> None:  # noqa: F811
    env = SymbolicEnv()
    env.reset(kitchen())
    # plan; reading of answer 1; replan; reading 2; replan; reading 3 (the last: no replan after it)
    script = [fence(TO_SINK), "not satisfied: the fridge", fence(TO_FRIDGE), "not satisfied: the sink",
              fence(TO_SINK), "not satisfied: the fridge again"]
    context = HelperContext(env=env, chat_model=ScriptedChat(responses=script), keep_snapshots=True,
                            config=HelperConfig(feedback_rounds=2), **memories)
    graph, config = build_graph(InMemorySaver()), {"configurable": {"thread_id": "mary"}}
    graph.invoke({"request": "put the apple away", "user": "mary"}, config, context=context)
    asked = []
    for answer in ("not yet: in the fridge", "not yet: in the sink", "not yet: the fridge again"):
        payload = pending_question(graph.get_state(config))
        assert payload is not None
        asked.append((payload["round"], payload["last"]))
        out = graph.invoke(Command(resume=answer), config, context=context)
    assert asked == [(1, False), (2, False), (3, True)]
    assert "__interrupt__" not in out
    facts = request_facts(out)
    assert facts.outcome == "incomplete" and facts.finished
    assert facts.reply() == ("not done: the program ran to its end, but you said “not yet: the fridge again” and no "
                             "feedback round is left to replan it; nothing stored")
