"""The TfD/EDH runner: oracle planners, resumability after kill -9, workers, errors, real TEACh files,
and ablations that change what they claim."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helper_agent.evals.benchmark import generate_benchmark
from helper_agent.evals.engine.runner import run_eval
from helper_agent.evals.engine.spec import EvalSpec
from helper_agent.evals.engine.store import ResultStore

TEACH_SAMPLE = Path(__file__).parent / "data" / "teach" / "dataset"


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bench")
    generate_benchmark(out, seed=7, sizes={"train": 4, "valid_unseen": 18})
    return out


@pytest.fixture(autouse=True)
def fast_embeddings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HELPER_EMBEDDINGS", "hash")


@pytest.mark.parametrize("mode", ["tfd", "edh"])
def test_gold_oracle_reaches_full_success(bench: Path, tmp_path: Path, mode: str) -> None:
    metrics = run_eval(EvalSpec(mode=mode, data=str(bench), split="valid_unseen", planner="gold", out=str(tmp_path / "run")))
    assert metrics["overall"]["SR"] == 100.0 and metrics["overall"]["GC"] == 100.0
    assert metrics["ended_by"] == {"step_limit": 0, "failure_limit": 0, "error": 0, "llm_budget": 0}
    assert "ORACLE" in metrics["label"]
    assert (tmp_path / "run" / "report.md").read_text().count("ORACLE") >= 2
    assert (tmp_path / "run" / "by_task.png").stat().st_size > 1000


def test_graph_with_a_gold_answering_planner_reaches_full_success(bench: Path, tmp_path: Path) -> None:
    """The full HELPER graph, its chat model replaced by a double that answers with the gold program."""
    metrics = run_eval(EvalSpec(mode="tfd", data=str(bench), split="valid_unseen", planner="oracle-graph", out=str(tmp_path / "run")))
    assert metrics["overall"]["SR"] == 100.0
    assert metrics["episodes"] == 18


def _lines(path: Path) -> int:
    return sum(1 for _ in path.open()) if path.exists() else 0


def test_kill_9_then_rerun_equals_an_uninterrupted_run(bench: Path, tmp_path: Path) -> None:
    args = [sys.executable, "-m", "helper_agent.cli", "eval", "tfd", "--data", str(bench), "--split", "valid_unseen",
            "--planner", "oracle-graph", "--feedback", "0"]
    killed = tmp_path / "killed"
    env = {**os.environ, "HELPER_EMBEDDINGS": "hash"}
    proc = subprocess.Popen([*args, "--out", str(killed)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    results = killed / "results.jsonl"
    deadline = time.time() + 240
    while _lines(results) < 4 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    partial = _lines(results)
    assert 4 <= partial < 18, f"the kill should land mid-run ({partial} of 18 written)"
    resumed = subprocess.run([*args, "--out", str(killed)], capture_output=True, text=True, env=env, timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    clean = subprocess.run([*args, "--out", str(tmp_path / "clean")], capture_output=True, text=True, env=env, timeout=600)
    assert clean.returncode == 0
    a = json.loads((killed / "metrics.json").read_text())
    b = json.loads((tmp_path / "clean" / "metrics.json").read_text())
    assert a["overall"] == b["overall"] and a["by_task"] == b["by_task"] and a["episodes"] == b["episodes"] == 18
    ids = [json.loads(line)["instance_id"] for line in results.open()]
    assert len(ids) == len(set(ids)) == 18  # nothing ran twice


def test_two_workers_give_the_same_results(bench: Path, tmp_path: Path) -> None:
    one = run_eval(EvalSpec(mode="tfd", data=str(bench), split="valid_unseen", planner="gold", out=str(tmp_path / "a")))
    two = run_eval(EvalSpec(mode="tfd", data=str(bench), split="valid_unseen", planner="gold", workers=2, out=str(tmp_path / "b")))
    assert one["overall"] == two["overall"]


def test_an_episode_error_is_recorded_and_the_run_goes_on(bench: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    subprocess.run(["cp", "-r", str(bench), str(data)], check=True)
    victim = sorted((data / "tfd_instances" / "valid_unseen").glob("*.json"))[3]
    victim.write_text('{"game_id": 3}')
    metrics = run_eval(EvalSpec(mode="tfd", data=str(data), split="valid_unseen", planner="gold", out=str(tmp_path / "run")))
    # the errored episode is not a result: 17 scored, 1 error beside them
    assert metrics["episodes"] == 17 and metrics["errors"] == 1 and metrics["ended_by"]["error"] == 1
    records = ResultStore(tmp_path / "run" / "results.jsonl").records()
    bad = records[victim.name[: -len(".json")]]
    assert bad["error"] == 1 and "game_id" in bad["error_message"]
    assert metrics["overall"]["successes"] == 17 and metrics["overall"]["SR"] == 100.0
    assert metrics["overall"]["teach"]["num_fails_by_error"] == 1
    # Resuming retries the errored episode (and only it), once its cause is gone.
    good = sorted((bench / "tfd_instances" / "valid_unseen").glob("*.json"))[3]
    victim.write_text(good.read_text())
    again = run_eval(EvalSpec(mode="tfd", data=str(data), split="valid_unseen", planner="gold", out=str(tmp_path / "run")))
    assert again["episodes"] == 18 and again["errors"] == 0 and again["overall"]["successes"] == 18
    lines = (tmp_path / "run" / "results.jsonl").read_text().splitlines()
    assert len(lines) == 19  # 18 results + the error record, which the retry's record replaced


def test_result_store_drops_a_partial_last_line(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    store = ResultStore(path)
    store.append({"instance_id": "a", "success": 1})
    with path.open("a") as fh:
        fh.write('{"instance_id": "b", "succ')  # a crash in the middle of a write
    reopened = ResultStore(path)
    assert reopened.done_ids() == {"a"}
    reopened.append({"instance_id": "c", "success": 0})
    assert [r["instance_id"] for r in reopened] == ["a", "c"]


def test_runs_on_files_in_teachs_own_format(tmp_path: Path) -> None:
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    program = ("```python\nmug = InteractionObject('Mug', attributes=['clean'])\nmug.clean()\n"
               "cm = InteractionObject('CoffeeMachine')\nmug.pickup_and_place(cm)\ncm.toggle_on()\n```")
    for mode in ("tfd", "edh"):
        metrics = run_eval(
            EvalSpec(mode=mode, data=str(TEACH_SAMPLE), split="valid_seen", planner="helper", feedback=0, out=str(tmp_path / mode)),
            chat_model=FakeListChatModel(responses=[program] * 5),
        )
        assert metrics["episodes"] == 1 and metrics["ended_by"]["error"] == 0
        record = next(iter(ResultStore(tmp_path / mode / "results.jsonl")))
        assert record["task_name"] == "Coffee" and record["traj_len"] > 0 and record["llm_calls"] == 1


def test_ablations_change_what_they_claim(tmp_path: Path) -> None:
    """Gold programs lean on implicit pre-conditions (slicing needs a knife, slices need slicing, closed
    receptacles need opening) and on finding objects hidden in closed receptacles: turning the
    pre-condition checks off, or replacing the LLM locator by random search, lowers SR."""
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    data = tmp_path / "bench"
    generate_benchmark(data, seed=11, sizes={"valid_unseen": 18})

    def run(ablate: str | None) -> dict:
        # The LLM locator's answer names the places small things are hidden in.
        locator_answer = "Cabinet, Drawer, Fridge, CounterTop, Microwave, SinkBasin"
        out = tmp_path / f"run-{ablate}"
        spec = EvalSpec(mode="tfd", data=str(data), split="valid_unseen", planner="oracle-graph", feedback=0, ablate=ablate, out=str(out))
        from helper_agent.evals.engine import agents

        class OracleAnsweringTheLocator(FakeListChatModel):
            """The oracle's fake chat model, which also names places when the locator asks."""

            def _call(self, messages, stop=None, run_manager=None, **kwargs):  # noqa: ANN001, ANN003
                if "most likely" in str(messages[-1].content):
                    return locator_answer
                return super()._call(messages, stop, run_manager, **kwargs)

        original = agents.oracle_chat_model
        agents.oracle_chat_model = lambda program: OracleAnsweringTheLocator(responses=[f"```python\n{program}\n```"])
        try:
            return run_eval(spec)
        finally:
            agents.oracle_chat_model = original

    full = run(None)
    no_precheck = run("precheck")
    no_locator = run("locator")
    assert full["overall"]["SR"] == 100.0
    assert no_precheck["overall"]["SR"] < full["overall"]["SR"] - 20
    assert no_locator["overall"]["SR"] < full["overall"]["SR"] or no_locator["overall"]["PLW_SR"] < full["overall"]["PLW_SR"]


def test_helper_eval_exits_non_zero_while_an_errored_episode_remains(bench: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    subprocess.run(["cp", "-r", str(bench), str(data)], check=True)
    victim = sorted((data / "tfd_instances" / "valid_unseen").glob("*.json"))[0]
    good = victim.read_text()
    victim.write_text('{"game_id": 3}')
    args = [sys.executable, "-m", "helper_agent.cli", "eval", "tfd", "--data", str(data), "--limit", "3",
            "--planner", "gold", "--out", str(tmp_path / "run")]
    env = {**os.environ, "HELPER_EMBEDDINGS": "hash", "COLUMNS": "200"}
    first = subprocess.run(args, capture_output=True, text=True, timeout=300, env=env)
    assert first.returncode == 1, first.stdout[-2000:] + first.stderr[-2000:]
    assert "1 episode(s) errored and are not in SR/GC (2 scored); re-run the same command to retry them." in first.stdout
    assert "error: " in first.stdout and "game_id" in first.stdout
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert (metrics["episodes"], metrics["errors"], metrics["overall"]["SR"]) == (2, 1, 100.0)
    victim.write_text(good)
    second = subprocess.run(args, capture_output=True, text=True, timeout=300, env=env)
    assert second.returncode == 0, second.stdout[-2000:] + second.stderr[-2000:]
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert (metrics["episodes"], metrics["errors"]) == (3, 0)
