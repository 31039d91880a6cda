"""A method added from outside: the toy package of `tests/plugins` and its one entry point in the
group `helper_agent.methods` (`tests/plugins/toy_method-0.1.dist-info`) make `--agent toy` work in
`helper eval tfd` and give it a served graph, without touching a file of helper-agent."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langgraph.checkpoint.memory import InMemorySaver
from typer.testing import CliRunner

import helper_agent.llm as llm
from helper_agent import serving
from helper_agent.cli import app
from helper_agent.config import get_settings
from helper_agent.evals.benchmark import generate_benchmark
from helper_agent.evals.engine import runner
from helper_agent.graphs.registry import get_method, method_names
from helper_agent.serving_methods import langgraph_config

ROOT = Path(__file__).resolve().parents[1]
PLUGINS = Path(__file__).resolve().parent / "plugins"


@pytest.fixture()
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The toy distribution on sys.path, memories in a fresh folder, a scripted chat model."""
    monkeypatch.syspath_prepend(str(PLUGINS))
    monkeypatch.setenv("HELPER_MEMORY_DIR", str(tmp_path / "memory"))
    monkeypatch.setenv("HELPER_EMBEDDINGS", "hash:256")
    monkeypatch.setenv("HELPER_SERVE_LLMS", "scripted")  # the LangGraph server offers the scripted model
    get_settings.cache_clear()
    monkeypatch.setattr(runner, "_worker_cache", {})
    monkeypatch.setattr(serving, "_MODELS", {})
    replies = ["Turn Left"]

    def fake(*args: object, **kwargs: object) -> FakeListChatModel:
        return FakeListChatModel(responses=replies)

    monkeypatch.setattr(llm, "make_chat_model", fake)  # the LangGraph server's models
    monkeypatch.setattr(runner, "make_chat_model", fake)  # an evaluation run's
    yield replies
    for name in [m for m in sys.modules if m == "toy_method" or m.startswith("toy_method.")]:
        del sys.modules[name]
    get_settings.cache_clear()


def test_adding_the_toy_is_one_package_and_one_registration() -> None:
    files = sorted(str(p.relative_to(PLUGINS)) for p in PLUGINS.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    assert files == ["toy_method-0.1.dist-info/METADATA", "toy_method-0.1.dist-info/entry_points.txt",
                     "toy_method/__init__.py", "toy_method/agent.py"]
    assert (PLUGINS / "toy_method-0.1.dist-info/entry_points.txt").read_text().split() == [
        "[helper_agent.methods]", "toy", "=", "toy_method.agent:METHOD"]


def test_the_entry_point_registers_the_toy(toy: list[str]) -> None:
    assert method_names() == ["helper", "llm-planner", "prag", "embodiedrag", "toy"]
    assert get_method("toy").options == ("times",)
    listed = CliRunner().invoke(app, ["methods", "list"], env={"COLUMNS": "200"})
    assert listed.exit_code == 0 and "A toy: one LLM-chosen action" in listed.output


def test_the_toy_runs_through_helper_eval_tfd(toy: list[str], tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    generate_benchmark(bench, seed=0, sizes={"valid_unseen": 2})
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["eval", "tfd", "--data", str(bench), "--agent", "toy", "-o", "times=2",
                                      "--llm", "scripted", "--out", str(out)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(records) == 2
    for record in records:
        assert record.get("error_message") is None, record["error_message"]
        assert (record["planner"], record["oracle"], record["outcome"]) == ("toy", False, "done")
        assert record["log"] == ["act: Turn Left x2"] and record["llm_calls"] == 1
        assert record["success"] == 0  # turning left does no task; the harness, not the toy, says so
    assert json.loads((out / "metrics.json").read_text())["episodes"] == 2


def test_the_toy_refuses_a_switch_it_does_not_have_before_the_run(toy: list[str], tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["eval", "tfd", "--data", str(tmp_path), "--agent", "toy", "-o", "colour=red",
                                      "--out", str(tmp_path / "run")], env={"COLUMNS": "200"})
    assert result.exit_code != 0 and "agent 'toy' has no option colour; it takes times" in result.output
    assert not (tmp_path / "run").exists()


def test_the_toy_is_served_as_the_langgraph_server_loads_it(toy: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """`langgraph.json` from the registry names the toy's graph; loaded from that file path as the
    server loads a graph (a fresh module, the graph read from its namespace), it acts in a kitchen."""
    path, _, attribute = langgraph_config()["graphs"]["toy"].partition(":")
    assert (path, attribute) == ("./helper_agent/serving_methods.py", "toy")
    spec = importlib.util.spec_from_file_location("served_methods_fresh", ROOT / path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    graph = module.__dict__[attribute]
    out = graph.invoke({"request": "turn around", "room": "Kitchen", "seed": 3},
                       {"configurable": {"thread_id": "t1"}}, context={"llm": "scripted", "options": ["times=3"]})
    assert (out["outcome"], out["log"], out["steps"]) == ("done", ["act: Turn Left x3"], 3)
    assert out["usage"]["llm_calls"] == 1 and out["checker"] is None
    checkpointed = module.build_method_graph("toy", InMemorySaver())
    again = checkpointed.invoke({"request": "turn", "room": "Kitchen"}, {"configurable": {"thread_id": "t2"}},
                                context={"llm": "scripted"})
    assert again["steps"] == 1
    assert checkpointed.get_state({"configurable": {"thread_id": "t2"}}).values["outcome"] == "done"
