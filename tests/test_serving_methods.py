"""The served graphs of LLM-Planner, P-RAG and EmbodiedRAG (`langgraph.json` -> `helper_agent.serving_methods`)
in LangGraph's in-process runtime, with a scripted chat model; the world, graphs, checkpointer and
memories are real."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langgraph.checkpoint.memory import InMemorySaver

import helper_agent.llm as llm
from helper_agent import serving, serving_methods
from helper_agent.evals.benchmark import generate_benchmark

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def scripted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Replies of a fake chat model; memories in a fresh folder with the hashing embedder."""
    monkeypatch.setenv("HELPER_MEMORY_DIR", str(tmp_path / "memory"))
    monkeypatch.setenv("HELPER_EMBEDDINGS", "hash:256")
    monkeypatch.setenv("HELPER_SERVE_LLMS", "scripted")  # the server offers the scripted model
    monkeypatch.setenv("HELPER_SERVE_FOLDERS", str(tmp_path))  # and lets clients name files here
    from helper_agent.config import get_settings

    get_settings.cache_clear()
    monkeypatch.setattr(serving, "_MODELS", {})
    monkeypatch.setattr(serving_methods, "_AGENTS", {})
    replies: list[str] = []
    monkeypatch.setattr(llm, "make_chat_model", lambda *a, **k: FakeListChatModel(responses=replies))
    yield replies
    get_settings.cache_clear()


def test_langgraph_json_is_the_registrys() -> None:
    """The committed file is what `helper methods langgraph-json` writes from the registry."""
    assert json.loads((ROOT / "langgraph.json").read_text()) == serving_methods.langgraph_config()


def test_langgraph_json_serves_every_method() -> None:
    graphs = json.loads((ROOT / "langgraph.json").read_text())["graphs"]
    assert set(graphs) == {"helper", "llm-planner", "prag", "embodiedrag"}
    assert serving_methods.served_method_names() == ["llm-planner", "prag", "embodiedrag"]
    for name in serving_methods.served_method_names():
        module_path, attribute = graphs[name].split(":")
        assert (ROOT / module_path).resolve() == Path(serving_methods.__file__).resolve()
        assert getattr(serving_methods, attribute).name == name


@pytest.mark.parametrize("name", serving_methods.served_method_names())
def test_schemas_are_the_typed_input_and_plain_context(name: str) -> None:
    graph = serving_methods.build_method_graph(name)
    assert set(graph.get_input_jsonschema()["properties"]) == {"request", "room", "seed", "instance"}
    context = graph.get_context_jsonschema()["properties"]
    assert set(context) == {"llm", "options"}
    assert context["options"]["type"] == "array" and context["llm"]["type"] == "string"
    assert {"outcome", "checker", "usage"} <= set(graph.get_output_jsonschema()["properties"])


def test_unknown_method_is_refused() -> None:
    with pytest.raises(ValueError, match="served methods"):
        serving_methods.build_method_graph("helper")


def test_prag_acts_in_a_generated_kitchen(scripted: list[str]) -> None:
    scripted += ["Action: done()"]
    graph = serving_methods.build_method_graph("prag", InMemorySaver())
    out = graph.invoke({"request": "make me a coffee", "room": "Kitchen", "seed": 3},
                       {"configurable": {"thread_id": "t1"}}, context={"llm": "scripted"})
    assert out["request"] == "make me a coffee"
    assert out["usage"]["llm_calls"] == 1
    assert out["checker"] is None  # a plain request: nobody knows the task, nothing is scored
    assert out["outcome"]


def test_an_instance_is_scored_by_the_harness_not_the_agent(scripted: list[str], tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    generate_benchmark(bench, seed=0, sizes={"valid_unseen": 1})
    instance = sorted((bench / "tfd_instances" / "valid_unseen").glob("*.json"))[0]
    scripted += ["Action: done()"] * 3
    graph = serving_methods.build_method_graph("prag")
    out = graph.invoke({"instance": str(instance)}, context={"llm": "scripted"})
    assert out["checker"] is not None and out["checker"]["success"] is False  # it did nothing
    assert out["checker"]["goal_conditions_total"] >= 1
    assert out["request"]  # the instance's dialogue


def test_a_bad_switch_is_an_error_naming_it(scripted: list[str]) -> None:
    graph = serving_methods.build_method_graph("llm-planner")
    with pytest.raises(ValueError, match="replan"):
        graph.invoke({"request": "make me a coffee"}, context={"llm": "scripted", "options": ["replan=sometimes"]})


def test_a_plain_request_and_an_instance_get_their_own_agents(scripted: list[str], tmp_path: Path) -> None:
    """Feedback exists only when the task is known, and a method may build on it: the cached agent
    of a plain request must not serve an instance."""
    bench = tmp_path / "bench"
    generate_benchmark(bench, seed=0, sizes={"valid_unseen": 1})
    instance = sorted((bench / "tfd_instances" / "valid_unseen").glob("*.json"))[0]
    scripted += ["Action: done()"] * 4
    graph = serving_methods.build_method_graph("prag")
    graph.invoke({"request": "make me a coffee"}, context={"llm": "scripted"})
    graph.invoke({"instance": str(instance)}, context={"llm": "scripted"})
    graph.invoke({"request": "make me a tea"}, context={"llm": "scripted"})
    assert sorted(key[-1] for key in serving_methods._AGENTS) == [False, True]


def test_a_client_chooses_only_among_what_the_server_offers(scripted: list[str], tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A client-set model, instance or pool path outside the server's configuration is refused before
    anything is built or opened (issue 52: a client made the server dial any URL and open any path)."""
    built: list[str] = []
    opened: list[str] = []
    monkeypatch.setattr(llm, "make_chat_model", lambda spec, **k: built.append(spec) or FakeListChatModel(responses=["x"]))
    monkeypatch.setattr(serving, "load_instance", lambda path, *a: opened.append(path))
    graph = serving_methods.build_method_graph("llm-planner")
    outside = tmp_path.parent / "elsewhere.json"
    for context, words in (({"llm": "http://127.0.0.1:9/v1"}, "not a model this server offers"),
                           ({"llm": "local:1.5b"}, "not a model this server offers"),
                           ({"llm": "scripted", "options": ["pool=/etc/passwd"]}, "options pool"),
                           ({"llm": "scripted", "options": [f"pool={tmp_path}/../../etc/passwd"]}, "options pool")):
        with pytest.raises(ValueError, match=words):
            graph.invoke({"request": "make me a coffee"}, context=context)
    for instance in (str(outside), "/etc/passwd", f"{tmp_path}/../x.json"):
        with pytest.raises(ValueError, match="instance"):
            graph.invoke({"instance": instance}, context={"llm": "scripted"})
    link = tmp_path / "link.json"
    link.symlink_to("/etc/passwd")
    with pytest.raises(ValueError, match="leads out of"):
        graph.invoke({"instance": str(link)}, context={"llm": "scripted"})
    assert built == [] and opened == []
    assert serving_methods._AGENTS == {}


def test_a_server_without_served_folders_lets_no_client_name_a_file(scripted: list[str], tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from helper_agent.config import get_settings

    monkeypatch.delenv("HELPER_SERVE_FOLDERS")
    get_settings.cache_clear()
    with pytest.raises(ValueError, match="HELPER_SERVE_FOLDERS"):
        serving_methods.build_method_graph("prag").invoke({"instance": str(tmp_path / "x.json")},
                                                          context={"llm": "scripted"})
