"""The served graph (`langgraph.json` -> `helper_agent.serving:graph`) in LangGraph's in-process runtime.

A typed input (request, user, room, seed or instance) and a context of user-settable fields only;
the node builds the household and runs the HELPER graph on it; the feedback `interrupt` surfaces as
the run's interrupt and a resume continues in the household the first program left. The chat model
is LangChain's fake chat model; the world, graph, checkpointer and memories are real.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

import helper_agent.llm as llm
from helper_agent import serving
from helper_agent.config import get_settings
from helper_agent.evals.benchmark import generate_benchmark
from helper_agent.graphs.helper.agent import Memories
from helper_agent.memory.corrections import CorrectionMemory
from helper_agent.memory.embeddings import get_embedder
from helper_agent.memory.examples import ExampleMemory
from helper_agent.memory.routines import RoutineMemory
from helper_agent.teach.instances import load_instance

ROOT = Path(__file__).resolve().parents[1]
COFFEE = ('mug = InteractionObject("Mug", attributes=["clean"])\nmug.clean()\ncm = InteractionObject("CoffeeMachine")\n'
          'mug.pickup_and_place(cm)\ncm.toggle_on()')


def fenced(program: str) -> str:
    return f"```python\n{program}\n```"


@pytest.fixture()
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201
    """The served graph with a checkpointer, fresh memories and a scripted fake chat model."""
    embedder = get_embedder("hash")
    path = tmp_path / "memory"
    memories = Memories(ExampleMemory(path=path, embedder=embedder), CorrectionMemory(path=path, embedder=embedder),
                        RoutineMemory(path=path, embedder=embedder))
    monkeypatch.setattr(serving, "_SHARED", {"memories": memories})
    monkeypatch.setenv("HELPER_SERVE_LLMS", "fake")  # the server offers the fake model
    monkeypatch.setenv("HELPER_SERVE_FOLDERS", str(tmp_path))  # and lets clients name files here
    get_settings.cache_clear()
    monkeypatch.setattr(serving, "_MODELS", {})
    replies: list[str] = []
    monkeypatch.setattr(llm, "make_chat_model", lambda *a, **k: FakeListChatModel(responses=replies))
    yield serving.build_served_graph(InMemorySaver()), replies, memories
    get_settings.cache_clear()


def test_schemas_show_only_the_typed_input_and_user_settable_context() -> None:
    graph = serving.graph
    input_schema = graph.get_input_jsonschema()
    context_schema = graph.get_context_jsonschema()
    assert input_schema is not None and context_schema is not None
    assert set(input_schema["properties"]) == {"request", "user", "room", "seed", "instance"}
    assert input_schema["properties"]["seed"]["type"] == "integer"
    assert set(context_schema["properties"]) == {"llm", "feedback_rounds", "feedback", "k", "memory_augmented",
                                                 "prechecks", "correction", "locator"}
    # Only plain values a client can send: no chat model, memories, environment or usage recorder.
    kinds = {p.get("type") for p in context_schema["properties"].values()}
    assert kinds <= {"string", "integer", "boolean"}
    assert graph.get_output_jsonschema()["properties"]["checker"]


def test_langgraph_json_serves_this_graph() -> None:
    config = json.loads((ROOT / "langgraph.json").read_text())
    target = config["graphs"]["helper"]
    module_path, name = target.split(":")
    assert (ROOT / module_path).resolve() == Path(serving.__file__).resolve() and name == "graph"
    assert "/.langgraph_api/" in (ROOT / ".gitignore").read_text().split()


def test_feedback_interrupt_resumes_in_the_household_it_left(served) -> None:  # noqa: ANN001
    graph, replies, _ = served
    # plan, locator, the reading of "you forgot ...", the reading of "yes": the replan's missing part
    # is read from the person's words without a model call (issue 54, `understanding/missing.py`)
    replies += [fenced(COFFEE), "Cabinet", "not satisfied: switch the coffee machine off", "satisfied"]
    config = {"configurable": {"thread_id": "mary-1"}}
    first = graph.invoke({"request": "make me a coffee", "user": "mary", "room": "Kitchen", "seed": 3}, config,
                         context={"llm": "fake", "feedback_rounds": 1})
    (question,) = first["__interrupt__"]
    assert question.value["question"].startswith("Is the task completed")
    assert question.value["execution"]["status"] == "done"
    # The outer state holds no household; the HELPER graph's checkpoint does.
    outer = graph.get_state(config)
    assert "world" not in outer.values
    (task,) = outer.tasks
    inner = graph.checkpointer.get_tuple({"configurable": {"thread_id": "mary-1", "checkpoint_ns": f"episode:{task.id}"}})
    steps_before = inner.checkpoint["channel_values"]["world"]["steps"]
    assert steps_before > 0

    second = graph.invoke(Command(resume="you forgot to switch the coffee machine off"), config, context={"llm": "fake"})
    (question,) = second["__interrupt__"]
    trace = question.value["execution"]["trace"]
    assert trace[-1] == ["ToggleOff(CoffeeMachine)", "done", 1]  # one action: the machine was on
    third = graph.invoke(Command(resume="yes"), config, context={"llm": "fake"})
    assert third["outcome"] == "success", third["log"]
    assert third["steps"] > steps_before  # counters continued from the restored snapshot
    assert third["log"][-2:] == ["feedback: satisfied", "memorize: nothing to store"], third["log"]
    # the request's LLM use across both resumes: plan, locator, reading, reading (no replan call)
    assert third["usage"]["llm_calls"] == 4
    assert "replan: the missing part, read from the feedback: toggle_off CoffeeMachine" in third["log"]
    assert third["program"].strip() == 'coffee_machine = InteractionObject("CoffeeMachine")\ncoffee_machine.toggle_off()'


def test_a_request_without_a_restored_household_starts_fresh(served) -> None:  # noqa: ANN001
    graph, replies, _ = served
    replies += [fenced('cm = InteractionObject("CoffeeMachine")\ncm.toggle_on()')] * 2
    config = {"configurable": {"thread_id": "t"}}
    for _ in range(2):  # two runs on one thread: each is one request in a fresh household
        out = graph.invoke({"request": "switch the coffee machine on", "seed": 3}, config,
                           context={"llm": "fake", "feedback_rounds": 0})
        assert out["outcome"] == "done", out["log"]
        assert out["subgoals"][-1][:2] == ["ToggleOn(CoffeeMachine)", "done"]
        assert out["subgoals"][-1][2] == 1  # one action: the machine was off again


def test_an_instance_run_is_checked_and_can_take_the_checker_as_feedback(served, tmp_path: Path) -> None:  # noqa: ANN001
    graph, replies, _ = served
    generate_benchmark(tmp_path / "bench", seed=3, sizes={"valid_unseen": 1})
    path = next((tmp_path / "bench" / "tfd_instances" / "valid_unseen").glob("*.tfd.json"))
    loaded = load_instance(path)
    replies += [fenced(loaded.gold_program)] * 4  # plan (and locator/correction answers, if asked)
    out = graph.invoke({"instance": str(path)}, {"configurable": {"thread_id": "i"}},
                       context={"llm": "fake", "feedback": "checker"})
    assert "__interrupt__" not in out
    assert out["request"] == loaded.dialogue
    assert out["checker"]["success"] is True, out["log"]
    assert out["outcome"] == "success"


def test_bad_input_is_a_clear_error(served) -> None:  # noqa: ANN001
    graph, _, _ = served
    with pytest.raises(ValueError, match="room must be one of"):
        graph.invoke({"request": "x", "room": "Garage"}, {"configurable": {"thread_id": "b"}})
    with pytest.raises(ValueError, match="feedback='checker' needs an instance"):
        graph.invoke({"request": "x"}, {"configurable": {"thread_id": "c"}}, context={"feedback": "checker"})


def test_a_client_set_model_or_path_outside_the_servers_configuration_is_refused(served, tmp_path: Path,  # noqa: ANN001
                                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 52: `context.llm` made the server dial any URL, and `instance` opened any server path."""
    graph, _, _ = served
    built: list[str] = []
    opened: list[str] = []
    monkeypatch.setattr(llm, "make_chat_model", lambda spec, **k: built.append(spec))
    monkeypatch.setattr(serving, "load_instance", lambda path, *a: opened.append(path))
    for n, llm_spec in enumerate(("http://127.0.0.1:9/v1", "local:1.5b", "openai:gpt-4o")):
        with pytest.raises(ValueError, match="not a model this server offers"):
            graph.invoke({"request": "x"}, {"configurable": {"thread_id": f"m{n}"}}, context={"llm": llm_spec})
    for n, path in enumerate(("/etc/passwd", str(tmp_path.parent / "x.json"), f"{tmp_path}/../x.json")):
        with pytest.raises(ValueError, match="instance"):
            graph.invoke({"instance": path}, {"configurable": {"thread_id": f"p{n}"}}, context={"llm": "fake"})
    assert built == [] and opened == [] and serving._MODELS == {}
