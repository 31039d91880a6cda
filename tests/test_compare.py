"""`helper eval compare`: tabulates finished runs, and runs several methods on the same episodes."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from typer.testing import CliRunner

from helper_agent.cli import app
from helper_agent.commands.eval import parse_agent_list
from helper_agent.evals.benchmark import generate_benchmark
from helper_agent.evals.engine import runner
from helper_agent.evals.engine.report import best_iteration, method_name, methods_table
from helper_agent.evals.engine.runner import run_eval
from helper_agent.evals.engine.spec import EvalSpec


class CoffeeScript(BaseChatModel):
    """Makes coffee whatever the task (so it succeeds on coffee episodes only); restarts its plan at
    each episode's first step. Counts its calls."""

    calls: int = 0
    pos: int = 0

    @property
    def _llm_type(self) -> str:
        return "coffee-script"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        self.calls += 1
        plan = [("clean", "Mug"), ("place", "CoffeeMachine"), ("toggle_on", "CoffeeMachine")]
        user = "\n".join(str(m.content) for m in messages[1:])
        if "name the objects" in str(messages[0].content):
            text = "- mug: isDirty\n- coffee machine: isToggled"
        else:
            if "Previous steps:" not in user:
                self.pos = 0
            graph = user.split("Scene graph:\n", 1)[1].split("\n\nHolding:", 1)[0]
            ids = re.findall(r"^([A-Za-z]+_\d+)", graph, re.M)
            if self.pos >= len(plan):
                text = "Thought: finished\nAction: done()"
            else:
                action, cls = plan[self.pos]
                match = [i for i in ids if i.rsplit("_", 1)[0] == cls]
                if match:
                    self.pos += 1
                    text = f"Thought: {action} the {cls}\nAction: {action}({match[0]})"
                else:
                    text = f"Thought: I need a {cls}\nAction: search({cls})"
        n = len(user) // 4
        message = AIMessage(content=text, usage_metadata={"input_tokens": n, "output_tokens": 5, "total_tokens": n + 5})
        return ChatResult(generations=[ChatGeneration(message=message)])


@pytest.fixture(autouse=True)
def fast_embeddings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HELPER_EMBEDDINGS", "hash:1024")


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bench")
    generate_benchmark(out, seed=0, sizes={"valid_unseen": 3})
    return out


def test_agent_lists_with_switches() -> None:
    assert parse_agent_list("helper, embodiedrag[graph=full;k=5],prag") == [
        ("helper", {}), ("embodiedrag", {"graph": "full", "k": "5"}), ("prag", {})]


def test_compare_tabulates_finished_runs(bench: Path, tmp_path: Path) -> None:
    a = run_eval(EvalSpec(mode="tfd", data=str(bench), planner="gold", out=str(tmp_path / "gold")))
    assert a["overall"]["SR"] == 100.0
    result = CliRunner().invoke(app, ["eval", "compare", str(tmp_path / "gold"), "--plot", str(tmp_path / "p.png")],
                                env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "gold ORACLE" in result.output and "100.00" in result.output
    assert (tmp_path / "p.png").stat().st_size > 1000
    missing = CliRunner().invoke(app, ["eval", "compare", str(tmp_path / "nothing")])
    assert missing.exit_code == 2


def test_compare_runs_methods_on_the_same_episodes(bench: Path, tmp_path: Path) -> None:
    chat = CoffeeScript()
    runner._worker_cache["chat:scripted-coffee"] = chat  # the runner's per-process chat model cache
    try:
        out = tmp_path / "cmp"
        args = ["eval", "compare", "--data", str(bench), "--agents", "embodiedrag[max_steps=6],embodiedrag[graph=full;max_steps=6]",
                "--limit", "3", "--llm", "scripted-coffee", "--feedback", "0", "--out", str(out)]
        result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
        assert result.exit_code == 0, result.output
        rows = json.loads((out / "compare.json").read_text())
        assert [r["method"] for r in rows] == ["embodiedrag[max_steps=6]", "embodiedrag[graph=full,max_steps=6]"]
        for row in rows:
            assert row["episodes"] == 3
            assert abs(row["SR"] - 100 / 3) < 0.01  # the coffee episode only
            assert row["llm_calls"] > 0 and row["prompt_tokens"] > 0 and row["seconds"] > 0
        assert rows[0]["prompt_tokens"] != rows[1]["prompt_tokens"]
        assert "| embodiedrag[max_steps=6] | 3 | 33.33 |" in (out / "compare.md").read_text()
        assert "| embodiedrag[graph=full,max_steps=6] | 3 |" in result.output  # not eaten as Rich markup
        assert (out / "compare.png").stat().st_size > 1000
        # The same command again only reads the finished runs.
        calls = chat.calls
        again = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
        assert again.exit_code == 0 and chat.calls == calls
        assert json.loads((out / "compare.json").read_text()) == rows
    finally:
        runner._worker_cache.pop("chat:scripted-coffee", None)


def test_a_folder_of_iterations_counts_with_its_best(bench: Path, tmp_path: Path) -> None:
    gold = run_eval(EvalSpec(mode="tfd", data=str(bench), planner="gold", out=str(tmp_path / "g")))
    for name, sr in (("iter1", 10.0), ("iter2", 40.0), ("iter3", 30.0)):
        folder = tmp_path / "prag" / name
        folder.mkdir(parents=True)
        metrics = json.loads(json.dumps(gold))
        metrics["overall"]["SR"] = sr
        metrics["run"]["planner"] = "prag"
        (folder / "metrics.json").write_text(json.dumps(metrics))
    best = best_iteration(tmp_path / "prag")
    assert best["overall"]["SR"] == 40.0 and "iter2" in best["note"]
    assert method_name(best) == "prag"
    assert "best of 3 iterations: iter2" in methods_table([best])
    shutil.rmtree(tmp_path / "g")


def test_the_table_says_when_runs_scored_different_episodes_and_common_rescores_them(bench: Path, tmp_path: Path) -> None:
    three = run_eval(EvalSpec(mode="tfd", data=str(bench), planner="gold", out=str(tmp_path / "three")))
    run_eval(EvalSpec(mode="tfd", data=str(bench), planner="gold", out=str(tmp_path / "two"), limit=2))
    assert three["overall"]["episodes"] == 3
    # One episode of the 3-episode run is made a failure, so re-scoring on the common two shows.
    records = [json.loads(line) for line in (tmp_path / "three" / "results.jsonl").read_text().splitlines()]
    last = sorted(r["instance_id"] for r in records)[-1]
    for r in records:
        if r["instance_id"] == last:
            r.update(success=0, goal_condition_success=0.0, completed_goal_conditions=0)
    (tmp_path / "three" / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))

    folders = [str(tmp_path / "three"), str(tmp_path / "two")]
    result = CliRunner().invoke(app, ["eval", "compare", *folders, "--out", str(tmp_path / "cmp")], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    table = (tmp_path / "cmp" / "compare.md").read_text()
    assert "**Not the same episodes** (gold ORACLE 3, gold ORACLE 2; 2 in common)" in table

    result = CliRunner().invoke(app, ["eval", "compare", *folders, "--common", "--out", str(tmp_path / "common")],
                                env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    rows = json.loads((tmp_path / "common" / "compare.json").read_text())
    assert [r["episodes"] for r in rows] == [2, 2] and [r["SR"] for r in rows] == [100.0, 100.0]
    table = (tmp_path / "common" / "compare.md").read_text()
    assert "All 2 runs scored the same 2 episodes, model local." in table
    assert "- gold ORACLE: on the 2 common episodes of its 3" in table


def test_runs_of_different_models_or_no_common_episode_are_called_out(bench: Path, tmp_path: Path) -> None:
    from helper_agent.evals.engine.report import coverage_note, load_run, on_common_episodes, run_records

    run_eval(EvalSpec(mode="tfd", data=str(bench), planner="gold", out=str(tmp_path / "a"), limit=1))
    run_eval(EvalSpec(mode="tfd", data=str(bench), planner="gold", out=str(tmp_path / "b"), limit=1, llm="openai:gpt-4o"))
    a = load_run(tmp_path / "a")
    assert "**different models: local, openai:gpt-4o**" in coverage_note([a, load_run(tmp_path / "b")])
    # A run still being written is read up to its last complete line, and the file is left as it is.
    results = tmp_path / "b" / "results.jsonl"
    record = json.loads(results.read_text().splitlines()[0])
    written = results.read_text() + '{"instance_id": "valid_unseen_9'
    results.write_text(written)
    assert list(run_records(load_run(tmp_path / "b"))) == [record["instance_id"]] and results.read_text() == written
    # Runs with no episode in common: said so, and --common has nothing to score.
    results.write_text(json.dumps({**record, "instance_id": "valid_unseen_9999.tfd"}) + "\n")
    assert "; 0 in common)" in coverage_note([a, load_run(tmp_path / "b")])
    with pytest.raises(ValueError, match="no episode in common"):
        on_common_episodes([a, load_run(tmp_path / "b")])


def test_a_progressive_run_still_under_way_says_how_many_iterations_finished(bench: Path, tmp_path: Path) -> None:
    gold = run_eval(EvalSpec(mode="tfd", data=str(bench), planner="gold", out=str(tmp_path / "g")))
    out = tmp_path / "prag"
    (out / "iter_0" / "eval").mkdir(parents=True)
    (out / "iter_1" / "eval").mkdir(parents=True)  # started, no metrics yet: not a candidate
    metrics = json.loads(json.dumps(gold))
    metrics["run"]["planner"] = "prag"
    (out / "iter_0" / "eval" / "metrics.json").write_text(json.dumps(metrics))
    (out / "progressive.json").write_text(json.dumps({"iterations": 4, "agent": "prag"}))
    best = best_iteration(out)
    assert best["note"] == "1 of 4 iterations finished, best so far: iter_0"
    assert "1 of 4 iterations finished" in methods_table([best])
    # Once every iteration asked for is finished, the note is the plain best-of.
    (out / "progressive.json").write_text(json.dumps({"iterations": 1, "agent": "prag"}))
    assert "note" not in best_iteration(out)
    (out / "progressive.json").write_text("{not json")
    with pytest.raises(ValueError, match="progressive.json"):
        best_iteration(out)
    shutil.rmtree(tmp_path / "g")
